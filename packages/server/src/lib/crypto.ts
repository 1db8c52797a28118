/**
 * Server-side cryptographic helpers (DESIGN §5, §7). Primitives only from node:crypto and
 * @noble/hashes (BLAKE2b-256, which node:crypto does not offer at 256 bits); public-key point
 * checks are public-keys.ts' (@noble/curves).
 */
import { createPublicKey, randomBytes, timingSafeEqual, verify } from 'node:crypto';
import { blake2b } from '@noble/hashes/blake2.js';
import { isEd25519PublicKey } from './public-keys.js';

/** BLAKE2b-256 of the UTF-8 string, lowercase hex (DESIGN §7 token and key storage form). */
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
 * Key fingerprint (DESIGN §7): the first 16 bytes of BLAKE2b-256 over the raw 32-byte identity
 * public key, lowercase hex in 8 groups of 4 characters separated by single spaces.
 */
export function fingerprint(identityPublicKeyHex: string): string {
  const digest = blake2b(Buffer.from(identityPublicKeyHex, 'hex'), { dkLen: 32 }).subarray(0, 16);
  return (Buffer.from(digest).toString('hex').match(/.{4}/g) ?? []).join(' ');
}

/** A raw-token string: `prefix` + hex of `bytes` random bytes (SPEC §2.2: 32 bytes). */
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
 * Verify an Ed25519 signature (RFC 8032) by a raw 32-byte public key given as hex.
 * Returns false (never throws) for malformed keys or signatures, and for keys that are not
 * canonical points or are of small order ({@link isEd25519PublicKey}), whose "signatures" can
 * verify for any message.
 */
export function verifyEd25519(publicKeyHex: string, message: Uint8Array, signatureHex: string): boolean {
  if (!HEX64.test(publicKeyHex) || !HEX128.test(signatureHex)) return false;
  if (!isEd25519PublicKey(Buffer.from(publicKeyHex, 'hex'))) return false;
  try {
    const key = createPublicKey({
      key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKeyHex, 'hex').toString('base64url') },
      format: 'jwk',
    });
    return verify(null, message, key, Buffer.from(signatureHex, 'hex'));
  } catch {
    return false;
  }
}
