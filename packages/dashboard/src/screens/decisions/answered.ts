/**
 * "Recently answered" decisions (contract §3.8, §4.15; design §8.4, §8.19). `GET /decisions` lists
 * only the awaiting ones (pending and deferred), so answers come from the audit trail
 * (`decision.resolved`: resolution and option id; `decision.expired`: the auto action's option —
 * never titles or notes, design §8.22) joined with the decisions this browser has seen (title,
 * agent, options, note), plus the answers this browser gave itself. Pure.
 */
import type { AuditEvent, Decision } from '@parley/sdk';

/** Where a decision ended up (design §8.4). */
export type AnswerStatus = 'approved' | 'denied' | 'deferred' | 'expired';

/** One answered decision, latest answer only. */
export interface Answer {
  decision_id: string;
  status: AnswerStatus;
  option_id: string | null;
  /** When it was answered (or expired). */
  at: string;
  /** Owner subject, `system` / `system:deadline` for the deadline. */
  by: string;
  /** The decision itself, when this browser has seen it. */
  decision: Decision | undefined;
}

const STATUS_OF: Record<string, AnswerStatus> = { approve: 'approved', deny: 'denied', defer: 'deferred' };

function fromEvent(e: AuditEvent, known: ReadonlyMap<string, Decision>): Answer | undefined {
  if (!e.subject || (e.type !== 'decision.resolved' && e.type !== 'decision.expired')) return undefined;
  const data = (e.data ?? {}) as { resolution?: string; option_id?: string | null };
  const status = e.type === 'decision.expired' ? 'expired' : STATUS_OF[data.resolution ?? ''];
  if (!status) return undefined;
  return { decision_id: e.subject, status, option_id: data.option_id ?? null, at: e.created_at, by: e.actor, decision: known.get(e.subject) };
}

function fromDecision(d: Decision): Answer | undefined {
  if (d.status === 'pending' || !d.resolved_at) return undefined;
  return { decision_id: d.decision_id, status: d.status, option_id: d.option_id, at: d.resolved_at, by: d.resolved_by ?? '', decision: d };
}

/**
 * The latest answer of each decision, newest first, at most `limit`: from audit `events` and
 * from `known` decisions already answered (whichever is newer; the same time prefers the known
 * decision, which carries the note).
 */
export function recentAnswers(events: readonly AuditEvent[], known: ReadonlyMap<string, Decision>, limit = 20): Answer[] {
  const latest = new Map<string, Answer>();
  const consider = (a: Answer | undefined) => {
    if (!a) return;
    const prev = latest.get(a.decision_id);
    if (!prev || Date.parse(a.at) > Date.parse(prev.at) || (a.at === prev.at && a.decision?.resolved_at)) latest.set(a.decision_id, a);
  };
  for (const d of known.values()) consider(fromDecision(d));
  for (const e of events) consider(fromEvent(e, known));
  return [...latest.values()].sort((a, b) => Date.parse(b.at) - Date.parse(a.at)).slice(0, limit);
}
