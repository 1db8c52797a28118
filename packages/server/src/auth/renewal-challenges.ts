/**
 * Stateless challenges for device-token renewal (design §5; docs/decisions.md "Stateless renewal
 * challenges"). `POST /devices/{id}/token/challenge` neither reads nor writes the database: the
 * challenge is `parley-renew:<device id>:<expiry ms>:<nonce>:<mac>` (stateless-challenges.ts; the
 * form clients check before signing is @parley/protocol `isRenewalChallengeFor`). So anyone may
 * ask, for any id, and learns nothing about which devices exist; the answer has one shape.
 *
 * Renewal checks the MAC, the device id and the expiry here; single use is enforced by the
 * device service, which records spent challenges (bounded by the TTL) only after the device's
 * identity-key signature over the challenge verifies.
 */
import { RENEWAL_CHALLENGE_PREFIX } from '@parley/protocol';
import type { Db } from '../db/client.js';
import type { SecretBox } from '../lib/secret-box.js';
import { StatelessChallenges } from './stateless-challenges.js';

export { RENEWAL_CHALLENGE_KEY_PURPOSE } from './stateless-challenges.js';
/** How long a challenge stays valid. */
export const RENEWAL_CHALLENGE_TTL_MS = 5 * 60_000;

/** A verified challenge: the device it was issued for and its expiry. */
export interface VerifiedChallenge {
  deviceId: string;
  expiresAt: Date;
}

export class RenewalChallenges {
  private readonly values: StatelessChallenges;

  /**
   * @param box the secrets keyring that seals the platform key at rest (`SECRETS_KEY`).
   * @param ttlMs how long a challenge stays valid.
   */
  constructor(db: Db, box: SecretBox, ttlMs = RENEWAL_CHALLENGE_TTL_MS) {
    this.values = new StatelessChallenges(db, box, { prefix: RENEWAL_CHALLENGE_PREFIX, info: 'parley device-token renewal challenge v1', ttlMs });
  }

  /** Load (or create, once for all instances) the platform key and derive the MAC key. */
  init(): Promise<void> {
    return this.values.init();
  }

  /** A fresh challenge bound to `deviceId` (any id: nothing is looked up), valid for the TTL from `now`. */
  issue(deviceId: string, now = new Date()): { challenge: string; expiresAt: Date } {
    const { value, expiresAt } = this.values.issue([deviceId], now);
    return { challenge: value, expiresAt };
  }

  /** The challenge's device and expiry when its MAC is ours, it names `deviceId` and it has not expired; otherwise undefined. */
  verify(deviceId: string, challenge: string, now = new Date()): VerifiedChallenge | undefined {
    const v = this.values.verify(challenge, now);
    if (!v || v.fields.length !== 1 || v.fields[0] !== deviceId) return undefined;
    return { deviceId, expiresAt: v.expiresAt };
  }
}
