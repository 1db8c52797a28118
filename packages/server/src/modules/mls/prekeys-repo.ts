/**
 * Prekey queries for both kinds of table `pq_prekeys` (tenant-scoped transactions): PQXDH KEM
 * prekeys (`kem`) and X3DH X25519 prekeys (`x25519`). Per device and kind, the `last_resort` row
 * is the KEM last-resort prekey or the X25519 signed prekey.
 */
import { and, asc, count, eq, isNull, not } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { pqPrekeys, type PrekeyKind } from '../../db/schema/index.js';

type NewPrekey = Omit<typeof pqPrekeys.$inferInsert, 'lastResort' | 'kind'>;

const ofDevice = (deviceId: string, kind: PrekeyKind) => and(eq(pqPrekeys.deviceId, deviceId), eq(pqPrekeys.kind, kind));
const unclaimedOneTime = (deviceId: string, kind: PrekeyKind) => and(ofDevice(deviceId, kind), not(pqPrekeys.lastResort), isNull(pqPrekeys.claimedAt));

/** Replace the device's last-resort (signed) prekey of `kind` with `row` (the old one, if any, is deleted). */
export async function replaceLastResort(tx: Tx, kind: PrekeyKind, row: NewPrekey): Promise<void> {
  await tx.delete(pqPrekeys).where(and(ofDevice(row.deviceId, kind), eq(pqPrekeys.lastResort, true)));
  await tx.insert(pqPrekeys).values({ ...row, kind, lastResort: true });
}

/** Insert one-time prekeys of `kind`. */
export const insertOneTime = (tx: Tx, kind: PrekeyKind, rows: NewPrekey[]) => tx.insert(pqPrekeys).values(rows.map((r) => ({ ...r, kind, lastResort: false })));

/** The device's last-resort prekey id and signature of `kind` (null when none), and how many one-time prekeys of `kind` are unclaimed. */
export async function holdings(tx: Tx, kind: PrekeyKind, deviceId: string): Promise<{ lastResortKeyId: string | null; lastResortSignature: Buffer | null; oneTime: number }> {
  const [last] = await tx
    .select({ keyId: pqPrekeys.keyId, signature: pqPrekeys.signature })
    .from(pqPrekeys)
    .where(and(ofDevice(deviceId, kind), eq(pqPrekeys.lastResort, true)))
    .limit(1);
  const [row] = await tx.select({ n: count() }).from(pqPrekeys).where(unclaimedOneTime(deviceId, kind));
  return { lastResortKeyId: last?.keyId ?? null, lastResortSignature: last?.signature ?? null, oneTime: Number(row?.n ?? 0) };
}

/**
 * Take the oldest unclaimed one-time prekey of `kind` of a device: its row is locked FOR UPDATE
 * SKIP LOCKED, then marked claimed in the same transaction, so concurrent claims never get the same
 * row. Undefined when none is left.
 */
export async function claimOneTime(tx: Tx, kind: PrekeyKind, deviceId: string, claimedBy: string) {
  const [row] = await tx
    .select({ id: pqPrekeys.id })
    .from(pqPrekeys)
    .where(unclaimedOneTime(deviceId, kind))
    .orderBy(asc(pqPrekeys.createdAt))
    .limit(1)
    .for('update', { skipLocked: true });
  if (!row) return undefined;
  const [claimed] = await tx.update(pqPrekeys).set({ claimedAt: new Date(), claimedBy }).where(eq(pqPrekeys.id, row.id)).returning();
  return claimed;
}

/** The device's last-resort (signed) prekey of `kind`, if any (never consumed). */
export async function lastResort(tx: Tx, kind: PrekeyKind, deviceId: string) {
  const [row] = await tx.select().from(pqPrekeys).where(and(ofDevice(deviceId, kind), eq(pqPrekeys.lastResort, true))).limit(1);
  return row;
}
