/**
 * Population Stability Index (contract §4.12 drift; docs/trust-scoring.md "Drift (PSI)"):
 * PSI = Σ (a% − e%) × ln(a% / e%) over bins (numeric values in [0,1]) or categories (span-name mix),
 * the interpretation thresholds, and the choice of the per-dimension baseline window. Pure: no I/O,
 * no clock (days are `YYYY-MM-DD` strings supplied by the caller).
 */
import type { DriftStatus } from '@parley/protocol';
import type { DimensionScores, TrustDimension } from './types.js';

/** Number of equal-width bins over [0,1]: bin i = [i/10, (i+1)/10), the last one closed ([0.9, 1.0]). */
export const PSI_BINS = 10;
/**
 * Floor of a proportion inside PSI: a proportion below ε (an empty bin/category) counts as ε, on
 * BOTH sides, without renormalising. Each PSI term stays ≥ 0 because a − e and ln(a/e) share a sign.
 */
export const PSI_EPSILON = 1e-4;
/** contract §4.12: PSI below this is stable. */
export const PSI_STABLE_BELOW = 0.1;
/** contract §4.12: PSI above this is significant (alert); between the two (inclusive) it is moderate. */
export const PSI_SIGNIFICANT_ABOVE = 0.25;
/** Default baseline window length in days (contract §4.12 "first 30-day window"). */
export const BASELINE_DAYS = 30;
/** Share of the window's days that must carry data for the window to count as stable operation (20 of 30). */
export const BASELINE_MIN_COVERAGE = 2 / 3;

/**
 * Bin index of a value: values are clamped to [0,1]; 1.0 falls in the last bin; an exact edge k/bins
 * starts bin k. Non-finite values return -1 (ignored).
 */
export function binIndex(value: number, bins: number = PSI_BINS): number {
  if (!Number.isFinite(value)) return -1;
  const v = Math.min(1, Math.max(0, value));
  return Math.min(bins - 1, Math.floor(v * bins));
}

/**
 * Proportion of `values` in each of `bins` equal-width bins over [0,1] (see {@link binIndex}); the
 * proportions sum to 1. Non-finite values are ignored; no values → an array of zeros.
 * @throws RangeError when `bins` is not a positive integer.
 */
export function binProportions(values: readonly number[], bins: number = PSI_BINS): number[] {
  if (!Number.isInteger(bins) || bins < 1) throw new RangeError(`bins must be a positive integer, got ${bins}`);
  const counts = new Array<number>(bins).fill(0);
  let n = 0;
  for (const v of values) {
    const i = binIndex(v, bins);
    if (i < 0) continue;
    counts[i]!++;
    n++;
  }
  return n === 0 ? counts : counts.map((c) => c / n);
}

/** One PSI term with the ε floor on both proportions. */
function term(e: number, a: number): number {
  const ee = Math.max(PSI_EPSILON, Number.isFinite(e) ? e : 0);
  const aa = Math.max(PSI_EPSILON, Number.isFinite(a) ? a : 0);
  return (aa - ee) * Math.log(aa / ee);
}

/**
 * PSI of two PROPORTION vectors of the same length (e.g. `binProportions` of the baseline and of the
 * current window): Σ (a − e) × ln(a / e), each proportion floored at {@link PSI_EPSILON}. Always ≥ 0;
 * psi(x, x) = 0.
 * @throws RangeError when the lengths differ.
 */
export function psi(expected: readonly number[], actual: readonly number[]): number {
  if (expected.length !== actual.length) {
    throw new RangeError(`psi: expected has ${expected.length} bins, actual has ${actual.length}`);
  }
  let sum = 0;
  for (let i = 0; i < expected.length; i++) sum += term(expected[i]!, actual[i]!);
  return sum;
}

/** contract §4.12 interpretation of a PSI value. */
export type { DriftStatus };

/** PSI < 0.1 → stable; 0.1 ≤ PSI ≤ 0.25 → moderate (monitor); PSI > 0.25 → significant (alert). NaN → significant. */
export function driftStatus(value: number): DriftStatus {
  if (value < PSI_STABLE_BELOW) return 'stable';
  if (value <= PSI_SIGNIFICANT_ABOVE) return 'moderate';
  return 'significant';
}

/**
 * PSI between two categorical count maps (the span-name mix): categories = union of the keys,
 * proportions = count / side total (negative or non-finite counts count as 0), ε for a category a
 * side lacks. A side whose total is 0 has every proportion at ε (callers skip that case).
 */
export function categoricalPsi(
  expected: Readonly<Record<string, number>>,
  actual: Readonly<Record<string, number>>,
): number {
  const keys = [...new Set([...Object.keys(expected), ...Object.keys(actual)])].sort();
  const count = (m: Readonly<Record<string, number>>, k: string): number => {
    const v = m[k];
    return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0;
  };
  const totalE = keys.reduce((s, k) => s + count(expected, k), 0);
  const totalA = keys.reduce((s, k) => s + count(actual, k), 0);
  let sum = 0;
  for (const k of keys) {
    sum += term(totalE > 0 ? count(expected, k) / totalE : 0, totalA > 0 ? count(actual, k) / totalA : 0);
  }
  return sum;
}

/** One agent's per-day dimension values (trust_daily_scores rows), ascending by day (YYYY-MM-DD). */
export interface DailyDimensionRow {
  day: string;
  dimensions: Partial<DimensionScores>;
}

const DAY_MS = 86_400_000;
const DAY_RE = /^\d{4}-\d{2}-\d{2}$/;

/** `YYYY-MM-DD` → UTC epoch day number. @throws RangeError on a malformed day. */
function dayNumber(day: string): number {
  const ms = DAY_RE.test(day) ? Date.parse(`${day}T00:00:00Z`) : NaN;
  if (!Number.isFinite(ms)) throw new RangeError(`not a YYYY-MM-DD day: ${day}`);
  return Math.round(ms / DAY_MS);
}

/** UTC epoch day number → `YYYY-MM-DD`. */
function dayString(n: number): string {
  return new Date(n * DAY_MS).toISOString().slice(0, 10);
}

/** True when the row carries at least one finite dimension value. */
function hasData(r: DailyDimensionRow): boolean {
  return Object.values(r.dimensions).some((v) => typeof v === 'number' && Number.isFinite(v));
}

/**
 * The baseline window of contract §4.12 (docs/trust-scoring.md "Baseline"). A window is `days` (default
 * 30) consecutive UTC days [start, end]; it is STABLE when at least ceil(days × 2/3) of its days
 * (20 of 30) have a row with data. Rows before `notBefore` are ignored in both modes, and so are
 * rows on or after `before` when given (callers pass today: the running day is incomplete, only
 * complete days feed a baseline).
 * - mode 'first': the earliest stable window that starts on a day with data (≥ notBefore) and ends
 *   at or before the last (kept) row's day (the window must be complete).
 * - mode 'latest' (recalibration): the window that ends at the last (kept) row's day, if stable.
 * Returns {start, end, rows in the window}, or null when there is no such window.
 * @throws RangeError on a malformed day string or a non-positive `days`.
 */
export function chooseBaselineWindow(
  rows: readonly DailyDimensionRow[],
  o: { notBefore: string; before?: string; mode: 'first' | 'latest'; days?: number },
): { start: string; end: string; rows: DailyDimensionRow[] } | null {
  const days = o.days ?? BASELINE_DAYS;
  if (!Number.isInteger(days) || days < 1) throw new RangeError(`days must be a positive integer, got ${days}`);
  const minDays = Math.ceil(days * BASELINE_MIN_COVERAGE);
  const floor = dayNumber(o.notBefore);
  const ceiling = o.before === undefined ? Infinity : dayNumber(o.before);
  const usable = rows
    .map((r) => ({ r, n: dayNumber(r.day) }))
    .filter((x) => x.n >= floor && x.n < ceiling)
    .sort((a, b) => a.n - b.n);
  if (usable.length === 0) return null;
  const last = usable[usable.length - 1]!.n;
  const windowAt = (start: number) => {
    const end = start + days - 1;
    const inside = usable.filter((x) => x.n >= start && x.n <= end);
    const covered = new Set(inside.filter((x) => hasData(x.r)).map((x) => x.n)).size;
    return { start: dayString(start), end: dayString(end), rows: inside.map((x) => x.r), stable: covered >= minDays };
  };
  const result = (w: ReturnType<typeof windowAt>) => ({ start: w.start, end: w.end, rows: w.rows });
  if (o.mode === 'latest') {
    const w = windowAt(last - days + 1);
    return w.stable ? result(w) : null;
  }
  const starts = [...new Set(usable.filter((x) => hasData(x.r)).map((x) => x.n))];
  for (const s of starts) {
    if (s + days - 1 > last) break;
    const w = windowAt(s);
    if (w.stable) return result(w);
  }
  return null;
}

/**
 * A dimension's baseline from window rows: {@link binProportions} of its finite daily values and the
 * number of values; null when the dimension has no value in the rows.
 */
export function baselineFor(rows: readonly DailyDimensionRow[], dim: TrustDimension): { bins: number[]; samples: number } | null {
  const values = rows.map((r) => r.dimensions[dim]).filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
  if (values.length === 0) return null;
  return { bins: binProportions(values), samples: values.length };
}
