/**
 * Pure view logic of the Shadow sessions screen (contract §2.14, §3.4, §4.17; design §8.8, §8.20):
 * each graduation gate as a progress percentage with text, the levels a session may be demoted
 * to, and the optional config of a new session from form text. Unit-tested in
 * `test/trust-view.test.ts`.
 */
import { SHADOW_LEVELS, type ShadowConfigInput, type ShadowGraduationCheck, type ShadowLevel } from '@parley/sdk';
import type { Tone } from './tones';

/** One graduation gate as the screen shows it: a 0..100 progress and the numbers as text. */
export interface GateView {
  key: keyof ShadowGraduationCheck['gates'];
  label: string;
  percent: number;
  text: string;
  met: boolean;
}

const pct = (part: number, whole: number) => (whole <= 0 ? 100 : Math.min(100, Math.max(0, Math.round((part / whole) * 100))));
const pc = (ratio: number) => `${Math.round(ratio * 1000) / 10}%`;

/**
 * The three gates of contract §3.4 (counted since the current level began, design §8.20):
 * observations against the minimum, agreement rate against the threshold, and critical misses
 * in the window (any miss is 0 % progress: the gate needs zero).
 */
export function gateViews(check: ShadowGraduationCheck): GateView[] {
  const { min_observations: obs, agreement_threshold: agree, critical_miss_window: miss } = check.gates;
  return [
    { key: 'min_observations', label: 'Observations', percent: pct(obs.actual, obs.required), text: `${obs.actual} of ${obs.required} required`, met: obs.met },
    {
      key: 'agreement_threshold',
      label: 'Agreement rate',
      percent: pct(agree.actual, agree.required),
      text: `${pc(agree.actual)} (needs at least ${pc(agree.required)})`,
      met: agree.met,
    },
    {
      key: 'critical_miss_window',
      label: 'No critical misses',
      percent: miss.misses === 0 ? 100 : 0,
      text: `${miss.misses} critical ${miss.misses === 1 ? 'miss' : 'misses'} in the last ${miss.window_hours} h (needs 0)`,
      met: miss.met,
    },
  ];
}

/** Levels below `level`, highest first (contract §3.4 demotion: any lower level at any time). */
export function lowerLevels(level: ShadowLevel): ShadowLevel[] {
  return SHADOW_LEVELS.slice(0, SHADOW_LEVELS.indexOf(level)).reverse();
}

/** Badge colour of a level (contract §2.14). */
export function levelTone(level: ShadowLevel): Tone {
  return level === 'autonomous' ? 'good' : level === 'supervised' ? 'info' : 'neutral';
}

/** Form text of a new session's optional config (the agreement threshold in percent). */
export interface ConfigDraft {
  minObservations: string;
  agreementPercent: string;
  windowHours: string;
}

/**
 * The `config` of `POST /shadow/sessions` from form text (design §8.8 defaults for empty fields):
 * only the keys filled in; `undefined` when none is.
 * @throws Error naming the field when a value is not a number in its range.
 */
export function configFromDraft(d: ConfigDraft): ShadowConfigInput | undefined {
  const out: ShadowConfigInput = {};
  const num = (text: string, field: string, ok: (n: number) => boolean): number | undefined => {
    if (text.trim() === '') return undefined;
    const n = Number(text);
    if (!Number.isFinite(n) || !ok(n)) throw new Error(`${field}: ${text.trim()} is out of range`);
    return n;
  };
  const min = num(d.minObservations, 'Minimum observations', (n) => Number.isInteger(n) && n >= 1 && n <= 1_000_000);
  const agree = num(d.agreementPercent, 'Agreement threshold', (n) => n >= 0 && n <= 100);
  const hours = num(d.windowHours, 'Critical-miss window', (n) => n > 0 && n <= 87_600);
  if (min !== undefined) out.min_observations = min;
  if (agree !== undefined) out.agreement_threshold = Math.round(agree * 100) / 10_000;
  if (hours !== undefined) out.critical_miss_window_hours = hours;
  return Object.keys(out).length > 0 ? out : undefined;
}
