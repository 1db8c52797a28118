/**
 * Building the body of `PATCH /api/v1/hub/{address}/did` (design §8.15) and `did:hub` key
 * encodings. The signature is Ed25519 by the identity's owner key (the registration
 * `public_key`) over the UTF-8 bytes of the JCS (RFC 8785) canonical form of the body without
 * `signature`; `timestamp` (ISO 8601) must be within 5 minutes of the server clock and newer
 * than the last accepted update, so the request cannot be replayed.
 */
import canonicalize from 'canonicalize';
import { base58btc } from 'multiformats/bases/base58';
import { bytesToBase64, ed25519Sign, utf8Encode } from '../crypto/primitives.js';

/** The only verification method type `did:hub` documents use. */
export const ED25519_VERIFICATION_KEY_2020 = 'Ed25519VerificationKey2020';

/** The fields of a DID update before signing. */
export interface DidUpdateFields {
  add_verification_method: { type: typeof ED25519_VERIFICATION_KEY_2020; publicKeyMultibase: string };
  /** ISO 8601; defaults to now. */
  timestamp?: string;
  /** Any further field (e.g. a nonce) is signed too. */
  [k: string]: unknown;
}

/** The signed body of `PATCH /hub/{address}/did`. */
export interface DidUpdateRequest extends DidUpdateFields {
  timestamp: string;
  /** Base64 (padded) Ed25519 signature, 64 bytes. */
  signature: string;
}

/**
 * `publicKeyMultibase` of a raw Ed25519 public key: `z` + base58btc(0xed 0x01 ‖ key).
 * @throws RangeError when the key is not 32 bytes.
 */
export function publicKeyMultibase(raw32: Uint8Array): string {
  if (raw32.length !== 32) throw new RangeError(`an Ed25519 public key has 32 bytes, not ${raw32.length}`);
  const bytes = new Uint8Array(34);
  bytes.set([0xed, 0x01], 0);
  bytes.set(raw32, 2);
  return base58btc.encode(bytes);
}

/**
 * The raw 32-byte Ed25519 key of a `publicKeyMultibase` (`z` + base58btc of 0xed 0x01 ‖ key),
 * or null for anything else.
 */
export function decodePublicKeyMultibase(value: string): Uint8Array | null {
  try {
    const bytes = base58btc.decode(value);
    return bytes.length === 34 && bytes[0] === 0xed && bytes[1] === 0x01 ? bytes.slice(2) : null;
  } catch {
    return null;
  }
}

/**
 * Sign a DID update: fills `timestamp` (now) when absent, then adds `signature` = base64
 * Ed25519(ownerSecretKey, UTF-8(JCS(body))).
 * @param ownerSecretKey the 32-byte Ed25519 secret key (seed) of the identity's owner key.
 * @example
 * await client.updateDid('translator', signDidUpdate({
 *   add_verification_method: { type: 'Ed25519VerificationKey2020', publicKeyMultibase: publicKeyMultibase(newKey) },
 * }, ownerSecretKey));
 */
export function signDidUpdate(body: DidUpdateFields, ownerSecretKey: Uint8Array): DidUpdateRequest {
  const { signature: _ignored, ...fields } = body as DidUpdateFields & { signature?: unknown };
  const unsigned = { ...fields, timestamp: body.timestamp ?? new Date().toISOString() };
  const payload = canonicalize(unsigned);
  if (payload === undefined) throw new TypeError('signDidUpdate: the body cannot be canonicalized');
  return { ...unsigned, signature: bytesToBase64(ed25519Sign(utf8Encode(payload), ownerSecretKey)) };
}
