/**
 * Countdowns to a deadline (design §8.3 held messages expire after 72 h; §8.4, §8.19 decision
 * deadlines fire their auto action): pure, so the screens and tests share one wording.
 */

/** What is left until a deadline: `expired` at or after it, else e.g. "4 min 12 s left". */
export interface Remaining {
  expired: boolean;
  /** "2 d 3 h left", "1 h 5 min left", "4 min 12 s left", "42 s left", or "expired". */
  text: string;
  /** Whole seconds left (rounded up), 0 once expired. */
  seconds: number;
}

const MINUTE = 60;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** The two largest units of a positive number of seconds, e.g. "4 min 12 s" (design §8.3, §8.19 countdowns). */
export function formatDuration(totalSeconds: number): string {
  const s = Math.max(0, Math.ceil(totalSeconds));
  if (s >= DAY) return `${Math.floor(s / DAY)} d ${Math.floor((s % DAY) / HOUR)} h`;
  if (s >= HOUR) return `${Math.floor(s / HOUR)} h ${Math.floor((s % HOUR) / MINUTE)} min`;
  if (s >= MINUTE) return `${Math.floor(s / MINUTE)} min ${s % MINUTE} s`;
  return `${s} s`;
}

/**
 * Time left from `nowMs` until `deadlineIso` (design §8.4, §8.19). Partial seconds round up, so
 * "1 s left" shows until the deadline itself, which reads "expired". An unparsable deadline
 * counts as expired.
 */
export function remaining(deadlineIso: string, nowMs: number): Remaining {
  const ms = Date.parse(deadlineIso) - nowMs;
  if (!Number.isFinite(ms) || ms <= 0) return { expired: true, text: 'expired', seconds: 0 };
  const seconds = Math.ceil(ms / 1000);
  return { expired: false, text: `${formatDuration(seconds)} left`, seconds };
}
