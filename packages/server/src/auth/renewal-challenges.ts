/**
 * Stateless challenges for device-token renewal (DESIGN §5; docs/decisions.md "Stateless renewal
 * challenges"). `POST /devices/{id}/token/challenge` neither reads nor writes the database: the
 * challenge is `parley-renew:<device id>:<expiry ms>:<nonce>:<mac>`, the MAC an HMAC-SHA256
 * (node:crypto) over everything before it, under a key shared by every instance. So anyone may
 * ask, for any id, and learns nothing about which devices exist; the answer has one shape.
 *
 * The key: HKDF-SHA256 over the 32-byte seed of the `renewal-challenge` platform key
 * (`platform_keys`, created once by the first instance, credentials/issuer.ts `loadPlatformKey`).
 * Renewal checks the MAC, the device id and the expiry here; single use is enforced by the
 * device service, which records spent challenges (bounded by the TTL) only after the device's
 * identity-key signature over the challenge verifies.
 */
import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Db } from '../db/client.js';
import type { SecretBox } from '../lib/secret-box.js';
import { loadPlatformKey } from '../modules/credentials/issuer.js';
import { decodePrivateKeyMultibase } from '../modules/grants/keys.js';

/** `platform_keys.purpose` whose seed keys the challenge MAC. */
export const RENEWAL_CHALLENGE_KEY_PURPOSE = 'renewal-challenge';
/** How long a challenge stays valid. */
export const RENEWAL_CHALLENGE_TTL_MS = 5 * 60_000;
const PREFIX = 'parley-renew';

/** A verified challenge: the device it was issued for and its expiry. */
export interface VerifiedChallenge {
  deviceId: string;
  expiresAt: Date;
}

export class RenewalChallenges {
  private key: Buffer | undefined;

  /**
   * @param box the secrets keyring that seals the platform key at rest (`SECRETS_KEY`).
   * @param ttlMs how long a challenge stays valid.
   */
  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
    private readonly ttlMs = RENEWAL_CHALLENGE_TTL_MS,
  ) {}

  /** Load (or create, once for all instances) the platform key and derive the MAC key. */
  async init(): Promise<void> {
    const stored = await loadPlatformKey(this.db, this.box, RENEWAL_CHALLENGE_KEY_PURPOSE);
    const seed = decodePrivateKeyMultibase(stored.privateKeyMultibase);
    this.key = Buffer.from(hkdfSync('sha256', seed, Buffer.alloc(0), 'parley device-token renewal challenge v1', 32));
  }

  /** A fresh challenge bound to `deviceId` (any id: nothing is looked up), valid for the TTL from `now`. */
  issue(deviceId: string, now = new Date()): { challenge: string; expiresAt: Date } {
    const expiresAt = new Date(now.getTime() + this.ttlMs);
    const body = `${PREFIX}:${deviceId}:${expiresAt.getTime()}:${randomBytes(16).toString('hex')}`;
    return { challenge: `${body}:${this.mac(body)}`, expiresAt };
  }

  /** The challenge's device and expiry when its MAC is ours, it names `deviceId` and it has not expired; otherwise undefined. */
  verify(deviceId: string, challenge: string, now = new Date()): VerifiedChallenge | undefined {
    const cut = challenge.lastIndexOf(':');
    if (cut < 0) return undefined;
    const body = challenge.slice(0, cut);
    const given = Buffer.from(challenge.slice(cut + 1), 'utf8');
    const expected = Buffer.from(this.mac(body), 'utf8');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    const [prefix, id, expMs] = body.split(':');
    const expiresAt = new Date(Number(expMs));
    if (prefix !== PREFIX || id !== deviceId || !(expiresAt.getTime() > now.getTime())) return undefined;
    return { deviceId: id, expiresAt };
  }

  private mac(body: string): string {
    if (!this.key) throw new Error('RenewalChallenges.init() has not run');
    return createHmac('sha256', this.key).update(body, 'utf8').digest('base64url');
  }
}
