/** Key-binding queries: spent nonces (tenant-scoped transactions) and identity-key holders (across tenants). */
import { and, eq, isNull, lte, ne, or } from 'drizzle-orm';
import type { Db, Tx } from '../../db/client.js';
import { devices, keyBindingNonces } from '../../db/schema/index.js';

/**
 * Record `nonce` as spent in the caller's tenant transaction: forgets the tenant's spent nonces
 * that have expired anyway, then answers false when `nonce` was already spent (the primary key
 * serialises two concurrent uses), true after recording it.
 */
export async function spendNonce(tx: Tx, row: { nonce: string; tenantId: string; purpose: string; expiresAt: Date }, now: Date): Promise<boolean> {
  await tx.delete(keyBindingNonces).where(and(eq(keyBindingNonces.tenantId, row.tenantId), lte(keyBindingNonces.expiresAt, now)));
  const inserted = await tx.insert(keyBindingNonces).values({ ...row, usedAt: now }).onConflictDoNothing().returning({ nonce: keyBindingNonces.nonce });
  return inserted.length === 1;
}

/**
 * Whether a live (not deleted) device holds `identityHex` in another tenant than `tenantId`, or
 * holds it in `tenantId` without being REVOKED (a revoked device of the tenant is the one a
 * rotated API key's client registers again). One read across tenants (call through
 * `crossTenantRead`).
 */
export async function identityKeyHeldElsewhere(q: Db, identityHex: string, tenantId: string): Promise<boolean> {
  const [row] = await q
    .select({ id: devices.id })
    .from(devices)
    .where(and(eq(devices.identityPublicKey, identityHex), isNull(devices.deletedAt), or(ne(devices.tenantId, tenantId), ne(devices.status, 'REVOKED'))))
    .limit(1);
  return row !== undefined;
}

/** The tenant of a (not deleted) device, or undefined; run across tenants by the caller. */
export async function deviceTenantOf(tx: Tx, deviceId: string): Promise<string | undefined> {
  const [row] = await tx.select({ tenantId: devices.tenantId }).from(devices).where(and(eq(devices.id, deviceId), isNull(devices.deletedAt)));
  return row?.tenantId;
}
