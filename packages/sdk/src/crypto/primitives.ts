/**
 * Thin, typed wrappers over audited primitives (contract §1.3, design §2 and §7).
 *
 * Nothing here implements a cryptographic primitive. Ed25519, X25519 and ChaCha20-Poly1305 come
 * from the process's crypto backend (backend.ts), chosen once, at first use: node:crypto (OpenSSL)
 * on Node, reached through `process.getBuiltinModule` and checked against known answers first,
 * else @noble/curves and @noble/ciphers (browsers, other runtimes); {@link cryptoProvider} says
 * which (HMAC-SHA256 and HKDF-SHA256 too). Both give the same bytes for the same inputs. The
 * Ed25519→X25519 map (@noble/curves) and BLAKE2b (@noble/hashes) are the same on every platform.
 *
 * This module fixes the shapes (byte lengths, hex and base64 on the wire), turns library
 * exceptions into {@link CryptoError}, and adds the two design §7 derived values (fingerprint,
 * proof of possession). Works in Node 20+ and browsers (no static import of Node built-ins).
 */
import { CodedError } from '../errors.js';
import { ed25519 } from '@noble/curves/ed25519.js';
import { blake2b } from '@noble/hashes/blake2.js';
import {
  bytesToHex as nobleBytesToHex,
  hexToBytes as nobleHexToBytes,
  randomBytes as nobleRandomBytes,
} from '@noble/hashes/utils.js';
import { equalBytes as nobleEqualBytes } from '@noble/ciphers/utils.js';
import { nobleBackend, type CryptoBackend, type CryptoProviderName, type KeyPair } from './backend.js';
import { createNodeBackend, type NodeCryptoModule } from './backend-node.js';

export type { CryptoProviderName, KeyPair } from './backend.js';

/** Length in bytes of Ed25519 / X25519 public and secret keys. */
export const KEY_BYTES = 32;
/** Length in bytes of an Ed25519 signature. */
export const SIGNATURE_BYTES = 64;
/** XChaCha20-Poly1305 nonce length in bytes (192 bits, contract §1.3). */
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
  /**
   * The frame is of a wire version this SDK does not speak (e.g. an `x3dh-dr` v1 frame from a
   * Parley SDK without conversation binding): the sender must upgrade.
   */
  | 'unsupported_version'
  /**
   * The signed header names another conversation or recipient device than this session's: the
   * frame was made for another context (e.g. replayed there by the server).
   */
  | 'wrong_context'
  /** The operation is not possible yet (e.g. sending before a sending chain exists). */
  | 'not_ready';

/** The one error type thrown by the crypto module; `code` says why (see {@link CryptoErrorCode}). */
export class CryptoError extends CodedError<CryptoErrorCode> {
  override readonly name = 'CryptoError';
}

// ---------------------------------------------------------------------------------------------
// The crypto provider: chosen once, at first use
// ---------------------------------------------------------------------------------------------

/** What {@link cryptoProvider} reports about the backend in use. */
export interface CryptoProviderInfo {
  /** `node` (node:crypto), `noble` (@noble, pure JavaScript) — `webcrypto` is not used yet. */
  name: CryptoProviderName;
  /** True when Ed25519, X25519 and ChaCha20-Poly1305 run on the platform's native code. */
  native: boolean;
  /** What implements them, e.g. "node:crypto (OpenSSL 3.0.15+quic)". */
  implementation: string;
  /** Why this provider: auto-detected, forced by PARLEY_CRYPTO_PROVIDER or useCryptoProvider, or why native was not used. */
  reason: string;
}

let active: { backend: CryptoBackend; reason: string } | undefined;
let nodeBackend: CryptoBackend | null | undefined;
let nodeUnavailable = '';
/** The frozen report of the current `active` (cryptoProvider is called on hot paths). */
let reported: { of: NonNullable<typeof active>; info: Readonly<CryptoProviderInfo> } | undefined;

interface ProcessLike {
  versions?: { node?: string; openssl?: string };
  env?: Record<string, string | undefined>;
  getBuiltinModule?: (id: string) => unknown;
}
const processLike = (): ProcessLike | undefined => (globalThis as { process?: ProcessLike }).process;

// Known answers every backend must reproduce before it is used (RFC 8032 §7.1 TEST 1, RFC 7748 §6.1).
const KAT_ED_SEED = '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60';
const KAT_ED_PUB = 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a';
const KAT_ED_SIG =
  'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b';
const KAT_X_ALICE = '77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a';
const KAT_X_BOB_PUB = 'de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f';
const KAT_X_SHARED = '4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742';

/** Run the known answers (and ChaCha20-Poly1305, XChaCha20-Poly1305, HMAC, HKDF cross-checks with noble) on `b`. */
function selfTest(b: CryptoBackend): void {
  const seed = nobleHexToBytes(KAT_ED_SEED);
  const empty = new Uint8Array(0);
  if (nobleBytesToHex(b.ed25519PublicKey(seed)) !== KAT_ED_PUB) throw new Error('Ed25519 public key mismatch');
  const sig = b.ed25519Sign(empty, seed);
  if (nobleBytesToHex(sig) !== KAT_ED_SIG) throw new Error('Ed25519 signature mismatch');
  if (!b.ed25519Verify(sig, empty, nobleHexToBytes(KAT_ED_PUB))) throw new Error('Ed25519 verification failed');
  sig[0]! ^= 1;
  if (b.ed25519Verify(sig, empty, nobleHexToBytes(KAT_ED_PUB))) throw new Error('Ed25519 accepted a bad signature');
  const shared = b.x25519DH(nobleHexToBytes(KAT_X_ALICE), nobleHexToBytes(KAT_X_BOB_PUB));
  if (nobleBytesToHex(shared) !== KAT_X_SHARED) throw new Error('X25519 mismatch');
  const key = nobleHexToBytes(KAT_X_SHARED);
  const nonce = nobleHexToBytes(KAT_ED_SIG.slice(0, 48));
  const data = nobleHexToBytes(KAT_ED_SIG);
  for (const [seal, n] of [
    ['chacha20poly1305Encrypt', nonce.subarray(0, 12)],
    ['xchacha20poly1305Encrypt', nonce],
  ] as const) {
    const ours = b[seal](key, n, data, seed);
    if (nobleBytesToHex(ours) !== nobleBytesToHex(nobleBackend[seal](key, n, data, seed))) throw new Error(`${seal} mismatch`);
  }
  if (nobleBytesToHex(b.xchacha20poly1305Decrypt(key, nonce, nobleBackend.xchacha20poly1305Encrypt(key, nonce, data, seed), seed)) !== KAT_ED_SIG) {
    throw new Error('xchacha20poly1305Decrypt mismatch');
  }
  if (nobleBytesToHex(b.hmacSha256(key, data)) !== nobleBytesToHex(nobleBackend.hmacSha256(key, data))) throw new Error('HMAC-SHA256 mismatch');
  if (nobleBytesToHex(b.hkdfSha256(data, seed, key, 80)) !== nobleBytesToHex(nobleBackend.hkdfSha256(data, seed, key, 80))) {
    throw new Error('HKDF-SHA256 mismatch');
  }
}

/** The node:crypto backend if this runtime has it and it passes the self-test, else null (reason kept). */
function getNodeBackend(): CryptoBackend | null {
  if (nodeBackend !== undefined) return nodeBackend;
  nodeBackend = null;
  const proc = processLike();
  if (typeof proc?.getBuiltinModule !== 'function') {
    nodeUnavailable = proc?.versions?.node ? `process.getBuiltinModule is missing (Node ${proc.versions.node})` : 'not running on Node';
    return null;
  }
  try {
    const nc = proc.getBuiltinModule('node:crypto') as NodeCryptoModule | undefined;
    if (!nc) throw new Error('node:crypto is not available');
    const openssl = proc.versions?.openssl;
    const b = createNodeBackend(nc, `node:crypto${openssl ? ` (OpenSSL ${openssl})` : ''}`);
    selfTest(b);
    nodeBackend = b;
  } catch (cause) {
    nodeUnavailable = `node:crypto failed its self-test: ${(cause as Error).message}`;
  }
  return nodeBackend;
}

function choose(): { backend: CryptoBackend; reason: string } {
  const forced = processLike()?.env?.PARLEY_CRYPTO_PROVIDER;
  if (forced === 'noble') return { backend: nobleBackend, reason: 'forced by PARLEY_CRYPTO_PROVIDER=noble' };
  const native = getNodeBackend();
  if (native) return { backend: native, reason: forced === 'node' ? 'forced by PARLEY_CRYPTO_PROVIDER=node' : 'auto: node:crypto available' };
  return { backend: nobleBackend, reason: `fallback: ${nodeUnavailable}` };
}

function backend(): CryptoBackend {
  return (active ??= choose()).backend;
}

/**
 * The crypto provider in use (chosen once, at the first crypto call): `node` on Node 20.16+ /
 * 22.3+ when node:crypto passes its known-answer self-test, else `noble`. Set
 * `PARLEY_CRYPTO_PROVIDER=noble` in the environment to force the fallback.
 */
export function cryptoProvider(): CryptoProviderInfo {
  const current = (active ??= choose());
  if (reported?.of !== current) {
    const b = current.backend;
    reported = { of: current, info: Object.freeze({ name: b.name, native: b.name !== 'noble', implementation: b.implementation, reason: current.reason }) };
  }
  return reported.info;
}

/**
 * Switch the crypto provider of this process (tests, benchmarks). Both produce identical bytes,
 * so keys, sessions and messages carry over. Keep it to test files (vitest runs each in its own fork).
 * @throws CryptoError `not_ready` when `node` is asked for but not available here.
 */
export function useCryptoProvider(name: 'node' | 'noble'): CryptoProviderInfo {
  if (name === 'noble') {
    active = { backend: nobleBackend, reason: 'set by useCryptoProvider' };
  } else {
    const native = getNodeBackend();
    if (!native) throw new CryptoError('not_ready', `the node crypto provider is not available: ${nodeUnavailable}`);
    active = { backend: native, reason: 'set by useCryptoProvider' };
  }
  return cryptoProvider();
}

// ---------------------------------------------------------------------------------------------
// Encodings
// ---------------------------------------------------------------------------------------------

const HEX_RE = /^(?:[0-9a-fA-F]{2})*$/;
const BASE64_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Lowercase hex of `bytes` (design §7: keys and signatures on the wire are lowercase hex). */
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

/** Node's Buffer when present (its base64 is native); browsers use btoa / atob. */
const NodeBuffer = (globalThis as { Buffer?: { from(data: ArrayBufferLike | string, offsetOrEncoding?: number | 'base64', length?: number): Uint8Array & { toString(encoding: 'base64'): string } } }).Buffer;

/** Standard, padded base64 (RFC 4648 §4) of `bytes`, as the server stores `header_blob` and `ciphertext`. */
export function bytesToBase64(bytes: Uint8Array): string {
  if (NodeBuffer) return NodeBuffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
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
  if (NodeBuffer) return new Uint8Array(NodeBuffer.from(b64, 'base64')); // a copy, never a pooled Buffer
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
  for (const a of arrays) {
    if (!a) continue;
    a.fill(0);
    nodeBackend?.forget(a); // drop a cached native key object made from these bytes
  }
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

/** A fresh Ed25519 key pair (32-byte seed as `secretKey`, 32-byte public key). */
export function ed25519Keygen(): KeyPair {
  return backend().ed25519Keygen();
}

/** The Ed25519 public key of a 32-byte secret key (seed). */
export function ed25519PublicKey(secretKey: Uint8Array): Uint8Array {
  return backend().ed25519PublicKey(bytesArg(secretKey, KEY_BYTES, 'Ed25519 secret key'));
}

/** Ed25519 signature (64 bytes) of `message` by the 32-byte `secretKey`. */
export function ed25519Sign(message: Uint8Array, secretKey: Uint8Array): Uint8Array {
  return backend().ed25519Sign(message, bytesArg(secretKey, KEY_BYTES, 'Ed25519 secret key'));
}

/**
 * Verify an Ed25519 signature with RFC 8032 / FIPS 186-5 strict decoding (what node:crypto does
 * on the server). Returns false, never throws, for malformed keys or signatures.
 */
export function ed25519Verify(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  if (!(signature instanceof Uint8Array) || signature.length !== SIGNATURE_BYTES) return false;
  if (!(publicKey instanceof Uint8Array) || publicKey.length !== KEY_BYTES) return false;
  try {
    return backend().ed25519Verify(signature, message, publicKey);
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// X25519 (RFC 7748) and the Ed25519 → X25519 conversion
// ---------------------------------------------------------------------------------------------

/** A fresh X25519 key pair (32-byte secret scalar, 32-byte u-coordinate public key). */
export function x25519Keygen(): KeyPair {
  return backend().x25519Keygen();
}

/** The X25519 public key of a 32-byte secret key. */
export function x25519PublicKey(secretKey: Uint8Array): Uint8Array {
  return backend().x25519PublicKey(bytesArg(secretKey, KEY_BYTES, 'X25519 secret key'));
}

/**
 * X25519 Diffie-Hellman: the 32-byte shared secret of our `secretKey` and the peer's `publicKey`.
 * @throws CryptoError `invalid_key` when the result is all-zero (a low-order peer key).
 */
export function x25519DH(secretKey: Uint8Array, publicKey: Uint8Array): Uint8Array {
  bytesArg(secretKey, KEY_BYTES, 'X25519 secret key');
  bytesArg(publicKey, KEY_BYTES, 'X25519 public key');
  try {
    return backend().x25519DH(secretKey, publicKey);
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
  return backend().hkdfSha256(ikm, salt, info, length);
}

/** HMAC-SHA256 (RFC 2104) of `data` under `key` (32 bytes out). */
export function hmacSha256(key: Uint8Array, data: Uint8Array): Uint8Array {
  return backend().hmacSha256(key, data);
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
  return backend().xchacha20poly1305Encrypt(key, nonce, plaintext, aad);
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
    return backend().xchacha20poly1305Decrypt(key, nonce, ciphertext, aad);
  } catch (cause) {
    throw new CryptoError('decrypt_failed', 'authentication failed', { cause });
  }
}

/** ChaCha20-Poly1305 (RFC 8439 §2.8) nonce length in bytes. */
export const CHACHA_NONCE_BYTES = 12;

/**
 * ChaCha20-Poly1305 (RFC 8439 §2.8) encryption with a 12-byte nonce; output is ciphertext || 16-byte tag.
 * Never reuse a (key, nonce) pair; the Parley wire format uses {@link xchacha20poly1305Encrypt}.
 * @throws CryptoError `invalid_input` for a key that is not 32 bytes or a nonce that is not 12.
 */
export function chacha20poly1305Encrypt(key: Uint8Array, nonce: Uint8Array, plaintext: Uint8Array, aad?: Uint8Array): Uint8Array {
  bytesArg(key, KEY_BYTES, 'AEAD key');
  bytesArg(nonce, CHACHA_NONCE_BYTES, 'ChaCha20-Poly1305 nonce');
  return backend().chacha20poly1305Encrypt(key, nonce, plaintext, aad);
}

/**
 * ChaCha20-Poly1305 (RFC 8439 §2.8) decryption of ciphertext || tag.
 * @throws CryptoError `decrypt_failed` when the tag does not verify.
 */
export function chacha20poly1305Decrypt(key: Uint8Array, nonce: Uint8Array, ciphertext: Uint8Array, aad?: Uint8Array): Uint8Array {
  bytesArg(key, KEY_BYTES, 'AEAD key');
  bytesArg(nonce, CHACHA_NONCE_BYTES, 'ChaCha20-Poly1305 nonce');
  if (!(ciphertext instanceof Uint8Array) || ciphertext.length < AEAD_TAG_BYTES) {
    throw new CryptoError('decrypt_failed', 'ciphertext shorter than the authentication tag');
  }
  try {
    return backend().chacha20poly1305Decrypt(key, nonce, ciphertext, aad);
  } catch (cause) {
    throw new CryptoError('decrypt_failed', 'authentication failed', { cause });
  }
}

/** Encrypt `plaintext` under a 32-byte key with a fresh random 24-byte nonce (contract §1.3). */
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
// design §7 derived values
// ---------------------------------------------------------------------------------------------

function keyBytes(key: Uint8Array | string, what: string): Uint8Array {
  return typeof key === 'string' ? hexToBytes(key, KEY_BYTES, what) : bytesArg(key, KEY_BYTES, what);
}

/**
 * Key fingerprint (design §7): the first 16 bytes of BLAKE2b-256 over the raw 32-byte Ed25519
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
 * Enrollment proof of possession (design §7): the Ed25519 signature by the identity secret key
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
