/**
 * Rental queries (contract §3.6; design §8.35). Rentals are two-party rows: the renter's scope
 * (`tenant_id`) and the developer's (`partner_tenant_id`) both see them (migration 0021).
 */
import { and, desc, eq, lt, lte, or, sql } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { marketplaceRentalMessages, marketplaceRentals as R } from '../../db/schema/index.js';
import { NEUTRAL_SCORE } from '@parley/protocol';

/** A stored rental. */
export type RentalRow = typeof R.$inferSelect;

export const insertRental = (tx: Tx, row: typeof R.$inferInsert) => tx.insert(R).values(row).returning();

export const updateRental = (tx: Tx, id: string, set: Partial<typeof R.$inferInsert>) => tx.update(R).set(set).where(eq(R.id, id)).returning();

/** One rental visible to the scope; `forUpdate` locks it. */
export async function getRental(tx: Tx, id: string, forUpdate = false): Promise<RentalRow | undefined> {
  const q = tx.select().from(R).where(eq(R.id, id));
  const [row] = forUpdate ? await q.for('update') : await q;
  return row;
}

/**
 * The renter tenant's newest ACTIVE rental of a hub identity, if any (in the renter's scope; the
 * A2A module's rental-backed channels, docs/decisions.md "A2A channels backed by rentals").
 */
export async function activeRentalOf(tx: Tx, renterTenantId: string, identityId: string): Promise<RentalRow | undefined> {
  const [row] = await tx
    .select()
    .from(R)
    .where(and(eq(R.tenantId, renterTenantId), eq(R.identityId, identityId), eq(R.status, 'active')))
    .orderBy(desc(R.activatedAt), desc(R.id))
    .limit(1);
  return row;
}

/** The rental of a processor charge (cross-tenant: the webhook handler). */
export async function rentalByCharge(tx: Tx, processor: string, chargeId: string): Promise<RentalRow | undefined> {
  const [row] = await tx.select().from(R).where(and(eq(R.processor, processor), eq(R.chargeId, chargeId)));
  return row;
}

/** A page of the scope's rentals on one side, newest first. */
export function listRentals(tx: Tx, q: { tenantId: string; role: 'renter' | 'developer'; status?: string | undefined; after?: { at: Date; id: string } | undefined; limit: number }) {
  const side = q.role === 'renter' ? eq(R.tenantId, q.tenantId) : eq(R.partnerTenantId, q.tenantId);
  const conds = [side];
  if (q.status) conds.push(eq(R.status, q.status));
  if (q.after) conds.push(or(lt(R.createdAt, q.after.at), and(eq(R.createdAt, q.after.at), lt(R.id, q.after.id)))!);
  return tx
    .select()
    .from(R)
    .where(and(...conds))
    .orderBy(desc(R.createdAt), desc(R.id))
    .limit(q.limit);
}

/** Active rentals whose term ended by `now` (cross-tenant: the term job), locked and skipped by concurrent claimers. */
export function dueRentals(tx: Tx, now: Date, limit: number) {
  return tx
    .select()
    .from(R)
    .where(and(eq(R.status, 'active'), lte(R.endsAt, now)))
    .orderBy(R.endsAt)
    .limit(limit)
    .for('update', { skipLocked: true });
}

/**
 * Rentals whose trust standing changed (cross-tenant: the monitor): active ones whose identity is
 * now below the listing's tier or score floor, and suspended ones (for trust) whose identity is
 * back. Reads the live identity and listing beside each rental; an identity not scored yet has
 * contract §3.9's warm-up score (trust/types.ts NEUTRAL_SCORE), as on its profile.
 */
export async function trustMismatches(tx: Tx): Promise<{ id: string; status: string; below: boolean }[]> {
  const res = (await tx.execute(sql`
    select r.id, r.status,
      (case h.trust_tier when 'enterprise' then 2 when 'certified' then 1 else 0 end) < (case l.min_tier when 'enterprise' then 2 else 1 end)
        or (l.min_score is not null and coalesce(h.trust_score, ${NEUTRAL_SCORE}::float8) < l.min_score)
        or h.status <> 'active' as below
    from marketplace_rentals r
    join marketplace_listings l on l.id = r.listing_id
    join hub_identities h on h.id = r.identity_id
    where r.status = 'active' or (r.status = 'suspended' and r.reason = 'trust_drop')`)) as unknown as { rows: { id: string; status: string; below: boolean }[] };
  return res.rows.filter((r) => (r.status === 'active') === r.below);
}

/** Drop the messages a suspension still holds (the rental ended without resuming): no ciphertext kept, outcome blocked. */
export const dropSuspensionHeld = (tx: Tx, rentalId: string) =>
  tx
    .update(marketplaceRentalMessages)
    .set({ outcome: 'blocked', headerBlob: null, ciphertext: null })
    .where(and(eq(marketplaceRentalMessages.rentalId, rentalId), eq(marketplaceRentalMessages.outcome, 'held'), eq(marketplaceRentalMessages.holdReason, 'suspension')));
