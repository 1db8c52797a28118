/**
 * The Skill Permission Token signing keys (design §8.7) in the `platform_keys` platform table:
 *
 * - purpose `spt-signing`: the ACTIVE Ed25519 key, created by the first instance that starts and
 *   loaded by every other (platform-keys.ts `loadPlatformKey`), so every instance signs with the same key;
 * - purpose `spt-signing:previous:<kid>`: keys that signed before a rotation ({@link rotateSptKey})
 *   and still verify until {@link retireSptKeys} deletes them. Their `created_at` is the time they
 *   STOPPED signing (the row is written by the rotation), from which their retirement time follows.
 *
 * Keys are stored as multibase (as the issuer key; the private half sealed with the secrets key,
 * keys/sealed-keys.ts) and handed to `jose` as OKP JWKs (RFC 8037).
 * A `kid` is the key's RFC 7638 JWK thumbprint, so it is the same on every instance and changes
 * only with the key. Every instance caches the keys and reloads them at most
 * {@link KEY_REFRESH_MS} after the last load (on the next use), and when a token names a `kid` it
 * has not loaded (at most one reload a second, shared by the callers, who wait for it), so a rotation reaches every instance within
 * that interval without a restart.
 */
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { and, desc, eq, like, lte } from 'drizzle-orm';
import { calculateJwkThumbprint, importJWK, type CryptoKey, type JWK } from 'jose';
import type { Db } from '../db/client.js';
import { platformKeys } from '../db/schema/index.js';
import { crossTenant } from '../db/tenant.js';
import { KeyReloader } from '../lib/key-reloader.js';
import type { SecretBox } from '../lib/secret-box.js';
import { decodePrivateKeyMultibase, decodePublicKeyMultibase, generateEd25519 } from './multibase.js';
import { KEY_REFRESH_MS, loadPlatformKey, PLATFORM_KEYS_REASON as REASON, type RetiringKey } from './platform-keys.js';
import { openPlatformKeyRow, sealPlatformKey } from './sealed-keys.js';

/** `platform_keys.purpose` of the active SPT signing key. */
export const SPT_KEY_PURPOSE = 'spt-signing';
/** `platform_keys.purpose` prefix of SPT keys kept for verification only (`…<kid>`). */
export const SPT_PREVIOUS_PREFIX = `${SPT_KEY_PURPOSE}:previous:`;

const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');

/** PKCS #8 DER of an Ed25519 private key, up to the 32-byte seed (RFC 8410). */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** The Ed25519 public key of `seed`, by node:crypto (the first call of the pure-JS one costs tens of ms at start-up). */
function ed25519PublicKey(seed: Uint8Array): Buffer {
  const privateKey = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  return Buffer.from(createPublicKey(privateKey).export({ format: 'jwk' }).x!, 'base64url');
}


/** The public half as published: an OKP Ed25519 JWK with `kid`, `alg: EdDSA`, `use: sig`. */
export type SptPublicJwk = JWK & { kty: 'OKP'; crv: 'Ed25519'; x: string; kid: string; alg: 'EdDSA'; use: 'sig' };

interface LoadedKey {
  jwk: SptPublicJwk;
  verifying: CryptoKey;
}

/** The public JWK (with its thumbprint `kid`) of a stored multibase key pair; checks that the halves match. */
async function publicJwkOf(stored: { publicKeyMultibase: string; privateKeyMultibase: string }, purpose: string): Promise<{ jwk: SptPublicJwk; seed: Uint8Array }> {
  const seed = decodePrivateKeyMultibase(stored.privateKeyMultibase);
  const pub = decodePublicKeyMultibase(stored.publicKeyMultibase);
  if (!pub || !ed25519PublicKey(seed).equals(Buffer.from(pub))) throw new Error(`platform key ${purpose}: the public key does not match the private key`);
  const base = { kty: 'OKP' as const, crv: 'Ed25519' as const, x: b64url(pub) };
  return { jwk: { ...base, kid: await calculateJwkThumbprint(base), alg: 'EdDSA', use: 'sig' }, seed };
}

export class SptKeys {
  private signing: CryptoKey | undefined;
  private active: LoadedKey | undefined;
  private byKid = new Map<string, LoadedKey>();
  private readonly reloader: KeyReloader;

  /**
   * @param db the service database (platform table `platform_keys`).
   * @param box the secrets keyring that seals the keys at rest (`SECRETS_KEY`).
   * @param refreshMs how long cached keys are used before a reload ({@link KEY_REFRESH_MS}; tests shorten it).
   */
  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
    refreshMs = KEY_REFRESH_MS,
  ) {
    this.reloader = new KeyReloader(() => this.loadKeys(), refreshMs);
  }

  /**
   * Load (or create, once for all instances) the active key and load the previous ones, checking
   * that each key's two halves match.
   * @throws when a stored key is malformed or the database cannot be read.
   */
  async init(): Promise<void> {
    await this.reloader.load();
  }

  private async loadKeys(): Promise<void> {
    const stored = await loadPlatformKey(this.db, this.box, SPT_KEY_PURPOSE);
    // Newest first: the JWKS lists the active key, then the previous keys from the latest rotation back.
    const previous = await crossTenant(this.db, REASON, (tx) => tx.select().from(platformKeys).where(like(platformKeys.purpose, `${SPT_PREVIOUS_PREFIX}%`)).orderBy(desc(platformKeys.createdAt)));
    const { jwk, seed } = await publicJwkOf(stored, SPT_KEY_PURPOSE);
    const byKid = new Map<string, LoadedKey>();
    const active = { jwk, verifying: (await importJWK(jwk, 'EdDSA')) as CryptoKey };
    byKid.set(jwk.kid, active);
    for (const row of previous) {
      const old = await publicJwkOf(openPlatformKeyRow(this.box, row), row.purpose);
      byKid.set(old.jwk.kid, { jwk: old.jwk, verifying: (await importJWK(old.jwk, 'EdDSA')) as CryptoKey });
    }
    this.signing = (await importJWK({ kty: 'OKP', crv: 'Ed25519', x: jwk.x, d: b64url(seed) }, 'EdDSA')) as CryptoKey;
    this.active = active;
    this.byKid = byKid;
  }


  /** The JWT header `kid` of the active key as cached. @throws before {@link init}. */
  get kid(): string {
    return this.ready().jwk.kid;
  }

  /**
   * The active key for `SignJWT` and its `kid`, reloaded first when the cache is stale.
   * @throws before {@link init}.
   */
  async current(): Promise<{ kid: string; signingKey: CryptoKey }> {
    await this.reloader.fresh();
    const active = this.ready();
    return { kid: active.jwk.kid, signingKey: this.signing! };
  }

  /**
   * The public key that verifies tokens with header `kid` (the active key or a previous one not
   * yet retired), or undefined. An unknown `kid` triggers a reload (at most one a second, shared:
   * such a call may wait up to a second, so a key created just after the last load is found).
   * @throws before {@link init}.
   */
  async verifyingKey(kid: string | undefined): Promise<CryptoKey | undefined> {
    this.ready();
    await this.reloader.fresh();
    if (kid === undefined) return this.active!.verifying;
    if (!this.byKid.has(kid)) await this.reloader.reloadForUnknownKid();
    return this.byKid.get(kid)?.verifying;
  }

  /**
   * `GET /grants/jwks`: `{keys: [public JWK]}` (RFC 7517), the active key first, then the previous
   * keys not yet retired. @throws before {@link init}.
   */
  async jwks(): Promise<{ keys: SptPublicJwk[] }> {
    this.ready();
    await this.reloader.fresh();
    const active = this.active!;
    return { keys: [active.jwk, ...[...this.byKid.values()].filter((k) => k !== active).map((k) => k.jwk)] };
  }

  private ready(): LoadedKey {
    if (!this.signing || !this.active) throw new Error('SptKeys.init() has not run');
    return this.active;
  }
}

/**
 * Rotate the SPT signing key: in one transaction, the active key (purpose `spt-signing`) is copied
 * to `spt-signing:previous:<kid>` (verification only, `created_at` = now) and replaced by a fresh
 * Ed25519 key (sealed under `box`; the old one is copied as stored). Every instance signs with the
 * new key within {@link KEY_REFRESH_MS}. Run by `npm run cli -- rotate-spt-key`.
 * @param ttlSec the SPT lifetime (`SPT_TTL_SECONDS`), for the answer's `retirable_at`.
 * @returns the new `kid` and the key that now only verifies.
 * @throws when there is no active key yet (no instance has started) or the database fails.
 */
export async function rotateSptKey(db: Db, box: SecretBox, ttlSec: number): Promise<{ kid: string; previous: RetiringKey }> {
  const clear = await generateEd25519();
  const { jwk } = await publicJwkOf(clear, SPT_KEY_PURPOSE);
  const fresh = sealPlatformKey(box, clear);
  const now = new Date();
  const previousKid = await crossTenant(db, REASON, async (tx) => {
    const [old] = await tx.select().from(platformKeys).where(eq(platformKeys.purpose, SPT_KEY_PURPOSE)).for('update');
    if (!old) throw new Error('no SPT signing key yet: start the service once before rotating');
    const { jwk: oldJwk } = await publicJwkOf(openPlatformKeyRow(box, old), SPT_KEY_PURPOSE);
    await tx.insert(platformKeys).values({ purpose: `${SPT_PREVIOUS_PREFIX}${oldJwk.kid}`, publicKeyMultibase: old.publicKeyMultibase, privateKeyMultibase: old.privateKeyMultibase, createdAt: now });
    await tx.update(platformKeys).set({ ...fresh, createdAt: now }).where(eq(platformKeys.purpose, SPT_KEY_PURPOSE));
    return oldJwk.kid;
  });
  return { kid: jwk.kid, previous: retiring(previousKid, now, ttlSec) };
}

function retiring(kid: string, deactivatedAt: Date, ttlSec: number): RetiringKey {
  return { kid, deactivated_at: deactivatedAt.toISOString(), retirable_at: new Date(deactivatedAt.getTime() + ttlSec * 1000 + KEY_REFRESH_MS).toISOString() };
}

/**
 * Delete the previous SPT keys whose tokens have all expired (deactivated more than `ttlSec` +
 * {@link KEY_REFRESH_MS} ago), or every previous key with `force` (a compromised key: its
 * unexpired tokens stop verifying on every instance within {@link KEY_REFRESH_MS}). Run by
 * `npm run cli -- retire-spt-keys [--force]`.
 * @param ttlSec the SPT lifetime (`SPT_TTL_SECONDS`).
 * @returns the retired kids and the kept ones with their `retirable_at`.
 */
export async function retireSptKeys(db: Db, ttlSec: number, opts: { force?: boolean; now?: Date } = {}): Promise<{ retired: string[]; kept: RetiringKey[] }> {
  const now = opts.now ?? new Date();
  const cutoff = new Date(now.getTime() - ttlSec * 1000 - KEY_REFRESH_MS);
  return crossTenant(db, REASON, async (tx) => {
    const prefix = like(platformKeys.purpose, `${SPT_PREVIOUS_PREFIX}%`);
    const gone = await tx
      .delete(platformKeys)
      .where(opts.force ? prefix : and(prefix, lte(platformKeys.createdAt, cutoff)))
      .returning({ purpose: platformKeys.purpose });
    const kept = await tx.select().from(platformKeys).where(prefix);
    return {
      retired: gone.map((r) => r.purpose.slice(SPT_PREVIOUS_PREFIX.length)),
      kept: kept.map((r) => retiring(r.purpose.slice(SPT_PREVIOUS_PREFIX.length), r.createdAt, ttlSec)),
    };
  });
}
