/**
 * The pure trust-scoring functions (contract §2.9, §3.3, §3.9, §4.12; design §8.14;
 * docs/trust-scoring.md): every dimension on a small hand-computed fixture (the arithmetic is in the
 * comments, the expected value a literal), the composite, the §3.9 fallbacks, fleet statistics,
 * PSI and binning, baseline windows, tier hysteresis over simulated days, and fast-check properties.
 * No database.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NEUTRAL_TRUST_SCORE, TIERS as POLICY_TIERS } from '../../src/modules/policies/engine.js';
import { TRUST_TIERS } from '../../src/modules/hub/repo.js';
import { windowScores } from '../../src/modules/trust/query.js';
import { verifyScores } from '../../src/modules/verification/service.js';
import {
  clamp01,
  compositeScore,
  latencyScore,
  measureDimensions,
  tokensPerSuccessfulTask,
  volumeSpikes,
} from '../../src/modules/trust/dimensions.js';
import { applyFallbacks } from '../../src/modules/trust/fallbacks.js';
import { fleetMedians, fleetStats, mean, median, percentileRank, stddev } from '../../src/modules/trust/fleet.js';
import {
  baselineFor,
  binIndex,
  binProportions,
  categoricalPsi,
  chooseBaselineWindow,
  driftStatus,
  psi,
  PSI_BINS,
  PSI_EPSILON,
  type DailyDimensionRow,
} from '../../src/modules/trust/psi.js';
import { evaluateTier, tierForScore } from '../../src/modules/trust/tiers.js';
import {
  asTier,
  DIMENSION_WEIGHTS,
  emptySignals,
  NEUTRAL_SCORE,
  tierRank,
  TIERS,
  TRUST_DIMENSIONS,
  type DailySignals,
  type DimensionScores,
  type ScorePoint,
  type Tier,
} from '../../src/modules/trust/types.js';

/** A day with every counter at zero, then the overrides. */
function sig(day: string, o: Partial<DailySignals> = {}): DailySignals {
  return { ...emptySignals(day), ...o };
}
const NO_FLEET = { fleetMedianTokensPerSuccess: null };
const measure = (days: DailySignals[], fleet: number | null = null) => measureDimensions(days, { fleetMedianTokensPerSuccess: fleet });

describe('dimensions (hand-computed fixtures)', () => {
  it('uptime = Σ presence hours / Σ observed hours', () => {
    // (18 + 6) / (24 + 12) = 24 / 36 = 0.666667
    expect(measure([sig('2025-03-01', { presenceHours: 18, observedHours: 24 }), sig('2025-03-02', { presenceHours: 6, observedHours: 12 })]).uptime).toBeCloseTo(0.666667, 6);
    // presence beyond the observed hours clamps to 1; no observed hour → missing
    expect(measure([sig('2025-03-01', { presenceHours: 5, observedHours: 3 })]).uptime).toBe(1);
    expect(measure([sig('2025-03-01', { presenceHours: 5 })])).not.toHaveProperty('uptime');
  });

  it('responsiveness = mean latency score, expired decisions at 0', () => {
    // 120 s → 1 (≤ 300 s); 3600 s → 1 − ln(3600/300)/ln(86400/300) = 1 − 2.484907/5.662960 = 0.561200;
    // 86400 s → 0; one expired → 0. Mean = (1 + 0.561200 + 0 + 0) / 4 = 0.390300
    expect(latencyScore(120)).toBe(1);
    expect(latencyScore(300)).toBe(1);
    expect(latencyScore(3600)).toBeCloseTo(0.5612, 4);
    expect(latencyScore(86_400)).toBe(0);
    expect(latencyScore(200_000)).toBe(0);
    const days = [sig('2025-03-01', { decisionLatenciesSec: [120, 3600], decisionsExpired: 1 }), sig('2025-03-02', { decisionLatenciesSec: [86_400] })];
    expect(measure(days).responsiveness).toBeCloseTo(0.3903, 4);
    // only expired decisions → 0 (present); no decision → missing
    expect(measure([sig('2025-03-01', { decisionsExpired: 2 })]).responsiveness).toBe(0);
    expect(measure([sig('2025-03-01')])).not.toHaveProperty('responsiveness');
  });

  it('reliability = 1 − error spans / spans', () => {
    // 1 − (4 + 6) / (120 + 80) = 1 − 10/200 = 0.95
    expect(measure([sig('2025-03-01', { spans: 120, errorSpans: 4 }), sig('2025-03-02', { spans: 80, errorSpans: 6 })]).reliability).toBeCloseTo(0.95, 10);
    expect(measure([sig('2025-03-01')])).not.toHaveProperty('reliability');
  });

  it('task_success = ok tasks / tasks; tool_accuracy = ok tools / tools', () => {
    // tasks (28 + 6) / (30 + 10) = 34/40 = 0.85; tools (40 + 5) / (45 + 5) = 45/50 = 0.9
    const d = measure([sig('2025-03-01', { tasks: 30, tasksOk: 28, tools: 45, toolsOk: 40 }), sig('2025-03-02', { tasks: 10, tasksOk: 6, tools: 5, toolsOk: 5 })]);
    expect(d.task_success).toBeCloseTo(0.85, 10);
    expect(d.tool_accuracy).toBeCloseTo(0.9, 10);
    const none = measure([sig('2025-03-01', { spans: 3 })]);
    expect(none).not.toHaveProperty('task_success');
    expect(none).not.toHaveProperty('tool_accuracy');
  });

  it('efficiency = tokens of successful tasks / all task tokens', () => {
    // (6000 + 2000) / (7000 + 3000) = 8000 / 10000 = 0.8
    expect(measure([sig('2025-03-01', { taskTokens: 7000, taskTokensOk: 6000 }), sig('2025-03-02', { taskTokens: 3000, taskTokensOk: 2000 })]).efficiency).toBeCloseTo(0.8, 10);
    expect(measure([sig('2025-03-01', { tasks: 2, tasksOk: 2 })])).not.toHaveProperty('efficiency');
  });

  it('tokensPerSuccessfulTask and token_efficiency = min(1, fleet median / own)', () => {
    // 12000 tokens / 30 successful tasks = 400 tokens per success
    const days = [sig('2025-03-01', { taskTokens: 12_000, tasksOk: 30, tasks: 32 })];
    expect(tokensPerSuccessfulTask(days)).toBe(400);
    expect(tokensPerSuccessfulTask([sig('2025-03-01', { taskTokens: 100 })])).toBeNull();
    expect(tokensPerSuccessfulTask([sig('2025-03-01', { tasksOk: 3 })])).toBeNull();
    // fleet 300 / own 400 = 0.75; fleet 500 / own 400 = 1.25 → 1
    expect(measure(days, 300).token_efficiency).toBe(0.75);
    expect(measure(days, 500).token_efficiency).toBe(1);
    expect(measureDimensions(days, NO_FLEET)).not.toHaveProperty('token_efficiency');
    expect(measure([sig('2025-03-01', { tasksOk: 3 })], 300)).not.toHaveProperty('token_efficiency');
  });

  it('volume = 1 − spike days / active days, with the spike detector', () => {
    // active counts 10, 12, 8, 90, 11, 25 (one idle day); sorted 8 10 11 12 25 90 → median 11.5;
    // spike: > 3 × 11.5 = 34.5 and ≥ 20 → only 90. Score 1 − 1/6 = 0.833333
    const counts = [10, 12, 8, 0, 90, 11, 25];
    const days = counts.map((messages, i) => sig(`2025-03-0${i + 1}`, { messages }));
    expect(volumeSpikes(days)).toEqual([{ day: '2025-03-05', messages: 90, median: 11.5 }]);
    expect(measure(days).volume).toBeCloseTo(0.833333, 6);
    // 9 > 3 × 2 but < 20 → not a spike → 1
    expect(measure([2, 2, 9].map((messages, i) => sig(`2025-03-0${i + 1}`, { messages }))).volume).toBe(1);
    expect(measure([sig('2025-03-01')])).not.toHaveProperty('volume');
    expect(volumeSpikes([])).toEqual([]);
  });

  it('error_discipline = recovered errors / error spans (1 with spans but no error)', () => {
    // (4 + 2) / (5 + 3) = 6/8 = 0.75
    expect(measure([sig('2025-03-01', { spans: 50, errorSpans: 5, recoveredErrors: 4 }), sig('2025-03-02', { spans: 50, errorSpans: 3, recoveredErrors: 2 })]).error_discipline).toBe(0.75);
    expect(measure([sig('2025-03-01', { spans: 50 })]).error_discipline).toBe(1);
    expect(measure([sig('2025-03-01')])).not.toHaveProperty('error_discipline');
  });

  it('compliance = 1 − violations / evaluations', () => {
    // 1 − (3 + 1) / (30 + 20) = 1 − 4/50 = 0.92
    expect(measure([sig('2025-03-01', { policyEvaluations: 30, policyViolations: 3 }), sig('2025-03-02', { policyEvaluations: 20, policyViolations: 1 })]).compliance).toBeCloseTo(0.92, 10);
    expect(measure([sig('2025-03-01', { spans: 5 })])).not.toHaveProperty('compliance');
  });

  it('behavioral_consistency = max(0, 1 − PSI(later mix vs earlier mix) / 0.5)', () => {
    // earlier half (days 1-2): a 30+20 = 50, b 20+30 = 50 → 0.5 / 0.5
    // later half  (days 3-4): a 40+35 = 75, b 10+15 = 25 → 0.75 / 0.25
    // PSI = (0.75−0.5)·ln(0.75/0.5) + (0.25−0.5)·ln(0.25/0.5) = 0.25·0.405465 + 0.25·0.693147 = 0.274653
    // score = 1 − 0.274653 / 0.5 = 0.450694
    const days = [
      sig('2025-03-01', { spans: 50, spanNames: { a: 30, b: 20 } }),
      sig('2025-03-02', { spans: 50, spanNames: { a: 20, b: 30 } }),
      sig('2025-03-03', { spans: 50, spanNames: { a: 40, b: 10 } }),
      sig('2025-03-04', { spans: 50, spanNames: { a: 35, b: 15 } }),
    ];
    expect(measure(days).behavioral_consistency).toBeCloseTo(0.450694, 6);
    // order of the input does not matter: days are sorted
    expect(measure([...days].reverse()).behavioral_consistency).toBeCloseTo(0.450694, 6);
    // same mix → 1; a brand-new name taking half the later spans → PSI 4.604 → 0
    expect(measure([sig('2025-03-01', { spans: 10, spanNames: { a: 10 } }), sig('2025-03-02', { spans: 20, spanNames: { a: 20 } })]).behavioral_consistency).toBe(1);
    expect(measure([sig('2025-03-01', { spans: 100, spanNames: { a: 100 } }), sig('2025-03-02', { spans: 100, spanNames: { a: 50, b: 50 } })]).behavioral_consistency).toBe(0);
    // one day → the earlier half is empty; an earlier half without spans → missing
    expect(measure([sig('2025-03-01', { spans: 10, spanNames: { a: 10 } })])).not.toHaveProperty('behavioral_consistency');
    expect(measure([sig('2025-03-01'), sig('2025-03-02', { spans: 10, spanNames: { a: 10 } })])).not.toHaveProperty('behavioral_consistency');
  });

  it('version_health compares the newest version with the previous one (by first seen)', () => {
    // "b-old" first seen 03-01: (100+50) spans, (10+5) errors → before = 0.1
    // "a-new" first seen 03-02 12:00: 50 spans, 20 errors → after = 0.4
    // score = 1 − (0.4 − 0.1) / (1 − 0.1) = 1 − 0.3/0.9 = 0.666667
    const days = [
      sig('2025-03-01', { spans: 100, versions: { 'b-old': { spans: 100, errors: 10, firstSeen: '2025-03-01T00:10:00Z' } } }),
      sig('2025-03-02', {
        spans: 100,
        versions: {
          'b-old': { spans: 50, errors: 5, firstSeen: '2025-03-02T00:00:00Z' },
          'a-new': { spans: 50, errors: 20, firstSeen: '2025-03-02T12:00:00Z' },
        },
      }),
    ];
    expect(measure(days).version_health).toBeCloseTo(0.666667, 6);
    // the new version is better → 1; a single version → 1; spans without version → 1; no span → missing
    const better = [sig('2025-03-01', { spans: 20, versions: { v1: { spans: 10, errors: 5, firstSeen: '2025-03-01T00:00:00Z' }, v2: { spans: 10, errors: 1, firstSeen: '2025-03-01T06:00:00Z' } } })];
    expect(measure(better).version_health).toBe(1);
    expect(measure([sig('2025-03-01', { spans: 20, versions: { v1: { spans: 20, errors: 20, firstSeen: '2025-03-01T00:00:00Z' } } })]).version_health).toBe(1);
    expect(measure([sig('2025-03-01', { spans: 20 })]).version_health).toBe(1);
    // previous version always failed (before = 1) → guarded → 1
    const allFailed = [sig('2025-03-01', { spans: 20, versions: { v1: { spans: 10, errors: 10, firstSeen: '2025-03-01T00:00:00Z' }, v2: { spans: 10, errors: 10, firstSeen: '2025-03-01T06:00:00Z' } } })];
    expect(measure(allFailed).version_health).toBe(1);
    // before 0, after 0.5 → 1 − 0.5/1 = 0.5
    const worse = [sig('2025-03-01', { spans: 20, versions: { v1: { spans: 10, errors: 0, firstSeen: '2025-03-01T00:00:00Z' }, v2: { spans: 10, errors: 5, firstSeen: '2025-03-01T06:00:00Z' } } })];
    expect(measure(worse).version_health).toBe(0.5);
    expect(measure([sig('2025-03-01')])).not.toHaveProperty('version_health');
  });

  it('no data at all → no dimension', () => {
    expect(measure([])).toEqual({});
    expect(measure([sig('2025-03-01'), sig('2025-03-02')])).toEqual({});
  });
});

describe('composite', () => {
  it('is the weighted sum of a known vector', () => {
    // 0.10·1 + 0.12·0.5 + 0.08·1 + 0.10·0.8 + 0.08·0.5 + 0.07·1 + 0.08·0.9 + 0.05·0 + 0.07·1 + 0.10·0.6 + 0.10·0.7 + 0.05·1
    // = 0.10 + 0.06 + 0.08 + 0.08 + 0.04 + 0.07 + 0.072 + 0 + 0.07 + 0.06 + 0.07 + 0.05 = 0.752
    const d: DimensionScores = {
      uptime: 1,
      responsiveness: 0.5,
      reliability: 1,
      task_success: 0.8,
      efficiency: 0.5,
      volume: 1,
      tool_accuracy: 0.9,
      error_discipline: 0,
      compliance: 1,
      token_efficiency: 0.6,
      behavioral_consistency: 0.7,
      version_health: 1,
    };
    expect(compositeScore(d)).toBeCloseTo(0.752, 10);
    const all = (v: number) => Object.fromEntries(TRUST_DIMENSIONS.map((k) => [k, v])) as DimensionScores;
    expect(compositeScore(all(1))).toBe(1);
    expect(compositeScore(all(0))).toBe(0);
    expect(compositeScore(all(0.5))).toBeCloseTo(0.5, 12);
    // the weights sum to 1.00
    expect(Object.values(DIMENSION_WEIGHTS).reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
  });

  it('stays in [0,1] for any input (property)', () => {
    const dims = fc.record(Object.fromEntries(TRUST_DIMENSIONS.map((k) => [k, fc.double()])) as Record<keyof DimensionScores, fc.Arbitrary<number>>);
    fc.assert(
      fc.property(dims, (d) => {
        const c = compositeScore(d);
        return c >= 0 && c <= 1;
      }),
    );
  });

  it('measured dimensions are always within [0,1] (property)', () => {
    const n = fc.nat({ max: 1000 });
    const day = fc.record({
      presenceHours: n,
      observedHours: n,
      decisionLatenciesSec: fc.array(fc.double({ min: -10, max: 1e6, noNaN: true }), { maxLength: 4 }),
      decisionsExpired: n,
      spans: n,
      errorSpans: n,
      recoveredErrors: n,
      tasks: n,
      tasksOk: n,
      tools: n,
      toolsOk: n,
      taskTokens: n,
      taskTokensOk: n,
      messages: n,
      policyEvaluations: n,
      policyViolations: n,
      spanNames: fc.dictionary(fc.constantFrom('a', 'b', 'c'), n),
    });
    fc.assert(
      fc.property(fc.array(day, { maxLength: 7 }), fc.option(fc.double({ min: 1, max: 1e6, noNaN: true })), (raw, fleet) => {
        const days = raw.map((o, i) => sig(`2025-03-0${i + 1}`, o));
        const d = measure(days, fleet);
        return Object.values(d).every((v) => v >= 0 && v <= 1);
      }),
    );
  });
});

describe('fallbacks (contract §3.9)', () => {
  const measured: Partial<DimensionScores> = { uptime: 0.9, reliability: 0.99 };
  const fleet: Partial<DimensionScores> = { uptime: 0.7, responsiveness: 0.4, task_success: 0.8 };

  it('47 h → every dimension 0.5 (warmup), whatever was measured', () => {
    const r = applyFallbacks(measured, { ageHours: 47, fleetMedians: fleet });
    for (const dim of TRUST_DIMENSIONS) {
      expect(r.dimensions[dim]).toBe(0.5);
      expect(r.sources[dim]).toBe('warmup');
    }
    expect(applyFallbacks(measured, { ageHours: Number.NaN, fleetMedians: fleet }).sources.uptime).toBe('warmup');
  });

  it('49 h → telemetry, else fleet median, else 0.5 as fleet_median', () => {
    const r = applyFallbacks(measured, { ageHours: 49, fleetMedians: fleet });
    expect(r.dimensions.uptime).toBe(0.9);
    expect(r.sources.uptime).toBe('telemetry');
    expect(r.dimensions.reliability).toBe(0.99);
    expect(r.dimensions.responsiveness).toBe(0.4);
    expect(r.sources.responsiveness).toBe('fleet_median');
    expect(r.dimensions.task_success).toBe(0.8);
    expect(r.dimensions.volume).toBe(0.5);
    expect(r.sources.volume).toBe('fleet_median');
    expect(Object.keys(r.dimensions)).toHaveLength(12);
    // exactly 48 h is past the warm-up
    expect(applyFallbacks(measured, { ageHours: 48, fleetMedians: {} }).sources.uptime).toBe('telemetry');
  });
});

describe('fleet statistics', () => {
  it('median, mean, population stddev', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNull();
    // 2 4 4 4 5 5 7 9: mean 5; squared deviations 9 1 1 1 0 0 4 16 = 32; 32/8 = 4; √4 = 2
    expect(mean([2, 4, 4, 4, 5, 5, 7, 9])).toBe(5);
    expect(stddev([2, 4, 4, 4, 5, 5, 7, 9])).toBe(2);
    expect(stddev([0.7])).toBe(0);
    expect(stddev([])).toBeNull();
    expect(mean([])).toBeNull();
  });

  it('percentile rank = round(100 × (below + 0.5 × equal) / n)', () => {
    // 3 in [1,2,3,3,5]: below 2, equal 2 → 100 × 3/5 = 60
    expect(percentileRank(3, [1, 2, 3, 3, 5])).toBe(60);
    // 1 in [1,2,3,4]: 100 × 0.5/4 = 12.5 → 13
    expect(percentileRank(1, [1, 2, 3, 4])).toBe(13);
    // 4 in [1,2,3,4]: 100 × 3.5/4 = 87.5 → 88
    expect(percentileRank(4, [1, 2, 3, 4])).toBe(88);
    expect(percentileRank(0.7, [0.7])).toBe(50);
    expect(percentileRank(0.7, [])).toBe(50);
  });

  it('fleet medians over the agents that measured each dimension; fleet stats', () => {
    const m = fleetMedians([{ uptime: 0.9, reliability: 0.5 }, { uptime: 0.7 }, { uptime: 0.8, reliability: 0.7 }]);
    expect(m.uptime).toBe(0.8);
    expect(m.reliability).toBeCloseTo(0.6, 12);
    expect(m).not.toHaveProperty('volume');
    const row = (v: number) => Object.fromEntries(TRUST_DIMENSIONS.map((k) => [k, v])) as DimensionScores;
    const s = fleetStats([row(0.2), row(0.4), row(0.9)]);
    expect(s.uptime.median).toBe(0.4);
    expect(s.uptime.mean).toBeCloseTo(0.5, 12);
    // deviations −0.3, −0.1, 0.4 → (0.09 + 0.01 + 0.16)/3 = 0.086667 → √ = 0.294392
    expect(s.uptime.stddev).toBeCloseTo(0.294392, 6);
    expect(fleetStats([]).compliance).toEqual({ median: null, stddev: null, mean: null });
  });
});

describe('PSI', () => {
  it('bins: 0 and 0.05 in bin 0, edges start their bin, 1.0 in the last bin, out-of-range clamped', () => {
    expect(binIndex(0)).toBe(0);
    expect(binIndex(0.1)).toBe(1);
    expect(binIndex(0.3)).toBe(3);
    expect(binIndex(0.7)).toBe(7);
    expect(binIndex(0.9)).toBe(9);
    expect(binIndex(0.9999)).toBe(9);
    expect(binIndex(1)).toBe(9);
    expect(binIndex(1.5)).toBe(9);
    expect(binIndex(-0.2)).toBe(0);
    for (let k = 0; k < PSI_BINS; k++) expect(binIndex(k / PSI_BINS)).toBe(k);
    // [0, 0.1, 0.05, 0.95, 1.0] (NaN ignored) → bin0 2, bin1 1, bin9 2 of 5
    expect(binProportions([0, 0.1, 0.05, 0.95, 1.0, Number.NaN])).toEqual([0.4, 0.2, 0, 0, 0, 0, 0, 0, 0, 0.4]);
    expect(binProportions([])).toEqual(new Array(10).fill(0));
    expect(binProportions([0.5], 4)).toEqual([0, 0, 1, 0]);
    expect(() => binProportions([0.5], 0)).toThrow(RangeError);
  });

  it('matches a hand computation without empty bins', () => {
    // (0.5−0.4)·ln(0.5/0.4) + (0.5−0.6)·ln(0.5/0.6) = 0.1·0.223144 + 0.1·0.182322 = 0.040547
    expect(psi([0.4, 0.6], [0.5, 0.5])).toBeCloseTo(0.040547, 6);
    expect(driftStatus(0.040547)).toBe('stable');
  });

  it('replaces empty bins with ε on both sides', () => {
    // e = [0.5, 0.5, 0 …], a = [0.25, 0.5, 0.25, 0 …]:
    // bin0 (0.25−0.5)·ln(0.5) = 0.173287; bin1 0; bin2 (0.25−ε)·ln(0.25/ε) = 0.2499·7.824046 = 1.955229;
    // both-empty bins (ε−ε)·ln 1 = 0 → PSI = 2.128516
    const e = [0.5, 0.5, 0, 0, 0, 0, 0, 0, 0, 0];
    const a = [0.25, 0.5, 0.25, 0, 0, 0, 0, 0, 0, 0];
    expect(PSI_EPSILON).toBe(1e-4);
    expect(psi(e, a)).toBeCloseTo(2.128516, 6);
    expect(driftStatus(psi(e, a))).toBe('significant');
    expect(psi(e, e)).toBe(0);
    expect(() => psi([1], [0.5, 0.5])).toThrow(RangeError);
  });

  it('interpretation thresholds', () => {
    expect(driftStatus(0)).toBe('stable');
    expect(driftStatus(0.0999)).toBe('stable');
    expect(driftStatus(0.1)).toBe('moderate');
    expect(driftStatus(0.25)).toBe('moderate');
    expect(driftStatus(0.2501)).toBe('significant');
  });

  it('categorical PSI over the union of span names', () => {
    // {a:50,b:50} vs {a:75,b:25}: 0.274653 (see behavioral_consistency)
    expect(categoricalPsi({ a: 50, b: 50 }, { a: 75, b: 25 })).toBeCloseTo(0.274653, 6);
    // {a:100} vs {a:50,b:50}: a (0.5−1)·ln(0.5) = 0.346574; b (0.5−ε)·ln(0.5/ε) = 0.4999·8.517193 = 4.257745 → 4.604318
    expect(categoricalPsi({ a: 100 }, { a: 50, b: 50 })).toBeCloseTo(4.604318, 5);
    expect(categoricalPsi({ a: 3, b: 1 }, { b: 2, a: 6 })).toBeCloseTo(0, 12);
  });

  it('psi ≥ 0 and psi(x, x) = 0 (property)', () => {
    const p = fc.double({ min: 0, max: 1, noNaN: true });
    fc.assert(
      fc.property(fc.array(fc.tuple(p, p), { minLength: 1, maxLength: 12 }), (pairs) => {
        const e = pairs.map((x) => x[0]);
        const a = pairs.map((x) => x[1]);
        return psi(e, a) >= 0 && psi(e, e) === 0 && psi(a, a) === 0;
      }),
    );
    fc.assert(
      fc.property(fc.array(p), fc.array(p), (xs, ys) => {
        const e = binProportions(xs);
        const a = binProportions(ys);
        return psi(e, a) >= 0 && psi(a, a) === 0;
      }),
    );
    const counts = fc.dictionary(fc.constantFrom('x', 'y', 'z', 'w'), fc.nat({ max: 500 }));
    fc.assert(fc.property(counts, counts, (e, a) => categoricalPsi(e, a) >= 0 && categoricalPsi(e, e) === 0));
  });
});

describe('baseline windows', () => {
  /** Rows for every day from `from` for `n` days; `data(i)` says whether day i carries an uptime value. */
  function rows(from: string, n: number, data: (i: number) => boolean): DailyDimensionRow[] {
    const start = Date.parse(`${from}T00:00:00Z`);
    return Array.from({ length: n }, (_, i) => ({
      day: new Date(start + i * 86_400_000).toISOString().slice(0, 10),
      dimensions: data(i) ? { uptime: 0.9 } : {},
    }));
  }
  // 2025-01-01 … 2025-03-31 (90 days): data on Jan 1-10, a gap Jan 11-25, data from Jan 26 on.
  const history = rows('2025-01-01', 90, (i) => i < 10 || i >= 25);

  it("'first' = the earliest window with ≥ 20 of 30 days of data", () => {
    // any start on Jan 1-10 covers (11 − s) + (s + 4) = 15 data days < 20; Jan 26 → Feb 24 covers 30
    const w = chooseBaselineWindow(history, { notBefore: '2025-01-01', mode: 'first' });
    expect(w).toMatchObject({ start: '2025-01-26', end: '2025-02-24' });
    expect(w!.rows).toHaveLength(30);
    // a 10-day window needs ceil(10 × 2/3) = 7 data days → Jan 1-10 qualifies
    expect(chooseBaselineWindow(history, { notBefore: '2025-01-01', mode: 'first', days: 10 })).toMatchObject({ start: '2025-01-01', end: '2025-01-10' });
    // notBefore skips the earlier days (recalibration floor)
    expect(chooseBaselineWindow(history, { notBefore: '2025-02-01', mode: 'first' })).toMatchObject({ start: '2025-02-01', end: '2025-03-02' });
  });

  it("'latest' = the 30 days ending at the last row", () => {
    const w = chooseBaselineWindow(history, { notBefore: '2025-01-01', mode: 'latest' });
    expect(w).toMatchObject({ start: '2025-03-02', end: '2025-03-31' });
    expect(w!.rows[0]!.day).toBe('2025-03-02');
    // the last 30 days carry only 10 days of data → null
    expect(chooseBaselineWindow(rows('2025-01-01', 60, (i) => i < 30 || i >= 50), { notBefore: '2025-01-01', mode: 'latest' })).toBeNull();
  });

  it("'before' drops the running day (and later ones): only complete days form a baseline", () => {
    // 30 rows Jan 1-30; with Jan 30 = today the first window is not complete yet.
    const month = rows('2025-01-01', 30, () => true);
    expect(chooseBaselineWindow(month, { notBefore: '2025-01-01', before: '2025-01-30', mode: 'first' })).toBeNull();
    expect(chooseBaselineWindow(month, { notBefore: '2025-01-01', before: '2025-01-31', mode: 'first' })).toMatchObject({ start: '2025-01-01', end: '2025-01-30' });
    // 'latest' ends at the last row BEFORE today.
    const w = chooseBaselineWindow(history, { notBefore: '2025-01-01', before: '2025-03-31', mode: 'latest' });
    expect(w).toMatchObject({ start: '2025-03-01', end: '2025-03-30' });
    expect(w!.rows.map((r) => r.day)).not.toContain('2025-03-31');
  });

  it('null without enough data or without a complete window', () => {
    expect(chooseBaselineWindow([], { notBefore: '2025-01-01', mode: 'first' })).toBeNull();
    expect(chooseBaselineWindow(rows('2025-01-01', 15, () => true), { notBefore: '2025-01-01', mode: 'first' })).toBeNull();
    // 25 days of data but the window starting on the first day would end after the last row
    expect(chooseBaselineWindow(rows('2025-01-01', 25, () => true), { notBefore: '2025-01-01', mode: 'first' })).toBeNull();
    expect(chooseBaselineWindow(rows('2025-01-01', 30, () => true), { notBefore: '2025-01-01', mode: 'first' })).toMatchObject({ start: '2025-01-01', end: '2025-01-30' });
    // 19 data days of 30 → not stable; 20 → stable
    expect(chooseBaselineWindow(rows('2025-01-01', 30, (i) => i < 19), { notBefore: '2025-01-01', mode: 'latest' })).toBeNull();
    expect(chooseBaselineWindow(rows('2025-01-01', 30, (i) => i < 20), { notBefore: '2025-01-01', mode: 'latest' })).not.toBeNull();
    expect(() => chooseBaselineWindow(history, { notBefore: '1 Jan', mode: 'first' })).toThrow(RangeError);
  });

  it('baselineFor bins a dimension’s daily values', () => {
    const r: DailyDimensionRow[] = [
      { day: '2025-01-01', dimensions: { uptime: 0.95, reliability: 0.5 } },
      { day: '2025-01-02', dimensions: { uptime: 0.97 } },
      { day: '2025-01-03', dimensions: { uptime: 0.85 } },
      { day: '2025-01-04', dimensions: {} },
    ];
    // 0.85 → bin 8; 0.95, 0.97 → bin 9 → [0 … 1/3, 2/3]
    const b = baselineFor(r, 'uptime')!;
    expect(b.samples).toBe(3);
    expect(b.bins[8]).toBeCloseTo(1 / 3, 12);
    expect(b.bins[9]).toBeCloseTo(2 / 3, 12);
    expect(baselineFor(r, 'volume')).toBeNull();
  });
});

describe('tiers (contract §3.3)', () => {
  const DAY = 86_400_000;
  const T0 = Date.parse('2025-01-01T00:00:00Z');
  const at = (day: number) => new Date(T0 + day * DAY);

  it('tierForScore picks the highest tier whose threshold ≤ score', () => {
    expect(tierForScore(0)).toBe('unverified');
    expect(tierForScore(0.5999)).toBe('unverified');
    expect(tierForScore(0.6)).toBe('certified');
    expect(tierForScore(0.7999)).toBe('certified');
    expect(tierForScore(0.8)).toBe('enterprise');
    expect(tierForScore(1)).toBe('enterprise');
    expect(tierForScore(Number.NaN)).toBe('unverified');
  });

  /**
   * Simulates a recompute every 6 hours from day `from` to day `to`: each step appends the score
   * `score(day)` to the history and evaluates the tier. Returns the tier after each step.
   */
  function simulate(score: (day: number) => number, from: number, to: number, start: Tier = 'unverified') {
    const series: ScorePoint[] = [];
    let tier = start;
    const out = new Map<number, { tier: Tier; direction: string; heldScore: number | null }>();
    for (let q = from * 4; q <= to * 4; q++) {
      const day = q / 4;
      const composite = score(day);
      series.push({ at: at(day), composite });
      const ev = evaluateTier({ current: tier, latest: composite, series, now: at(day) });
      tier = ev.tier;
      out.set(day, { tier, direction: ev.direction, heldScore: ev.heldScore });
    }
    return out;
  }

  it('rises only after 7 full days at or above the threshold (day 6.75 no, day 7 yes)', () => {
    const run = simulate((d) => (d < 0 ? 0.5 : 0.7), -3, 9);
    expect(run.get(6.75)!.tier).toBe('unverified');
    expect(run.get(6.75)!.heldScore).toBe(0.5);
    expect(run.get(7)).toEqual({ tier: 'certified', direction: 'up', heldScore: 0.7 });
    expect(run.get(9)!.tier).toBe('certified');
    // the first days (history shorter than 7 days) never rise
    expect(run.get(3)!.heldScore).toBeNull();
  });

  it('follows the worked timeline of docs/trust-scoring.md', () => {
    const run = simulate((d) => (d < 0 ? 0.5 : d < 8 ? 0.7 : d < 16 ? 0.9 : 0.65), -8, 16);
    expect(run.get(-0.25)).toMatchObject({ tier: 'unverified' });
    expect(run.get(0)).toMatchObject({ tier: 'unverified', heldScore: 0.5 });
    expect(run.get(6.75)).toMatchObject({ tier: 'unverified', heldScore: 0.5 });
    expect(run.get(7)).toMatchObject({ tier: 'certified', direction: 'up', heldScore: 0.7 });
    expect(run.get(8)).toMatchObject({ tier: 'certified', direction: 'none', heldScore: 0.7 });
    expect(run.get(14.75)).toMatchObject({ tier: 'certified' });
    expect(run.get(15)).toMatchObject({ tier: 'enterprise', direction: 'up', heldScore: 0.9 });
    expect(run.get(16)).toMatchObject({ tier: 'certified', direction: 'down' });
  });

  it('a single dip resets the hold', () => {
    // 0.7 from day 0 with one 0.55 point at day 3 → the hold restarts at day 3.25 → certified at 10.25
    const run = simulate((d) => (d < 0 ? 0.5 : d === 3 ? 0.55 : 0.7), -3, 12);
    expect(run.get(7)!.tier).toBe('unverified');
    expect(run.get(10)!.tier).toBe('unverified');
    expect(run.get(10.25)!.tier).toBe('certified');
    // certified → enterprise: a dip to 0.75 (still certified) resets the enterprise hold without demoting
    const up = simulate((d) => (d < 0 ? 0.7 : d === 3 ? 0.75 : 0.85), -8, 12, 'certified');
    expect(up.get(3)).toMatchObject({ tier: 'certified', direction: 'none' });
    expect(up.get(10)!.tier).toBe('certified');
    expect(up.get(10.25)).toMatchObject({ tier: 'enterprise', direction: 'up' });
  });

  it('falls at once: enterprise → certified or → unverified', () => {
    const series = [{ at: at(-8), composite: 0.9 }, { at: at(0), composite: 0.9 }];
    const toCertified = evaluateTier({ current: 'enterprise', latest: 0.7, series: [...series, { at: at(0.25), composite: 0.7 }], now: at(0.25) });
    expect(toCertified).toMatchObject({ tier: 'certified', direction: 'down' });
    expect(toCertified.reason).toMatch(/below the enterprise threshold/);
    const toUnverified = evaluateTier({ current: 'enterprise', latest: 0.5, series: [...series, { at: at(0.25), composite: 0.5 }], now: at(0.25) });
    expect(toUnverified).toMatchObject({ tier: 'unverified', direction: 'down' });
    // certified falls even with a short history
    expect(evaluateTier({ current: 'certified', latest: 0.59, series: [{ at: at(0), composite: 0.59 }], now: at(0) })).toMatchObject({ tier: 'unverified', direction: 'down', heldScore: null });
    // simulated: enterprise for a while, then one bad recompute
    const run = simulate((d) => (d === 2 ? 0.65 : 0.9), -8, 3, 'enterprise');
    expect(run.get(1.75)!.tier).toBe('enterprise');
    expect(run.get(2)).toMatchObject({ tier: 'certified', direction: 'down' });
    expect(run.get(3)!.tier).toBe('certified');
  });

  it('never rises past tierForScore(heldScore)', () => {
    // 0.7 from day 0, 0.9 from day 3: day 7 → certified (held 0.7) although latest is 0.9; enterprise at day 10
    const run = simulate((d) => (d < 0 ? 0.5 : d < 3 ? 0.7 : 0.9), -3, 11);
    expect(run.get(7)).toEqual({ tier: 'certified', direction: 'up', heldScore: 0.7 });
    expect(run.get(9.75)!.tier).toBe('certified');
    expect(run.get(10)).toEqual({ tier: 'enterprise', direction: 'up', heldScore: 0.9 });
    // straight from unverified to enterprise when the whole hold is ≥ 0.8
    const jump = simulate((d) => (d < 0 ? 0.5 : 0.85), -3, 7);
    expect(jump.get(7)).toMatchObject({ tier: 'enterprise', direction: 'up' });
  });

  it('the hold uses the score in effect at its start; uncovered history holds the tier', () => {
    // points at day −1 (0.5) and from day 0.5 on (0.7); at day 7.2 the hold starts at 0.2, when the
    // −1 point (0.5) was still in effect → no rise; at day 7.5 it starts at 0.5 → rise
    const series: ScorePoint[] = [{ at: at(-1), composite: 0.5 }, ...[0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.2].map((d) => ({ at: at(d), composite: 0.7 }))];
    expect(evaluateTier({ current: 'unverified', latest: 0.7, series, now: at(7.2) })).toMatchObject({ tier: 'unverified', heldScore: 0.5 });
    expect(evaluateTier({ current: 'unverified', latest: 0.7, series: [...series, { at: at(7.5), composite: 0.7 }], now: at(7.5) })).toMatchObject({ tier: 'certified', heldScore: 0.7 });
    // history starting after now − 7 days → heldScore null, tier stays
    const short = evaluateTier({ current: 'unverified', latest: 0.95, series: [{ at: at(0.1), composite: 0.95 }, { at: at(7), composite: 0.95 }], now: at(7) });
    expect(short).toMatchObject({ tier: 'unverified', direction: 'none', heldScore: null });
    // points after now are ignored; a custom hold of 1 day
    expect(evaluateTier({ current: 'unverified', latest: 0.7, series: [{ at: at(0), composite: 0.7 }, { at: at(1), composite: 0.7 }, { at: at(1.5), composite: 0.1 }], now: at(1), holdDays: 1 })).toMatchObject({ tier: 'certified', direction: 'up' });
    expect(() => evaluateTier({ current: 'unverified', latest: 0.7, series, now: at(1), holdDays: 0 })).toThrow(RangeError);
  });
});

describe('one source for shared trust values (tiers, the §3.9 neutral score, the window scores)', () => {
  it('policies and hub use the trust vocabulary’s tier list and neutral score, not copies', () => {
    expect(POLICY_TIERS).toBe(TIERS);
    expect(TRUST_TIERS).toBe(TIERS);
    expect(NEUTRAL_TRUST_SCORE).toBe(NEUTRAL_SCORE);
    expect(NEUTRAL_SCORE).toBe(0.5);
  });

  it('asTier / tierRank: stored strings to tiers; anything unknown is unverified', () => {
    expect(TIERS.map((t) => [asTier(t), tierRank(t)])).toEqual([['unverified', 0], ['certified', 1], ['enterprise', 2]]);
    for (const bad of [null, undefined, '', 'Certified', 'gold', 'ENTERPRISE']) {
      expect(asTier(bad), String(bad)).toBe('unverified');
      expect(tierRank(bad), String(bad)).toBe(0);
    }
  });

  it('clamp01', () => {
    expect([-1, 0, 0.25, 1, 1.5, Infinity, -Infinity].map(clamp01)).toEqual([0, 0, 0.25, 1, 1, 1, 0]);
  });

  it('windowScores: the snapshot’s values clamped; the contract §3.9 warm-up values (all 0.5) without one', () => {
    const neutral = Object.fromEntries(TRUST_DIMENSIONS.map((d) => [d, 0.5]));
    expect(windowScores(undefined)).toEqual({ composite: 0.5, dimensions: neutral });
    const stored = { ...Object.fromEntries(TRUST_DIMENSIONS.map((d) => [d, 0.7])), uptime: 1.2, compliance: -0.1, volume: 'x' } as Record<string, unknown>;
    delete stored.efficiency;
    expect(windowScores({ composite: 0.71, dimensions: stored })).toEqual({
      composite: 0.71,
      dimensions: { ...Object.fromEntries(TRUST_DIMENSIONS.map((d) => [d, 0.7])), uptime: 1, compliance: 0, volume: 0.5, efficiency: 0.5 },
    });
    expect(windowScores({ composite: 1.3, dimensions: {} }).composite).toBe(1);
    expect(windowScores({ composite: Number.NaN, dimensions: null }).composite).toBe(0.5);
  });

  it('verify-agent’s trust_scores are windowScores flattened (one builder)', () => {
    fc.assert(
      fc.property(fc.option(fc.record({ composite: fc.double({ noNaN: true }), dimensions: fc.dictionary(fc.constantFrom(...TRUST_DIMENSIONS), fc.double()) }), { nil: undefined }), (snap) => {
        const w = windowScores(snap);
        expect(verifyScores(snap)).toEqual({ composite: w.composite, ...w.dimensions });
        for (const v of [w.composite, ...Object.values(w.dimensions)]) expect(v >= 0 && v <= 1).toBe(true);
      }),
    );
  });
});
