/**
 * The ts-mls crypto provider MlsClient uses by default ("Speed"): ts-mls's
 * `defaultCryptoProvider`, with the per-message primitives made synchronous while the SDK's
 * crypto provider is native (node:crypto):
 *
 * - Ed25519 sign / verify on the SDK's provider (node:crypto, cached key objects). ts-mls's own
 *   goes through WebCrypto and imports the PKCS#8 key again for every signature and the raw
 *   public key for every verification. Every MLS message carries a signature.
 * - ChaCha20-Poly1305 (`hpke.encryptAead` / `decryptAead`, the message AEAD) on the SDK's provider.
 * - HMAC, the hash and HKDF extract / expand (the secret tree, the key schedule) with
 *   @noble/hashes, synchronously, instead of one asynchronous WebCrypto call (and a key import)
 *   per step: the asynchronous round trips, not the hashing, were most of an MLS message's cost.
 *   SHA-256 for the classical suite; SHA-512 for the hybrid one (HMAC-SHA512 in @noble/hashes).
 *
 * The suites this applies to: Ed25519 signatures, ChaCha20-Poly1305, and SHA-256 with HKDF-SHA256
 * or SHA-512 with HKDF-SHA512 (both suites Parley runs, `ciphersuites.ts`); the KEM (X25519 or
 * X-Wing HPKE) stays ts-mls's own.
 *
 * Nothing else changes: the same bytes (all these primitives are deterministic), the same key
 * formats (a raw 32-byte seed or the 48-byte PKCS#8 encoding WebCrypto exports are both accepted,
 * and new signature keys are still made by ts-mls, as PKCS#8), HPKE as before. Verification is
 * the SDK's strict RFC 8032 rule (it also refuses small-order public keys, which no honest key is).
 * Where the SDK runs on the @noble fallback (browsers), ts-mls's own path is kept as is.
 */
import { defaultCryptoProvider, type CiphersuiteImpl, type CryptoProvider } from 'ts-mls';
import { expand as hkdfExpand, extract as hkdfExtract } from '@noble/hashes/hkdf.js';
import { hmac } from '@noble/hashes/hmac.js';
import { sha256, sha512 } from '@noble/hashes/sha2.js';
import {
  KEY_BYTES,
  chacha20poly1305Decrypt,
  chacha20poly1305Encrypt,
  cryptoProvider,
  ed25519Sign,
  ed25519Verify,
  equalBytes,
  hmacSha256,
} from '../crypto/primitives.js';

/** DER prefix of an Ed25519 PKCS#8 private key (RFC 8410 §7) before its 32-byte seed. */
const ED25519_PKCS8_PREFIX = Uint8Array.of(0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20);

/** Views of the seed inside a PKCS#8 key, one per key array, so the native key cache hits. */
const seedViews = new WeakMap<Uint8Array, Uint8Array>();

/**
 * The 32-byte Ed25519 seed of an MLS signature key: the key itself when it is 32 bytes, a view of
 * the last 32 bytes of the RFC 8410 PKCS#8 encoding, else undefined (left to ts-mls).
 */
function ed25519Seed(signKey: Uint8Array): Uint8Array | undefined {
  if (signKey.length === KEY_BYTES) return signKey;
  if (signKey.length !== ED25519_PKCS8_PREFIX.length + KEY_BYTES) return undefined;
  for (let i = 0; i < ED25519_PKCS8_PREFIX.length; i++) if (signKey[i] !== ED25519_PKCS8_PREFIX[i]) return undefined;
  let view = seedViews.get(signKey);
  if (view === undefined) {
    view = signKey.subarray(ED25519_PKCS8_PREFIX.length);
    seedViews.set(signKey, view);
  }
  return view;
}

/**
 * `impl` with Ed25519, ChaCha20-Poly1305 and HMAC/HKDF over `digest` (SHA-256 or SHA-512) made
 * synchronous on the SDK's provider while that is native (see the module doc); checked on every
 * call, so `useCryptoProvider('noble')` (tests, benchmarks) returns to ts-mls's own.
 */
function withSyncPrimitives(impl: CiphersuiteImpl, digest: 'SHA-256' | 'SHA-512'): CiphersuiteImpl {
  const { signature, hash, kdf, hpke } = impl;
  const native = () => cryptoProvider().native;
  const sha = digest === 'SHA-256' ? sha256 : sha512;
  // The SDK's HMAC-SHA256 is node:crypto's; HMAC-SHA512 is @noble/hashes (synchronous too).
  const mac = digest === 'SHA-256' ? hmacSha256 : (key: Uint8Array, data: Uint8Array) => hmac(sha512, key, data);
  return {
    ...impl,
    signature: {
      keygen: () => signature.keygen(),
      sign(signKey, message) {
        const seed = native() ? ed25519Seed(signKey) : undefined;
        return seed === undefined ? signature.sign(signKey, message) : Promise.resolve(ed25519Sign(message, seed));
      },
      verify(publicKey, message, sig) {
        return native() ? Promise.resolve(ed25519Verify(sig, message, publicKey)) : signature.verify(publicKey, message, sig);
      },
    },
    hash: {
      digest: (data) => (native() ? Promise.resolve(sha(data)) : hash.digest(data)),
      mac: (key, data) => (native() ? Promise.resolve(mac(key, data)) : hash.mac(key, data)),
      verifyMac(key, tag, data) {
        return native() ? Promise.resolve(equalBytes(mac(key, data), tag)) : hash.verifyMac(key, tag, data);
      },
    },
    kdf: {
      size: kdf.size,
      extract: (salt, ikm) => (native() ? Promise.resolve(hkdfExtract(sha, ikm, salt)) : kdf.extract(salt, ikm)),
      expand: (prk, info, len) => (native() ? Promise.resolve(hkdfExpand(sha, prk, info, len)) : kdf.expand(prk, info, len)),
    },
    hpke: {
      ...hpke,
      encryptAead(key, nonce, aad, plaintext) {
        return native() ? Promise.resolve(chacha20poly1305Encrypt(key, nonce, plaintext, aad)) : hpke.encryptAead(key, nonce, aad, plaintext);
      },
      decryptAead(key, nonce, aad, ciphertext) {
        if (!native()) return hpke.decryptAead(key, nonce, aad, ciphertext);
        try {
          return Promise.resolve(chacha20poly1305Decrypt(key, nonce, ciphertext, aad));
        } catch {
          return hpke.decryptAead(key, nonce, aad, ciphertext); // fails again, with ts-mls's own error
        }
      },
    },
  };
}

/**
 * The ts-mls `CryptoProvider` of MlsClient (default of `MlsClientCommonOptions.cryptoProvider`):
 * ts-mls's default, plus the synchronous native path while {@link cryptoProvider} is native, for
 * the suites Parley runs (Ed25519, ChaCha20-Poly1305, HKDF-SHA256 or HKDF-SHA512; see the module doc).
 */
export const parleyMlsCryptoProvider: CryptoProvider = {
  async getCiphersuiteImpl(cs) {
    const impl = await defaultCryptoProvider.getCiphersuiteImpl(cs);
    const base = cs.signature === 'Ed25519' && cs.hpke.aead === 'CHACHA20POLY1305';
    if (base && cs.hash === 'SHA-256' && cs.hpke.kdf === 'HKDF-SHA256') return withSyncPrimitives(impl, 'SHA-256');
    if (base && cs.hash === 'SHA-512' && cs.hpke.kdf === 'HKDF-SHA512') return withSyncPrimitives(impl, 'SHA-512');
    return impl;
  },
};
