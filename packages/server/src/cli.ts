/**
 * Admin CLI: `npm run cli -- <command>`.
 *   owner-token --sub <email> [--tenant <id>] [--ttl <seconds>] [--operator] [--url <service url>]
 *       Print an owner JWT from the built-in development identity provider (DATA_DIR key);
 *       `--operator` makes it a platform operator token (claim `parley_operator`, design §8.25).
 *       Warns on stderr, naming its DATA_DIR, when the service it is meant for would refuse it
 *       (cli/owner-token.ts).
 *   migrate
 *       Apply pending database migrations.
 *   create-db
 *       Create the PostgreSQL database DATABASE_URL names when it does not exist (as `npm run
 *       cluster` does); `npm start` then applies the migrations.
 *   keygen
 *       Print a new Ed25519 identity key and X25519 ephemeral key (raw hex, JSON).
 *   sign --key <identity_private_key> (--text <utf8> | --hex <hex>)
 *       Print an Ed25519 signature (hex), e.g. the enrollment proof of possession.
 *   listen --token <jwt> [--device-id <owner device id>] [--url <service url>]
 *       Connect to the WebSocket gateway, catch up on missed messages, print `ready`, then every
 *       frame (answers pings; cli/listen.ts).
 *   wait-for --file <path> --line <text> [--timeout <seconds>]
 *       Wait until a file has a line starting with the text (cli/wait-for.ts); exit 1 on timeout.
 *   audit-verify --tenant <id>
 *       Recompute a tenant's audit hash chain (design §8.10); prints {valid, checked, first_broken},
 *       exit code 0 when valid, 1 when broken.
 *   ledger verify
 *       Check that every marketplace ledger transaction balances (design §8.24, §8.35); prints
 *       {balanced, transactions, imbalance_cents, unbalanced_transactions}, exit 0 balanced, 1 not.
 *   payouts run
 *       Run a payout now (design §8.35): pays every developer balance at or above the minimum;
 *       prints the run's counts.
 *   rotate-signing-key | rotate-spt-key
 *       Add a new active device-token (resp. Skill Permission Token) signing key; the old one keeps
 *       verifying until retired. Prints {kid, previous: {kid, deactivated_at, retirable_at}}.
 *   retire-signing-keys [--force] | retire-spt-keys [--force]
 *       Delete the old keys whose tokens have all expired (`--force`: every old key, for a
 *       compromised key). Prints {retired, kept}.
 *   rotate-audit-log-key
 *       Replace the audit-log checkpoint key (design §8.33); the old one keeps co-signing new
 *       checkpoints until retired. Prints {vkey, previous} (the new and the old verifier keys).
 *   retire-audit-log-keys
 *       Stop the old audit-log keys from co-signing (once verifiers have the new vkey). Prints {retired}.
 *   reseal-secrets
 *       Re-seal every webhook secret, telemetry export header set and platform private key
 *       (signing_keys, platform_keys) under SECRETS_KEY (values opening only under
 *       SECRETS_KEY_PREVIOUS, or legacy clear values). Prints {checked, resealed, current, failed}
 *       (all summed);
 *       exit 1 when some value opens under no key. (Key rotation: docs/operations.md.)
 *
 * The commands that open the database (cli/database-commands.ts) refuse, with one line, to open
 * the embedded one while a service runs on the same DATA_DIR. Every command that talks to the
 * service uses the URL the service itself is configured with: `PUBLIC_URL`, else
 * `http://HOST:PORT` (config.ts), unless `--url` is given. Commands load only what they use.
 */
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Config } from './config.js';
import { StartupError } from './ops/startup-errors.js';

const USAGE = `usage:
  npm run -s cli -- owner-token --sub <email> [--tenant <tenant_id>] [--ttl <seconds>] [--operator] [--url <service url>]
  npm run -s cli -- migrate
  npm run -s cli -- create-db
  npm run -s cli -- keygen
  npm run -s cli -- sign --key <identity_private_key> (--text <utf8> | --hex <hex>)
  npm run -s cli -- listen --token <jwt> [--device-id <owner device id>] [--url <service url>]
  npm run -s cli -- wait-for --file <path> --line <text> [--timeout <seconds>]
  npm run -s cli -- audit-verify --tenant <tenant_id>
  npm run -s cli -- ledger verify
  npm run -s cli -- payouts run
  npm run -s cli -- rotate-signing-key | rotate-spt-key
  npm run -s cli -- retire-signing-keys [--force] | retire-spt-keys [--force]
  npm run -s cli -- rotate-audit-log-key | retire-audit-log-keys
  npm run -s cli -- reseal-secrets
the service's URL: --url, else PUBLIC_URL, else http://HOST:PORT (as the service has them; default http://127.0.0.1:8080)`;

/**
 * The service's base URL and, when `--url` names the gateway itself (`ws://…/api/v1/ws`, as
 * `listen --url` always accepted), that socket URL.
 */
function serviceUrl(config: Config, url: string | undefined): { baseUrl: string; wsUrl?: string } {
  if (!url) return { baseUrl: config.publicUrl };
  if (/^wss?:\/\//i.test(url)) return { baseUrl: url.replace(/^ws/i, 'http').replace(/\/api\/v1\/ws\/?$/, ''), wsUrl: url };
  return { baseUrl: url.replace(/\/+$/, '') };
}

async function main(argv: string[]): Promise<number> {
  const config = loadConfig(process.env);
  const [command, ...rest] = argv;
  if (command === 'owner-token') {
    const { values } = parseArgs({ args: rest, options: { sub: { type: 'string' }, tenant: { type: 'string' }, ttl: { type: 'string' }, operator: { type: 'boolean' }, url: { type: 'string' } } });
    if (!values.sub) return usageError();
    if (config.oidc) {
      console.error('OIDC_* is configured: owner tokens come from your identity provider, not the built-in one');
      return 2;
    }
    const { ownerToken } = await import('./cli/owner-token.js');
    await ownerToken({
      dataDir: config.dataDir,
      baseUrl: serviceUrl(config, values.url).baseUrl,
      sub: values.sub,
      claims: values.tenant ? { [config.oidcTenantClaim]: values.tenant } : {},
      operator: values.operator === true,
      ...(values.ttl ? { ttlSec: Number(values.ttl) } : {}),
    });
    return 0;
  }
  if (command === 'pglite-seed') {
    // Run by the build: the migrated PGlite directory new installations start from (db/pglite-seed.ts).
    const { DEFAULT_SEED_FILE, writeSeed } = await import('./db/pglite-seed.js');
    const bytes = await writeSeed(rest[0] ?? DEFAULT_SEED_FILE);
    console.log(`PGlite seed written (${Math.round(bytes / 1024)} KiB)`);
    return 0;
  }
  if (command === 'keygen') {
    const { generateKeys } = await import('./cli/dev-keys.js');
    console.log(JSON.stringify(generateKeys(), null, 2));
    return 0;
  }
  if (command === 'sign') {
    const { values } = parseArgs({ args: rest, options: { key: { type: 'string' }, text: { type: 'string' }, hex: { type: 'string' } } });
    const message = values.text !== undefined ? Buffer.from(values.text, 'utf8') : values.hex !== undefined ? Buffer.from(values.hex, 'hex') : undefined;
    if (!values.key || !message) return usageError();
    const { signHex } = await import('./cli/dev-keys.js');
    console.log(signHex(values.key, message));
    return 0;
  }
  if (command === 'listen') {
    const { values } = parseArgs({ args: rest, options: { token: { type: 'string' }, 'device-id': { type: 'string' }, url: { type: 'string' } } });
    if (!values.token) return usageError();
    const { listen } = await import('./cli/listen.js');
    return listen({ ...serviceUrl(config, values.url), token: values.token, ...(values['device-id'] ? { deviceId: values['device-id'] } : {}) });
  }
  if (command === 'wait-for') {
    const { values } = parseArgs({ args: rest, options: { file: { type: 'string' }, line: { type: 'string' }, timeout: { type: 'string' } } });
    const timeout = values.timeout === undefined ? undefined : Number(values.timeout);
    if (!values.file || values.line === undefined || (timeout !== undefined && !(timeout > 0))) return usageError();
    const { waitForLine } = await import('./cli/wait-for.js');
    return waitForLine(values.file, values.line, timeout);
  }
  const { DATABASE_COMMANDS, runDatabaseCommand } = await import('./cli/database-commands.js');
  if (DATABASE_COMMANDS.has(command ?? '')) return runDatabaseCommand(command!, rest, config, USAGE);
  return usageError();
}

function usageError(): number {
  console.error(USAGE);
  return 2;
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (err) {
  // Settings and databases that cannot be used are one line with the fix (ops/startup-errors.ts).
  if (!(err instanceof StartupError) && !(err instanceof ConfigError)) throw err;
  console.error(`error: ${err.message}`);
  process.exitCode = 1;
}
