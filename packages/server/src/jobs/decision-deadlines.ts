/**
 * Scheduled job: fires the deadline of decisions (contract §4.15; design §8.4, §8.19). Each tick
 * claims every pending or deferred decision whose deadline has passed, marks it `expired` and
 * sends its agent `decision_response {decision_id, resolution: "expired", option_id, note: null,
 * auto_action}` (auto_action null when none was set). Every instance runs the job; the claim is
 * one `UPDATE … WHERE id IN (SELECT … FOR UPDATE SKIP LOCKED) AND status IN (…) RETURNING` (see
 * decisions/repo.ts `claimDue`), so a decision expires and is announced exactly once however
 * many instances race. An owner resolving a lapsed decision expires it the same way (409).
 * Delivery is after commit: a crash between the two loses that one response (at most once).
 */
import type { Metrics } from '../lib/metrics.js';
import { every } from './every.js';
import type { DecisionService } from '../modules/decisions/service.js';

/** Run once; returns how many decisions expired. */
export function fireDecisionDeadlines(decisions: DecisionService, now = new Date()): Promise<number> {
  return decisions.expireDue(now);
}

/** Run every `intervalMs`; returns a stop function. Errors are logged, never thrown. */
export function scheduleDecisionDeadlines(decisions: DecisionService, intervalMs: number, onError: (err: unknown) => void, metrics?: Metrics): () => void {
  return every('decision_deadlines', intervalMs, () => fireDecisionDeadlines(decisions), onError, metrics);
}
