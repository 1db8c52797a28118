/**
 * Fleet statistics of the trust engine (contract §4.12 "Fleet context"; docs/trust-scoring.md
 * "Fleet context"): median, population standard deviation, mean, percentile rank, and the
 * per-dimension fleet medians used as the §3.9 fallback. Pure: no I/O, no clock.
 */
import { TRUST_DIMENSIONS, type DimensionScores, type TrustDimension } from './types.js';

/** The finite numbers of `xs` (NaN and ±Infinity are ignored everywhere in this file). */
function finite(xs: readonly number[]): number[] {
  return xs.filter((x) => Number.isFinite(x));
}

/** Median of the finite values (mean of the two middle ones for an even count); null when there are none. */
export function median(xs: readonly number[]): number | null {
  const s = finite(xs).sort((a, b) => a - b);
  if (s.length === 0) return null;
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Arithmetic mean of the finite values; null when there are none. */
export function mean(xs: readonly number[]): number | null {
  const s = finite(xs);
  if (s.length === 0) return null;
  return s.reduce((a, b) => a + b, 0) / s.length;
}

/** POPULATION standard deviation √(Σ(x − mean)² / n) of the finite values; null when there are none (0 for one value). */
export function stddev(xs: readonly number[]): number | null {
  const s = finite(xs);
  const m = mean(s);
  if (m === null) return null;
  return Math.sqrt(s.reduce((a, x) => a + (x - m) ** 2, 0) / s.length);
}

/**
 * Percentile rank, an integer 0-100 (contract §2.9, design §8.21): round(100 × (below + 0.5 × equal) / n)
 * where n = the finite values of `all` (which includes `value` itself), below/equal count those
 * strictly lower / equal. A fleet of one therefore ranks 50. Empty `all` → 50 (no context).
 */
export function percentileRank(value: number, all: readonly number[]): number {
  const s = finite(all);
  if (s.length === 0) return 50;
  let below = 0;
  let equal = 0;
  for (const x of s) {
    if (x < value) below++;
    else if (x === value) equal++;
  }
  return Math.min(100, Math.max(0, Math.round((100 * (below + 0.5 * equal)) / s.length)));
}

/**
 * Median of each dimension over the agents that measured it (contract §3.9 fallback). `measured` holds
 * one partial record per agent (missing key = that agent has no data); a dimension nobody measured
 * is absent from the result.
 */
export function fleetMedians(measured: readonly Partial<DimensionScores>[]): Partial<DimensionScores> {
  const out: Partial<DimensionScores> = {};
  for (const dim of TRUST_DIMENSIONS) {
    const m = median(measured.map((r) => r[dim]).filter((v): v is number => typeof v === 'number'));
    if (m !== null) out[dim] = m;
  }
  return out;
}

/** Per-dimension fleet statistics. */
export type FleetStats = Record<TrustDimension, { median: number | null; stddev: number | null; mean: number | null }>;

/**
 * Per dimension {median, stddev (population), mean} over complete score sets (one per agent, after
 * the §3.9 fallbacks) — the fleet overview of contract §4.12. All null for an empty fleet.
 */
export function fleetStats(rows: readonly DimensionScores[]): FleetStats {
  const out = {} as FleetStats;
  for (const dim of TRUST_DIMENSIONS) {
    const xs = rows.map((r) => r[dim]);
    out[dim] = { median: median(xs), stddev: stddev(xs), mean: mean(xs) };
  }
  return out;
}
