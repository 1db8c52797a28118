/**
 * The decisions this browser has seen (design §8.19), kept in `sessionStorage` so "Recently
 * answered" can name a decision (title, agent, options, note) after the inbox no longer lists it
 * — the audit trail carries ids only. At most {@link KNOWN_LIMIT}, the newest kept.
 */
import type { Decision } from '@parley/sdk';

const KEY = 'parley.decisions.known';
/** Most decisions remembered. */
export const KNOWN_LIMIT = 200;

/** The remembered decisions by id (design §8.19). */
export function knownDecisions(): Map<string, Decision> {
  try {
    const list = JSON.parse(sessionStorage.getItem(KEY) ?? '[]') as Decision[];
    return new Map(list.map((d) => [d.decision_id, d]));
  } catch {
    return new Map();
  }
}

const answeredAt = (d: Decision | undefined) => (d?.resolved_at ? Date.parse(d.resolved_at) : 0);

/**
 * Remember `decisions`. A copy replaces the remembered one unless that was answered later (a
 * list fetched before an answer must not turn it back to pending).
 */
export function rememberDecisions(decisions: readonly Decision[]): void {
  if (decisions.length === 0) return;
  const all = knownDecisions();
  for (const d of decisions) {
    if (answeredAt(all.get(d.decision_id)) > answeredAt(d)) continue;
    all.delete(d.decision_id);
    all.set(d.decision_id, d);
  }
  const list = [...all.values()].slice(-KNOWN_LIMIT);
  try {
    sessionStorage.setItem(KEY, JSON.stringify(list));
  } catch {
    // Storage full or refused: answers then show ids only.
  }
}
