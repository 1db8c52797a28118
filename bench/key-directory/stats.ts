/**
 * Sample statistics of bench/key-directory: median and p95 of a set of samples, and a timer.
 */

/** Median, p95 and mean of a set of samples (ms); a quantile is the sample at `floor(q * n)` of the sorted set. */
export interface Quantiles {
  p50: number;
  p95: number;
  mean: number;
  count: number;
}

const at = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;

/** {@link Quantiles} of `samples` (NaN for an empty set). */
export function quantiles(samples: readonly number[]): Quantiles {
  const s = [...samples].sort((a, b) => a - b);
  return { p50: at(s, 0.5), p95: at(s, 0.95), mean: s.reduce((a, b) => a + b, 0) / s.length, count: s.length };
}

/** Milliseconds since `start` (`process.hrtime.bigint()`). */
export const msSince = (start: bigint): number => Number(process.hrtime.bigint() - start) / 1e6;

/** Wall-clock time of `fn` in ms. */
export async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await fn();
  return msSince(start);
}

/** Per-call time (ms) of `fn` over `n` calls, one sample per call. */
export function samplesOf(n: number, fn: (i: number) => unknown): number[] {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const start = process.hrtime.bigint();
    fn(i);
    out.push(msSince(start));
  }
  return out;
}
