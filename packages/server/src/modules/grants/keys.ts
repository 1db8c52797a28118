/**
 * The Skill Permission Token signing key (DESIGN §8.7): one Ed25519 key in the `platform_keys`
 * platform table, purpose `spt-signing`, created by the first instance that starts and loaded by
 * every other (the loader the credential issuer uses, credentials/issuer.ts `loadPlatformKey`),
 * so every instance signs and verifies with the same key. Stored as multibase (as the issuer key);
 * handed to `jose` as an OKP JWK (RFC 8037). The `kid` is the key's RFC 7638 JWK thumbprint, so
 * it is the same on every instance and changes only with the key.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { base58btc } from 'multiformats/bases/base58';
import { calculateJwkThumbprint, importJWK, type CryptoKey, type JWK } from 'jose';
import type { Db } from '../../db/client.js';
import { loadPlatformKey } from '../credentials/issuer.js';
import { decodePublicKeyMultibase } from '../hub/did.js';

/** `platform_keys.purpose` of the SPT signing key. */
export const SPT_KEY_PURPOSE = 'spt-signing';

/** Multicodec varint of `ed25519-priv` (0x1300), prefixed to seed ‖ public key in `privateKeyMultibase`. */
const ED25519_PRIV_PREFIX = [0x80, 0x26] as const;

const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');

/**
 * The 32-byte Ed25519 seed of a `privateKeyMultibase` (`z` + base58btc(0x80 0x26 ‖ seed ‖ public)).
 * @throws when the value is not that encoding.
 */
export function decodePrivateKeyMultibase(value: string): Uint8Array {
  const bytes = base58btc.decode(value);
  if (bytes.length !== 66 || bytes[0] !== ED25519_PRIV_PREFIX[0] || bytes[1] !== ED25519_PRIV_PREFIX[1]) throw new Error('not an Ed25519 privateKeyMultibase');
  return bytes.slice(2, 34);
}

/** The public half as published: an OKP Ed25519 JWK with `kid`, `alg: EdDSA`, `use: sig`. */
export type SptPublicJwk = JWK & { kty: 'OKP'; crv: 'Ed25519'; x: string; kid: string; alg: 'EdDSA'; use: 'sig' };

export class SptKeys {
  private signing: CryptoKey | undefined;
  private verifying: CryptoKey | undefined;
  private jwk: SptPublicJwk | undefined;

  constructor(private readonly db: Db) {}

  /**
   * Load (or create, once for all instances) the signing key and check that its two halves match.
   * @throws when the stored key is malformed.
   */
  async init(): Promise<void> {
    const stored = await loadPlatformKey(this.db, SPT_KEY_PURPOSE);
    const seed = decodePrivateKeyMultibase(stored.privateKeyMultibase);
    const pub = decodePublicKeyMultibase(stored.publicKeyMultibase);
    if (!pub || !Buffer.from(ed25519.getPublicKey(seed)).equals(Buffer.from(pub))) throw new Error('platform key spt-signing: the public key does not match the private key');
    const base = { kty: 'OKP' as const, crv: 'Ed25519' as const, x: b64url(pub) };
    const kid = await calculateJwkThumbprint(base);
    this.jwk = { ...base, kid, alg: 'EdDSA', use: 'sig' };
    this.signing = (await importJWK({ ...base, d: b64url(seed) }, 'EdDSA')) as CryptoKey;
    this.verifying = (await importJWK(base, 'EdDSA')) as CryptoKey;
  }

  /** The JWT header `kid`. @throws before {@link init}. */
  get kid(): string {
    return this.ready().jwk.kid;
  }

  /** The private key for `SignJWT`. @throws before {@link init}. */
  get signingKey(): CryptoKey {
    return this.ready().signing;
  }

  /** The public key for verification. @throws before {@link init}. */
  get verifyingKey(): CryptoKey {
    return this.ready().verifying;
  }

  /** `GET /grants/jwks`: `{keys: [public JWK]}` (RFC 7517). @throws before {@link init}. */
  jwks(): { keys: SptPublicJwk[] } {
    return { keys: [this.ready().jwk] };
  }

  private ready(): { signing: CryptoKey; verifying: CryptoKey; jwk: SptPublicJwk } {
    if (!this.signing || !this.verifying || !this.jwk) throw new Error('SptKeys.init() has not run');
    return { signing: this.signing, verifying: this.verifying, jwk: this.jwk };
  }
}
