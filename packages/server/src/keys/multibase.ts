/**
 * Ed25519 keys in multibase form (W3C "Ed25519 Signature 2020", multicodec): `publicKeyMultibase`
 * = `z` + base58btc(0xed 0x01 ‖ 32-byte key), `privateKeyMultibase` = `z` + base58btc(0x80 0x26 ‖
 * seed ‖ public key). Pure functions, shared by the platform keys, `did:hub` documents and the
 * credential suite.
 */
import { Ed25519VerificationKey2020 } from '@digitalbazaar/ed25519-verification-key-2020';
import { base58btc } from 'multiformats/bases/base58';

/** An Ed25519 key pair in multibase form (`z` + base58btc of the multicodec-prefixed key). */
export interface Ed25519Multibase {
  publicKeyMultibase: string;
  privateKeyMultibase: string;
}

/** Multicodec varint of `ed25519-pub` (0xed), prefixed to the raw key before base58btc. */
const ED25519_PUB = [0xed, 0x01] as const;
/** Multicodec varint of `ed25519-priv` (0x1300), prefixed to seed ‖ public key in `privateKeyMultibase`. */
const ED25519_PRIV_PREFIX = [0x80, 0x26] as const;

/**
 * A new Ed25519 key pair, random or derived from a 32-byte `seed` (the standard Ed25519 seed:
 * the same seed gives the same key as @noble/curves or node:crypto).
 */
export async function generateEd25519(seed?: Uint8Array): Promise<Ed25519Multibase> {
  const key = await Ed25519VerificationKey2020.generate(seed ? { seed } : {});
  return { publicKeyMultibase: key.publicKeyMultibase, privateKeyMultibase: key.privateKeyMultibase! };
}

/**
 * `publicKeyMultibase` of a raw Ed25519 public key: `z` + base58btc(0xed 0x01 ‖ key).
 * @throws RangeError when the key is not 32 bytes.
 */
export function publicKeyMultibase(raw32: Uint8Array): string {
  if (raw32.length !== 32) throw new RangeError(`an Ed25519 public key has 32 bytes, not ${raw32.length}`);
  const bytes = new Uint8Array(34);
  bytes.set(ED25519_PUB, 0);
  bytes.set(raw32, 2);
  return base58btc.encode(bytes);
}

/**
 * The raw 32-byte Ed25519 key of a `publicKeyMultibase`, or null unless the value is `z` +
 * base58btc of exactly 0xed 0x01 followed by 32 bytes.
 */
export function decodePublicKeyMultibase(value: string): Uint8Array | null {
  let bytes: Uint8Array;
  try {
    bytes = base58btc.decode(value);
  } catch {
    return null;
  }
  if (bytes.length !== 34 || bytes[0] !== ED25519_PUB[0] || bytes[1] !== ED25519_PUB[1]) return null;
  return bytes.slice(2);
}


/**
 * The 32-byte Ed25519 seed of a `privateKeyMultibase` (`z` + base58btc(0x80 0x26 ‖ seed ‖ public)).
 * @throws when the value is not that encoding.
 */
export function decodePrivateKeyMultibase(value: string): Uint8Array {
  const bytes = base58btc.decode(value);
  if (bytes.length !== 66 || bytes[0] !== ED25519_PRIV_PREFIX[0] || bytes[1] !== ED25519_PRIV_PREFIX[1]) throw new Error('not an Ed25519 privateKeyMultibase');
  return bytes.slice(2, 34);
}
