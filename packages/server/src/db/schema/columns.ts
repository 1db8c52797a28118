/**
 * Column types shared by the schema area files: the custom PostgreSQL types (`tsvector`,
 * `bytea`) and the timestamp helpers (`timestamptz` as a JS Date; `created_at` defaulting to now).
 * Not tied to a contract section.
 */
import { customType, timestamp } from 'drizzle-orm/pg-core';

/** PostgreSQL `tsvector` (full-text search documents), read and written as text. */
export const tsvector = customType<{ data: string }>({ dataType: () => 'tsvector' });

/** `bytea` as a Node Buffer (pg returns Buffer, PGlite Uint8Array: both normalised to Buffer). */
export const bytea = customType<{ data: Buffer; driverData: Buffer | Uint8Array }>({
  dataType: () => 'bytea',
  fromDriver: (v) => (Buffer.isBuffer(v) ? v : Buffer.from(v)),
  toDriver: (v) => v,
});

/** `timestamp with time zone`, read as a Date. */
export const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/** `created_at timestamptz not null default now()`. */
export const createdAt = () => ts('created_at').notNull().defaultNow();
