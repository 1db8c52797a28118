/**
 * The infrastructure app.ts builds before any area (docs/architecture.md "Composition"): the
 * database (PGlite or PostgreSQL) with its migrations applied, the Fastify instance, Redis and the
 * event bus (realtime/setup.ts), the secrets keyring, the device-token and owner-token verifiers,
 * renewal challenges, the notifier, the pipelined tenant writer and the per-device message budget.
 */
import path from 'node:path';
import type { FastifyInstance, RouteOptions } from 'fastify';
import { DevIdentityProvider } from './auth/dev-idp.js';
import { DeviceTokenService } from './auth/device-tokens.js';
import { OwnerTokenVerifier } from './auth/owner-tokens.js';
import { RenewalChallenges } from './auth/renewal-challenges.js';
import type { Config } from './config.js';
import { openDatabase, type Database } from './db/client.js';
import { runMigrations } from './db/migrate.js';
import { openTenantWriter } from './db/tenant-writer.js';
import type { Platform } from './http/area.js';
import { createFastify } from './http/fastify.js';
import { resealPlatformKeys } from './keys/index.js';
import { MessageRate } from './lib/message-rate.js';
import { Metrics } from './lib/metrics.js';
import { secretBoxOf } from './lib/secret-box.js';
import type { Lifecycle } from './ops/routes.js';
import type { EventBus } from './realtime/bus.js';
import { Notifier } from './realtime/notifier.js';
import { openMessaging, type Messaging } from './realtime/setup.js';

/** What tests and tools may replace or observe in the app. */
export interface AppOverrides {
  /** Use this database instead of opening one from config (closed with the app unless `keepDatabase`). */
  database?: Database;
  keepDatabase?: boolean;
  /** Use this bus instead of one chosen from config (tests of multi-instance delivery). */
  bus?: EventBus;
  /** Write logs here instead of stdout (tests of log redaction). */
  logStream?: NodeJS.WritableStream;
  /** Sees every route as it is registered (tests comparing the served routes with the contract). */
  onRoute?: (route: RouteOptions) => void;
  /** How long the cached signing keys (device tokens, SPTs, the audit log) are used before a reload (ms; default 60 s; tests make every use stale). */
  keyRefreshMs?: number;
  /** How often the invite and held-message expiry jobs run on this instance (ms; default 60 s). */
  expiryJobIntervalMs?: number;
}

/** The infrastructure: what every area may use ({@link Platform}) and what app.ts wires itself. */
export interface Infrastructure extends Platform {
  app: FastifyInstance;
  database: Database;
  messaging: Messaging;
  lifecycle: Lifecycle;
  devIdp: DevIdentityProvider | undefined;
  deviceTokens: DeviceTokenService;
  ownerTokens: OwnerTokenVerifier;
  challenges: RenewalChallenges;
  /** Close the tenant writer, the bus and Redis, and the database (unless `keepDatabase`). */
  close(): Promise<void>;
}

/** Opens the infrastructure (see the module comment). */
export async function openInfrastructure(config: Config, overrides: AppOverrides): Promise<Infrastructure> {
  const database =
    overrides.database ??
    (await openDatabase({
      databaseUrl: config.databaseUrl,
      poolSize: config.databasePoolMax,
      pgliteDir: path.join(config.dataDir, 'pglite'),
      inMemory: config.pgliteInMemory,
      // The logger exists once `app` is built below; connection errors arrive later.
      onConnectionError: (err) => app.log.warn({ err }, 'database connection error (the pool replaces the connection)'),
    }));
  await runMigrations(database);
  const { db } = database;
  const metrics = new Metrics(() => (database.raw.kind === 'pg' ? { total: database.raw.pool.totalCount, idle: database.raw.pool.idleCount, waiting: database.raw.pool.waitingCount } : undefined));
  const app = createFastify(config, { ...overrides, metrics });
  const messaging = await openMessaging(config, { ...(overrides.bus ? { bus: overrides.bus } : {}), metrics, log: app.log });
  if (messaging.startedDegraded) app.log.warn('redis unreachable at start: serving degraded (rate limits and presence per instance, no cross-instance delivery) until it answers');
  const secrets = secretBoxOf(config);
  // Platform private keys still in clear (written before they were sealed) are sealed now (keys/sealed-keys.ts).
  await resealPlatformKeys(db, secrets, { clearOnly: true });
  const deviceTokens = new DeviceTokenService(db, secrets, config.deviceTokenTtlSec, overrides.keyRefreshMs);
  await deviceTokens.init();
  const devIdp = config.oidc ? undefined : await DevIdentityProvider.load(config.dataDir);
  const ownerTokens = new OwnerTokenVerifier(config.oidc ? { oidc: config.oidc } : { dev: devIdp! }, config.ownerTokenMaxLifetimeSec);
  const challenges = new RenewalChallenges(db, secrets);
  await challenges.init();
  // Pipelined connections of the hot-path writes, the message group commit and span ingest (PostgreSQL; PGlite: drizzle).
  const writer = openTenantWriter(database, { onConnectionError: (err) => app.log.warn({ err }, 'message writer connection error (reconnects on the next flush)') });
  return {
    app,
    database,
    messaging,
    lifecycle: { draining: false },
    devIdp,
    deviceTokens,
    ownerTokens,
    challenges,
    config,
    db,
    notifier: new Notifier(messaging.bus),
    secrets,
    metrics,
    log: app.log,
    writer,
    // contract §8's messages per minute per device: one budget for socket frames and REST sends.
    messageRate: new MessageRate(messaging.perMinuteLimiter('parley-ws', config.rateLimits.wsMessagesPerMin)),
    bus: messaging.bus,
    perMinuteLimiter: messaging.perMinuteLimiter,
    ...(overrides.keyRefreshMs !== undefined ? { keyRefreshMs: overrides.keyRefreshMs } : {}),
    async close() {
      await writer.close();
      await messaging.close();
      if (!overrides.keepDatabase) await database.close();
    },
  };
}
