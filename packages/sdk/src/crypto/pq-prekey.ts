/**
 * Signed post-quantum prekeys of PQXDH ("The PQXDH Key Agreement Protocol", Signal, revision 3):
 * an ML-KEM-768 encapsulation key PQPK_B published by a device together with
 * Sig(IK_B, EncodeKEM(PQPK_B)) (PQXDH §3.2).
 *
 * - EncodeKEM (PQXDH §2.1, §2.5): one byte naming the KEM ({@link MLKEM768_KEY_TYPE}) followed by
 *   the 1184-byte FIPS 203 encoding of the key (1185 bytes).
 * - Sig: identity keys are Ed25519 (design §7), so the signature is a plain Ed25519 signature by
 *   the identity key (64 bytes, in place of XEdDSA) over {@link pqPrekeySigningInput}: the
 *   `parley/v2/pq-prekey` domain tag of @parley/protocol `SIGNING_DOMAINS`, 0x00, EncodeKEM(PQPK_B).
 *   Every other message the identity key signs carries another tag (or is the 32-byte enrollment
 *   proof, or RFC 9420-labelled MLS content), so no signature made for another purpose (a
 *   renewal challenge a server chose, say) passes as a prekey signature. Verifiers accept only
 *   this tagged form: a prekey signed over the bare EncodeKEM(PQPK_B) fails, and its owner
 *   publishes it again with the tagged signature (secure/post-quantum.ts `ensurePqPrekey`).
 * - Prekey identifier (PQXDH §3.3 "identifiers of the prekeys used"): the first 16 bytes of
 *   SHA-256(EncodeKEM(PQPK_B)), 32 lowercase hex characters, so the server cannot pair a key
 *   with another identifier without the responder noticing.
 *
 * The server stores and serves the public key and signature as opaque base64 ({@link PqPrekeyWire}).
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { SIGNING_DOMAINS, domainSeparated } from '@parley/protocol';
import { MLKEM768_PUBLIC_KEY_BYTES } from './ml-kem.js';
import {
  CryptoError,
  SIGNATURE_BYTES,
  base64ToBytes,
  bytesToBase64,
  bytesToHex,
  concatBytes,
  ed25519Verify,
} from './primitives.js';

/** KEM-type byte of {@link encodeKemPublicKey} for ML-KEM-768 (Parley's constant; X25519 keys use 0x05). */
export const MLKEM768_KEY_TYPE = 0x0b;
/** Name of the KEM in headers and wire forms. */
export const PQ_KEM_NAME = 'ML-KEM-768';
/** Length of a prekey identifier, hex characters (16 bytes). */
export const PQ_PREKEY_ID_CHARS = 32;

/** A signed ML-KEM-768 prekey as a peer uses it (bytes). */
export interface SignedPqPrekey {
  /** {@link pqPrekeyId} of `publicKey`: 32 lowercase hex characters. */
  keyId: string;
  /** PQPK_B: the 1184-byte ML-KEM-768 encapsulation key. */
  publicKey: Uint8Array;
  /** Ed25519 signature (64 bytes) by the owner's identity key over {@link pqPrekeySigningInput}(PQPK_B). */
  signature: Uint8Array;
}

/**
 * Wire form of a {@link SignedPqPrekey} (what `POST /api/v1/pq-prekeys` stores and the claim
 * returns): `key_id` hex, `public_key` and `signature` standard base64 of the raw bytes.
 */
export interface PqPrekeyWire {
  key_id: string;
  public_key: string;
  signature: string;
}

/**
 * EncodeKEM(PK) of PQXDH §2.5: {@link MLKEM768_KEY_TYPE} || the 1184-byte key (1185 bytes).
 * @throws CryptoError `invalid_input` for a key of another length.
 */
export function encodeKemPublicKey(publicKey: Uint8Array): Uint8Array {
  if (!(publicKey instanceof Uint8Array) || publicKey.length !== MLKEM768_PUBLIC_KEY_BYTES) {
    throw new CryptoError('invalid_input', `ML-KEM-768 public key must be ${MLKEM768_PUBLIC_KEY_BYTES} bytes`);
  }
  return concatBytes(Uint8Array.of(MLKEM768_KEY_TYPE), publicKey);
}

/**
 * What the identity key signs for a PQ prekey: UTF-8 `parley/v2/pq-prekey` || 0x00 ||
 * EncodeKEM(PK) (@parley/protocol `domainSeparated`).
 * @throws CryptoError `invalid_input` for a key of another length.
 */
export function pqPrekeySigningInput(publicKey: Uint8Array): Uint8Array {
  return domainSeparated(SIGNING_DOMAINS.pqPrekey, encodeKemPublicKey(publicKey));
}

/** Identifier of a PQ prekey: hex of the first 16 bytes of SHA-256(EncodeKEM(PK)). */
export function pqPrekeyId(publicKey: Uint8Array): string {
  return bytesToHex(sha256(encodeKemPublicKey(publicKey)).subarray(0, PQ_PREKEY_ID_CHARS / 2));
}

/**
 * True when `prekey.signature` is the owner's Ed25519 signature over
 * {@link pqPrekeySigningInput}(PQPK) (the tagged form only) and `prekey.keyId` is the key's
 * identifier (PQXDH §3.3: Alice verifies before using the key). Never throws.
 */
export function verifyPqPrekey(ownerIdentityKey: Uint8Array, prekey: SignedPqPrekey): boolean {
  try {
    if (prekey.signature.length !== SIGNATURE_BYTES || prekey.keyId !== pqPrekeyId(prekey.publicKey)) return false;
    return ed25519Verify(prekey.signature, pqPrekeySigningInput(prekey.publicKey), ownerIdentityKey);
  } catch {
    return false;
  }
}

/** The wire form of a signed prekey (base64 blobs, see {@link PqPrekeyWire}). */
export function pqPrekeyToWire(prekey: SignedPqPrekey): PqPrekeyWire {
  return { key_id: prekey.keyId, public_key: bytesToBase64(prekey.publicKey), signature: bytesToBase64(prekey.signature) };
}

/**
 * Parse the wire form (lengths checked; the signature is NOT verified: use {@link verifyPqPrekey}).
 * @throws CryptoError `invalid_input` for bad base64 or wrong lengths.
 */
export function pqPrekeyFromWire(wire: PqPrekeyWire): SignedPqPrekey {
  const publicKey = base64ToBytes(String(wire.public_key), 'pq public_key');
  const signature = base64ToBytes(String(wire.signature), 'pq signature');
  if (publicKey.length !== MLKEM768_PUBLIC_KEY_BYTES) throw new CryptoError('invalid_input', `pq public_key must be ${MLKEM768_PUBLIC_KEY_BYTES} bytes`);
  if (signature.length !== SIGNATURE_BYTES) throw new CryptoError('invalid_input', `pq signature must be ${SIGNATURE_BYTES} bytes`);
  if (typeof wire.key_id !== 'string' || !/^[0-9a-f]{32}$/.test(wire.key_id)) throw new CryptoError('invalid_input', 'pq key_id must be 32 lowercase hex characters');
  return { keyId: wire.key_id, publicKey, signature };
}
