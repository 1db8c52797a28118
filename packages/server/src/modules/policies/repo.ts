/**
 * Policy, held-message and policy-evaluation queries (SPEC §2.7, §3.8; DESIGN §8.3, §8.5). All
 * take a tenant-scoped transaction, except `expireDueHeld`, which the expiry job runs across
 * tenants.
 */
import { and, asc, desc, eq, gt, inArray, lte, or, sql } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { a2aMessages, heldMessages, marketplaceRentalMessages, policies, policyEvaluations, roomEnvelopes, rooms } from '../../db/schema/index.js';
import type { PolicyAction, PolicyConditions, PolicyRule } from './engine.js';

export type PolicyRow = typeof policies.$inferSelect;
export type HeldRow = typeof heldMessages.$inferSelect;
export type EvaluationInsert = typeof policyEvaluations.$inferInsert;

export const insertPolicy = (tx: Tx, row: typeof policies.$inferInsert) => tx.insert(policies).values(row).returning();

/**
 * The tenant's policies in evaluation order: highest `priority` first, then oldest first. The
 * order only decides which of several equally restrictive matching policies is reported as the
 * winner (engine.ts `evaluate`: ties go to the first in list order).
 */
export const listPolicies = (tx: Tx, onlyEnabled = false) =>
  tx
    .select()
    .from(policies)
    .where(onlyEnabled ? eq(policies.enabled, true) : undefined)
    .orderBy(desc(policies.priority), asc(policies.createdAt), asc(policies.id));

export async function getPolicy(tx: Tx, id: string): Promise<PolicyRow | undefined> {
  const [row] = await tx.select().from(policies).where(eq(policies.id, id));
  return row;
}

export const updatePolicy = (tx: Tx, id: string, set: Partial<typeof policies.$inferInsert>) =>
  tx.update(policies).set(set).where(eq(policies.id, id)).returning();

export const deletePolicy = (tx: Tx, id: string) => tx.delete(policies).where(eq(policies.id, id)).returning({ id: policies.id });

/** Whether a room with this id is visible in the scoped tenant. */
export async function roomExists(tx: Tx, id: string): Promise<boolean> {
  const [row] = await tx.select({ id: rooms.id }).from(rooms).where(eq(rooms.id, id));
  return row !== undefined;
}

/**
 * Insert evaluation records with one statement of array parameters (`unnest`), whatever their
 * number (a no-op for an empty list); `created_at` takes its default. `matched_policy_ids`
 * travels as JSON text per row.
 */
export async function insertEvaluations(tx: Tx, rows: EvaluationInsert[]): Promise<void> {
  if (rows.length === 0) return;
  const col = <T>(f: (r: EvaluationInsert) => T) => sql.param(rows.map(f));
  await tx.execute(sql`
    insert into policy_evaluations (id, tenant_id, subject_kind, subject_id, sender_device_id, recipient_device_id,
                                    outcome, policy_id, matched_policy_ids, duration_us)
    select * from unnest(${col((r) => r.id)}::uuid[], ${col((r) => r.tenantId)}::uuid[], ${col((r) => r.subjectKind)}::text[],
                         ${col((r) => r.subjectId)}::uuid[], ${col((r) => r.senderDeviceId)}::uuid[], ${col((r) => r.recipientDeviceId ?? null)}::uuid[],
                         ${col((r) => r.outcome)}::text[], ${col((r) => r.policyId ?? null)}::uuid[],
                         ${col((r) => JSON.stringify(r.matchedPolicyIds ?? []))}::jsonb[], ${col((r) => r.durationUs)}::integer[])`);
}

/** Insert held messages (one statement; a no-op for an empty list). */
export async function insertHeld(tx: Tx, rows: (typeof heldMessages.$inferInsert)[]): Promise<void> {
  if (rows.length > 0) await tx.insert(heldMessages).values(rows);
}

/**
 * Held messages by effective status at `now`, oldest first: a `held` row whose `expires_at` has
 * passed counts as `expired` even before the expiry job marked it.
 */
export function listHeld(tx: Tx, status: string, now: Date) {
  const lapsed = and(eq(heldMessages.status, 'held'), lte(heldMessages.expiresAt, now));
  const where =
    status === 'held'
      ? and(eq(heldMessages.status, 'held'), gt(heldMessages.expiresAt, now))
      : status === 'expired'
        ? or(eq(heldMessages.status, 'expired'), lapsed)
        : eq(heldMessages.status, status);
  return tx.select().from(heldMessages).where(where).orderBy(asc(heldMessages.createdAt), asc(heldMessages.id));
}

/** A held message, locked for a decision. */
export async function getHeldForUpdate(tx: Tx, id: string): Promise<HeldRow | undefined> {
  const [row] = await tx.select().from(heldMessages).where(eq(heldMessages.id, id)).for('update');
  return row;
}

export async function updateHeld(tx: Tx, id: string, set: Partial<typeof heldMessages.$inferInsert>): Promise<HeldRow> {
  const [row] = await tx.update(heldMessages).set(set).where(eq(heldMessages.id, id)).returning();
  return row!;
}

/** Mark every `held` message whose `expires_at` <= `now` expired (all tenants the transaction sees). */
export const expireDueHeld = (tx: Tx, now: Date) =>
  tx
    .update(heldMessages)
    .set({ status: 'expired', decidedAt: now })
    .where(and(eq(heldMessages.status, 'held'), lte(heldMessages.expiresAt, now)))
    .returning();

/**
 * Drop the ciphertext of refused held items (denied or expired): room envelopes and A2A messages
 * keep their metadata with `outcome = 'blocked'` and null `header_blob` / `ciphertext`.
 */
export async function wipeHeldPayloads(tx: Tx, held: readonly (Pick<HeldRow, 'envelopeId' | 'a2aMessageId'> & { rentalMessageId?: string | null })[]): Promise<void> {
  const envelopeIds = held.map((h) => h.envelopeId).filter((id): id is string => id !== null);
  const a2aIds = held.map((h) => h.a2aMessageId).filter((id): id is string => id !== null);
  const rentalIds = held.map((h) => h.rentalMessageId).filter((id): id is string => typeof id === 'string');
  const wiped = { headerBlob: null, ciphertext: null, outcome: 'blocked' };
  if (envelopeIds.length > 0) await tx.update(roomEnvelopes).set(wiped).where(inArray(roomEnvelopes.id, envelopeIds));
  if (a2aIds.length > 0) await tx.update(a2aMessages).set(wiped).where(inArray(a2aMessages.id, a2aIds));
  if (rentalIds.length > 0) await tx.update(marketplaceRentalMessages).set(wiped).where(inArray(marketplaceRentalMessages.id, rentalIds));
}

/** A stored policy as the engine's rule (with its name, for answers that cite the deciding policy). */
export const toPolicyRule = (p: PolicyRow): PolicyRule & { name: string } => ({
  id: p.id,
  name: p.name,
  action: p.action as PolicyAction,
  conditions: p.conditions as PolicyConditions,
  scopeRoomId: p.scopeRoomId,
  scopeSkill: p.scopeSkill,
  enabled: p.enabled,
});
