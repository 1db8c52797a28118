/**
 * Federation agreement queries. Agreements are two-party rows: under RLS a tenant scope sees the
 * rows it proposed (`tenant_id`) and those proposed to it (`partner_tenant_id`).
 */
import { and, asc, desc, eq, gt, inArray, or } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { pairKey, xactLock } from '../../db/locks.js';
import { federationAgreements, tenants } from '../../db/schema/index.js';

/** A stored agreement; `status` is pending | active | revoked (expiry is derived). */
export type AgreementRow = typeof federationAgreements.$inferSelect;

export const insertAgreement = (tx: Tx, row: typeof federationAgreements.$inferInsert) => tx.insert(federationAgreements).values(row).returning();
export const listAgreements = (tx: Tx) => tx.select().from(federationAgreements).orderBy(asc(federationAgreements.createdAt), asc(federationAgreements.id));
export const updateAgreement = (tx: Tx, id: string, set: Partial<typeof federationAgreements.$inferInsert>) =>
  tx.update(federationAgreements).set(set).where(eq(federationAgreements.id, id)).returning();

/** One agreement visible to the scope, locked for update. */
export async function getAgreementForUpdate(tx: Tx, id: string): Promise<AgreementRow | undefined> {
  const [row] = await tx.select().from(federationAgreements).where(eq(federationAgreements.id, id)).for('update');
  return row;
}

const between = (a: string, b: string) =>
  or(
    and(eq(federationAgreements.tenantId, a), eq(federationAgreements.partnerTenantId, b)),
    and(eq(federationAgreements.tenantId, b), eq(federationAgreements.partnerTenantId, a)),
  );

/** Agreements between two tenants (either direction) in one of `statuses` that expire after `now`, latest expiry first. */
export const unexpiredBetween = (tx: Tx, a: string, b: string, statuses: string[], now: Date) =>
  tx
    .select()
    .from(federationAgreements)
    .where(and(between(a, b), inArray(federationAgreements.status, statuses), gt(federationAgreements.expiresAt, now)))
    .orderBy(desc(federationAgreements.expiresAt));

/**
 * Serialize writes that concern one tenant pair (either order) until the transaction ends, so
 * the one-live-agreement-per-pair check cannot race (transaction-scoped advisory lock).
 */
export async function lockPair(tx: Tx, a: string, b: string): Promise<void> {
  await xactLock(tx, pairKey('federation', a, b));
}

/** Whether a tenant exists; call inside crossTenant (the tenant is not the caller's). */
export async function tenantExists(tx: Tx, id: string): Promise<boolean> {
  const [row] = await tx.select({ id: tenants.id }).from(tenants).where(eq(tenants.id, id));
  return row !== undefined;
}
