/**
 * Database client: node-postgres when `DATABASE_URL` is set, embedded PGlite otherwise
 * (design §2, §3). Both are wrapped by drizzle-orm with the same schema, so repositories are
 * driver-agnostic.
 */
import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import pg from 'pg';
import * as schema from './schema/index.js';
import { createFromSeed } from './pglite-seed.js';
import { guardSingleConnection } from './single-connection.js';

export type { Database, Db, Queryable, Schema, Tx } from './types.js';
import type { Database, Db } from './types.js';

export interface DatabaseOptions {
  databaseUrl?: string;
  /** PGlite data directory; ignored when `databaseUrl` is set. */
  pgliteDir?: string;
  /** In-memory PGlite (tests). */
  inMemory?: boolean;
  /**
   * A new PGlite directory starts from this migrated seed (`db/pglite-seed.ts`) instead of
   * running initdb; default: the build's seed when present. `false`: never.
   */
  pgliteSeed?: string | false;
  /** Most connections of the PostgreSQL pool (default 10; `DATABASE_POOL_MAX`); ignored by PGlite. */
  poolSize?: number;
  /** Told of every PostgreSQL connection error (server restart, network loss); default: ignored. */
  onConnectionError?: (err: Error) => void;
}

/**
 * Keep the process alive and the pool whole through PostgreSQL restarts (57P01 "terminating
 * connection", "Connection terminated unexpectedly"). node-postgres emits `error` on the pool for
 * an idle client and on the client itself while it is checked out, and an `error` event without
 * a listener kills the process: every pooled client gets a permanent listener as it connects.
 * The query in flight fails on its own (http/errors.ts answers 503).
 *
 * A checked-out client whose connection died is released at once with the error, so the pool
 * destroys it and opens a fresh connection for the next checkout; its holder's own later
 * `release()` becomes a no-op. Without this a client is lost for good when a transaction's
 * `begin` fails (drizzle releases only after a successful `begin`), and a few restarts exhaust
 * the pool.
 */
export function guardPool(pool: pg.Pool, onError: (err: Error) => void = () => undefined): pg.Pool {
  const checkedOut = new Set<pg.PoolClient>();
  pool.on('acquire', (client) => checkedOut.add(client));
  pool.on('release', (_err, client) => checkedOut.delete(client));
  pool.on('error', onError);
  pool.on('connect', (client) => {
    client.on('error', (err) => {
      onError(err);
      const held = client as pg.PoolClient;
      if (!checkedOut.has(held)) return; // idle: the pool's own listener removes it
      const release = held.release.bind(held);
      held.release = () => undefined;
      release(err);
    });
  });
  return pool;
}

/** Open the configured database. PGlite creates its data directory when missing. */
export async function openDatabase(opts: DatabaseOptions): Promise<Database> {
  if (opts.databaseUrl) {
    const pool = guardPool(new pg.Pool({ connectionString: opts.databaseUrl, max: opts.poolSize ?? 10 }), opts.onConnectionError);
    const db = drizzlePg(pool, { schema }) as unknown as Db;
    return { db, driver: 'pg', raw: { kind: 'pg', pool, url: opts.databaseUrl }, close: () => pool.end() };
  }
  let client: PGlite;
  if (opts.inMemory || !opts.pgliteDir) {
    client = new PGlite();
  } else {
    fs.mkdirSync(path.dirname(opts.pgliteDir), { recursive: true });
    // A damaged seed must not stop the service: the directory is then made the slow way (initdb).
    const seeded = opts.pgliteSeed === false ? false : await createFromSeed(opts.pgliteDir, opts.pgliteSeed).catch(() => false);
    try {
      client = new PGlite(opts.pgliteDir);
      await client.waitReady;
    } catch (err) {
      if (!seeded) throw err;
      fs.rmSync(opts.pgliteDir, { recursive: true, force: true });
      client = new PGlite(opts.pgliteDir);
    }
  }
  await client.waitReady;
  guardSingleConnection(client);
  const db = drizzlePglite(client, { schema }) as unknown as Db;
  return { db, driver: 'pglite', raw: { kind: 'pglite', client }, close: () => client.close() };
}
