/**
 * Pure view logic of the Trust screen (contract §2.9, §3.3, §3.9, §4.12; design §8.14, §8.21):
 * drift bands, tier and band colours, fleet sorting, windows, dimension rows next to the fleet
 * median, and the history chart's data. No React, no network: unit-tested in
 * `test/trust-view.test.ts`.
 */
import { TRUST_DIMENSIONS, type TrustDimension, type TrustFleet, type TrustFleetAgent, type TrustHistory, type TrustScore, type TrustWindow } from '@parley/sdk';
import type { Tone } from './tones';

/** PSI drift band (contract §4.12): < 0.1 stable, 0.1-0.25 moderate (monitor), > 0.25 significant (alert). */
export type DriftBand = 'stable' | 'moderate' | 'significant';

/** The contract §4.12 PSI thresholds. */
export const PSI_MODERATE_FROM = 0.1;
export const PSI_SIGNIFICANT_ABOVE = 0.25;

/** The drift band of a PSI value (contract §4.12; 0.1 and 0.25 are moderate, as the service classifies them). */
export function driftBand(psi: number): DriftBand {
  if (psi < PSI_MODERATE_FROM) return 'stable';
  if (psi <= PSI_SIGNIFICANT_ABOVE) return 'moderate';
  return 'significant';
}

/** Badge colour of a drift band: stable good, moderate warn, significant bad (contract §4.12). */
export function driftTone(band: DriftBand): Tone {
  return band === 'stable' ? 'good' : band === 'moderate' ? 'warn' : 'bad';
}

/** Badge colour of a trust tier (contract §3.3; lowercase on the wire, design §8.21). */
export function tierTone(tier: string): Tone {
  return tier === 'enterprise' ? 'good' : tier === 'certified' ? 'info' : 'neutral';
}

/** The windows the screen offers (contract §3.9) and their length in days (the history `days`). */
export const WINDOWS: readonly TrustWindow[] = ['7d', '30d', '90d'];

/** Days of a window: `7d` → 7 (contract §3.9; the history route's `days`, contract §4.12). */
export function windowDays(window: TrustWindow): number {
  return Number.parseInt(window, 10);
}

/** A window from a URL or form value, or `fallback` when it is not one of {@link WINDOWS}. */
export function parseWindow(value: string | null | undefined, fallback: TrustWindow = '7d'): TrustWindow {
  return (WINDOWS as readonly string[]).includes(value ?? '') ? (value as TrustWindow) : fallback;
}

/** A fleet table column that sorts (design §8.14, §8.21). */
export type FleetSortKey = 'score' | 'percentile';
export interface FleetSort {
  key: FleetSortKey;
  dir: 'asc' | 'desc';
}

/** The fleet sorted by score or percentile; ties by agent id, so the order is stable. */
export function sortFleet(agents: readonly TrustFleetAgent[], sort: FleetSort): TrustFleetAgent[] {
  const value = (a: TrustFleetAgent) => (sort.key === 'score' ? a.composite_score : a.percentile);
  const sign = sort.dir === 'asc' ? 1 : -1;
  return [...agents].sort((a, b) => sign * (value(a) - value(b)) || a.agent_id.localeCompare(b.agent_id));
}

/** The sort after pressing a column header: another column sorts descending (best first), the same column flips. */
export function nextSort(current: FleetSort | undefined, key: FleetSortKey): FleetSort {
  if (current?.key !== key) return { key, dir: 'desc' };
  return { key, dir: current.dir === 'desc' ? 'asc' : 'desc' };
}

/** The `aria-sort` of a column header. */
export function ariaSort(current: FleetSort | undefined, key: FleetSortKey): 'ascending' | 'descending' | 'none' {
  if (current?.key !== key) return 'none';
  return current.dir === 'asc' ? 'ascending' : 'descending';
}

/** A dimension key as words: `task_success` → "Task success". */
export function dimensionLabel(d: string): string {
  const words = d.replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** A 0..1 score as text with two decimals ("0.73"); "—" when unknown. */
export function formatScore(v: number | null | undefined): string {
  return v === null || v === undefined || !Number.isFinite(v) ? '—' : v.toFixed(2);
}

/** A 0..1 value as a bar width in percent, clamped to 0..100. */
export function barPercent(v: number | null | undefined): number {
  if (v === null || v === undefined || !Number.isFinite(v)) return 0;
  return Math.min(100, Math.max(0, v * 100));
}

/** One row of the dimension bars: the agent's score, the fleet median (null without scored agents) and the score's source (contract §3.9). */
export interface DimensionRow {
  dimension: TrustDimension;
  label: string;
  value: number;
  median: number | null;
  source: string;
}

/** The 12 dimensions in contract §2.9 order, each next to the fleet median. */
export function dimensionRows(score: Pick<TrustScore, 'dimensions' | 'sources'>, fleet: Pick<TrustFleet, 'dimensions'> | undefined): DimensionRow[] {
  return TRUST_DIMENSIONS.map((d) => ({
    dimension: d,
    label: dimensionLabel(d),
    value: score.dimensions[d],
    median: fleet?.dimensions[d]?.median ?? null,
    source: score.sources[d],
  }));
}

/** Whether a score is wholly contract §3.9's warm-up answer (every dimension from `warmup`). */
export function isWarmup(score: Pick<TrustScore, 'sources'>): boolean {
  return TRUST_DIMENSIONS.every((d) => score.sources[d] === 'warmup');
}

/**
 * Whether the fleet overview counts the agent among its scored agents (the engine has stored a
 * score of it for the window and it is active); true while the overview is not known. An agent the
 * engine has not scored yet is answered with the warm-up score, `computed_at` being the time of the
 * answer, and is not in the overview.
 */
export function countedInFleet(agentId: string, fleet: Pick<TrustFleet, 'agents'> | undefined): boolean {
  return fleet === undefined || fleet.agents.some((a) => a.agent_id === agentId);
}

/** An English ordinal: 1 → "1st", 12 → "12th", 22 → "22nd" (percentiles, design §8.21). */
export function ordinal(n: number): string {
  const teen = n % 100 >= 11 && n % 100 <= 13;
  const suffix = teen ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
}

/** The history as chart data (uPlot's aligned columns): x in Unix seconds, y the composite score, oldest first. */
export function historySeries(history: Pick<TrustHistory, 'history'>): [number[], number[]] {
  const points = history.history
    .map((h) => ({ t: Date.parse(h.computed_at) / 1000, v: h.composite_score }))
    .filter((p) => Number.isFinite(p.t))
    .sort((a, b) => a.t - b.t);
  return [points.map((p) => p.t), points.map((p) => p.v)];
}

/** One drift row of the screen: a dimension's PSI with its band, or null without a baseline. */
export interface DriftRow {
  dimension: TrustDimension;
  label: string;
  psi: number | null;
  band: DriftBand | null;
  samples: string;
}

/** The drift answer as rows in contract §2.9 order (contract §4.12 bands). */
export function driftRows(dimensions: Record<TrustDimension, { psi: number; baseline_samples: number; current_samples: number } | null>): DriftRow[] {
  return TRUST_DIMENSIONS.map((d) => {
    const v = dimensions[d];
    return {
      dimension: d,
      label: dimensionLabel(d),
      psi: v ? v.psi : null,
      band: v ? driftBand(v.psi) : null,
      samples: v ? `${v.current_samples} days vs ${v.baseline_samples} baseline days` : 'no baseline',
    };
  });
}
