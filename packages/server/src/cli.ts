/**
 * Admin CLI: `npm run cli -- <command>`.
 *   owner-token --sub <email> [--tenant <id>] [--ttl <seconds>] [--operator]
 *       Print an owner JWT from the built-in development identity provider (DATA_DIR key);
 *       `--operator` makes it a platform operator token (claim `parley_operator`, DESIGN §8.25).
 *   migrate
 *       Apply pending database migrations (PGlite: stop the server first; it holds the data dir).
 *   keygen
 *       Print a new Ed25519 identity key and X25519 ephemeral key (raw hex, JSON).
 *   sign --key <identity_private_key> (--text <utf8> | --hex <hex>)
 *       Print an Ed25519 signature (hex), e.g. the enrollment proof of possession.
 *   listen --token <jwt> [--device-id <owner device id>] [--url <ws url>]
 *       Connect to the WebSocket gateway and print every frame (answers pings).
 *   audit-verify --tenant <id>
 *       Recompute a tenant's audit hash chain (DESIGN §8.10); prints {valid, checked, first_broken},
 *       exit code 0 when valid, 1 when broken (PGlite: stop the server first).
 *   ledger verify
 *       Check that every marketplace ledger transaction balances (DESIGN §8.24, §8.35); prints
 *       {balanced, transactions, imbalance_cents, unbalanced_transactions}, exit 0 balanced, 1 not.
 *   payouts run
 *       Run a payout now (DESIGN §8.35): pays every developer balance at or above the minimum;
 *       prints the run's counts (PGlite: stop the server first).
 *   rotate-signing-key | rotate-spt-key
 *       Add a new active device-token (resp. Skill Permission Token) signing key; the old one keeps
 *       verifying until retired. Prints {kid, previous: {kid, deactivated_at, retirable_at}}.
 *   retire-signing-keys [--force] | retire-spt-keys [--force]
 *       Delete the old keys whose tokens have all expired (`--force`: every old key, for a
 *       compromised key). Prints {retired, kept}.
 *   rotate-audit-log-key
 *       Replace the audit-log checkpoint key (DESIGN §8.33); the old one keeps co-signing new
 *       checkpoints until retired. Prints {vkey, previous} (the new and the old verifier keys).
 *   retire-audit-log-keys
 *       Stop the old audit-log keys from co-signing (once verifiers have the new vkey). Prints {retired}.
 *   reseal-secrets
 *       Re-seal every webhook secret, telemetry export header set and platform private key
 *       (signing_keys, platform_keys) under SECRETS_KEY (values opening only under
 *       SECRETS_KEY_PREVIOUS, or legacy clear values). Prints {checked, resealed, current, failed}
 *       (all summed);
 *       exit 1 when some value opens under no key. (Key rotation: docs/operations.md.)
 */
import { DEFAULT_SEED_FILE, writeSeed } from './db/pglite-seed.js';
import path from 'node:path';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { DevIdentityProvider } from './auth/dev-idp.js';
import { generateKeys, signHex } from './cli/dev-keys.js';
import { loadConfig } from './config.js';
import { openDatabase } from './db/client.js';
import { runMigrations } from './db/migrate.js';
import { AuditService } from './modules/audit/service.js';
import { AuditLogKeys, retireAuditLogKeys, rotateAuditLogKey } from './modules/audit/log-keys.js';
import { DeviceTokenService, retireSigningKeys } from './auth/device-tokens.js';
import { resealPlatformKeys } from './auth/sealed-keys.js';
import { secretBoxOf } from './lib/secret-box.js';
import { MessageRate } from './lib/message-rate.js';
import { KEY_REFRESH_MS, retireSptKeys, rotateSptKey } from './modules/grants/keys.js';
import { resealWebhookSecrets } from './modules/webhooks/secrets.js';
import { resealExportHeaders } from './modules/telemetry-export/secrets.js';
import type { Config } from './config.js';
import type { Db } from './db/client.js';
import { SptKeys } from './modules/grants/keys.js';
import { PolicyService } from './modules/policies/service.js';
import { SptTokens } from './modules/grants/tokens.js';
import { hubDid } from './modules/hub/service.js';
import { createMarketplace } from './modules/marketplace/index.js';
import { verifyLedger } from './modules/marketplace/ledger.js';
import { WebhookOutbox } from './modules/webhooks/outbox.js';
import { InProcessBus } from './realtime/bus.js';
import { Notifier } from './realtime/notifier.js';

const USAGE = `usage:
  npm run -s cli -- owner-token --sub <email> [--tenant <tenant_id>] [--ttl <seconds>] [--operator]
  npm run -s cli -- migrate
  npm run -s cli -- keygen
  npm run -s cli -- sign --key <identity_private_key> (--text <utf8> | --hex <hex>)
  npm run -s cli -- listen --token <jwt> [--device-id <owner device id>] [--url <ws url>]
  npm run -s cli -- audit-verify --tenant <tenant_id>
  npm run -s cli -- ledger verify
  npm run -s cli -- payouts run
  npm run -s cli -- rotate-signing-key | rotate-spt-key
  npm run -s cli -- retire-signing-keys [--force] | retire-spt-keys [--force]
  npm run -s cli -- rotate-audit-log-key | retire-audit-log-keys
  npm run -s cli -- reseal-secrets`;

/** Print every frame of a socket until it closes; resolves with the close code. */
function listen(url: string): Promise<number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url);
    ws.on('open', () => console.log('connected'));
    ws.on('message', (raw) => {
      const text = raw.toString();
      console.log(text);
      if ((JSON.parse(text) as { event?: string }).event === 'ping') ws.send(JSON.stringify({ event: 'pong', data: {} }));
    });
    ws.on('close', (code, reason) => {
      console.log(`closed ${code} ${reason.toString()}`);
      resolve(0);
    });
    ws.on('error', (err) => {
      console.error(err.message);
      resolve(1);
    });
  });
}

async function main(argv: string[]): Promise<number> {
  const config = loadConfig(process.env);
  const [command, ...rest] = argv;
  if (command === 'owner-token') {
    const { values } = parseArgs({ args: rest, options: { sub: { type: 'string' }, tenant: { type: 'string' }, ttl: { type: 'string' }, operator: { type: 'boolean' } } });
    if (!values.sub) {
      console.error(USAGE);
      return 2;
    }
    if (config.oidc) {
      console.error('OIDC_* is configured: owner tokens come from your identity provider, not the built-in one');
      return 2;
    }
    const idp = await DevIdentityProvider.load(config.dataDir);
    const claims = values.tenant ? { [config.oidcTenantClaim]: values.tenant } : {};
    console.log(await idp.mint(values.sub, { claims, operator: values.operator === true, ...(values.ttl ? { ttlSec: Number(values.ttl) } : {}) }));
    return 0;
  }
  if (command === 'pglite-seed') {
    // Run by the build: the migrated PGlite directory new installations start from (db/pglite-seed.ts).
    const bytes = await writeSeed(rest[0] ?? DEFAULT_SEED_FILE);
    console.log(`PGlite seed written (${Math.round(bytes / 1024)} KiB)`);
    return 0;
  }
  if (command === 'migrate') {
    const database = await openDatabase({ databaseUrl: config.databaseUrl, pgliteDir: path.join(config.dataDir, 'pglite') });
    await runMigrations(database);
    await database.close();
    console.log(`migrations applied (${database.driver})`);
    return 0;
  }
  if (command === 'keygen') {
    console.log(JSON.stringify(generateKeys(), null, 2));
    return 0;
  }
  if (command === 'sign') {
    const { values } = parseArgs({ args: rest, options: { key: { type: 'string' }, text: { type: 'string' }, hex: { type: 'string' } } });
    const message = values.text !== undefined ? Buffer.from(values.text, 'utf8') : values.hex !== undefined ? Buffer.from(values.hex, 'hex') : undefined;
    if (!values.key || !message) {
      console.error(USAGE);
      return 2;
    }
    console.log(signHex(values.key, message));
    return 0;
  }
  if (command === 'listen') {
    const { values } = parseArgs({ args: rest, options: { token: { type: 'string' }, 'device-id': { type: 'string' }, url: { type: 'string' } } });
    if (!values.token) {
      console.error(USAGE);
      return 2;
    }
    const base = values.url ?? `${config.publicUrl.replace(/^http/, 'ws')}/api/v1/ws`;
    const q = new URLSearchParams({ token: values.token, ...(values['device-id'] ? { device_id: values['device-id'] } : {}) });
    return listen(`${base}?${q.toString()}`);
  }
  if (command === 'audit-verify') {
    const { values } = parseArgs({ args: rest, options: { tenant: { type: 'string' } } });
    if (!values.tenant || !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(values.tenant)) {
      console.error(USAGE);
      return 2;
    }
    const database = await openDatabase({ databaseUrl: config.databaseUrl, pgliteDir: path.join(config.dataDir, 'pglite') });
    try {
      const verdict = await new AuditService(database.db).verify(values.tenant);
      console.log(JSON.stringify(verdict));
      return verdict.valid ? 0 : 1;
    } finally {
      await database.close();
    }
  }
  if ((command === 'ledger' && rest[0] === 'verify') || (command === 'payouts' && rest[0] === 'run')) {
    const database = await openDatabase({ databaseUrl: config.databaseUrl, pgliteDir: path.join(config.dataDir, 'pglite') });
    try {
      await runMigrations(database);
      if (command === 'ledger') {
        const check = await verifyLedger(database.db);
        console.log(JSON.stringify(check));
        return check.balanced ? 0 : 1;
      }
      const marketplace = await cliMarketplace(config, database.db);
      try {
        console.log(JSON.stringify(await marketplace.payouts.run()));
        return 0;
      } finally {
        await marketplace.close();
      }
    } finally {
      await database.close();
    }
  }
  if (KEY_COMMANDS.has(command ?? '')) {
    const { values } = parseArgs({ args: rest, options: { force: { type: 'boolean' } } });
    const database = await openDatabase({ databaseUrl: config.databaseUrl, pgliteDir: path.join(config.dataDir, 'pglite') });
    try {
      return await keyCommand(command!, config, database.db, values.force === true);
    } finally {
      await database.close();
    }
  }
  console.error(USAGE);
  return 2;
}

const KEY_COMMANDS = new Set(['rotate-signing-key', 'retire-signing-keys', 'rotate-spt-key', 'retire-spt-keys', 'rotate-audit-log-key', 'retire-audit-log-keys', 'reseal-secrets']);

/** The key-rotation commands (docs/operations.md "Key rotation"); the logic lives in the owning modules. */
async function keyCommand(command: string, config: Config, db: Db, force: boolean): Promise<number> {
  if (command === 'rotate-signing-key') {
    const tokens = new DeviceTokenService(db, secretBoxOf(config), config.deviceTokenTtlSec);
    await tokens.init();
    const kid = await tokens.rotate();
    // A dry run (nothing is retirable at the epoch): the kept keys with their retirable_at.
    const { kept } = await retireSigningKeys(db, config.deviceTokenTtlSec, { now: new Date(0) });
    console.log(JSON.stringify({ kid, previous: kept.at(-1) ?? null, refresh_ms: KEY_REFRESH_MS }));
    return 0;
  }
  if (command === 'retire-signing-keys') {
    console.log(JSON.stringify(await retireSigningKeys(db, config.deviceTokenTtlSec, { force })));
    return 0;
  }
  if (command === 'rotate-spt-key') {
    const box = secretBoxOf(config);
    await new SptKeys(db, box).init(); // creates the first key when no instance has started yet
    console.log(JSON.stringify({ ...(await rotateSptKey(db, box, config.sptTtlSec)), refresh_ms: KEY_REFRESH_MS }));
    return 0;
  }
  if (command === 'retire-spt-keys') {
    console.log(JSON.stringify(await retireSptKeys(db, config.sptTtlSec, { force })));
    return 0;
  }
  if (command === 'rotate-audit-log-key') {
    const box = secretBoxOf(config);
    await new AuditLogKeys(db, box, config.publicUrl).init(); // creates the first key when no instance has started yet
    console.log(JSON.stringify({ ...(await rotateAuditLogKey(db, box)), refresh_ms: KEY_REFRESH_MS }));
    return 0;
  }
  if (command === 'retire-audit-log-keys') {
    console.log(JSON.stringify(await retireAuditLogKeys(db)));
    return 0;
  }
  const box = secretBoxOf(config);
  const parts = [await resealWebhookSecrets(db, box), await resealExportHeaders(db, box), await resealPlatformKeys(db, box)];
  const sum = (k: keyof (typeof parts)[number]) => parts.reduce((n, p) => n + p[k], 0);
  const report = { checked: sum('checked'), resealed: sum('resealed'), current: sum('current'), failed: sum('failed') };
  console.log(JSON.stringify(report));
  return report.failed === 0 ? 0 : 1;
}

/** The marketplace services outside the server (events reach owners' webhooks through the outbox; no sockets here). */
async function cliMarketplace(config: Config, db: Db) {
  const keys = new SptKeys(db, secretBoxOf(config));
  await keys.init();
  const notifier = new Notifier(new InProcessBus());
  const log = { warn: (o: object, msg: string) => console.error(msg, o), error: (o: object, msg: string) => console.error(msg, o), info: () => undefined };
  notifier.setWebhookSink(new WebhookOutbox(db, log as never));
  return createMarketplace({
    db,
    config: config.marketplace,
    notifier,
    tokens: new SptTokens(keys, hubDid(config.credentials.platformHubAddress)),
    policies: new PolicyService({ db, notifier, heldTtlMs: config.heldMessageTtlMs }),
    // The CLI sends no rental messages: nothing to count.
    messageRate: new MessageRate(undefined),
    maxCiphertextBytes: config.limits.maxCiphertextBytes,
    publicUrl: config.publicUrl,
    listDefault: config.limits.listDefault,
    listMax: config.limits.listMax,
    jobPollMs: config.jobPollIntervalMs,
    log,
  });
}

process.exitCode = await main(process.argv.slice(2));
