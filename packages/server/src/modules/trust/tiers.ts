/**
 * Trust tiers with hysteresis (contract §3.3; docs/trust-scoring.md "Tiers"): a tier falls at once when
 * the latest 7-day composite drops below the current tier's threshold, and rises only after the
 * composite stayed at or above the new threshold for the whole hold (default 7 days). Pure: `now`
 * comes in as an argument.
 */
import { TIER_HOLD_DAYS, TIER_THRESHOLDS, TIERS, type ScorePoint, type Tier } from './types.js';

const DAY_MS = 86_400_000;

/** Highest tier whose threshold ≤ score (0.6 → certified, 0.8 → enterprise); non-finite → unverified. */
export function tierForScore(score: number): Tier {
  let out: Tier = 'unverified';
  if (!Number.isFinite(score)) return out;
  for (const t of TIERS) if (TIER_THRESHOLDS[t] <= score) out = t;
  return out;
}

/** Result of {@link evaluateTier}: the tier to hold now, how it moved, the held score and a readable reason. */
export interface TierEvaluation {
  tier: Tier;
  direction: 'up' | 'down' | 'none';
  /** Lowest composite over the hold (see evaluateTier), or null when the series does not cover the hold. */
  heldScore: number | null;
  reason: string;
}

const rank = (t: Tier): number => TIERS.indexOf(t);
const fmt = (x: number): string => x.toFixed(4);

/**
 * The lowest composite in effect during [now − holdDays, now]: the composites of the points inside
 * that interval plus the point in effect at its start (the last one at or before it), and `latest`.
 * null when the series does not cover the hold (no point at or before now − holdDays).
 */
export function heldScoreOf(series: readonly ScorePoint[], latest: number, now: Date, holdDays: number = TIER_HOLD_DAYS): number | null {
  const nowMs = now.getTime();
  const startMs = nowMs - holdDays * DAY_MS;
  const points = series.filter((p) => p.at.getTime() <= nowMs).sort((a, b) => a.at.getTime() - b.at.getTime());
  const first = points[0];
  if (!first || first.at.getTime() > startMs) return null;
  let atStart = first;
  for (const p of points) if (p.at.getTime() <= startMs) atStart = p;
  let min = Math.min(latest, atStart.composite);
  for (const p of points) if (p.at.getTime() >= startMs) min = Math.min(min, p.composite);
  return Number.isFinite(min) ? min : 0;
}

/**
 * contract §3.3 tier evaluation. `series`: the agent's 7-day composites, ascending by `at`, the latest
 * included (points after `now` are ignored).
 * - Falls at once: latest < threshold(current) → tierForScore(latest) (enterprise may land on
 *   certified or unverified).
 * - Rises only to tierForScore(heldScore), where heldScore = {@link heldScoreOf}: the lowest
 *   composite in effect over [now − holdDays, now]; when the series does not reach back to
 *   now − holdDays, heldScore is null and the tier stays.
 * A non-finite `latest` counts as 0. holdDays defaults to TIER_HOLD_DAYS (7).
 * @throws RangeError when holdDays is not a positive number.
 */
export function evaluateTier(input: {
  current: Tier;
  latest: number;
  series: readonly ScorePoint[];
  now: Date;
  holdDays?: number;
}): TierEvaluation {
  const holdDays = input.holdDays ?? TIER_HOLD_DAYS;
  if (!(holdDays > 0) || !Number.isFinite(holdDays)) throw new RangeError(`holdDays must be positive, got ${holdDays}`);
  const latest = Number.isFinite(input.latest) ? input.latest : 0;
  const { current } = input;
  const heldScore = heldScoreOf(input.series, latest, input.now, holdDays);
  const threshold = TIER_THRESHOLDS[current];
  if (latest < threshold) {
    const tier = tierForScore(latest);
    return {
      tier,
      direction: 'down',
      heldScore,
      reason: `latest score ${fmt(latest)} is below the ${current} threshold ${threshold}: demoted to ${tier}`,
    };
  }
  if (heldScore === null) {
    return { tier: current, direction: 'none', heldScore, reason: `score history does not cover the ${holdDays}-day hold yet` };
  }
  const target = tierForScore(heldScore);
  if (rank(target) > rank(current)) {
    return {
      tier: target,
      direction: 'up',
      heldScore,
      reason: `score stayed at or above ${TIER_THRESHOLDS[target]} (lowest ${fmt(heldScore)}) for ${holdDays} days: promoted to ${target}`,
    };
  }
  const next = TIERS[rank(current) + 1];
  return {
    tier: current,
    direction: 'none',
    heldScore,
    reason:
      next === undefined
        ? `highest tier; latest score ${fmt(latest)} keeps ${current}`
        : `lowest score over the last ${holdDays} days is ${fmt(heldScore)}, below the ${next} threshold ${TIER_THRESHOLDS[next]}`,
  };
}
