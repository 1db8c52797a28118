/**
 * Stateless, MAC'd single-purpose values the service hands out and later checks without having
 * stored them (docs/decisions.md "Stateless renewal challenges"): device-token renewal challenges
 * (renewal-challenges.ts) and key-binding nonces (key-binding-nonces.ts).
 *
 * A value is `<prefix>:<field>…:<expiry ms>:<nonce>:<mac>`: `nonce` 16 random bytes (hex), the MAC
 * an HMAC-SHA256 (node:crypto, base64url) over everything before it, under a key shared by every
 * instance: HKDF-SHA256 (RFC 5869) over the 32-byte seed of the `renewal-challenge` platform key
 * (`platform_keys`, created once by the first instance, keys/platform-keys.ts `loadPlatformKey`),
 * with an `info` of its own per kind, so a value of one kind never verifies as another.
 * Checking a value reads nothing; single use is the caller's (it records spent values, bounded
 * by the TTL, once the step they authorise succeeded).
 */
import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Db } from '../db/client.js';
import type { SecretBox } from '../lib/secret-box.js';
import { loadPlatformKey } from '../keys/index.js';
import { decodePrivateKeyMultibase } from '../keys/index.js';

/** `platform_keys.purpose` whose seed keys the MACs. */
export const RENEWAL_CHALLENGE_KEY_PURPOSE = 'renewal-challenge';

/** One kind of value: its first field, its HKDF `info` and how long a value stays valid. */
export interface StatelessChallengeKind {
  prefix: string;
  info: string;
  ttlMs: number;
}

/** A verified value: the fields it was issued with and its expiry. */
export interface VerifiedStatelessChallenge {
  fields: string[];
  expiresAt: Date;
}

export class StatelessChallenges {
  private key: Buffer | undefined;

  /** @param box the secrets keyring that seals the platform key at rest (`SECRETS_KEY`). */
  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
    private readonly kind: StatelessChallengeKind,
  ) {}

  /** Load (or create, once for all instances) the platform key and derive this kind's MAC key. */
  async init(): Promise<void> {
    const stored = await loadPlatformKey(this.db, this.box, RENEWAL_CHALLENGE_KEY_PURPOSE);
    const seed = decodePrivateKeyMultibase(stored.privateKeyMultibase);
    this.key = Buffer.from(hkdfSync('sha256', seed, Buffer.alloc(0), this.kind.info, 32));
  }

  /**
   * A fresh value naming `fields`, valid for the TTL from `now`.
   * @throws Error when a field holds `:` (the separator).
   */
  issue(fields: readonly string[], now = new Date()): { value: string; expiresAt: Date } {
    if (fields.some((f) => f.includes(':'))) throw new Error('a stateless challenge field may not contain ":"');
    const expiresAt = new Date(now.getTime() + this.kind.ttlMs);
    const body = [this.kind.prefix, ...fields, String(expiresAt.getTime()), randomBytes(16).toString('hex')].join(':');
    return { value: `${body}:${this.mac(body)}`, expiresAt };
  }

  /** The fields and expiry of `value` when its MAC is ours, it is of this kind and has not expired; otherwise undefined. */
  verify(value: string, now = new Date()): VerifiedStatelessChallenge | undefined {
    const cut = value.lastIndexOf(':');
    if (cut < 0) return undefined;
    const body = value.slice(0, cut);
    const given = Buffer.from(value.slice(cut + 1), 'utf8');
    const expected = Buffer.from(this.mac(body), 'utf8');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    const parts = body.split(':');
    if (parts.length < 3 || parts[0] !== this.kind.prefix) return undefined;
    const expiresAt = new Date(Number(parts[parts.length - 2]));
    if (!(expiresAt.getTime() > now.getTime())) return undefined;
    return { fields: parts.slice(1, -2), expiresAt };
  }

  private mac(body: string): string {
    if (!this.key) throw new Error('StatelessChallenges.init() has not run');
    return createHmac('sha256', this.key).update(body, 'utf8').digest('base64url');
  }
}
