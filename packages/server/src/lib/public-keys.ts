/**
 * Validation of the public keys a client hands us (design §5, §7: a device's Ed25519 identity key
 * and X25519 ephemeral key, raw 32 bytes; contract §2.8 hub owner keys). Point decoding and scalar
 * multiplication are @noble/curves', not hand-rolled.
 */
import { randomBytes } from 'node:crypto';
import { ed25519, x25519 } from '@noble/curves/ed25519.js';
import { badRequest } from './errors.js';

/**
 * True when `raw` is a usable Ed25519 public key: exactly 32 bytes that decode strictly (RFC 8032
 * §5.1.3: canonical y < p, no "negative zero" x) to a curve point outside the small-order
 * subgroup. Small-order points (the identity, the points of order 2, 4 and 8) are refused: no
 * honest key pair has one, and a signature "by" such a key (e.g. R = identity, S = 0) verifies
 * for every message, so it says nothing about its holder.
 */
export function isEd25519PublicKey(raw: Uint8Array): boolean {
  if (raw.length !== 32) return false;
  try {
    return !ed25519.Point.fromBytes(raw, false).isSmallOrder();
  } catch {
    return false;
  }
}

/**
 * True when `raw` is a usable X25519 public key (RFC 7748): 32 bytes whose u-coordinate is not of
 * low order. A low-order u (0, 1, the points of order 4 and 8, and their non-canonical encodings)
 * makes every shared secret all-zero whatever the peer's private key; a clamped scalar is a
 * multiple of the cofactor, so multiplying by any one of them yields zero exactly for those
 * points, which @noble/curves reports by throwing (https://cr.yp.to/ecdh.html#validate).
 */
export function isX25519PublicKey(raw: Uint8Array): boolean {
  if (raw.length !== 32) return false;
  try {
    x25519.scalarMult(randomBytes(32), raw);
    return true;
  } catch {
    return false;
  }
}

/** {@link isEd25519PublicKey} of a hex string (false when it is not 64 hex characters). */
export function isEd25519PublicKeyHex(hex: string): boolean {
  return /^[0-9a-fA-F]{64}$/.test(hex) && isEd25519PublicKey(Buffer.from(hex, 'hex'));
}

/** The 400 detail for an identity key that fails {@link isEd25519PublicKey}. */
export const WEAK_IDENTITY_KEY = 'identity_public_key must be a valid Ed25519 public key: a canonical curve point, not of small order';

/**
 * Check a stored identity key before a signature by it is taken as a credential (activation,
 * token renewal): a device enrolled before keys were checked may hold a small-order key, whose
 * signatures verify for any message. @throws 400.
 */
export function requireUsableIdentityKey(identityHex: string): void {
  if (!isEd25519PublicKeyHex(identityHex)) throw badRequest('the device identity key is not a valid Ed25519 public key (non-canonical or of small order): enroll the device again with a valid key');
}

/**
 * Check a device's key pair as it enters (enrollment, owner-device registration,
 * `client_key_register`): `identityHex` a valid Ed25519 key, `ephemeralHex` a valid X25519 key,
 * both 64 hex characters (the contract's `KeyHex`).
 * @throws 400 naming the field that fails.
 */
export function requireDeviceKeys(identityHex: string, ephemeralHex: string): void {
  if (!isEd25519PublicKeyHex(identityHex)) throw badRequest(WEAK_IDENTITY_KEY);
  if (!/^[0-9a-fA-F]{64}$/.test(ephemeralHex) || !isX25519PublicKey(Buffer.from(ephemeralHex, 'hex'))) {
    throw badRequest('ephemeral_public_key must be a valid X25519 public key: not all-zero and not of low order');
  }
}
