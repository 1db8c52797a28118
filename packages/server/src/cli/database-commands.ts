/**
 * The admin CLI's commands that open the configured database (`npm run cli -- <command>`; usage
 * in cli.ts): migrations, the audit-chain and ledger checks, a payout run, the key rotations, and
 * `create-db`. On the embedded database each takes `DATA_DIR`'s lock first (ops/data-dir-lock.ts):
 * with a service running on the same directory it stops with one line instead of opening the
 * database's files a second time. A database that cannot be used is one line too
 * (ops/startup-errors.ts).
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Config } from '../config.js';
import { openDatabase, type Database, type Db } from '../db/client.js';
import { ensureDatabase } from '../db/ensure-database.js';
import { runMigrations } from '../db/migrate.js';
import { DataDirLockedError, lockDataDir, type DataDirLock } from '../ops/data-dir-lock.js';
import { checkDatabase } from '../ops/preflight.js';
import { StartupError, databaseName, dataDirLocked, describeDatabaseError } from '../ops/startup-errors.js';
import { AuditService } from '../modules/audit/service.js';
import { AuditLogKeys, retireAuditLogKeys, rotateAuditLogKey } from '../keys/index.js';
import { DeviceTokenService, retireSigningKeys } from '../auth/device-tokens.js';
import { resealPlatformKeys } from '../keys/index.js';
import { secretBoxOf } from '../lib/secret-box.js';
import { MessageRate } from '../lib/message-rate.js';
import { KEY_REFRESH_MS, SptKeys, retireSptKeys, rotateSptKey } from '../keys/index.js';
import { resealWebhookSecrets } from '../modules/webhooks/secrets.js';
import { resealExportHeaders } from '../modules/telemetry-export/secrets.js';
import { PolicyService } from '../modules/policies/service.js';
import { SptTokens } from '../modules/grants/tokens.js';
import { hubDid } from '../modules/hub/service.js';
import { createMarketplace } from '../modules/marketplace/index.js';
import { verifyLedger } from '../modules/marketplace/ledger.js';
import { WebhookOutbox } from '../modules/webhooks/outbox.js';
import { InProcessBus } from '../realtime/bus.js';
import { Notifier } from '../realtime/notifier.js';

/** The commands of this file (cli.ts dispatches them here). */
export const DATABASE_COMMANDS = new Set([
  'migrate',
  'create-db',
  'audit-verify',
  'ledger',
  'payouts',
  'rotate-signing-key',
  'retire-signing-keys',
  'rotate-spt-key',
  'retire-spt-keys',
  'rotate-audit-log-key',
  'retire-audit-log-keys',
  'reseal-secrets',
]);

const KEY_COMMANDS = new Set(['rotate-signing-key', 'retire-signing-keys', 'rotate-spt-key', 'retire-spt-keys', 'rotate-audit-log-key', 'retire-audit-log-keys', 'reseal-secrets']);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Open the configured database for a command: PGlite under `DATA_DIR`'s lock (released when the
 * database closes), or PostgreSQL checked to answer.
 * @throws StartupError (one line) when the directory is held or the database cannot be used.
 */
async function openForCommand(config: Config): Promise<Database> {
  let lock: DataDirLock | undefined;
  if (config.databaseUrl) await checkDatabase(config.databaseUrl);
  else {
    try {
      lock = lockDataDir(config.dataDir);
    } catch (err) {
      throw err instanceof DataDirLockedError ? dataDirLocked(err, 'command') : err;
    }
  }
  try {
    const database = await openDatabase({ databaseUrl: config.databaseUrl, pgliteDir: path.join(config.dataDir, 'pglite') });
    return {
      ...database,
      close: async () => {
        await database.close();
        lock?.release();
      },
    };
  } catch (err) {
    lock?.release();
    throw err;
  }
}

/**
 * Run database command `command` with arguments `rest`. Resolves with the exit status: 0 done
 * (or valid), 1 when the check fails, 2 on a usage error.
 * @throws StartupError when the database cannot be opened (cli.ts prints its line).
 */
export async function runDatabaseCommand(command: string, rest: string[], config: Config, usage: string): Promise<number> {
  if (command === 'create-db') return createDb(config);
  if (command === 'audit-verify') {
    const { values } = parseArgs({ args: rest, options: { tenant: { type: 'string' } } });
    if (!values.tenant || !UUID.test(values.tenant)) return usageError(usage);
    return withDatabase(config, async (db) => {
      const verdict = await new AuditService(db).verify(values.tenant!);
      console.log(JSON.stringify(verdict));
      return verdict.valid ? 0 : 1;
    });
  }
  if (command === 'migrate') {
    const database = await openForCommand(config);
    await runMigrations(database);
    await database.close();
    console.log(`migrations applied (${database.driver})`);
    return 0;
  }
  if ((command === 'ledger' && rest[0] === 'verify') || (command === 'payouts' && rest[0] === 'run')) {
    return withDatabase(
      config,
      async (db) => {
        if (command === 'ledger') {
          const check = await verifyLedger(db);
          console.log(JSON.stringify(check));
          return check.balanced ? 0 : 1;
        }
        const marketplace = await cliMarketplace(config, db);
        try {
          console.log(JSON.stringify(await marketplace.payouts.run()));
          return 0;
        } finally {
          await marketplace.close();
        }
      },
      { migrate: true },
    );
  }
  if (KEY_COMMANDS.has(command)) {
    const { values } = parseArgs({ args: rest, options: { force: { type: 'boolean' } } });
    return withDatabase(config, (db) => keyCommand(command, config, db, values.force === true));
  }
  return usageError(usage);
}

function usageError(usage: string): number {
  console.error(usage);
  return 2;
}

/** Run `work` on the opened database (migrated first when asked), closing it afterwards. */
async function withDatabase(config: Config, work: (db: Db) => Promise<number>, opts: { migrate?: boolean } = {}): Promise<number> {
  const database = await openForCommand(config);
  try {
    if (opts.migrate) await runMigrations(database);
    return await work(database.db);
  } finally {
    await database.close();
  }
}

/** `create-db`: create the database `DATABASE_URL` names when missing (what `npm run cluster` does first). */
async function createDb(config: Config): Promise<number> {
  if (!config.databaseUrl) {
    console.error('error: create-db creates the PostgreSQL database of DATABASE_URL; without DATABASE_URL the embedded database in DATA_DIR is created by `npm start` itself');
    return 2;
  }
  try {
    const created = await ensureDatabase(config.databaseUrl);
    console.log(`database "${databaseName(config.databaseUrl)}" ${created ? 'created' : 'already exists'}; \`npm start\` applies the migrations`);
    return 0;
  } catch (err) {
    throw describeDatabaseError(err, config.databaseUrl) ?? new StartupError(`cannot create the database of DATABASE_URL: ${(err as Error).message}`, { cause: err });
  }
}

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
