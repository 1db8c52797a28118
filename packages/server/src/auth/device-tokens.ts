/**
 * Device JWTs (DESIGN §5): EdDSA, signed by the service's own key, claims `sub` = device_id,
 * `tid` = tenant, `typ` = "device", lifetime `deviceTokenTtlSec`. Signing keys live in the
 * `signing_keys` platform table so that tokens survive restarts and verify on every instance;
 * `rotate()` adds a new active key and keeps old ones for verification.
 */
import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
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
import { crossTenant } from '../db/tenant.js';

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
  privateJwk: string;
  publicJwk: string;
  active: boolean;
}

export class DeviceTokenService {
  private keys: KeyRow[] = [];
  private jwks: ReturnType<typeof createLocalJWKSet> | undefined;

  constructor(
    private readonly db: Db,
    private readonly ttlSec: number,
  ) {}

  /** Load keys from the database, creating the first one when there is none. */
  async init(): Promise<void> {
    await this.load();
    if (!this.keys.some((k) => k.active)) await this.rotate();
  }

  /** Create a new active signing key; older keys stay valid for verification. */
  async rotate(): Promise<string> {
    const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
    const kid = randomUUID();
    const pub = { ...(await exportJWK(publicKey)), kid, alg: 'EdDSA', use: 'sig' };
    const priv = { ...(await exportJWK(privateKey)), kid, alg: 'EdDSA' };
    await crossTenant(this.db, 'platform signing keys', async (tx) => {
      await tx.update(signingKeys).set({ active: false }).where(eq(signingKeys.active, true));
      await tx.insert(signingKeys).values({ kid, privateJwk: JSON.stringify(priv), publicJwk: JSON.stringify(pub) });
    });
    await this.load();
    return kid;
  }

  private async load(): Promise<void> {
    this.keys = await crossTenant(this.db, 'platform signing keys', (tx) => tx.select().from(signingKeys));
    this.jwks = createLocalJWKSet(this.publicJwks());
  }

  /** The public keys, for `/.well-known/jwks.json`. */
  publicJwks(): JSONWebKeySet {
    return { keys: this.keys.map((k) => JSON.parse(k.publicJwk) as JWK) };
  }

  /** Sign a device JWT. Returns the token and its expiry. */
  async issue(deviceId: string, tenantId: string): Promise<{ token: string; expiresAt: Date }> {
    const key = this.keys.find((k) => k.active);
    if (!key) throw new Error('no active signing key');
    const privateKey = await importJWK(JSON.parse(key.privateJwk) as JWK, 'EdDSA');
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
   * Verify signature, issuer, audience, expiry and claims. Returns undefined for any invalid
   * token. A token signed by a key this instance has not loaded yet triggers one reload.
   */
  async verify(token: string): Promise<DeviceClaims | undefined> {
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const { payload } = await jwtVerify(token, this.jwks!, {
          issuer: DEVICE_TOKEN_ISSUER,
          audience: DEVICE_TOKEN_AUDIENCE,
          algorithms: ['EdDSA'],
        });
        if (payload.typ !== 'device' || typeof payload.sub !== 'string' || typeof payload.tid !== 'string') return undefined;
        return { deviceId: payload.sub, tenantId: payload.tid, expiresAt: new Date((payload.exp ?? 0) * 1000) };
      } catch (err) {
        if (attempt === 0 && (err as { code?: string }).code === 'ERR_JWKS_NO_MATCHING_KEY') {
          await this.load();
          continue;
        }
        return undefined;
      }
    }
    return undefined;
  }
}
