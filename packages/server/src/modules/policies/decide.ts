/**
 * Policy decisions for the message paths (contract §2.7, §2.9, §4.9; design §8.5): the
 * tenant's compiled policies (compiled.ts) against each item, inside the caller's tenant-scoped
 * transaction, and their `svc.policy.evaluate` records at the cost they deserve:
 *
 * - every non-`allow` outcome (block, hold, notify) is one `policy_evaluations` row, as before;
 * - `allow` outcomes are counted: one `policy_allow_counts` row per (sender, subject kind) of the
 *   call, with the number of allows. The compliance dimension (violations / evaluations) and the
 *   compliance report (outcomes per period) read both, and get the same answers as from one row
 *   per allowed delivery (same `created_at`: the transaction's time).
 */
import { randomUUID } from 'node:crypto';
import type { SQL } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { withAll } from '../../db/unnest.js';
import { getByDevice } from '../hub/index.js';
import type { CompiledPolicies } from './compiled.js';
import { PolicyBatch, type CompiledPolicy, type Evaluation } from './engine.js';
import * as repo from './repo.js';
import type { DecideItem } from './types.js';

/**
 * Per-item sender rates (room messages over the last minute, the item's own message included), one
 * per item in order. Called at most once per decision call, and only when an enabled policy has
 * `rate_per_minute_over`.
 */
export type RatesOf = (items: readonly DecideItem[]) => Promise<number[]>;

/**
 * Fill `ctx.senderTrustScore` of the items that carry none with their sender's score (the hub
 * identity bound to the sender device, read in `tx`; null without one), one read per sender.
 */
async function fillTrustScores(tx: Tx, items: readonly DecideItem[]): Promise<void> {
  const scores = new Map<string, number | null>();
  for (const item of items) {
    if (item.ctx.senderTrustScore !== undefined) continue;
    const sender = item.ctx.senderDeviceId;
    if (!scores.has(sender)) scores.set(sender, (await getByDevice(tx, sender))?.trustScore ?? null);
    item.ctx.senderTrustScore = scores.get(sender)!;
  }
}

/** The evaluations of a decision call and the inserts of its records, to run in the same transaction. */
export interface Decided {
  evaluations: Evaluation[];
  /** CTE bodies (db/unnest.ts `withAll`): the non-allow rows and the allow counts (repo.ts `recordInserts`); none for no item. */
  records: SQL[];
}

/**
 * The evaluations and record inserts of `items` against `compiled`, with no I/O: items carrying
 * `senderRatePerMinute` keep it, the others get `rates[i]` when given; `duration_us` of a record
 * is its item's own evaluation time in whole microseconds.
 */
function evaluateWith(compiled: readonly CompiledPolicy[], tenantId: string, items: readonly DecideItem[], rates?: readonly number[]): Decided {
  const evaluations: Evaluation[] = [];
  const records: repo.EvaluationRecord[] = [];
  const allows = new Map<string, repo.AllowCount>();
  const batch = new PolicyBatch(compiled);
  items.forEach((item, i) => {
    const ctx = rates && item.ctx.senderRatePerMinute === undefined ? { ...item.ctx, senderRatePerMinute: rates[i]! } : item.ctx;
    const start = process.hrtime.bigint();
    const ev = batch.evaluate(ctx, item.defaultOutcome);
    evaluations.push(ev);
    if (ev.outcome === 'allow') {
      const key = `${ctx.senderDeviceId}|${item.subjectKind}`;
      const count = allows.get(key);
      if (count) count.allows++;
      else allows.set(key, { id: randomUUID(), tenantId, subjectKind: item.subjectKind, senderDeviceId: ctx.senderDeviceId, allows: 1 });
      return;
    }
    records.push({
      id: randomUUID(),
      tenantId,
      subjectKind: item.subjectKind,
      subjectId: item.subjectId,
      senderDeviceId: ctx.senderDeviceId,
      recipientDeviceId: ctx.recipientDeviceId,
      outcome: ev.outcome,
      policyId: ev.policyId,
      matchedPolicyIds: ev.matched,
      durationUs: Number((process.hrtime.bigint() - start) / 1000n),
    });
  });
  return { evaluations, records: repo.recordInserts(records, [...allows.values()]) };
}

/**
 * Evaluate each item against the tenant's enabled policies (the cached compiled set: revalidated in
 * one statement, or by `epoch` when the caller read the version itself) and build the inserts of
 * the records (module comment) without running them; answers one Evaluation per item, in order.
 * When a compiled policy `usesTrustScore`, items without `senderTrustScore` get it written into
 * their context in place (so that A2A's second evaluation in the peer tenant uses the same score).
 * Items carrying `senderRatePerMinute` keep it; the others get `ratesOf`'s answer when a policy
 * reads the rate (0 without `ratesOf`).
 */
export async function evaluateAll(
  cache: CompiledPolicies,
  tx: Tx,
  tenantId: string,
  items: readonly DecideItem[],
  ratesOf?: RatesOf,
  epoch?: number,
): Promise<Decided> {
  if (items.length === 0) return { evaluations: [], records: [] };
  const compiled = await cache.get(tx, tenantId, epoch);
  const wantsRate = ratesOf && compiled.some((p) => p.usesRate) && items.some((i) => i.ctx.senderRatePerMinute === undefined);
  const rates = wantsRate ? await ratesOf(items) : undefined;
  if (compiled.some((p) => p.usesTrustScore)) await fillTrustScores(tx, items);
  return evaluateWith(compiled, tenantId, items, rates);
}

/**
 * {@link evaluateAll} without any I/O, for a caller that read the tenant's policy-set version
 * `epoch` itself: undefined when the cached set is not that version's, or when a policy needs a
 * read (`rate_per_minute_over`, `trust_score_below`); the caller then uses {@link evaluateAll}.
 */
export function evaluateCached(cache: CompiledPolicies, tenantId: string, items: readonly DecideItem[], epoch: number): Decided | undefined {
  const compiled = cache.peek(tenantId, epoch);
  if (!compiled || compiled.some((p) => p.usesRate || p.usesTrustScore)) return undefined;
  return evaluateWith(compiled, tenantId, items);
}

/** {@link evaluateAll}, then its records written (one statement); answers the evaluations. */
export async function decideAll(cache: CompiledPolicies, tx: Tx, tenantId: string, items: readonly DecideItem[], ratesOf?: RatesOf): Promise<Evaluation[]> {
  const { evaluations, records } = await evaluateAll(cache, tx, tenantId, items, ratesOf);
  if (evaluations.length > 0) await tx.execute(withAll(records));
  return evaluations;
}
