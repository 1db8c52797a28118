/**
 * Shadow-session rules as pure functions (contract §2.14, §3.4, §4.17; design §8.8, §8.20): levels and
 * their order, config defaults, how actions are compared, which observations count as evidence,
 * and the three graduation gates. No database, no clock: callers pass `now`.
 *
 * Evidence rules (the SQL aggregates of repo.ts implement exactly {@link tally}):
 * - level evidence (observation count, agreement): observations recorded AT the session's current
 *   level and at or after `level_since` (design §8.20: every promotion needs fresh evidence);
 * - critical-miss window: critical misses recorded at or after `now - critical_miss_window_hours`
 *   (the window edge counts), whatever level they were recorded at, so a demotion after a critical
 *   miss does not wipe the miss: the cool-down runs its full length.
 */

import { SHADOW_DEFAULT_CONFIG, SHADOW_LEVELS, type ShadowConfig, type ShadowGraduationCheck, type ShadowLevel } from '@parley/protocol';

/**
 * Levels (lowest first, contract §3.4) and the session configuration (contract §2.14: `min_observations`
 * an integer >= 1 of observations at the current level required before graduation;
 * `agreement_threshold` the required agreement rate 0..1, met when the rate meets or exceeds it;
 * `critical_miss_window_hours` the hours (> 0) before `now` in which no critical miss may have been
 * recorded) are on the wire: the contract (`@parley/protocol`) defines them.
 */
export { SHADOW_LEVELS, type ShadowConfig, type ShadowLevel };

/** Defaults of design §8.8 (the contract's `SHADOW_DEFAULT_CONFIG`). */
export const DEFAULT_CONFIG: Readonly<ShadowConfig> = SHADOW_DEFAULT_CONFIG;

const HOUR_MS = 3_600_000;

/** The level above `level`, or null at `autonomous` (contract §3.4: one level per graduation). */
export function nextLevel(level: ShadowLevel): ShadowLevel | null {
  return SHADOW_LEVELS[SHADOW_LEVELS.indexOf(level) + 1] ?? null;
}

/** True when `target` is strictly below `current` (demotion targets, design §8.8). */
export function isLower(target: ShadowLevel, current: ShadowLevel): boolean {
  return SHADOW_LEVELS.indexOf(target) < SHADOW_LEVELS.indexOf(current);
}

/** An action in comparable form: Unicode NFC, surrounding whitespace trimmed, lowercased. */
export function normalizeAction(action: string): string {
  return action.normalize('NFC').trim().toLowerCase();
}

/** Whether the human followed the agent: the actions match exactly after {@link normalizeAction}. */
export function actionsAgree(agentAction: string, humanAction: string): boolean {
  return normalizeAction(agentAction) === normalizeAction(humanAction);
}

/** agreed / total, 0 when total is 0 (contract §2.14). */
export function agreementRate(agreed: number, total: number): number {
  return total === 0 ? 0 : agreed / total;
}

/** Earliest `recorded_at` of a critical miss that still blocks graduation at `now` (inclusive). */
export function missWindowStart(now: Date, windowHours: number): Date {
  return new Date(now.getTime() - windowHours * HOUR_MS);
}

/** The slice of a session that selects evidence: its current level and when it entered it. */
export interface LevelState {
  level: ShadowLevel;
  levelSince: Date;
}

/** The facts of one observation the gates look at. */
export interface ObservationFacts {
  level: ShadowLevel;
  recordedAt: Date;
  agreed: boolean;
  criticalMiss: boolean;
}

/** Counts the gates are decided on. `criticalMisses` counts the current level's evidence; `windowMisses` the miss window. */
export interface Evidence {
  observations: number;
  agreed: number;
  criticalMisses: number;
  windowMisses: number;
}

/** True when an observation is evidence for the session's current level (design §8.20). */
export function countsForLevel(o: Pick<ObservationFacts, 'level' | 'recordedAt'>, s: LevelState): boolean {
  return o.level === s.level && o.recordedAt.getTime() >= s.levelSince.getTime();
}

/** True when a critical miss recorded at `recordedAt` lies inside the window ending at `now` (edge included). */
export function inMissWindow(recordedAt: Date, now: Date, windowHours: number): boolean {
  return recordedAt.getTime() >= missWindowStart(now, windowHours).getTime();
}

/** Reference tally of observations (what repo.ts computes in SQL). */
export function tally(observations: readonly ObservationFacts[], s: LevelState, now: Date, windowHours: number): Evidence {
  const e: Evidence = { observations: 0, agreed: 0, criticalMisses: 0, windowMisses: 0 };
  for (const o of observations) {
    if (countsForLevel(o, s)) {
      e.observations++;
      if (o.agreed) e.agreed++;
      if (o.criticalMiss) e.criticalMisses++;
    }
    if (o.criticalMiss && inMissWindow(o.recordedAt, now, windowHours)) e.windowMisses++;
  }
  return e;
}

/** The graduation-check answer, exactly contract §4.17 (the contract's `ShadowGraduationCheck`). */
export type GraduationCheck = ShadowGraduationCheck;

/**
 * Evaluate the three gates (contract §3.4: all must hold at once; "meets or exceeds"). At
 * `autonomous` the gates are still reported but `eligible` is false and `next_level` null.
 */
export function checkGraduation(config: ShadowConfig, level: ShadowLevel, e: Evidence): GraduationCheck {
  const rate = agreementRate(e.agreed, e.observations);
  const gates = {
    min_observations: { required: config.min_observations, actual: e.observations, met: e.observations >= config.min_observations },
    agreement_threshold: { required: config.agreement_threshold, actual: rate, met: rate >= config.agreement_threshold },
    critical_miss_window: { window_hours: config.critical_miss_window_hours, misses: e.windowMisses, met: e.windowMisses === 0 },
  };
  const next = nextLevel(level);
  const allMet = gates.min_observations.met && gates.agreement_threshold.met && gates.critical_miss_window.met;
  return { eligible: next !== null && allMet, current_level: level, next_level: next, gates };
}

/** The 409 detail naming every failing gate, e.g. `min_observations (3 of 50 required)`. */
export function failingGates(c: GraduationCheck): string {
  const g = c.gates;
  const failed: string[] = [];
  if (!g.min_observations.met) failed.push(`min_observations (${g.min_observations.actual} of ${g.min_observations.required} required)`);
  if (!g.agreement_threshold.met) failed.push(`agreement_threshold (rate ${g.agreement_threshold.actual} below ${g.agreement_threshold.required})`);
  if (!g.critical_miss_window.met) failed.push(`critical_miss_window (${g.critical_miss_window.misses} critical miss(es) in the last ${g.critical_miss_window.window_hours} h)`);
  return `not eligible for graduation from ${c.current_level}: failing gates ${failed.join(', ')}`;
}
