/**
 * Server-side cryptographic helpers. Primitives only from node:crypto,
 * @noble/hashes (BLAKE2b-256, which node:crypto does not offer at 256 bits) and @noble/curves
 * (strict Ed25519 point and encoding checks); public-key point checks are public-keys.ts'.
 */
import { createPublicKey, randomBytes, timingSafeEqual, verify } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { blake2b } from '@noble/hashes/blake2.js';
import { isEd25519PublicKey } from './public-keys.js';

/** BLAKE2b-256 of the UTF-8 string, lowercase hex (design §7 token and key storage form). */
export function hashSecret(raw: string): string {
  return Buffer.from(blake2b(Buffer.from(raw, 'utf8'), { dkLen: 32 })).toString('hex');
}

/** Constant-time equality of two hex digests of equal length. */
export function digestsEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Key fingerprint (design §7): the first 16 bytes of BLAKE2b-256 over the raw 32-byte identity
 * public key, lowercase hex in 8 groups of 4 characters separated by single spaces.
 */
export function fingerprint(identityPublicKeyHex: string): string {
  const digest = blake2b(Buffer.from(identityPublicKeyHex, 'hex'), { dkLen: 32 }).subarray(0, 16);
  return (Buffer.from(digest).toString('hex').match(/.{4}/g) ?? []).join(' ');
}

/** A raw-token string: `prefix` + hex of `bytes` random bytes (contract §2.2: 32 bytes). */
export function randomToken(prefix: string, bytes = 32): string {
  return prefix + randomBytes(bytes).toString('hex');
}

const HEX64 = /^[0-9a-f]{64}$/;
const HEX128 = /^[0-9a-f]{128}$/;

/** True when `s` is 64 lowercase hex characters (a 32-byte Ed25519 or X25519 key). */
export function isKeyHex(s: string): boolean {
  return HEX64.test(s);
}

/**
 * Verify an Ed25519 signature (RFC 8032) by a raw 32-byte public key given as hex: the one
 * verification the service uses for identity-key signatures (enrollment, activation, token
 * renewal, API-key and owner-device registration, key bindings). Strict, so that a signature has
 * one accepted form and says something about its signer, where OpenSSL's verify alone accepts more:
 * - canonical encodings (RFC 8032 §5.1.7 with @noble/curves' `zip215: false`): S < L, and R and
 *   A canonical points (y < p, no "negative zero" x);
 * - R and A not of small order (the identity, the points of order 2, 4 and 8): with a
 *   small-order key ({@link isEd25519PublicKey}) the equation holds for signatures anyone can
 *   make, and a small-order R is no commitment to a nonce;
 * - both the cofactored equation [8][S]B = [8]R + [8][k]A (@noble/curves) and the cofactorless
 *   [S]B = R + [k]A (node:crypto), so R with a torsion component added is refused too.
 * Returns false (never throws) for malformed keys or signatures.
 */
export function verifyEd25519(publicKeyHex: string, message: Uint8Array, signatureHex: string): boolean {
  if (!HEX64.test(publicKeyHex) || !HEX128.test(signatureHex)) return false;
  const key = Buffer.from(publicKeyHex, 'hex');
  const signature = Buffer.from(signatureHex, 'hex');
  if (!isEd25519PublicKey(key) || !isEd25519PublicKey(signature.subarray(0, 32))) return false;
  try {
    if (!ed25519.verify(signature, message, key, { zip215: false })) return false;
    const nodeKey = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: key.toString('base64url') }, format: 'jwk' });
    return verify(null, message, nodeKey, signature);
  } catch {
    return false;
  }
}
