/** MLS KeyPackage queries (tenant-scoped transactions). */
import { and, asc, count, eq, isNull } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { mlsKeyPackages } from '../../db/schema/index.js';

export const insertKeyPackages = (tx: Tx, rows: (typeof mlsKeyPackages.$inferInsert)[]) => tx.insert(mlsKeyPackages).values(rows);

export async function availableCount(tx: Tx, deviceId: string): Promise<number> {
  const [row] = await tx
    .select({ n: count() })
    .from(mlsKeyPackages)
    .where(and(eq(mlsKeyPackages.deviceId, deviceId), isNull(mlsKeyPackages.claimedAt)));
  return Number(row?.n ?? 0);
}

/** Take the oldest unclaimed KeyPackage of a device (row-locked, skipping ones being claimed). */
export async function claimOldest(tx: Tx, deviceId: string, claimedBy: string) {
  const [kp] = await tx
    .select()
    .from(mlsKeyPackages)
    .where(and(eq(mlsKeyPackages.deviceId, deviceId), isNull(mlsKeyPackages.claimedAt)))
    .orderBy(asc(mlsKeyPackages.createdAt))
    .limit(1)
    .for('update', { skipLocked: true });
  if (!kp) return undefined;
  await tx.update(mlsKeyPackages).set({ claimedAt: new Date(), claimedBy }).where(eq(mlsKeyPackages.id, kp.id));
  return kp;
}

/** Delete every KeyPackage a device published (on revocation: nobody may add it to a group any more). */
export const deleteKeyPackagesOf = (tx: Tx, deviceId: string) => tx.delete(mlsKeyPackages).where(eq(mlsKeyPackages.deviceId, deviceId));
