/**
 * Report formatting shared by the benchmarks that drive the real app (bench/relay, bench/rooms):
 * numbers, ratios, the results table (text and Markdown), latency summaries and the per-phase
 * resource lines.
 */
import os from 'node:os';
import type { LatencySummary } from './common.js';
import type { Resources } from './resources.js';

export const fmt = (v: number, d = 1) => (Number.isFinite(v) ? v.toFixed(d) : '-');

/** `a / b` as `1.23x`, with enough digits for ratios far below 1 (`0.0123x`); `-` without a `b`. */
export const ratio = (a: number, b: number | undefined) => {
  if (!b || !Number.isFinite(a)) return '-';
  const r = a / b;
  return `${r >= 10 ? r.toFixed(1) : r >= 0.1 ? r.toFixed(2) : r.toPrecision(2)}x`;
};

/** Print `rows` under `header` as an aligned text table (first column left-aligned); answer the same table in Markdown. */
export function printTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of rows) console.log(line(r));
  return [`| ${header.join(' | ')} |`, `|${header.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

/** `latency p50 … p90 … p99 … max … mean … ms (N samples)`, in ms with two decimals. */
export const latencyText = (l: LatencySummary) =>
  `latency p50 ${fmt(l.p50, 2)} p90 ${fmt(l.p90, 2)} p99 ${fmt(l.p99, 2)} max ${fmt(l.max, 2)} mean ${fmt(l.mean, 2)} ms (${l.count} samples)`;

/** The heading of the resource lines. */
export const resourcesHeading = () =>
  `resources in the measured windows (CPU in % of one core; the machine has ${os.cpus().length} cores; "machine" counts every process, the bench's and others'):`;

/** A measured phase as the resource line needs it. */
export interface MeasuredPhase {
  name: string;
  measuredMs: number;
  /** CPU (ms) the load generator used in the window. */
  clientCpuMs: number;
}

/**
 * The resource line of phase `p` of scenario `label`: CPU of the server, the load generator, the
 * PostgreSQL backends and the machine (percent of one core; `-` when not sampled), CPU per `unit`
 * (`count` of them in the window; the load generator's too when `client`), and the server's
 * event-loop delay.
 */
export function resourceLine(label: string, p: MeasuredPhase, res: Resources | undefined, per: { unit: string; count: number; client?: boolean }): string {
  const pct = (v: number | undefined) => (v === undefined ? '-' : `${v.toFixed(0)}%`);
  const cpu = (percent: number | undefined) => (percent === undefined ? undefined : (percent * p.measuredMs) / 100);
  const each = (ms: number | undefined) => (ms === undefined || per.count === 0 ? '-' : `${((1000 * ms) / per.count).toFixed(0)} µs`);
  return (
    `  ${label} / ${p.name}: server ${pct(res?.serverCpuPct)}, load generator ${pct((100 * p.clientCpuMs) / p.measuredMs)}, postgres backends ${pct(res?.pgCpuPct)}, machine ${pct(res?.machineCpuPct)}${res?.kdamondCpuPct === undefined ? '' : ` (kernel kdamond ${pct(res.kdamondCpuPct)})`}; ` +
    `CPU per ${per.unit}: server ${each(cpu(res?.serverCpuPct))}, postgres ${each(cpu(res?.pgCpuPct))}${per.client ? `, load generator ${each(p.clientCpuMs)}` : ''}; ` +
    `server event-loop delay p50 ${fmt(res?.loopDelayP50Ms ?? NaN, 1)} p99 ${fmt(res?.loopDelayP99Ms ?? NaN, 1)} max ${fmt(res?.loopDelayMaxMs ?? NaN, 1)} ms`
  );
}
