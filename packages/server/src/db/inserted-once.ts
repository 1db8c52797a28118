/**
 * A compact answer for "insert these rows unless they exist" statements, whose callers must learn
 * which of their rows were new: the delivered receipts of 1:1 messages (`insert ... on conflict do
 * nothing returning ...` in a CTE named `ins`, a unique key deciding) and of room envelopes (the
 * items no stored row names, in a CTE named `new`: an anti-join, exact only while the writer holds
 * a lock that keeps concurrent writers of the same items out; receipts/room-deliveries.ts) (issues
 * 15 and 21).
 *
 * Answering one row per inserted row cost PostgreSQL the output of thousands of rows per batch
 * and this process their parsing, in one turn of its event loop. Nearly always every row is new,
 * so the statement answers ONE row: the insert time, and the keys of the inserted rows only when
 * some rows already existed (`keys` null otherwise).
 */
import { sql, type SQL } from 'drizzle-orm';

/** The one row an {@link insertedOnceAnswer} select answers. */
export type InsertedOnce = {
  /** `now()` of the statement's transaction (the time every inserted row was given), epoch milliseconds. */
  at: number;
  /** Null when all rows were inserted; otherwise the inserted rows' keys, comma-separated ('' for none). */
  keys: string | null;
};

/**
 * The final `select` of a statement whose CTE `from` (default `ins`) holds the up to `total` rows
 * it inserted, one per item, and `key` (a text expression over that CTE's columns without commas,
 * e.g. a uuid, or two joined by ':'). Always the same text for the same `key` and `from` (`total`
 * is a parameter).
 */
export function insertedOnceAnswer(total: number, key: SQL, from: 'ins' | 'new' = 'ins'): SQL {
  const rows = sql.raw(from);
  return sql`select (extract(epoch from now()) * 1000)::float8 as at,
    case when (select count(*) from ${rows}) = ${total}::bigint then null
         else (select coalesce(string_agg(${key}, ','), '') from ${rows}) end as keys`;
}

/**
 * The rows of `items` (in their order) that an {@link insertedOnceAnswer} says were inserted,
 * `keyOf` giving each item's key as the statement writes it (uuids in PostgreSQL's lowercase text form).
 */
export function insertedItems<T>(answer: InsertedOnce, items: readonly T[], keyOf: (item: T) => string): T[] {
  if (answer.keys === null) return items.slice();
  if (answer.keys === '') return [];
  const inserted = new Set(answer.keys.split(','));
  return items.filter((item) => inserted.has(keyOf(item).toLowerCase()));
}
