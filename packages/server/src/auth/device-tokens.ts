/**
 * Device JWTs (design §5): EdDSA, signed by the service's own key, claims `sub` = device_id,
 * `tid` = tenant, `typ` = "device", lifetime `deviceTokenTtlSec`. Signing keys live in the
 * `signing_keys` platform table so that tokens survive restarts and verify on every instance, the
 * private JWK sealed with the secrets key (sealed-keys.ts);
 * `rotate()` adds a new active key and keeps old ones for verification until
 * {@link retireSigningKeys} deletes them (`npm run cli -- rotate-signing-key`,
 * `retire-signing-keys`). Each instance caches the keys and reloads them at most
 * {@link KEY_REFRESH_MS} after the last load (on the next use), and at once when a token names a
 * `kid` it has not loaded (at most once a second), so a rotation reaches every instance within
 * that interval without a restart.
 */
import { randomUUID } from 'node:crypto';
import { asc, eq, inArray } from 'drizzle-orm';
import {
  createLocalJWKSet,
  exportJWK,
  generateKeyPair,
  importJWK,
  jwtVerify,
  SignJWT,
  type JSONWebKeySet,
  type JWK,
} from 'jose';
import type { Db } from '../db/client.js';
import { signingKeys } from '../db/schema/index.js';
import { xactLock } from '../db/locks.js';
import { crossTenant } from '../db/tenant.js';
import { KeyReloader } from '../lib/key-reloader.js';
import type { SecretBox } from '../lib/secret-box.js';
import { KEY_REFRESH_MS, type RetiringKey } from '../keys/index.js';
import { openStoredKey, signingKeyContext } from '../keys/index.js';
import { lifetimeWithin } from './token-lifetime.js';

/** Issuer claim of device JWTs. */
export const DEVICE_TOKEN_ISSUER = 'urn:parley:device';
/** Audience claim of device JWTs. */
export const DEVICE_TOKEN_AUDIENCE = 'urn:parley:api';

export interface DeviceClaims {
  deviceId: string;
  tenantId: string;
  expiresAt: Date;
}

interface KeyRow {
  kid: string;
  /** The private JWK as stored (sealed, or clear in a legacy row); opened when it signs. */
  privateJwk: string;
  publicJwk: string;
  active: boolean;
}

const REASON = 'platform signing keys';

export class DeviceTokenService {
  private keys: KeyRow[] = [];
  private jwks: ReturnType<typeof createLocalJWKSet> | undefined;
  private readonly reloader: KeyReloader;

  /**
   * @param box the secrets keyring that seals the private keys at rest (`SECRETS_KEY`).
   * @param ttlSec device-token lifetime (`DEVICE_TOKEN_TTL_SEC`).
   * @param refreshMs how long cached keys are used before a reload ({@link KEY_REFRESH_MS}; tests shorten it).
   */
  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
    private readonly ttlSec: number,
    refreshMs = KEY_REFRESH_MS,
  ) {
    this.reloader = new KeyReloader(() => this.loadKeys(), refreshMs);
  }

  /** Load keys from the database, creating the first one when there is none. */
  async init(): Promise<void> {
    await this.reloader.load();
    if (!this.keys.some((k) => k.active)) await this.rotate();
  }

  /**
   * Create a new active signing key; older keys stay valid for verification until
   * {@link retireSigningKeys}. Other instances sign with it within their refresh interval.
   * @returns the new key's `kid`.
   */
  async rotate(): Promise<string> {
    const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
    const kid = randomUUID();
    const pub = { ...(await exportJWK(publicKey)), kid, alg: 'EdDSA', use: 'sig' };
    const priv = { ...(await exportJWK(privateKey)), kid, alg: 'EdDSA' };
    await crossTenant(this.db, REASON, async (tx) => {
      // Rotations (and first starts) one at a time across instances: exactly one key stays active.
      await xactLock(tx, 'signing-keys');
      await tx.update(signingKeys).set({ active: false }).where(eq(signingKeys.active, true));
      await tx.insert(signingKeys).values({ kid, privateJwk: this.box.seal(JSON.stringify(priv), signingKeyContext(kid)), publicJwk: JSON.stringify(pub) });
    });
    await this.reloader.load();
    return kid;
  }

  private async loadKeys(): Promise<void> {
    const keys = await crossTenant(this.db, REASON, (tx) => tx.select().from(signingKeys));
    this.jwks = createLocalJWKSet({ keys: keys.map((k) => JSON.parse(k.publicJwk) as JWK) });
    this.keys = keys;
  }


  /**
   * The public keys as `/.well-known/jwks.json` serves them: reloaded first when the cache is older
   * than the refresh interval, so an idle instance does not publish a retired key or miss a new one
   * for longer than that.
   */
  async currentJwks(): Promise<JSONWebKeySet> {
    await this.reloader.fresh();
    return this.publicJwks();
  }

  /** The public keys as cached (every key not yet retired when last loaded). */
  publicJwks(): JSONWebKeySet {
    return { keys: this.keys.map((k) => JSON.parse(k.publicJwk) as JWK) };
  }

  /**
   * Sign a device JWT with the active key (its private JWK opened from the stored form). Returns
   * the token and its expiry. @throws SecretBoxError when the active key opens under no key of the ring.
   */
  async issue(deviceId: string, tenantId: string): Promise<{ token: string; expiresAt: Date }> {
    await this.reloader.fresh();
    const key = this.keys.find((k) => k.active);
    if (!key) throw new Error('no active signing key');
    const privateKey = await importJWK(JSON.parse(openStoredKey(this.box, key.privateJwk, signingKeyContext(key.kid))) as JWK, 'EdDSA');
    const now = Math.floor(Date.now() / 1000);
    const exp = now + this.ttlSec;
    const token = await new SignJWT({ tid: tenantId, typ: 'device' })
      .setProtectedHeader({ alg: 'EdDSA', kid: key.kid, typ: 'JWT' })
      .setSubject(deviceId)
      .setIssuer(DEVICE_TOKEN_ISSUER)
      .setAudience(DEVICE_TOKEN_AUDIENCE)
      .setIssuedAt(now)
      .setExpirationTime(exp)
      .setJti(randomUUID())
      .sign(privateKey);
    return { token, expiresAt: new Date(exp * 1000) };
  }

  /**
   * Verify signature, issuer, audience, expiry and claims; `exp` and `iat` are required and the
   * lifetime may not exceed `ttlSec` ({@link lifetimeWithin}), so a token minted with a longer one
   * (an earlier, larger `DEVICE_TOKEN_TTL_SEC`, or a leaked key) is refused. Returns undefined for
   * any invalid token. A token signed by a key this instance has not loaded yet triggers one reload (at most
   * one a second, shared; such a call may wait up to a second); a retired key's tokens fail.
   */
  async verify(token: string): Promise<DeviceClaims | undefined> {
    await this.reloader.fresh();
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const { payload } = await jwtVerify(token, this.jwks!, {
          issuer: DEVICE_TOKEN_ISSUER,
          audience: DEVICE_TOKEN_AUDIENCE,
          algorithms: ['EdDSA'],
          requiredClaims: ['exp', 'iat'],
        });
        if (!lifetimeWithin(payload, this.ttlSec)) return undefined;
        if (payload.typ !== 'device' || typeof payload.sub !== 'string' || typeof payload.tid !== 'string') return undefined;
        return { deviceId: payload.sub, tenantId: payload.tid, expiresAt: new Date((payload.exp ?? 0) * 1000) };
      } catch (err) {
        if (attempt === 0 && (err as { code?: string }).code === 'ERR_JWKS_NO_MATCHING_KEY') {
          await this.reloader.reloadForUnknownKid();
          continue;
        }
        return undefined;
      }
    }
    return undefined;
  }
}

/**
 * Delete the device-token signing keys that no longer sign and whose tokens have all expired: a
 * key stopped signing when the next key was created (`created_at` of the next newer row), plus
 * {@link KEY_REFRESH_MS} for instances still using their cached copy, plus `ttlSec`. With `force`
 * every inactive key goes at once (a compromised key: its unexpired tokens stop verifying on every
 * instance within {@link KEY_REFRESH_MS}; their holders renew or re-enrol). The active key is
 * never retired. Run by `npm run cli -- retire-signing-keys [--force]`.
 * @param ttlSec device-token lifetime (`DEVICE_TOKEN_TTL_SEC`).
 * @returns the retired kids and the kept inactive ones with their `retirable_at`.
 */
export async function retireSigningKeys(db: Db, ttlSec: number, opts: { force?: boolean; now?: Date } = {}): Promise<{ retired: string[]; kept: RetiringKey[] }> {
  const now = (opts.now ?? new Date()).getTime();
  return crossTenant(db, REASON, async (tx) => {
    const rows = await tx.select({ kid: signingKeys.kid, active: signingKeys.active, createdAt: signingKeys.createdAt }).from(signingKeys).orderBy(asc(signingKeys.createdAt)).for('update');
    const retired: string[] = [];
    const kept: RetiringKey[] = [];
    rows.forEach((row, i) => {
      if (row.active) return;
      const deactivated = rows[i + 1]?.createdAt ?? row.createdAt;
      const retirable = deactivated.getTime() + ttlSec * 1000 + KEY_REFRESH_MS;
      if (opts.force || retirable <= now) retired.push(row.kid);
      else kept.push({ kid: row.kid, deactivated_at: deactivated.toISOString(), retirable_at: new Date(retirable).toISOString() });
    });
    if (retired.length > 0) await tx.delete(signingKeys).where(inArray(signingKeys.kid, retired));
    return { retired, kept };
  });
}
