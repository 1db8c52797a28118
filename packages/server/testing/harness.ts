/**
 * Test harness: builds the real app on a real database. TEST_BACKEND=pglite (default) uses an
 * in-memory PGlite; TEST_BACKEND=postgres creates a fresh database on TEST_DATABASE_URL and drops
 * it on close (never reused across runs).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, InjectOptions } from 'fastify';
import pg from 'pg';
import { buildApp, type AppOverrides } from '../src/app.js';
import { loadConfig, type Config } from '../src/config.js';

export const backend = (process.env.TEST_BACKEND ?? 'pglite') as 'pglite' | 'postgres';

/**
 * The `SECRETS_KEY` of every test instance not given a data directory or a key of its own: as
 * docs/operations.md asks of instances sharing a database, so a second instance on a test's
 * database opens the platform keys and webhook secrets the first one sealed.
 */
export const TEST_SECRETS_KEY = randomBytes(32).toString('base64');

export interface TestApp {
  app: FastifyInstance;
  config: Config;
  /** http://127.0.0.1:<port> when started with `listen: true`. */
  baseUrl: string;
  /** ws://127.0.0.1:<port>/api/v1/ws when listening. */
  wsUrl: string;
  /** Owner JWT from the built-in dev identity provider. */
  ownerToken(sub: string, claims?: Record<string, unknown>): Promise<string>;
  /** JSON request through `inject`. */
  request(opts: InjectOptions): Promise<{ status: number; body: any; headers: Record<string, unknown> }>;
  close(): Promise<void>;
}

export interface StartOptions {
  listen?: boolean;
  /** Environment variables on top of the defaults (e.g. RATE_LIMITS; `SECRETS_KEY` replaces {@link TEST_SECRETS_KEY}). */
  env?: Record<string, string>;
  /** Keep PGlite on disk in this directory instead of in memory (restart tests); its `secrets-key` file, not {@link TEST_SECRETS_KEY}, seals then. */
  dataDir?: string;
  /** Reuse a PostgreSQL database URL (restart tests on PostgreSQL). */
  databaseUrl?: string;
  overrides?: AppOverrides;
}

/** Create a fresh PostgreSQL database; returns its URL and a drop function. */
export async function createPgDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) throw new Error('TEST_DATABASE_URL is not set');
  const name = `parley_test_${Date.now()}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

export async function startApp(opts: StartOptions = {}): Promise<TestApp> {
  const dataDir = opts.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'parley-test-'));
  let dropDb: (() => Promise<void>) | undefined;
  let databaseUrl = opts.databaseUrl;
  if (!databaseUrl && backend === 'postgres') {
    const created = await createPgDatabase();
    databaseUrl = created.url;
    dropDb = created.drop;
  }
  const config: Config = {
    // No web app unless a test asks for one (DASHBOARD_DIR): whether it is built must not change other tests.
    ...loadConfig({ LOG_LEVEL: 'silent', DATA_DIR: dataDir, PORT: '0', DASHBOARD_DIR: path.join(dataDir, 'no-dashboard'), ...(opts.dataDir ? {} : { SECRETS_KEY: TEST_SECRETS_KEY }), ...opts.env }),
    databaseUrl,
    pgliteInMemory: !databaseUrl && !opts.dataDir,
  };
  const app = await buildApp(config, opts.overrides);
  let baseUrl = '';
  if (opts.listen) {
    await app.listen({ host: '127.0.0.1', port: 0 });
    const addr = app.server.address();
    if (addr && typeof addr === 'object') baseUrl = `http://127.0.0.1:${addr.port}`;
  }
  return {
    app,
    config,
    baseUrl,
    wsUrl: baseUrl.replace(/^http/, 'ws') + '/api/v1/ws',
    ownerToken: (sub, claims) => app.parley.devIdp!.mint(sub, { claims }),
    async request(o) {
      const res = await app.inject(o);
      let body: unknown = res.body;
      try {
        body = res.body === '' ? undefined : JSON.parse(res.body);
      } catch {
        /* not JSON */
      }
      return { status: res.statusCode, body, headers: res.headers };
    },
    async close() {
      await app.close();
      await dropDb?.();
      if (!opts.dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Several instances of the service as one cluster, as {@link startInstances} answers them. */
export interface TestCluster {
  apps: TestApp[];
  /** The shared database's URL (a fresh PostgreSQL database, dropped on close). */
  databaseUrl: string;
  close(): Promise<void>;
}

/**
 * `n` listening instances on ONE fresh PostgreSQL database, one DATA_DIR (the dev identity
 * provider's key: an owner token is valid on every instance) and Redis (`TEST_REDIS_URL`: rate
 * limits, presence, and an event-bus channel of this cluster's own, so concurrent test files do not
 * see each other's events). Instances start one after the other (the first applies migrations).
 * Needs TEST_DATABASE_URL and TEST_REDIS_URL.
 */
export async function startInstances(n: number, env: Record<string, string> = {}): Promise<TestCluster> {
  const redisUrl = process.env.TEST_REDIS_URL;
  if (!redisUrl) throw new Error('TEST_REDIS_URL is not set');
  const { RedisBus } = await import('../src/realtime/redis-bus.js');
  const db = await createPgDatabase();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-cluster-'));
  const channel = `parley-test-${randomBytes(8).toString('hex')}`;
  const apps: TestApp[] = [];
  const close = async () => {
    for (const a of apps) await a.close();
    await db.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < n; i++) {
      apps.push(await startApp({ listen: true, env: { REDIS_URL: redisUrl, ...env }, dataDir, databaseUrl: db.url, overrides: { bus: await RedisBus.connect(redisUrl, channel) } }));
    }
  } catch (err) {
    await close();
    throw err;
  }
  return { apps, databaseUrl: db.url, close };
}
