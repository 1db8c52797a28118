/**
 * The tenant's marketplace settings (design §8.26, §8.29): its default payment method and its
 * connected account at the payment processor. Tenant tables, run in the tenant's scope.
 */
import { eq } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { connectedAccounts, paymentMethods } from '../../db/schema/index.js';

/** A connected account row. */
export type ConnectedAccountRow = typeof connectedAccounts.$inferSelect;

/** The tenant's default payment method, or null. */
export async function getPaymentMethod(tx: Tx, tenantId: string): Promise<string | null> {
  const [row] = await tx.select().from(paymentMethods).where(eq(paymentMethods.tenantId, tenantId));
  return row?.paymentMethod ?? null;
}

/** Set (insert or replace) the tenant's default payment method. */
export async function setPaymentMethod(tx: Tx, tenantId: string, paymentMethod: string, setBy: string): Promise<void> {
  await tx
    .insert(paymentMethods)
    .values({ tenantId, paymentMethod, setBy })
    .onConflictDoUpdate({ target: paymentMethods.tenantId, set: { paymentMethod, setBy, updatedAt: new Date() } });
}

/** The tenant's connected account, or undefined. */
export async function getAccount(tx: Tx, tenantId: string): Promise<ConnectedAccountRow | undefined> {
  const [row] = await tx.select().from(connectedAccounts).where(eq(connectedAccounts.tenantId, tenantId));
  return row;
}

/** Record the tenant's connected account (first creation wins; a concurrent second one is ignored). */
export async function insertAccount(tx: Tx, row: typeof connectedAccounts.$inferInsert): Promise<ConnectedAccountRow> {
  await tx.insert(connectedAccounts).values(row).onConflictDoNothing();
  return (await getAccount(tx, row.tenantId))!;
}

/** Update an account's readiness by processor account id (scope: its tenant). */
export const setAccountStatus = (tx: Tx, accountId: string, status: 'onboarding' | 'ready') =>
  tx.update(connectedAccounts).set({ status, updatedAt: new Date() }).where(eq(connectedAccounts.accountId, accountId)).returning();
