/** The database types every layer uses (drizzle over node-postgres or PGlite), apart from the code that opens it (client.ts). */
import type { PGlite } from '@electric-sql/pglite';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import type pg from 'pg';
import type * as schema from './schema/index.js';

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
