/**
 * View logic of the governance screens: trust (lib/trust-view.ts: contract §4.12 drift bands, fleet
 * sorting, windows, dimension rows, history series), shadow graduation gates (lib/shadow-view.ts:
 * contract §3.4), telemetry formatting (lib/telemetry-view.ts) and the agent list (lib/agents.ts).
 */
import { TRUST_DIMENSIONS, type Device, type ShadowGraduationCheck, type TrustFleetAgent } from '@parley/sdk';
import { describe, expect, it } from 'vitest';
import { agentEntries, agentLabel } from '../src/lib/agents';
import { configFromDraft, gateViews, lowerLevels } from '../src/lib/shadow-view';
import { formatDuration, formatRate, sinceFor, summaryTotals } from '../src/lib/telemetry-view';
import {
  ariaSort,
  barPercent,
  countedInFleet,
  dimensionLabel,
  dimensionRows,
  driftBand,
  driftRows,
  driftTone,
  historySeries,
  isWarmup,
  nextSort,
  ordinal,
  parseWindow,
  sortFleet,
  windowDays,
} from '../src/lib/trust-view';

const dims = <T>(v: T) => Object.fromEntries(TRUST_DIMENSIONS.map((d) => [d, v])) as Record<(typeof TRUST_DIMENSIONS)[number], T>;

describe('drift bands (contract §4.12)', () => {
  it('classifies PSI below 0.1 as stable, 0.1 to 0.25 as moderate, above 0.25 as significant', () => {
    expect(driftBand(0)).toBe('stable');
    expect(driftBand(0.0999)).toBe('stable');
    expect(driftBand(0.1)).toBe('moderate');
    expect(driftBand(0.25)).toBe('moderate');
    expect(driftBand(0.2501)).toBe('significant');
    expect(driftBand(3)).toBe('significant');
    expect([driftTone('stable'), driftTone('moderate'), driftTone('significant')]).toEqual(['good', 'warn', 'bad']);
  });

  it('lists every dimension in contract §2.9 order, null without a baseline', () => {
    const d = dims<{ psi: number; baseline_samples: number; current_samples: number } | null>(null);
    d.volume = { psi: 0.3, baseline_samples: 30, current_samples: 7 };
    const rows = driftRows(d);
    expect(rows.map((r) => r.dimension)).toEqual([...TRUST_DIMENSIONS]);
    expect(rows.find((r) => r.dimension === 'volume')).toMatchObject({ psi: 0.3, band: 'significant', samples: '7 days vs 30 baseline days' });
    expect(rows[0]).toMatchObject({ psi: null, band: null, samples: 'no baseline' });
  });
});

describe('fleet sorting (design §8.14)', () => {
  const fleet: TrustFleetAgent[] = [
    { agent_id: 'a', hub_address: null, composite_score: 0.5, tier: 'unverified', percentile: 90 },
    { agent_id: 'b', hub_address: null, composite_score: 0.9, tier: 'enterprise', percentile: 10 },
    { agent_id: 'c', hub_address: null, composite_score: 0.7, tier: 'certified', percentile: 50 },
  ];

  it('sorts by score or percentile in either direction without changing the input', () => {
    expect(sortFleet(fleet, { key: 'score', dir: 'desc' }).map((a) => a.agent_id)).toEqual(['b', 'c', 'a']);
    expect(sortFleet(fleet, { key: 'score', dir: 'asc' }).map((a) => a.agent_id)).toEqual(['a', 'c', 'b']);
    expect(sortFleet(fleet, { key: 'percentile', dir: 'desc' }).map((a) => a.agent_id)).toEqual(['a', 'c', 'b']);
    expect(fleet.map((a) => a.agent_id)).toEqual(['a', 'b', 'c']);
  });

  it('breaks ties by agent id', () => {
    const tied = [fleet[2]!, { ...fleet[2]!, agent_id: 'a2' }];
    expect(sortFleet(tied, { key: 'score', dir: 'desc' }).map((a) => a.agent_id)).toEqual(['a2', 'c']);
  });

  it('flips the same column and starts another column descending; aria-sort follows', () => {
    const s1 = nextSort(undefined, 'score');
    expect(s1).toEqual({ key: 'score', dir: 'desc' });
    const s2 = nextSort(s1, 'score');
    expect(s2).toEqual({ key: 'score', dir: 'asc' });
    expect(nextSort(s2, 'percentile')).toEqual({ key: 'percentile', dir: 'desc' });
    expect(ariaSort(s2, 'score')).toBe('ascending');
    expect(ariaSort(s1, 'score')).toBe('descending');
    expect(ariaSort(s1, 'percentile')).toBe('none');
  });
});

describe('windows, dimensions, history', () => {
  it('maps windows to days and parses URL values', () => {
    expect([windowDays('7d'), windowDays('30d'), windowDays('90d')]).toEqual([7, 30, 90]);
    expect(parseWindow('90d')).toBe('90d');
    expect(parseWindow('365d')).toBe('7d');
    expect(parseWindow(null, '30d')).toBe('30d');
  });

  it('puts each dimension next to the fleet median, null without scored agents', () => {
    const score = { dimensions: dims(0.8), sources: dims('telemetry' as const) };
    const fleet = { dimensions: dims<{ median: number | null; stddev: number | null; mean: number | null }>({ median: 0.6, stddev: 0.1, mean: 0.6 }) };
    fleet.dimensions.uptime = { median: null, stddev: null, mean: null };
    const rows = dimensionRows(score, fleet);
    expect(rows).toHaveLength(12);
    expect(rows[0]).toEqual({ dimension: 'uptime', label: 'Uptime', value: 0.8, median: null, source: 'telemetry' });
    expect(rows[3]).toMatchObject({ label: 'Task success', median: 0.6 });
    expect(dimensionRows(score, undefined).every((r) => r.median === null)).toBe(true);
    expect(dimensionLabel('behavioral_consistency')).toBe('Behavioral consistency');
    expect([barPercent(0.456), barPercent(1.2), barPercent(-1), barPercent(null)]).toEqual([45.6, 100, 0, 0]);
  });

  it('tells a warm-up answer from real data (contract §3.9)', () => {
    expect(isWarmup({ sources: dims('warmup' as const) })).toBe(true);
    expect(isWarmup({ sources: { ...dims('warmup' as const), uptime: 'fleet_median' } })).toBe(false);
    expect(isWarmup({ sources: dims('telemetry' as const) })).toBe(false);
  });

  it('counts an agent in the fleet when the overview lists it, or while the overview is unknown', () => {
    const a = { agent_id: 'a', hub_address: null, composite_score: 0.5, tier: 'unverified' as const, percentile: 50 };
    expect(countedInFleet('a', { agents: [a] })).toBe(true);
    expect(countedInFleet('b', { agents: [a] })).toBe(false);
    expect(countedInFleet('a', { agents: [] })).toBe(false);
    expect(countedInFleet('a', undefined)).toBe(true);
  });

  it('shapes history as ascending Unix-second columns', () => {
    const h = (iso: string, v: number) => ({ computed_at: iso, composite_score: v, tier: 'certified' as const, dimensions: dims(v) });
    expect(historySeries({ history: [h('2026-01-02T00:00:00Z', 0.7), h('2026-01-01T00:00:00Z', 0.6)] })).toEqual([
      [Date.UTC(2026, 0, 1) / 1000, Date.UTC(2026, 0, 2) / 1000],
      [0.6, 0.7],
    ]);
  });

  it('writes ordinals', () => {
    expect([1, 2, 3, 4, 11, 12, 13, 21, 22, 100].map(ordinal)).toEqual(['1st', '2nd', '3rd', '4th', '11th', '12th', '13th', '21st', '22nd', '100th']);
  });
});

describe('shadow graduation gates (contract §3.4)', () => {
  const check = (over: Partial<ShadowGraduationCheck['gates']> = {}): ShadowGraduationCheck => ({
    eligible: false,
    current_level: 'shadow',
    next_level: 'supervised',
    gates: {
      min_observations: { required: 50, actual: 20, met: false },
      agreement_threshold: { required: 0.9, actual: 0.45, met: false },
      critical_miss_window: { window_hours: 168, misses: 2, met: false },
      ...over,
    },
  });

  it('shows progress toward each gate with its numbers', () => {
    const [obs, agree, miss] = gateViews(check());
    expect(obs).toMatchObject({ percent: 40, text: '20 of 50 required', met: false });
    expect(agree).toMatchObject({ percent: 50, text: '45% (needs at least 90%)' });
    expect(miss).toMatchObject({ percent: 0, text: '2 critical misses in the last 168 h (needs 0)' });
  });

  it('caps progress at 100 and counts zero misses as done', () => {
    const [obs, , miss] = gateViews(check({ min_observations: { required: 50, actual: 80, met: true }, critical_miss_window: { window_hours: 24, misses: 0, met: true } }));
    expect(obs!.percent).toBe(100);
    expect(miss).toMatchObject({ percent: 100, met: true, text: '0 critical misses in the last 24 h (needs 0)' });
  });

  it('offers only lower levels for demotion', () => {
    expect(lowerLevels('shadow')).toEqual([]);
    expect(lowerLevels('supervised')).toEqual(['shadow']);
    expect(lowerLevels('autonomous')).toEqual(['supervised', 'shadow']);
  });

  it('builds a new session config from form text, percent to ratio, empty fields left to the defaults', () => {
    expect(configFromDraft({ minObservations: '', agreementPercent: '', windowHours: ' ' })).toBeUndefined();
    expect(configFromDraft({ minObservations: '10', agreementPercent: '85', windowHours: '' })).toEqual({ min_observations: 10, agreement_threshold: 0.85 });
    expect(() => configFromDraft({ minObservations: '1.5', agreementPercent: '', windowHours: '' })).toThrow(/Minimum observations/);
    expect(() => configFromDraft({ minObservations: '', agreementPercent: '120', windowHours: '' })).toThrow(/Agreement threshold/);
    expect(() => configFromDraft({ minObservations: '', agreementPercent: '', windowHours: '0' })).toThrow(/Critical-miss window/);
  });
});

describe('telemetry formatting (design §8.18)', () => {
  it('formats durations and rates', () => {
    expect([formatDuration(850), formatDuration(12_340), formatDuration(1_236_000)]).toEqual(['850 µs', '12.3 ms', '1.24 s']);
    expect(formatRate(0.025)).toBe('2.5%');
  });

  it('totals a summary and its error rate', () => {
    const e = (count: number, error_count: number) => ({ name: `n${count}`, count, error_count, error_rate: error_count / count, p50_duration_us: 1, p95_duration_us: 2 });
    expect(summaryTotals({ spans: [e(30, 3), e(10, 1)] })).toEqual({ count: 40, errors: 4, errorRate: 0.1 });
    expect(summaryTotals({ spans: [] })).toEqual({ count: 0, errors: 0, errorRate: 0 });
  });

  it('computes a period start', () => {
    expect(sinceFor(24, Date.UTC(2026, 0, 2))).toBe('2026-01-01T00:00:00.000Z');
  });
});

describe('agents (design §8.18)', () => {
  const device = (id: string, name: string, kind: 'agent' | 'owner', status: Device['status']): Device => ({
    device_id: id,
    name,
    platform: null,
    status,
    kind,
    health: 'green',
    last_seen: null,
    fingerprint: 'f',
    identity_public_key: 'k',
    ephemeral_public_key: 'e',
    enrolled_at: '2026-01-01T00:00:00Z',
    webhook_url: null,
  });

  it('lists agents past enrollment by name with their hub addresses', () => {
    const list = agentEntries(
      [device('1', 'zed', 'agent', 'ACTIVE'), device('2', 'amy', 'agent', 'REVOKED'), device('3', 'new', 'agent', 'PENDING'), device('4', 'me', 'owner', 'ACTIVE')],
      [{ device_id: '1', hub_address: 'zed-bot' }, { device_id: null, hub_address: 'loose' }],
    );
    expect(list.map((a) => [a.name, a.hubAddress])).toEqual([
      ['amy', null],
      ['zed', 'zed-bot'],
    ]);
    expect(agentLabel(list, '1')).toBe('zed (zed-bot)');
    expect(agentLabel(list, 'abcdef0123456789', 'other-hub')).toBe('other-hub');
    expect(agentLabel(undefined, 'abcdef0123456789')).toBe('abcdef01…');
  });
});
