/**
 * The 12 trust dimensions of contract §2.9 measured from per-day signals (design §8.14; every formula,
 * source, missing rule and a worked example are in docs/trust-scoring.md), and the weighted
 * composite. Pure: no I/O, no clock. A dimension without data is ABSENT from the result (the §3.9
 * fallbacks in fallbacks.ts fill it); every present value is clamped to [0,1].
 */
import { categoricalPsi } from './psi.js';
import { median } from './fleet.js';
import { DIMENSION_WEIGHTS, TRUST_DIMENSIONS, type DailySignals, type DimensionScores } from './types.js';

/** Fleet context a measurement needs. `fleetMedianTokensPerSuccess`: median of the agents' {@link tokensPerSuccessfulTask} (null when nobody has one). */
export interface MeasureContext {
  fleetMedianTokensPerSuccess: number | null;
}

/** responsiveness: a decision resolved within this many seconds scores 1 (5 minutes). */
export const RESPONSE_FULL_SEC = 300;
/** responsiveness: a decision resolved after this many seconds (or expired) scores 0 (24 hours). */
export const RESPONSE_ZERO_SEC = 86_400;
/** volume: a day is a spike when its count exceeds this multiple of the active-day median … */
export const VOLUME_SPIKE_FACTOR = 3;
/** … and is at least this many messages. */
export const VOLUME_SPIKE_MIN = 20;
/** behavioral_consistency: the PSI at which the score reaches 0 (score = max(0, 1 − PSI / 0.5)). */
export const CONSISTENCY_ZERO_PSI = 0.5;

/** `x` clamped to [0,1] (NaN stays NaN: callers check finiteness first). The one clamp of the trust scores. */
export const clamp01 = (x: number): number => Math.min(1, Math.max(0, x));
const sum = (days: readonly DailySignals[], f: (d: DailySignals) => number): number =>
  days.reduce((s, d) => s + (Number.isFinite(f(d)) ? Math.max(0, f(d)) : 0), 0);

/** total task tokens / successful tasks over the days; null when no successful task or no tokens. */
export function tokensPerSuccessfulTask(days: readonly DailySignals[]): number | null {
  const tokens = sum(days, (d) => d.taskTokens);
  const ok = sum(days, (d) => d.tasksOk);
  return tokens > 0 && ok > 0 ? tokens / ok : null;
}

/**
 * Score of one decision latency (seconds): 1 at ≤ 300 s, 0 at ≥ 86 400 s, linear in ln(latency)
 * between: 1 − ln(L / 300) / ln(288). Negative or non-finite latencies count as 0 s / ≥ 24 h.
 */
export function latencyScore(latencySec: number): number {
  if (Number.isNaN(latencySec)) return 0;
  if (latencySec <= RESPONSE_FULL_SEC) return 1;
  if (latencySec >= RESPONSE_ZERO_SEC) return 0;
  return clamp01(1 - Math.log(latencySec / RESPONSE_FULL_SEC) / Math.log(RESPONSE_ZERO_SEC / RESPONSE_FULL_SEC));
}

/** The days merged per UTC day (counters added), ascending by day. */
function byDay(days: readonly DailySignals[]): { day: string; messages: number; spans: number; spanNames: Record<string, number> }[] {
  const map = new Map<string, { day: string; messages: number; spans: number; spanNames: Record<string, number> }>();
  for (const d of days) {
    const m = map.get(d.day) ?? { day: d.day, messages: 0, spans: 0, spanNames: {} };
    m.messages += Number.isFinite(d.messages) ? Math.max(0, d.messages) : 0;
    m.spans += Number.isFinite(d.spans) ? Math.max(0, d.spans) : 0;
    for (const [k, v] of Object.entries(d.spanNames)) m.spanNames[k] = (m.spanNames[k] ?? 0) + (Number.isFinite(v) ? Math.max(0, v) : 0);
    map.set(d.day, m);
  }
  return [...map.values()].sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : 0));
}

/** A day flagged by the volume spike detector. */
export interface VolumeSpike {
  day: string;
  messages: number;
  /** Median message count of the active days it was compared with. */
  median: number;
}

/**
 * The volume spike detector (contract §2.9 "spikes flagged"): active days = days with messages > 0;
 * a day is a spike when its count > 3 × the median of the active days' counts AND ≥ 20.
 * Returns the flagged days ascending (empty when there is no message).
 */
export function volumeSpikes(days: readonly DailySignals[]): VolumeSpike[] {
  const active = byDay(days).filter((d) => d.messages > 0);
  const m = median(active.map((d) => d.messages));
  if (m === null) return [];
  return active
    .filter((d) => d.messages > VOLUME_SPIKE_FACTOR * m && d.messages >= VOLUME_SPIKE_MIN)
    .map((d) => ({ day: d.day, messages: d.messages, median: m }));
}

/** volume = 1 − spike days / active days; null when no message was sent. */
function volume(days: readonly DailySignals[]): number | null {
  const active = byDay(days).filter((d) => d.messages > 0).length;
  return active === 0 ? null : 1 - volumeSpikes(days).length / active;
}

/**
 * behavioral_consistency: the merged days, ascending, split into an earlier half (the first
 * floor(n/2) days) and a later half (the rest); score = max(0, 1 − categoricalPsi(earlier mix,
 * later mix) / 0.5); null when either half has no span.
 */
function consistency(days: readonly DailySignals[]): number | null {
  const merged = byDay(days);
  const cut = Math.floor(merged.length / 2);
  const mix = (part: typeof merged) => {
    const out: Record<string, number> = {};
    for (const d of part) for (const [k, v] of Object.entries(d.spanNames)) out[k] = (out[k] ?? 0) + v;
    return out;
  };
  const earlier = merged.slice(0, cut);
  const later = merged.slice(cut);
  const total = (m: Record<string, number>) => Object.values(m).reduce((s, v) => s + v, 0);
  const e = mix(earlier);
  const a = mix(later);
  if (total(e) <= 0 || total(a) <= 0) return null;
  return Math.max(0, 1 - categoricalPsi(e, a) / CONSISTENCY_ZERO_PSI);
}

/**
 * version_health: versions merged over the days (spans and errors added, firstSeen = earliest),
 * ordered by firstSeen (then name). One version or none → 1; otherwise with before / after = error
 * rate of the previous / newest version: 1 − max(0, after − before) / (1 − before) (1 when
 * before = 1 or either version has no span). null when the days have no span at all.
 */
function versionHealth(days: readonly DailySignals[]): number | null {
  if (sum(days, (d) => d.spans) <= 0) return null;
  const versions = new Map<string, { spans: number; errors: number; firstSeen: string }>();
  for (const d of days) {
    for (const [name, v] of Object.entries(d.versions)) {
      const cur = versions.get(name);
      if (!cur) versions.set(name, { spans: v.spans, errors: v.errors, firstSeen: v.firstSeen });
      else {
        cur.spans += v.spans;
        cur.errors += v.errors;
        if (Date.parse(v.firstSeen) < Date.parse(cur.firstSeen)) cur.firstSeen = v.firstSeen;
      }
    }
  }
  const ordered = [...versions.entries()].sort(
    (a, b) => Date.parse(a[1].firstSeen) - Date.parse(b[1].firstSeen) || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0),
  );
  if (ordered.length < 2) return 1;
  const prev = ordered[ordered.length - 2]![1];
  const next = ordered[ordered.length - 1]![1];
  if (prev.spans <= 0 || next.spans <= 0) return 1;
  const before = clamp01(prev.errors / prev.spans);
  const after = clamp01(next.errors / next.spans);
  if (before >= 1) return 1;
  return 1 - Math.max(0, after - before) / (1 - before);
}

/** ratio num/den, or null when den ≤ 0. */
const ratio = (num: number, den: number): number | null => (den > 0 ? num / den : null);

/**
 * The dimensions that have data in these days (missing keys = no data), each clamped to [0,1].
 * Formulas (docs/trust-scoring.md): uptime = Σpresence/Σobserved hours; responsiveness = mean
 * {@link latencyScore} with expired decisions at 0; reliability = 1 − errorSpans/spans;
 * task_success = tasksOk/tasks; efficiency = taskTokensOk/taskTokens; volume = 1 − spike days /
 * active days; tool_accuracy = toolsOk/tools; error_discipline = recoveredErrors/errorSpans (1 with
 * spans but no error); compliance = 1 − violations/evaluations; token_efficiency =
 * min(1, fleet median / own tokens per successful task); behavioral_consistency and version_health
 * as described on their helpers.
 */
export function measureDimensions(days: readonly DailySignals[], ctx: MeasureContext): Partial<DimensionScores> {
  const spans = sum(days, (d) => d.spans);
  const errorSpans = sum(days, (d) => d.errorSpans);
  const latencies = days.flatMap((d) => d.decisionLatenciesSec);
  const expired = sum(days, (d) => d.decisionsExpired);
  const decisions = latencies.length + expired;
  const own = tokensPerSuccessfulTask(days);
  const fleet = ctx.fleetMedianTokensPerSuccess;

  const raw: Record<keyof DimensionScores, number | null> = {
    uptime: ratio(sum(days, (d) => d.presenceHours), sum(days, (d) => d.observedHours)),
    responsiveness: decisions > 0 ? latencies.reduce((s, l) => s + latencyScore(l), 0) / decisions : null,
    reliability: spans > 0 ? 1 - errorSpans / spans : null,
    task_success: ratio(sum(days, (d) => d.tasksOk), sum(days, (d) => d.tasks)),
    efficiency: ratio(sum(days, (d) => d.taskTokensOk), sum(days, (d) => d.taskTokens)),
    volume: volume(days),
    tool_accuracy: ratio(sum(days, (d) => d.toolsOk), sum(days, (d) => d.tools)),
    error_discipline: spans > 0 ? (errorSpans > 0 ? sum(days, (d) => d.recoveredErrors) / errorSpans : 1) : null,
    compliance: ((e) => (e > 0 ? 1 - sum(days, (d) => d.policyViolations) / e : null))(sum(days, (d) => d.policyEvaluations)),
    token_efficiency:
      own !== null && fleet !== null && Number.isFinite(fleet) && fleet > 0 ? Math.min(1, fleet / own) : null,
    behavioral_consistency: consistency(days),
    version_health: versionHealth(days),
  };
  const out: Partial<DimensionScores> = {};
  for (const dim of TRUST_DIMENSIONS) {
    const v = raw[dim];
    if (v !== null && Number.isFinite(v)) out[dim] = clamp01(v);
  }
  return out;
}

/**
 * Weighted composite of contract §2.9: Σ weight × value / Σ weights (the weights sum to 1.00), each
 * value clamped to [0,1] first (a non-finite value counts as 0). Result in [0,1].
 */
export function compositeScore(d: DimensionScores): number {
  let num = 0;
  let den = 0;
  for (const dim of TRUST_DIMENSIONS) {
    const w = DIMENSION_WEIGHTS[dim];
    const v = d[dim];
    num += w * (Number.isFinite(v) ? clamp01(v) : 0);
    den += w;
  }
  return clamp01(num / den);
}
