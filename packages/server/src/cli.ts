/**
 * Admin CLI: `npm run cli -- <command>`.
 *   owner-token --sub <email> [--tenant <id>] [--ttl <seconds>]
 *       Print an owner JWT from the built-in development identity provider (DATA_DIR key).
 *   migrate
 *       Apply pending database migrations (PGlite: stop the server first; it holds the data dir).
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DevIdentityProvider } from './auth/dev-idp.js';
import { loadConfig } from './config.js';
import { openDatabase } from './db/client.js';
import { runMigrations } from './db/migrate.js';

const USAGE = `usage:
  npm run cli -- owner-token --sub <email> [--tenant <tenant_id>] [--ttl <seconds>]
  npm run cli -- migrate`;

async function main(argv: string[]): Promise<number> {
  const config = loadConfig(process.env);
  const [command, ...rest] = argv;
  if (command === 'owner-token') {
    const { values } = parseArgs({ args: rest, options: { sub: { type: 'string' }, tenant: { type: 'string' }, ttl: { type: 'string' } } });
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
    console.log(await idp.mint(values.sub, { claims, ...(values.ttl ? { ttlSec: Number(values.ttl) } : {}) }));
    return 0;
  }
  if (command === 'migrate') {
    const database = await openDatabase({ databaseUrl: config.databaseUrl, pgliteDir: path.join(config.dataDir, 'pglite') });
    await runMigrations(database);
    await database.close();
    console.log(`migrations applied (${database.driver})`);
    return 0;
  }
  console.error(USAGE);
  return 2;
}

process.exitCode = await main(process.argv.slice(2));
