/** PQ prekey queries (tenant-scoped transactions; table `pq_prekeys`). */
import { and, asc, count, eq, isNull, not } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { pqPrekeys } from '../../db/schema/index.js';

type NewPqPrekey = Omit<typeof pqPrekeys.$inferInsert, 'lastResort'>;

/** Replace the device's last-resort prekey with `row` (the old one, if any, is deleted). */
export async function replaceLastResort(tx: Tx, row: NewPqPrekey): Promise<void> {
  await tx.delete(pqPrekeys).where(and(eq(pqPrekeys.deviceId, row.deviceId), eq(pqPrekeys.lastResort, true)));
  await tx.insert(pqPrekeys).values({ ...row, lastResort: true });
}

/** Insert one-time prekeys. */
export const insertOneTime = (tx: Tx, rows: NewPqPrekey[]) => tx.insert(pqPrekeys).values(rows.map((r) => ({ ...r, lastResort: false })));

/** The device's last-resort prekey id (null when none), and how many one-time prekeys are unclaimed. */
export async function holdings(tx: Tx, deviceId: string): Promise<{ lastResortKeyId: string | null; oneTime: number }> {
  const [last] = await tx.select({ keyId: pqPrekeys.keyId }).from(pqPrekeys).where(and(eq(pqPrekeys.deviceId, deviceId), eq(pqPrekeys.lastResort, true))).limit(1);
  const [row] = await tx
    .select({ n: count() })
    .from(pqPrekeys)
    .where(and(eq(pqPrekeys.deviceId, deviceId), not(pqPrekeys.lastResort), isNull(pqPrekeys.claimedAt)));
  return { lastResortKeyId: last?.keyId ?? null, oneTime: Number(row?.n ?? 0) };
}

/** Take the oldest unclaimed one-time prekey of a device (row-locked, skipping ones being claimed). */
export async function claimOneTime(tx: Tx, deviceId: string, claimedBy: string) {
  const [row] = await tx
    .select()
    .from(pqPrekeys)
    .where(and(eq(pqPrekeys.deviceId, deviceId), not(pqPrekeys.lastResort), isNull(pqPrekeys.claimedAt)))
    .orderBy(asc(pqPrekeys.createdAt))
    .limit(1)
    .for('update', { skipLocked: true });
  if (!row) return undefined;
  await tx.update(pqPrekeys).set({ claimedAt: new Date(), claimedBy }).where(eq(pqPrekeys.id, row.id));
  return row;
}

/** The device's last-resort prekey, if any (never consumed). */
export async function lastResort(tx: Tx, deviceId: string) {
  const [row] = await tx.select().from(pqPrekeys).where(and(eq(pqPrekeys.deviceId, deviceId), eq(pqPrekeys.lastResort, true))).limit(1);
  return row;
}
