/** MLS KeyPackage queries (tenant-scoped transactions). */
import { and, asc, count, eq, gte, inArray, isNull, or } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { a2aChannels, apiKeys, marketplaceRentals, mlsKeyPackages, pqPrekeys } from '../../db/schema/index.js';

export const insertKeyPackages = (tx: Tx, rows: (typeof mlsKeyPackages.$inferInsert)[]) => tx.insert(mlsKeyPackages).values(rows);

export async function availableCount(tx: Tx, deviceId: string): Promise<number> {
  const [row] = await tx
    .select({ n: count() })
    .from(mlsKeyPackages)
    .where(and(eq(mlsKeyPackages.deviceId, deviceId), isNull(mlsKeyPackages.claimedAt)));
  return Number(row?.n ?? 0);
}

/** Unclaimed KeyPackages of a device per ciphersuite label, by suite number. */
export async function availableBySuite(tx: Tx, deviceId: string): Promise<{ cipherSuite: number; n: number }[]> {
  const rows = await tx
    .select({ cipherSuite: mlsKeyPackages.cipherSuite, n: count() })
    .from(mlsKeyPackages)
    .where(and(eq(mlsKeyPackages.deviceId, deviceId), isNull(mlsKeyPackages.claimedAt)))
    .groupBy(mlsKeyPackages.cipherSuite)
    .orderBy(asc(mlsKeyPackages.cipherSuite));
  return rows.map((r) => ({ cipherSuite: r.cipherSuite, n: Number(r.n) }));
}

/** Take the oldest unclaimed KeyPackage of a device with the given ciphersuite label (row-locked, skipping ones being claimed). */
export async function claimOldest(tx: Tx, deviceId: string, claimedBy: string, cipherSuite: number) {
  const [kp] = await tx
    .select()
    .from(mlsKeyPackages)
    .where(and(eq(mlsKeyPackages.deviceId, deviceId), isNull(mlsKeyPackages.claimedAt), eq(mlsKeyPackages.cipherSuite, cipherSuite)))
    .orderBy(asc(mlsKeyPackages.createdAt))
    .limit(1)
    .for('update', { skipLocked: true });
  if (!kp) return undefined;
  await tx.update(mlsKeyPackages).set({ claimedAt: new Date(), claimedBy }).where(eq(mlsKeyPackages.id, kp.id));
  return kp;
}

/** How many KeyPackages of `deviceId` `claimedBy` claimed since `since` (the cross-tenant claim cap). */
export async function claimedBySince(tx: Tx, deviceId: string, claimedBy: string, since: Date): Promise<number> {
  const [row] = await tx
    .select({ n: count() })
    .from(mlsKeyPackages)
    .where(and(eq(mlsKeyPackages.deviceId, deviceId), eq(mlsKeyPackages.claimedBy, claimedBy), gte(mlsKeyPackages.claimedAt, since)));
  return Number(row?.n ?? 0);
}

/**
 * Delete every KeyPackage and prekey (PQXDH and X3DH) a device published (on revocation: nobody may add it to a
 * group or start a session with it any more).
 */
export async function deleteKeyPackagesOf(tx: Tx, deviceId: string): Promise<void> {
  await tx.delete(mlsKeyPackages).where(eq(mlsKeyPackages.deviceId, deviceId));
  await tx.delete(pqPrekeys).where(eq(pqPrekeys.deviceId, deviceId));
}

/**
 * The `approved` or `active` A2A channel joining two devices (either direction), as the scope
 * sees it. `a2a_channels` is a two-party row (migration 0007): the caller's tenant scope sees the
 * channels it is the initiator's or the responder's tenant of, and nothing else. Read here, on the
 * schema table, so this module does not depend on the A2A module's internals.
 */
export async function approvedChannelJoining(tx: Tx, a: string, b: string) {
  const [row] = await tx
    .select({
      id: a2aChannels.id,
      tenantId: a2aChannels.tenantId,
      partnerTenantId: a2aChannels.partnerTenantId,
      initiatorDeviceId: a2aChannels.initiatorDeviceId,
      responderDeviceId: a2aChannels.responderDeviceId,
      agreementId: a2aChannels.agreementId,
      rentalId: a2aChannels.rentalId,
      approvedAt: a2aChannels.approvedAt,
      createdAt: a2aChannels.createdAt,
    })
    .from(a2aChannels)
    .where(
      and(
        inArray(a2aChannels.status, ['approved', 'active']),
        or(
          and(eq(a2aChannels.initiatorDeviceId, a), eq(a2aChannels.responderDeviceId, b)),
          and(eq(a2aChannels.initiatorDeviceId, b), eq(a2aChannels.responderDeviceId, a)),
        ),
      ),
    )
    .limit(1);
  return row;
}

/** Status and parties of a marketplace rental visible to the scope (two-party row), if any. */
export async function rentalParties(tx: Tx, id: string) {
  const [row] = await tx
    .select({ status: marketplaceRentals.status, tenantId: marketplaceRentals.tenantId, partnerTenantId: marketplaceRentals.partnerTenantId })
    .from(marketplaceRentals)
    .where(eq(marketplaceRentals.id, id));
  return row;
}

/**
 * Whether the device is bound to an API key of the scope's tenant (registered with
 * `client_key_register`): its KeyPackages serve its A2A channels (docs/decisions.md "MLS over A2A
 * channels").
 */
export async function boundToApiKey(tx: Tx, deviceId: string): Promise<boolean> {
  const [row] = await tx.select({ id: apiKeys.id }).from(apiKeys).where(eq(apiKeys.deviceId, deviceId)).limit(1);
  return row !== undefined;
}
