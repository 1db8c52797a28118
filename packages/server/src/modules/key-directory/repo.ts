/** Key directory queries (platform tables, db/schema/key-directory.ts). */
import { asc, eq, gt, sql } from 'drizzle-orm';
import type { Db, Tx } from '../../db/client.js';
import { keyDirectoryCosignatures, keyDirectoryEntries } from '../../db/schema/index.js';

export type EntryRow = typeof keyDirectoryEntries.$inferSelect;
export type NewEntry = typeof keyDirectoryEntries.$inferInsert;

/** The entries after `seq`, in log order (at most `limit`). */
export const entriesAfter = (q: Db | Tx, seq: number, limit = 10_000): Promise<EntryRow[]> =>
  q.select().from(keyDirectoryEntries).where(gt(keyDirectoryEntries.seq, seq)).orderBy(asc(keyDirectoryEntries.seq)).limit(limit);

/**
 * Serialise appends to the directory for the rest of the transaction (a transaction-level
 * advisory lock: appends of every tenant go through one log).
 */
export async function lockDirectory(tx: Tx): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended('parley:key-directory', 0))`);
}

/** Append entries (their `seq` follow the last one; the caller holds the lock). */
export async function insertEntries(tx: Tx, rows: NewEntry[]): Promise<void> {
  if (rows.length > 0) await tx.insert(keyDirectoryEntries).values(rows);
}

/** The cosignature lines held for the checkpoint of `size`. */
export const cosignaturesOf = (q: Db | Tx, size: number) =>
  q.select({ witness: keyDirectoryCosignatures.witness, line: keyDirectoryCosignatures.line }).from(keyDirectoryCosignatures).where(eq(keyDirectoryCosignatures.treeSize, size));
