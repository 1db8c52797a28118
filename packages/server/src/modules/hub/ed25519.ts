/**
 * Ed25519 public-key validation for hub owner keys (contract §2.8 registration `public_key`, design
 * §7: base64 of the raw 32 bytes); the point check is the shared one of lib/public-keys.ts.
 */
import { isEd25519PublicKey } from '../../lib/public-keys.js';

/**
 * The raw key of a registration `public_key` (base64 of 32 bytes), or null when it is not the
 * base64 of a valid Ed25519 public key ({@link isEd25519PublicKey}).
 */
export function decodeOwnerKey(base64: string): Uint8Array | null {
  if (!/^[A-Za-z0-9+/]{43}=$/.test(base64)) return null;
  const raw = Buffer.from(base64, 'base64');
  return isEd25519PublicKey(raw) ? raw : null;
}
