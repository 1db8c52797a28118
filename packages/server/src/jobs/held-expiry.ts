/**
 * Scheduled job: marks lapsed `held` messages `expired` and drops their held ciphertext (contract §3.8,
 * design §8.3: 72 h by default, `HELD_MESSAGE_TTL_HOURS`). Lapsed items already answer as
 * expired at read and decision time (policies/service.ts), so this job keeps stored state tidy
 * and removes ciphertext nobody may receive any more; missing a run changes no answer.
 */
import type { Metrics } from '../lib/metrics.js';
import { every } from './every.js';
import type { PolicyService } from '../modules/policies/service.js';

/** Run once; returns how many held messages expired. */
export function expireHeldMessages(policies: PolicyService, now = new Date()): Promise<number> {
  return policies.expireDue(now);
}

/** Run every `intervalMs`; returns a stop function. Errors are logged, never thrown. */
export function scheduleHeldExpiry(policies: PolicyService, intervalMs: number, onError: (err: unknown) => void, metrics?: Metrics): () => void {
  return every('held_expiry', intervalMs, () => expireHeldMessages(policies), onError, metrics);
}
