/**
 * Shadow gates as pure functions (contract §3.4, §4.17; design §8.8, §8.20), at their boundaries:
 * observation count min-1 / min, agreement exactly at the threshold, a critical miss exactly at
 * the window edge and just outside it, evidence from before the last level change, level order,
 * and how actions are compared.
 */
import { describe, expect, it } from 'vitest';
import {
  actionsAgree,
  agreementRate,
  checkGraduation,
  countsForLevel,
  DEFAULT_CONFIG,
  failingGates,
  inMissWindow,
  isLower,
  missWindowStart,
  nextLevel,
  tally,
  type Evidence,
  type ObservationFacts,
  type ShadowConfig,
} from '../../src/modules/shadow/gates.js';

const H = 3_600_000;
const NOW = new Date('2026-03-01T12:00:00.000Z');
const at = (msBeforeNow: number) => new Date(NOW.getTime() - msBeforeNow);
const cfg = (c: Partial<ShadowConfig> = {}): ShadowConfig => ({ min_observations: 10, agreement_threshold: 0.9, critical_miss_window_hours: 24, ...c });
const ev = (e: Partial<Evidence> = {}): Evidence => ({ observations: 10, agreed: 10, criticalMisses: 0, windowMisses: 0, ...e });

describe('levels', () => {
  it('go up one at a time and stop at autonomous', () => {
    expect(nextLevel('shadow')).toBe('supervised');
    expect(nextLevel('supervised')).toBe('autonomous');
    expect(nextLevel('autonomous')).toBeNull();
  });
  it('demotion targets are strictly lower', () => {
    expect(isLower('shadow', 'supervised')).toBe(true);
    expect(isLower('shadow', 'autonomous')).toBe(true);
    expect(isLower('supervised', 'autonomous')).toBe(true);
    expect(isLower('supervised', 'supervised')).toBe(false);
    expect(isLower('autonomous', 'supervised')).toBe(false);
    expect(isLower('shadow', 'shadow')).toBe(false);
  });
  it('defaults are those of design §8.8', () => {
    expect(DEFAULT_CONFIG).toEqual({ min_observations: 50, agreement_threshold: 0.9, critical_miss_window_hours: 168 });
  });
});

describe('action comparison', () => {
  it('matches after trimming, case-insensitively', () => {
    expect(actionsAgree('Approve', '  approve ')).toBe(true);
    expect(actionsAgree('REFUND_FULL', 'refund_full')).toBe(true);
    expect(actionsAgree('e\u0301', '\u00e9')).toBe(true); // NFC
  });
  it('anything else is a disagreement', () => {
    expect(actionsAgree('approve', 'approved')).toBe(false);
    expect(actionsAgree('refund full', 'refund  full')).toBe(false);
    expect(actionsAgree('deny', 'approve')).toBe(false);
  });
});

describe('agreement rate', () => {
  it('is agreed / total, 0 without observations', () => {
    expect(agreementRate(0, 0)).toBe(0);
    expect(agreementRate(9, 10)).toBe(0.9);
    expect(agreementRate(3, 4)).toBe(0.75);
  });
});

describe('gates', () => {
  it('min_observations: min - 1 fails, min passes', () => {
    const below = checkGraduation(cfg(), 'shadow', ev({ observations: 9, agreed: 9 }));
    expect(below.gates.min_observations).toEqual({ required: 10, actual: 9, met: false });
    expect(below.eligible).toBe(false);
    const exact = checkGraduation(cfg(), 'shadow', ev({ observations: 10, agreed: 10 }));
    expect(exact.gates.min_observations).toEqual({ required: 10, actual: 10, met: true });
    expect(exact.eligible).toBe(true);
  });

  it('agreement_threshold: a rate exactly at the threshold meets it, just below does not', () => {
    const exact = checkGraduation(cfg(), 'shadow', ev({ observations: 10, agreed: 9 }));
    expect(exact.gates.agreement_threshold).toEqual({ required: 0.9, actual: 0.9, met: true });
    expect(exact.eligible).toBe(true);
    for (const [t, agreed, total] of [[0.7, 7, 10], [0.3, 3, 10], [0.75, 15, 20], [1, 10, 10]] as const) {
      expect(checkGraduation(cfg({ agreement_threshold: t, min_observations: 1 }), 'shadow', ev({ observations: total, agreed })).gates.agreement_threshold.met).toBe(true);
    }
    const below = checkGraduation(cfg({ min_observations: 100 }), 'shadow', ev({ observations: 100, agreed: 89 }));
    expect(below.gates.agreement_threshold).toMatchObject({ actual: 0.89, met: false });
    expect(below.eligible).toBe(false);
  });

  it('zero observations: rate 0, a threshold of 0 is still met but min_observations is not', () => {
    const c = checkGraduation(cfg({ agreement_threshold: 0, min_observations: 1 }), 'shadow', ev({ observations: 0, agreed: 0 }));
    expect(c.gates.agreement_threshold).toEqual({ required: 0, actual: 0, met: true });
    expect(c.gates.min_observations.met).toBe(false);
    expect(c.eligible).toBe(false);
  });

  it('critical_miss_window: one miss in the window fails the gate', () => {
    const c = checkGraduation(cfg(), 'supervised', ev({ windowMisses: 1 }));
    expect(c.gates.critical_miss_window).toEqual({ window_hours: 24, misses: 1, met: false });
    expect(c).toMatchObject({ eligible: false, current_level: 'supervised', next_level: 'autonomous' });
  });

  it('all three gates must hold at once', () => {
    const c = checkGraduation(cfg(), 'shadow', ev({ observations: 9, agreed: 5, windowMisses: 2 }));
    expect([c.gates.min_observations.met, c.gates.agreement_threshold.met, c.gates.critical_miss_window.met]).toEqual([false, false, false]);
    expect(failingGates(c)).toBe(
      'not eligible for graduation from shadow: failing gates min_observations (9 of 10 required), agreement_threshold (rate 0.5555555555555556 below 0.9), critical_miss_window (2 critical miss(es) in the last 24 h)',
    );
    expect(failingGates(checkGraduation(cfg(), 'shadow', ev({ observations: 9, agreed: 9 })))).toMatch(/failing gates min_observations \(9 of 10 required\)$/);
  });

  it('at autonomous nothing is eligible and next_level is null', () => {
    expect(checkGraduation(cfg(), 'autonomous', ev())).toMatchObject({ eligible: false, current_level: 'autonomous', next_level: null });
  });
});

describe('evidence selection', () => {
  const levelSince = at(10 * H);
  const state = { level: 'supervised' as const, levelSince };
  const o = (msBeforeNow: number, f: Partial<ObservationFacts> = {}): ObservationFacts => ({ level: 'supervised', recordedAt: at(msBeforeNow), agreed: true, criticalMiss: false, ...f });

  it('a critical miss exactly at the window edge counts; one millisecond earlier does not', () => {
    expect(missWindowStart(NOW, 24).toISOString()).toBe('2026-02-28T12:00:00.000Z');
    expect(inMissWindow(at(24 * H), NOW, 24)).toBe(true);
    expect(inMissWindow(at(24 * H + 1), NOW, 24)).toBe(false);
    expect(inMissWindow(at(0), NOW, 24)).toBe(true);
    expect(inMissWindow(at(1.5 * H), NOW, 1.5)).toBe(true); // fractional hours
    expect(inMissWindow(at(1.5 * H + 1), NOW, 1.5)).toBe(false);
  });

  it('observations from before the last level change, or at another level, are not evidence', () => {
    expect(countsForLevel(o(10 * H), state)).toBe(true); // exactly at level_since
    expect(countsForLevel(o(10 * H + 1), state)).toBe(false);
    expect(countsForLevel(o(1 * H, { level: 'shadow' }), state)).toBe(false);
  });

  it('tally: level evidence since level_since, misses by the time window whatever the level', () => {
    const observations: ObservationFacts[] = [
      o(30 * H, { level: 'shadow', agreed: false, criticalMiss: true }), // old level, outside window
      o(20 * H, { level: 'shadow', agreed: false, criticalMiss: true }), // old level, inside window
      o(10 * H + 1, { agreed: false }), // just before the level change
      o(10 * H), // at the level change
      o(5 * H, { agreed: false }),
      o(2 * H, { agreed: false, criticalMiss: true }),
      o(1 * H),
    ];
    expect(tally(observations, state, NOW, 24)).toEqual({ observations: 4, agreed: 2, criticalMisses: 1, windowMisses: 2 });
    // A window shorter than the time since the old misses leaves only the current one.
    expect(tally(observations, state, NOW, 3).windowMisses).toBe(1);
    // Outside the window: nothing counted.
    expect(tally(observations, state, NOW, 1).windowMisses).toBe(0);
  });
});
