/**
 * The interchangeable layer under primitives.ts ("Speed"): one {@link CryptoBackend}
 * serves Ed25519 (RFC 8032), X25519 (RFC 7748), ChaCha20-Poly1305 (RFC 8439),
 * XChaCha20-Poly1305 (draft-irtf-cfrg-xchacha), HMAC-SHA256 and HKDF-SHA256 for the whole process. Two exist:
 *
 * - `noble` ({@link nobleBackend}): @noble/curves and @noble/ciphers, pure JavaScript, everywhere;
 *   the fallback.
 * - `node` (backend-node.ts): node:crypto (OpenSSL), synchronous, reached through
 *   `process.getBuiltinModule` so no bundler ever sees an import of `node:crypto`.
 *
 * Backends take already-validated arguments (lengths checked by primitives.ts) and throw plain
 * `Error`s; primitives.ts turns those into `CryptoError`s. Neither implements a primitive itself.
 */
import { ed25519, x25519 } from '@noble/curves/ed25519.js';
import { chacha20poly1305, xchacha20poly1305 } from '@noble/ciphers/chacha.js';
import { hkdf } from '@noble/hashes/hkdf.js';
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';

/** Names a backend can have; `webcrypto` is reserved for the asynchronous browser path (phase 2). */
export type CryptoProviderName = 'node' | 'webcrypto' | 'noble';

/** A key pair; `secretKey` and `publicKey` are 32 bytes each. */
export interface KeyPair {
  secretKey: Uint8Array;
  publicKey: Uint8Array;
}

/** The primitives a backend provides. Byte lengths are checked by the caller (primitives.ts). */
export interface CryptoBackend {
  readonly name: CryptoProviderName;
  /** What implements the primitives, for {@link CryptoBackend.name} reports (e.g. "OpenSSL 3.0.15"). */
  readonly implementation: string;
  /** Fresh Ed25519 key pair: 32-byte seed, 32-byte public key. */
  ed25519Keygen(): KeyPair;
  /** Ed25519 public key of a 32-byte seed. */
  ed25519PublicKey(secretKey: Uint8Array): Uint8Array;
  /** 64-byte Ed25519 signature (RFC 8032 §5.1.6, pure Ed25519). */
  ed25519Sign(message: Uint8Array, secretKey: Uint8Array): Uint8Array;
  /** Strict RFC 8032 §5.1.7 verification (canonical encodings, S < L, cofactorless); may throw on malformed input. */
  ed25519Verify(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean;
  /** Fresh X25519 key pair: 32-byte secret (unclamped random bytes), 32-byte u-coordinate. */
  x25519Keygen(): KeyPair;
  /** X25519(secret, 9). */
  x25519PublicKey(secretKey: Uint8Array): Uint8Array;
  /** X25519(secret, peer); throws when the result is all-zero. */
  x25519DH(secretKey: Uint8Array, publicKey: Uint8Array): Uint8Array;
  /** ChaCha20-Poly1305 (RFC 8439 §2.8), 12-byte nonce: ciphertext || 16-byte tag. */
  chacha20poly1305Encrypt(key: Uint8Array, nonce: Uint8Array, plaintext: Uint8Array, aad?: Uint8Array): Uint8Array;
  /** Inverse of {@link CryptoBackend.chacha20poly1305Encrypt}; throws when the tag does not verify. */
  chacha20poly1305Decrypt(key: Uint8Array, nonce: Uint8Array, ciphertext: Uint8Array, aad?: Uint8Array): Uint8Array;
  /** XChaCha20-Poly1305 (draft-irtf-cfrg-xchacha §2), 24-byte nonce: ciphertext || 16-byte tag. */
  xchacha20poly1305Encrypt(key: Uint8Array, nonce: Uint8Array, plaintext: Uint8Array, aad?: Uint8Array): Uint8Array;
  /** Inverse of {@link CryptoBackend.xchacha20poly1305Encrypt}; throws when the tag does not verify. */
  xchacha20poly1305Decrypt(key: Uint8Array, nonce: Uint8Array, ciphertext: Uint8Array, aad?: Uint8Array): Uint8Array;
  /** HMAC-SHA256 (RFC 2104, FIPS 180-4): 32 bytes. */
  hmacSha256(key: Uint8Array, data: Uint8Array): Uint8Array;
  /** HKDF-SHA256 (RFC 5869) extract-then-expand: `length` bytes (at most 255 × 32). */
  hkdfSha256(ikm: Uint8Array, salt: Uint8Array, info: Uint8Array, length: number): Uint8Array;
  /** Drop anything cached for these key bytes (called by `wipe`). */
  forget(bytes: Uint8Array): void;
}

/** The pure-JavaScript backend: @noble/curves and @noble/ciphers (audited). */
export const nobleBackend: CryptoBackend = {
  name: 'noble',
  implementation: '@noble/curves 2, @noble/ciphers 2 (pure JavaScript)',
  ed25519Keygen() {
    const { secretKey, publicKey } = ed25519.keygen();
    return { secretKey, publicKey };
  },
  ed25519PublicKey: (secretKey) => ed25519.getPublicKey(secretKey),
  ed25519Sign: (message, secretKey) => ed25519.sign(message, secretKey),
  ed25519Verify: (signature, message, publicKey) => ed25519.verify(signature, message, publicKey, { zip215: false }),
  x25519Keygen() {
    const { secretKey, publicKey } = x25519.keygen();
    return { secretKey, publicKey };
  },
  x25519PublicKey: (secretKey) => x25519.getPublicKey(secretKey),
  x25519DH: (secretKey, publicKey) => x25519.getSharedSecret(secretKey, publicKey),
  chacha20poly1305Encrypt: (key, nonce, plaintext, aad) => chacha20poly1305(key, nonce, aad).encrypt(plaintext),
  chacha20poly1305Decrypt: (key, nonce, ciphertext, aad) => chacha20poly1305(key, nonce, aad).decrypt(ciphertext),
  xchacha20poly1305Encrypt: (key, nonce, plaintext, aad) => xchacha20poly1305(key, nonce, aad).encrypt(plaintext),
  xchacha20poly1305Decrypt: (key, nonce, ciphertext, aad) => xchacha20poly1305(key, nonce, aad).decrypt(ciphertext),
  hmacSha256: (key, data) => hmac(sha256, key, data),
  hkdfSha256: (ikm, salt, info, length) => hkdf(sha256, ikm, salt, info, length),
  forget() {},
};
