/**
 * Thin, typed wrappers over the audited @noble primitives (SPEC §1.3, DESIGN §2 and §7).
 *
 * Nothing here implements a cryptographic primitive: Ed25519, X25519 and the Ed25519→X25519 map
 * come from @noble/curves, HKDF / HMAC / SHA-256 / BLAKE2b from @noble/hashes, XChaCha20-Poly1305
 * from @noble/ciphers. This module fixes the shapes (byte lengths, hex and base64 on the wire),
 * turns library exceptions into {@link CryptoError}, and adds the two DESIGN §7 derived values
 * (fingerprint, proof of possession). Works in Node 20+ and browsers (no Node built-ins).
 */
import { CodedError } from '../errors.js';
import { ed25519, x25519 } from '@noble/curves/ed25519.js';
import { blake2b } from '@noble/hashes/blake2.js';
import { hkdf } from '@noble/hashes/hkdf.js';
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import {
  bytesToHex as nobleBytesToHex,
  hexToBytes as nobleHexToBytes,
  randomBytes as nobleRandomBytes,
} from '@noble/hashes/utils.js';
import { xchacha20poly1305 } from '@noble/ciphers/chacha.js';
import { equalBytes as nobleEqualBytes } from '@noble/ciphers/utils.js';

/** Length in bytes of Ed25519 / X25519 public and secret keys. */
export const KEY_BYTES = 32;
/** Length in bytes of an Ed25519 signature. */
export const SIGNATURE_BYTES = 64;
/** XChaCha20-Poly1305 nonce length in bytes (192 bits, SPEC §1.3). */
export const XCHACHA_NONCE_BYTES = 24;
/** Poly1305 tag length in bytes (appended to every AEAD ciphertext). */
export const AEAD_TAG_BYTES = 16;

/** Machine-readable reason carried by every {@link CryptoError}. */
export type CryptoErrorCode =
  /** An argument has the wrong type, length or encoding. */
  | 'invalid_input'
  /** A key is not a valid curve point / has the wrong length, or a DH output is all-zero. */
  | 'invalid_key'
  /** The wire frame (`header_blob` / `ciphertext`) does not parse or has the wrong shape. */
  | 'malformed_frame'
  /** The header signature does not verify against the peer's identity key. */
  | 'bad_signature'
  /** The AEAD tag does not verify (wrong key, tampered ciphertext, header or associated data). */
  | 'decrypt_failed'
  /** The message key is gone: the frame was already decrypted (replay) or its skipped key was evicted. */
  | 'replay'
  /** Decrypting would skip more than MAX_SKIP message keys in one chain. */
  | 'too_many_skipped'
  /** The frame names a sender device other than this session's peer. */
  | 'wrong_peer'
  /** An initial message was built against a prekey (ephemeral key) this device does not hold. */
  | 'unknown_prekey'
  /** The frame starts a different X3DH session than the one this session was built from. */
  | 'new_session'
  /** A serialized state or identity does not parse, or does not belong to the given identity. */
  | 'invalid_state'
  /** The operation is not possible yet (e.g. sending before a sending chain exists). */
  | 'not_ready';

/** The one error type thrown by the crypto module; `code` says why (see {@link CryptoErrorCode}). */
export class CryptoError extends CodedError<CryptoErrorCode> {
  override readonly name = 'CryptoError';
}

// ---------------------------------------------------------------------------------------------
// Encodings
// ---------------------------------------------------------------------------------------------

const HEX_RE = /^(?:[0-9a-fA-F]{2})*$/;
const BASE64_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Lowercase hex of `bytes` (DESIGN §7: keys and signatures on the wire are lowercase hex). */
export function bytesToHex(bytes: Uint8Array): string {
  return nobleBytesToHex(bytes);
}

/**
 * Bytes of a hex string (either case accepted). When `expectedLength` (bytes) is given the input
 * must decode to exactly that many bytes.
 * @throws CryptoError `invalid_input` on odd length, non-hex characters or a wrong length.
 */
export function hexToBytes(hex: string, expectedLength?: number, what = 'hex value'): Uint8Array {
  if (typeof hex !== 'string' || !HEX_RE.test(hex)) throw new CryptoError('invalid_input', `${what} must be hex`);
  if (expectedLength !== undefined && hex.length !== expectedLength * 2) {
    throw new CryptoError('invalid_input', `${what} must be ${expectedLength} bytes (${expectedLength * 2} hex characters)`);
  }
  return nobleHexToBytes(hex);
}

/** Standard, padded base64 (RFC 4648 §4) of `bytes`, as the server stores `header_blob` and `ciphertext`. */
export function bytesToBase64(bytes: Uint8Array): string {
  let binary = '';
  const CHUNK = 0x8000;
  for (let i = 0; i < bytes.length; i += CHUNK) {
    binary += String.fromCharCode(...bytes.subarray(i, i + CHUNK));
  }
  return btoa(binary);
}

/**
 * Bytes of a standard, padded base64 string (no whitespace, no URL-safe alphabet).
 * @throws CryptoError `invalid_input` when the string is not canonical base64.
 */
export function base64ToBytes(b64: string, what = 'base64 value'): Uint8Array {
  if (typeof b64 !== 'string' || !BASE64_RE.test(b64)) throw new CryptoError('invalid_input', `${what} must be base64`);
  const binary = atob(b64);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** UTF-8 bytes of a string. */
export function utf8Encode(text: string): Uint8Array {
  return encoder.encode(text);
}

/**
 * String of UTF-8 bytes.
 * @throws CryptoError `invalid_input` on invalid UTF-8.
 */
export function utf8Decode(bytes: Uint8Array): string {
  try {
    return decoder.decode(bytes);
  } catch (cause) {
    throw new CryptoError('invalid_input', 'invalid UTF-8', { cause });
  }
}

/** Concatenation of byte arrays. */
export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  let length = 0;
  for (const p of parts) length += p.length;
  const out = new Uint8Array(length);
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}

/** Constant-time (for equal lengths) byte equality. */
export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return nobleEqualBytes(a, b);
}

/** Best-effort erasure of secret bytes (JavaScript cannot guarantee no other copy exists). */
export function wipe(...arrays: (Uint8Array | undefined | null)[]): void {
  for (const a of arrays) a?.fill(0);
}

/** `length` bytes from the platform CSPRNG (crypto.getRandomValues). */
export function randomBytes(length: number): Uint8Array {
  return nobleRandomBytes(length);
}

function bytesArg(value: Uint8Array, length: number, what: string): Uint8Array {
  if (!(value instanceof Uint8Array) || value.length !== length) {
    throw new CryptoError('invalid_input', `${what} must be a ${length}-byte Uint8Array`);
  }
  return value;
}

// ---------------------------------------------------------------------------------------------
// Ed25519 (RFC 8032) identity keys
// ---------------------------------------------------------------------------------------------

/** A key pair; `secretKey` and `publicKey` are 32 bytes each. */
export interface KeyPair {
  secretKey: Uint8Array;
  publicKey: Uint8Array;
}

/** A fresh Ed25519 key pair (32-byte seed as `secretKey`, 32-byte public key). */
export function ed25519Keygen(): KeyPair {
  const { secretKey, publicKey } = ed25519.keygen();
  return { secretKey, publicKey };
}

/** The Ed25519 public key of a 32-byte secret key (seed). */
export function ed25519PublicKey(secretKey: Uint8Array): Uint8Array {
  return ed25519.getPublicKey(bytesArg(secretKey, KEY_BYTES, 'Ed25519 secret key'));
}

/** Ed25519 signature (64 bytes) of `message` by the 32-byte `secretKey`. */
export function ed25519Sign(message: Uint8Array, secretKey: Uint8Array): Uint8Array {
  return ed25519.sign(message, bytesArg(secretKey, KEY_BYTES, 'Ed25519 secret key'));
}

/**
 * Verify an Ed25519 signature with RFC 8032 / FIPS 186-5 strict decoding (what node:crypto does
 * on the server). Returns false, never throws, for malformed keys or signatures.
 */
export function ed25519Verify(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  if (!(signature instanceof Uint8Array) || signature.length !== SIGNATURE_BYTES) return false;
  if (!(publicKey instanceof Uint8Array) || publicKey.length !== KEY_BYTES) return false;
  try {
    return ed25519.verify(signature, message, publicKey, { zip215: false });
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// X25519 (RFC 7748) and the Ed25519 → X25519 conversion
// ---------------------------------------------------------------------------------------------

/** A fresh X25519 key pair (32-byte secret scalar, 32-byte u-coordinate public key). */
export function x25519Keygen(): KeyPair {
  const { secretKey, publicKey } = x25519.keygen();
  return { secretKey, publicKey };
}

/** The X25519 public key of a 32-byte secret key. */
export function x25519PublicKey(secretKey: Uint8Array): Uint8Array {
  return x25519.getPublicKey(bytesArg(secretKey, KEY_BYTES, 'X25519 secret key'));
}

/**
 * X25519 Diffie-Hellman: the 32-byte shared secret of our `secretKey` and the peer's `publicKey`.
 * @throws CryptoError `invalid_key` when the result is all-zero (a low-order peer key).
 */
export function x25519DH(secretKey: Uint8Array, publicKey: Uint8Array): Uint8Array {
  bytesArg(secretKey, KEY_BYTES, 'X25519 secret key');
  bytesArg(publicKey, KEY_BYTES, 'X25519 public key');
  try {
    return x25519.getSharedSecret(secretKey, publicKey);
  } catch (cause) {
    throw new CryptoError('invalid_key', 'X25519 agreement failed (low-order or invalid public key)', { cause });
  }
}

/**
 * The X25519 public key (Montgomery u) of an Ed25519 public key (birational map, RFC 7748 §4.1).
 * @throws CryptoError `invalid_key` when the input is not a valid Ed25519 point.
 */
export function ed25519PublicToX25519(publicKey: Uint8Array): Uint8Array {
  bytesArg(publicKey, KEY_BYTES, 'Ed25519 public key');
  try {
    return ed25519.utils.toMontgomery(publicKey);
  } catch (cause) {
    throw new CryptoError('invalid_key', 'not a valid Ed25519 public key', { cause });
  }
}

/** The X25519 secret scalar of an Ed25519 secret key (seed), matching {@link ed25519PublicToX25519}. */
export function ed25519SecretToX25519(secretKey: Uint8Array): Uint8Array {
  return ed25519.utils.toMontgomerySecret(bytesArg(secretKey, KEY_BYTES, 'Ed25519 secret key'));
}

// ---------------------------------------------------------------------------------------------
// Hashes and KDFs
// ---------------------------------------------------------------------------------------------

/** HKDF-SHA256 (RFC 5869): `length` bytes from input key material, salt and info. */
export function hkdfSha256(ikm: Uint8Array, salt: Uint8Array, info: Uint8Array, length: number): Uint8Array {
  return hkdf(sha256, ikm, salt, info, length);
}

/** HMAC-SHA256 (RFC 2104) of `data` under `key` (32 bytes out). */
export function hmacSha256(key: Uint8Array, data: Uint8Array): Uint8Array {
  return hmac(sha256, key, data);
}

/** BLAKE2b (RFC 7693) with a 32-byte digest (BLAKE2b-256). */
export function blake2b256(data: Uint8Array): Uint8Array {
  return blake2b(data, { dkLen: 32 });
}

// ---------------------------------------------------------------------------------------------
// XChaCha20-Poly1305 (draft-irtf-cfrg-xchacha)
// ---------------------------------------------------------------------------------------------

/** A sealed message: the random 24-byte nonce and the ciphertext with its 16-byte tag appended. */
export interface SealedBox {
  nonce: Uint8Array;
  ciphertext: Uint8Array;
}

/**
 * XChaCha20-Poly1305 encryption with an explicit 24-byte nonce; output is ciphertext || tag.
 * Only for known-answer tests and for callers that already drew a fresh random nonce:
 * never reuse a (key, nonce) pair. Prefer {@link aeadSeal}.
 */
export function xchacha20poly1305Encrypt(key: Uint8Array, nonce: Uint8Array, plaintext: Uint8Array, aad?: Uint8Array): Uint8Array {
  bytesArg(key, KEY_BYTES, 'AEAD key');
  bytesArg(nonce, XCHACHA_NONCE_BYTES, 'XChaCha20-Poly1305 nonce');
  return xchacha20poly1305(key, nonce, aad).encrypt(plaintext);
}

/**
 * XChaCha20-Poly1305 decryption of ciphertext || tag.
 * @throws CryptoError `decrypt_failed` when the tag does not verify.
 */
export function xchacha20poly1305Decrypt(key: Uint8Array, nonce: Uint8Array, ciphertext: Uint8Array, aad?: Uint8Array): Uint8Array {
  bytesArg(key, KEY_BYTES, 'AEAD key');
  bytesArg(nonce, XCHACHA_NONCE_BYTES, 'XChaCha20-Poly1305 nonce');
  if (!(ciphertext instanceof Uint8Array) || ciphertext.length < AEAD_TAG_BYTES) {
    throw new CryptoError('decrypt_failed', 'ciphertext shorter than the authentication tag');
  }
  try {
    return xchacha20poly1305(key, nonce, aad).decrypt(ciphertext);
  } catch (cause) {
    throw new CryptoError('decrypt_failed', 'authentication failed', { cause });
  }
}

/** Encrypt `plaintext` under a 32-byte key with a fresh random 24-byte nonce (SPEC §1.3). */
export function aeadSeal(key: Uint8Array, plaintext: Uint8Array, aad?: Uint8Array): SealedBox {
  const nonce = randomBytes(XCHACHA_NONCE_BYTES);
  return { nonce, ciphertext: xchacha20poly1305Encrypt(key, nonce, plaintext, aad) };
}

/**
 * Decrypt a {@link SealedBox}.
 * @throws CryptoError `decrypt_failed` when the key, nonce, ciphertext or `aad` do not match.
 */
export function aeadOpen(key: Uint8Array, box: SealedBox, aad?: Uint8Array): Uint8Array {
  return xchacha20poly1305Decrypt(key, box.nonce, box.ciphertext, aad);
}

// ---------------------------------------------------------------------------------------------
// DESIGN §7 derived values
// ---------------------------------------------------------------------------------------------

function keyBytes(key: Uint8Array | string, what: string): Uint8Array {
  return typeof key === 'string' ? hexToBytes(key, KEY_BYTES, what) : bytesArg(key, KEY_BYTES, what);
}

/**
 * Key fingerprint (DESIGN §7): the first 16 bytes of BLAKE2b-256 over the raw 32-byte Ed25519
 * identity public key, lowercase hex in 8 groups of 4 characters separated by single spaces,
 * e.g. `"3f2a 9c01 …"` (39 characters). Accepts the key as bytes or hex.
 */
export function fingerprint(identityPublicKey: Uint8Array | string): string {
  const digest = blake2b256(keyBytes(identityPublicKey, 'identity public key')).subarray(0, 16);
  const hex = bytesToHex(digest);
  const groups: string[] = [];
  for (let i = 0; i < hex.length; i += 4) groups.push(hex.slice(i, i + 4));
  return groups.join(' ');
}

/**
 * Enrollment proof of possession (DESIGN §7): the Ed25519 signature by the identity secret key
 * over the raw 32 bytes of its own public key, as 128 lowercase hex characters.
 */
export function proofOfPossession(identitySecretKey: Uint8Array): string {
  const publicKey = ed25519PublicKey(identitySecretKey);
  return bytesToHex(ed25519Sign(publicKey, identitySecretKey));
}

/** Check a proof of possession made by {@link proofOfPossession}; never throws. */
export function verifyProofOfPossession(identityPublicKey: Uint8Array | string, signatureHex: string): boolean {
  try {
    const publicKey = keyBytes(identityPublicKey, 'identity public key');
    return ed25519Verify(hexToBytes(signatureHex, SIGNATURE_BYTES, 'signature'), publicKey, publicKey);
  } catch {
    return false;
  }
}
