/**
 * Pure view logic of the Telemetry screen (contract §2.15, §4.14; design §8.18): durations, error
 * rates, the summary's totals and the period of a summary. Unit-tested in `test/trust-view.test.ts`.
 */
import type { SpanStatus, TelemetrySummary } from '@parley/sdk';
import type { Tone } from './tones';

/** A span duration in microseconds as text: "850 µs", "12.3 ms", "1.24 s". */
export function formatDuration(us: number): string {
  if (!Number.isFinite(us)) return '—';
  if (us < 1000) return `${Math.round(us)} µs`;
  if (us < 1_000_000) return `${Math.round(us / 100) / 10} ms`;
  return `${Math.round(us / 10_000) / 100} s`;
}

/** A 0..1 rate as a percentage with one decimal ("2.5%"). */
export function formatRate(rate: number): string {
  return Number.isFinite(rate) ? `${Math.round(rate * 1000) / 10}%` : '—';
}

/** Totals over a summary's span names: spans, errors and the overall error rate (0 without spans). */
export function summaryTotals(summary: Pick<TelemetrySummary, 'spans'>): { count: number; errors: number; errorRate: number } {
  const count = summary.spans.reduce((n, s) => n + s.count, 0);
  const errors = summary.spans.reduce((n, s) => n + s.error_count, 0);
  return { count, errors, errorRate: count === 0 ? 0 : errors / count };
}

/** Badge colour of a span status (OTLP: unset, ok, error). */
export function spanTone(status: SpanStatus): Tone {
  return status === 'error' ? 'bad' : status === 'ok' ? 'good' : 'neutral';
}

/** Summary periods the screen offers, in hours (the service default is 24 h). */
export const PERIODS = [
  { hours: 1, label: 'Last hour' },
  { hours: 24, label: 'Last 24 hours' },
  { hours: 24 * 7, label: 'Last 7 days' },
] as const;

/** The `since` of a period ending at `now`, ISO 8601. */
export function sinceFor(hours: number, now = Date.now()): string {
  return new Date(now - hours * 3_600_000).toISOString();
}
