/**
 * Database client: node-postgres when `DATABASE_URL` is set, embedded PGlite otherwise
 * (DESIGN §2, §3). Both are wrapped by drizzle-orm with the same schema, so repositories are
 * driver-agnostic.
 */
import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import pg from 'pg';
import * as schema from './schema/index.js';

export type Schema = typeof schema;
/** A drizzle database over either driver. */
export type Db = PgDatabase<PgQueryResultHKT, Schema>;
/** A drizzle transaction over either driver. */
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
/** Anything that runs queries: the database or an open transaction. */
export type Queryable = Db | Tx;

export interface Database {
  db: Db;
  driver: 'pg' | 'pglite';
  /** Runs drizzle migrations (see migrate.ts); exposed so the CLI and start-up share one path. */
  raw: { kind: 'pg'; pool: pg.Pool; url: string } | { kind: 'pglite'; client: PGlite };
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl?: string;
  /** PGlite data directory; ignored when `databaseUrl` is set. */
  pgliteDir?: string;
  /** In-memory PGlite (tests). */
  inMemory?: boolean;
  /** Most connections of the PostgreSQL pool (default 10; `DATABASE_POOL_MAX`); ignored by PGlite. */
  poolSize?: number;
}

/** Open the configured database. PGlite creates its data directory when missing. */
export async function openDatabase(opts: DatabaseOptions): Promise<Database> {
  if (opts.databaseUrl) {
    const pool = new pg.Pool({ connectionString: opts.databaseUrl, max: opts.poolSize ?? 10 });
    pool.on('error', () => {
      /* idle client errors surface on the next query; keep the process alive */
    });
    const db = drizzlePg(pool, { schema }) as unknown as Db;
    return { db, driver: 'pg', raw: { kind: 'pg', pool, url: opts.databaseUrl }, close: () => pool.end() };
  }
  let client: PGlite;
  if (opts.inMemory || !opts.pgliteDir) {
    client = new PGlite();
  } else {
    fs.mkdirSync(path.dirname(opts.pgliteDir), { recursive: true });
    client = new PGlite(opts.pgliteDir);
  }
  await client.waitReady;
  const db = drizzlePglite(client, { schema }) as unknown as Db;
  return { db, driver: 'pglite', raw: { kind: 'pglite', client }, close: () => client.close() };
}
