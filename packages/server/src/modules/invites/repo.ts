/** Invite queries (contract §2.2). All take a tenant-scoped transaction except `findTenantByTokenHash`. */
import { and, eq, isNull, lt, sql } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { invites } from '../../db/schema/index.js';

export type InviteRow = typeof invites.$inferSelect;

export const insertInvite = (tx: Tx, row: typeof invites.$inferInsert) => tx.insert(invites).values(row).returning();

export const listInvites = (tx: Tx) =>
  tx.select().from(invites).where(isNull(invites.deletedAt)).orderBy(sql`${invites.createdAt} desc`);

export async function getInvite(tx: Tx, id: string, forUpdate = false): Promise<InviteRow | undefined> {
  const q = tx.select().from(invites).where(and(eq(invites.id, id), isNull(invites.deletedAt)));
  const [row] = forUpdate ? await q.for('update') : await q;
  return row;
}

/** Tenant of an invite token hash (cross-tenant lookup; the caller holds the raw token). */
export async function findTenantByTokenHash(tx: Tx, tokenHash: string): Promise<{ id: string; tenantId: string } | undefined> {
  const [row] = await tx
    .select({ id: invites.id, tenantId: invites.tenantId })
    .from(invites)
    .where(eq(invites.tokenHash, tokenHash));
  return row;
}

export const updateInvite = (tx: Tx, id: string, set: Partial<typeof invites.$inferInsert>) =>
  tx.update(invites).set(set).where(eq(invites.id, id)).returning();

/** Mark every lapsed active invite `expired` (all tenants the transaction can see). */
export const expireLapsed = (tx: Tx, now: Date) =>
  tx
    .update(invites)
    .set({ status: 'expired' })
    .where(and(eq(invites.status, 'active'), lt(invites.expiresAt, now)))
    .returning({ id: invites.id });
