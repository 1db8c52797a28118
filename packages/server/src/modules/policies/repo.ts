/**
 * Policy, held-message and policy-evaluation queries (contract §2.7, §3.8; design §8.3, §8.5). All
 * take a tenant-scoped transaction, except `expireDueHeld`, which the expiry job runs across
 * tenants.
 */
import { and, asc, desc, eq, gt, inArray, lte, or, sql, type SQL } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { col, rowsOf, unnestRows } from '../../db/unnest.js';
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

/** A `policy_evaluations` row (a non-`allow` outcome) as {@link insertRecords} writes it (`created_at`: the transaction's time). */
export type EvaluationRecord = Omit<EvaluationInsert, 'createdAt'>;

/** Allowed evaluations of one (sender, subject kind) in one decision call, as {@link insertRecords} writes them. */
export interface AllowCount {
  id: string;
  tenantId: string;
  subjectKind: string;
  senderDeviceId: string;
  allows: number;
}

/**
 * The inserts of the records of one decision call, as two CTE bodies for the caller's statement
 * (db/unnest.ts `withAll`), always both and always the same text (a prepared statement's), empty lists
 * inserting nothing: the non-`allow` evaluations into `policy_evaluations` and the allow counts
 * into `policy_allow_counts`, from array parameters (`unnest`), both with `created_at` = the
 * transaction's `now()` (what the compliance dimension and the report read).
 */
export function recordInserts(evaluations: readonly EvaluationRecord[], allows: readonly AllowCount[]): SQL[] {
  const ev = unnestRows(evaluations, [
    col<EvaluationRecord>('id', 'uuid', (r) => r.id),
    col<EvaluationRecord>('tenant_id', 'uuid', (r) => r.tenantId),
    col<EvaluationRecord>('subject_kind', 'text', (r) => r.subjectKind),
    col<EvaluationRecord>('subject_id', 'uuid', (r) => r.subjectId),
    col<EvaluationRecord>('sender_device_id', 'uuid', (r) => r.senderDeviceId),
    col<EvaluationRecord>('recipient_device_id', 'uuid', (r) => r.recipientDeviceId),
    col<EvaluationRecord>('outcome', 'text', (r) => r.outcome),
    col<EvaluationRecord>('policy_id', 'uuid', (r) => r.policyId),
    col<EvaluationRecord>('matched_policy_ids', 'jsonb', (r) => r.matchedPolicyIds ?? []),
    col<EvaluationRecord>('duration_us', 'int', (r) => r.durationUs),
  ], 'e');
  const al = unnestRows(allows, [
    col<AllowCount>('id', 'uuid', (r) => r.id),
    col<AllowCount>('tenant_id', 'uuid', (r) => r.tenantId),
    col<AllowCount>('subject_kind', 'text', (r) => r.subjectKind),
    col<AllowCount>('sender_device_id', 'uuid', (r) => r.senderDeviceId),
    col<AllowCount>('allows', 'int', (r) => r.allows),
  ], 'a');
  return [
    sql`insert into policy_evaluations (id, tenant_id, subject_kind, subject_id, sender_device_id, recipient_device_id,
                                        outcome, policy_id, matched_policy_ids, duration_us)
        select * from ${ev}`,
    sql`insert into policy_allow_counts (id, tenant_id, subject_kind, sender_device_id, allows) select * from ${al}`,
  ];
}

/**
 * The version of the tenant's policy set (`policy_epochs`; 0 when no policy was ever written), as
 * a scalar expression for a caller's statement: a decision that read it in the statement that also
 * read its other inputs passes it to `decide`, which then needs no statement of its own while its
 * compiled set is current (compiled.ts).
 */
export const policyEpochOf = (tenantId: string): SQL => sql`coalesce((select epoch from policy_epochs where tenant_id = ${tenantId}), 0)::bigint`;

/** The tenant's enabled policies as {@link policiesIfChanged} reads them. */
interface PolicySetRow {
  epoch: string | number;
  id: string | null;
  name: string;
  scope_room_id: string | null;
  scope_skill: string | null;
  conditions: unknown;
  action: string;
  enabled: boolean;
}

/**
 * The tenant's policy-set version (`policy_epochs`, 0 when none was ever written) and, only when it
 * differs from `known` (null: nothing cached), its enabled policies in evaluation order (as
 * {@link listPolicies}), in ONE statement, one snapshot: the policies answered are those of the
 * version answered. With `known` current it answers no policy (the cache is valid).
 */
export async function policiesIfChanged(tx: Tx, tenantId: string, known: number | null): Promise<{ epoch: number; rules: (PolicyRule & { name: string })[] }> {
  const rows = await rowsOf<PolicySetRow>(
    tx.execute(sql`
      with e as (select ${policyEpochOf(tenantId)} as epoch)
      select e.epoch, p.id, p.name, p.scope_room_id, p.scope_skill, p.conditions, p.action, p.enabled
      from e left join policies p on p.tenant_id = ${tenantId} and p.enabled and e.epoch is distinct from ${known}::bigint
      order by p.priority desc, p.created_at asc, p.id asc`),
  );
  const rules = rows.flatMap((r) =>
    r.id === null
      ? []
      : [{ id: r.id, name: r.name, action: r.action as PolicyAction, conditions: (typeof r.conditions === 'string' ? JSON.parse(r.conditions) : r.conditions) as PolicyConditions, scopeRoomId: r.scope_room_id, scopeSkill: r.scope_skill, enabled: r.enabled }],
  );
  return { epoch: Number(rows[0]!.epoch), rules };
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
