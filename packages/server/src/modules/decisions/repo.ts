/** Decision queries (contract §4.15; design §8.4, §8.19). Tenant-scoped unless a function says otherwise. */
import { and, asc, eq, gt, inArray, or, sql } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { decisions } from '../../db/schema/index.js';

export type DecisionRow = typeof decisions.$inferSelect;

/** States still awaiting the owner: listed by `GET /decisions`, resolvable, and expired by the deadline job. */
export const AWAITING = ['pending', 'deferred'] as const;

/** Who resolves a decision whose deadline passed (`resolved_by` of an expired row). */
export const DEADLINE_ACTOR = 'system:deadline';

export const insertDecision = (tx: Tx, row: typeof decisions.$inferInsert) => tx.insert(decisions).values(row).returning();

export async function getDecisionForUpdate(tx: Tx, id: string): Promise<DecisionRow | undefined> {
  const [row] = await tx.select().from(decisions).where(eq(decisions.id, id)).for('update');
  return row;
}

export async function updateDecision(tx: Tx, id: string, set: Partial<typeof decisions.$inferInsert>): Promise<DecisionRow> {
  const [row] = await tx.update(decisions).set(set).where(eq(decisions.id, id)).returning();
  return row!;
}

/** A position in the awaiting list: strictly after (`created_at`, `id`). */
export interface DecisionCursor {
  at: Date;
  id: string;
}

/** Awaiting decisions (pending and deferred), oldest first, `limit` rows after `after`. */
export function listAwaiting(tx: Tx, after: DecisionCursor | undefined, limit: number): Promise<DecisionRow[]> {
  const awaiting = inArray(decisions.status, [...AWAITING]);
  const where = after ? and(awaiting, or(gt(decisions.createdAt, after.at), and(eq(decisions.createdAt, after.at), gt(decisions.id, after.id)))) : awaiting;
  return tx.select().from(decisions).where(where).orderBy(asc(decisions.createdAt), asc(decisions.id)).limit(limit);
}

/**
 * Claim and expire due decisions in ONE statement: awaiting rows whose `deadline <= now` are locked
 * with `FOR UPDATE SKIP LOCKED` (a row another worker or an owner's resolution holds is left to
 * that transaction) and set `expired`, `option_id` = the auto_action's option (or null),
 * `resolved_by` {@link DEADLINE_ACTOR}. The UPDATE re-checks the status, so a row resolved or
 * claimed by a concurrent transaction that committed first is never returned twice: each
 * returned row is this caller's to announce, exactly once. Works across tenants (call inside
 * `crossTenant`) or within one (inside `withTenant`, RLS filters). At most `limit` rows per call.
 */
export async function claimDue(tx: Tx, now: Date, limit: number): Promise<DecisionRow[]> {
  const due = tx
    .select({ id: decisions.id })
    .from(decisions)
    .where(and(inArray(decisions.status, [...AWAITING]), sql`${decisions.deadline} <= ${now.toISOString()}::timestamptz`))
    .orderBy(asc(decisions.deadline))
    .limit(limit)
    .for('update', { skipLocked: true });
  return tx
    .update(decisions)
    .set({ status: 'expired', optionId: sql`${decisions.autoAction} ->> 'option_id'`, resolvedAt: now, resolvedBy: DEADLINE_ACTOR })
    .where(and(inArray(decisions.id, due), inArray(decisions.status, [...AWAITING])))
    .returning();
}
