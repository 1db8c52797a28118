/**
 * Badge colours for the states the governance screens show (design §8.3 held messages, §8.4
 * decisions, §8.5 policy actions, delivery outcomes and room security, contract §2.4 risk levels).
 * A badge always shows the state's text too, so the colour is never the only signal.
 */
export type Tone = 'good' | 'warn' | 'bad' | 'info' | 'neutral';

const TONES: Record<string, Tone> = {
  // held messages (design §8.3) and decisions (design §8.4)
  held: 'warn',
  pending: 'warn',
  deferred: 'info',
  approved: 'good',
  denied: 'bad',
  expired: 'neutral',
  // risk levels (contract §2.4)
  low: 'good',
  medium: 'warn',
  high: 'bad',
  critical: 'bad',
  // delivery outcomes and policy actions (design §8.5)
  delivered: 'good',
  notified: 'info',
  blocked: 'bad',
  allow: 'good',
  notify: 'info',
  hold: 'warn',
  block: 'bad',
  // alert severities, action statuses (contract §2.4)
  info: 'info',
  warning: 'warn',
  error: 'bad',
  success: 'good',
  failure: 'bad',
  // device states (contract §2.3)
  PENDING: 'warn',
  APPROVED: 'info',
  ACTIVE: 'good',
  REVOKED: 'bad',
  // room security levels (design §8.5)
  standard: 'neutral',
  strict: 'warn',
};

/** The badge tone of a state name (design §8.3, §8.4, §8.5; contract §2.4); `neutral` for names it does not know. */
export function toneOf(state: string): Tone {
  return TONES[state] ?? 'neutral';
}
