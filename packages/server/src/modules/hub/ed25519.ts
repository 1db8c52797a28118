/**
 * Ed25519 public-key validation for hub owner keys (SPEC §2.8 registration `public_key`, DESIGN
 * §7: base64 of the raw 32 bytes). Point decoding is @noble/curves' (RFC 8032 §5.1.3), not
 * hand-rolled.
 */
import { ed25519 } from '@noble/curves/ed25519.js';

/**
 * True when `raw` is a usable Ed25519 public key: exactly 32 bytes that decode (RFC 8032
 * §5.1.3, canonical y < p) to a curve point outside the small-order subgroup. Small-order points
 * (the identity, the points of order 2, 4 and 8) are refused: no honest key pair has one, and a
 * signature "by" such a key says nothing about its holder.
 */
export function isEd25519PublicKey(raw: Uint8Array): boolean {
  if (raw.length !== 32) return false;
  try {
    return !ed25519.Point.fromBytes(raw).isSmallOrder();
  } catch {
    return false;
  }
}

/**
 * The raw key of a registration `public_key` (base64 of 32 bytes), or null when it is not the
 * base64 of a valid Ed25519 public key ({@link isEd25519PublicKey}).
 */
export function decodeOwnerKey(base64: string): Uint8Array | null {
  if (!/^[A-Za-z0-9+/]{43}=$/.test(base64)) return null;
  const raw = Buffer.from(base64, 'base64');
  return isEd25519PublicKey(raw) ? raw : null;
}
