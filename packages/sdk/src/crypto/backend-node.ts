/**
 * The `node` {@link CryptoBackend}: Ed25519, X25519, ChaCha20-Poly1305, HMAC and HKDF from
 * node:crypto (OpenSSL), all synchronous, so the SDK's synchronous crypto API keeps its shape on Node.
 *
 * - Keys enter OpenSSL as JWK (`{kty: 'OKP', crv, d, x}`): about 25 µs per private key and 6 µs
 *   per public key on Node 20, where PKCS#8 / SPKI DER costs 200-700 µs. For a private key Node
 *   builds the key from `d` alone (`x` must be a string but is not used, so a placeholder is
 *   passed and the public key is read back from the KeyObject). Should a Node version refuse
 *   that, private keys go in as PKCS#8 DER (RFC 8410) from then on; should one use the
 *   placeholder, the start-up self-test's RFC 8032 signature fails and the SDK stays on @noble.
 * - KeyObjects are cached per key array (a WeakMap keyed by the `Uint8Array`, checked against a
 *   copy of its bytes on every hit, so a changed array is never served a stale key): the identity
 *   key signs every Double Ratchet header, the peer identity key verifies every one, and a fresh
 *   ratchet key pair is used for two DH computations. `forget` (called by `wipe`) drops an entry.
 * - Ed25519 verification keeps the rules of the `noble` backend (`zip215: false`, RFC 8032 /
 *   FIPS 186-5): OpenSSL already rejects S >= L and non-canonical R, and the public key is checked
 *   first with @noble/curves (canonical encoding, not of small order), which OpenSSL does not do.
 *   The one remaining difference: OpenSSL checks the cofactorless equation [S]B = R + [k]A and
 *   @noble the cofactored one; they differ only for signatures built on purpose with a torsion
 *   component, which only the key's owner can make, and then OpenSSL is the stricter.
 * - HMAC-SHA256 and HKDF-SHA256 are node's `createHmac` and `hkdfSync` (an `info` over 1 KiB,
 *   which hkdfSync refuses, goes to @noble/hashes).
 * - XChaCha20-Poly1305 is draft-irtf-cfrg-xchacha §2.3: subkey = HChaCha20(key, nonce[0..16])
 *   (@noble/ciphers' `hchacha`), then node's ChaCha20-Poly1305 under the subkey with the 12-byte
 *   nonce 0x00000000 || nonce[16..24].
 *
 * This module never imports `node:crypto`: {@link createNodeBackend} receives the module from the
 * caller (primitives.ts gets it with `process.getBuiltinModule`), so browser bundles stay clean.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { hchacha } from '@noble/ciphers/chacha.js';
import { concatBytes, u32 } from '@noble/ciphers/utils.js';
import { nobleBackend, type CryptoBackend, type KeyPair } from './backend.js';

/** An opaque node:crypto KeyObject. */
export interface NodeKeyObject {
  readonly type: string;
  export(options: { format: 'jwk' }): { d?: string; x?: string };
}

interface NodeCipher {
  setAAD(aad: Uint8Array): unknown;
  update(data: Uint8Array): Uint8Array;
  final(): Uint8Array;
  getAuthTag(): Uint8Array;
}
interface NodeDecipher {
  setAAD(aad: Uint8Array): unknown;
  setAuthTag(tag: Uint8Array): unknown;
  update(data: Uint8Array): Uint8Array;
  final(): Uint8Array;
}
type Jwk = { kty: 'OKP'; crv: 'Ed25519' | 'X25519'; x: string; d?: string };

/** The part of node:crypto this backend uses (structural, so the SDK needs no @types/node in browsers). */
export interface NodeCryptoModule {
  createPrivateKey(input: { key: Jwk; format: 'jwk' } | { key: Uint8Array; format: 'der'; type: 'pkcs8' }): NodeKeyObject;
  createPublicKey(input: { key: Jwk; format: 'jwk' }): NodeKeyObject;
  generateKeyPairSync(type: 'ed25519' | 'x25519'): { privateKey: NodeKeyObject; publicKey: NodeKeyObject };
  sign(algorithm: null, data: Uint8Array, key: NodeKeyObject): Uint8Array;
  verify(algorithm: null, data: Uint8Array, key: NodeKeyObject, signature: Uint8Array): boolean;
  diffieHellman(options: { privateKey: NodeKeyObject; publicKey: NodeKeyObject }): Uint8Array;
  createCipheriv(algorithm: 'chacha20-poly1305', key: Uint8Array, iv: Uint8Array, options: { authTagLength: 16 }): NodeCipher;
  createDecipheriv(algorithm: 'chacha20-poly1305', key: Uint8Array, iv: Uint8Array, options: { authTagLength: 16 }): NodeDecipher;
  createHmac(algorithm: 'sha256', key: Uint8Array): { update(data: Uint8Array): unknown; digest(): Uint8Array };
  hkdfSync(digest: 'sha256', ikm: Uint8Array, salt: Uint8Array, info: Uint8Array, length: number): ArrayBuffer;
}

const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** Unpadded base64url (RFC 4648 §5) of 32 bytes, as JWK wants `d` and `x`. */
function b64url(bytes: Uint8Array): string {
  let out = '';
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out += B64URL[n >>> 18]! + B64URL[(n >>> 12) & 63]! + B64URL[(n >>> 6) & 63]! + B64URL[n & 63]!;
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = bytes[i]! << 16;
    out += B64URL[n >>> 18]! + B64URL[(n >>> 12) & 63]!;
  } else if (rest === 2) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8);
    out += B64URL[n >>> 18]! + B64URL[(n >>> 12) & 63]! + B64URL[(n >>> 6) & 63]!;
  }
  return out;
}

const B64URL_INDEX = new Int16Array(128).fill(-1);
for (let i = 0; i < B64URL.length; i++) B64URL_INDEX[B64URL.charCodeAt(i)] = i;

/** Bytes of an unpadded base64url string of a 32-byte JWK member. */
function fromB64url(text: string | undefined, what: string): Uint8Array {
  if (typeof text !== 'string' || text.length !== 43) throw new Error(`node:crypto returned no 32-byte JWK ${what}`);
  const out = new Uint8Array(32);
  let acc = 0;
  let bits = 0;
  let o = 0;
  for (let i = 0; i < text.length; i++) {
    const v = B64URL_INDEX[text.charCodeAt(i)] ?? -1;
    if (v < 0) throw new Error(`node:crypto returned a malformed JWK ${what}`);
    acc = (acc << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (acc >>> bits) & 0xff;
    }
  }
  return out;
}

/** RFC 8410 §7 PKCS#8 DER of an Ed25519 / X25519 private key, before its 32 raw bytes. */
const PKCS8_PREFIX = {
  Ed25519: Uint8Array.of(0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20),
  X25519: Uint8Array.of(0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x6e, 0x04, 0x22, 0x04, 0x20),
};

/** Placeholder `x` for private-key JWKs (Node derives the public key from `d`). */
const PLACEHOLDER_X = b64url(new Uint8Array(32));

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let d = 0;
  for (let i = 0; i < a.length; i++) d |= a[i]! ^ b[i]!;
  return d === 0;
}

/** KeyObjects per key array; an entry is used only while the array still holds the same bytes. */
class KeyCache {
  private readonly entries = new WeakMap<Uint8Array, { bytes: Uint8Array; key: NodeKeyObject }>();

  get(bytes: Uint8Array, make: (bytes: Uint8Array) => NodeKeyObject): NodeKeyObject {
    const hit = this.entries.get(bytes);
    if (hit !== undefined && sameBytes(hit.bytes, bytes)) return hit.key;
    const key = make(bytes);
    this.entries.set(bytes, { bytes: bytes.slice(), key });
    return key;
  }

  set(bytes: Uint8Array, key: NodeKeyObject): void {
    this.entries.set(bytes, { bytes: bytes.slice(), key });
  }

  forget(bytes: Uint8Array): void {
    const hit = this.entries.get(bytes);
    if (hit === undefined) return;
    hit.bytes.fill(0);
    this.entries.delete(bytes);
  }
}

/** Ed25519 public KeyObjects by key bytes (public values), bounded; `null` marks a key strict verification refuses. */
class PublicKeyCache {
  private readonly entries = new Map<string, NodeKeyObject | null>();
  constructor(private readonly max: number) {}

  get(bytes: Uint8Array, make: (bytes: Uint8Array) => NodeKeyObject | null): NodeKeyObject | null {
    let id = '';
    for (let i = 0; i < bytes.length; i++) id += String.fromCharCode(bytes[i]!);
    const hit = this.entries.get(id);
    if (hit !== undefined) return hit;
    const key = make(bytes);
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(id, key);
    return key;
  }
}

/**
 * Whether @noble/curves' strict (`zip215: false`) Ed25519 verification would accept this public
 * key at all: a canonical encoding (y < p, no "-0") of a curve point that is not of small order.
 */
function strictEd25519PublicKey(bytes: Uint8Array): boolean {
  try {
    return !ed25519.Point.fromBytes(bytes, false).isSmallOrder();
  } catch {
    return false;
  }
}

/** A fresh Uint8Array holding `parts` (so no Buffer from Node's shared pool escapes). */
function joined(parts: Uint8Array[], wipeParts: boolean): Uint8Array {
  const out = concatBytes(...parts);
  if (wipeParts) for (const p of parts) p.fill(0);
  return out;
}

// HChaCha20's constant words: "expand 32-byte k" read as four little-endian 32-bit words (RFC 8439 §2.3).
const SIGMA = Uint32Array.of(0x61707865, 0x3320646e, 0x79622d32, 0x6b206574);

/** node:crypto's hkdfSync refuses an `info` longer than this (bytes); longer ones go to @noble/hashes. */
const NODE_HKDF_MAX_INFO = 1024;

/**
 * The `node` backend over the given node:crypto module (see the module doc).
 * @throws Error when the module lacks an algorithm (callers then fall back to `noble`).
 */
export function createNodeBackend(nc: NodeCryptoModule, version = 'node:crypto'): CryptoBackend {
  const edPrivate = new KeyCache();
  const edPublic = new PublicKeyCache(1024);
  const xPrivate = new KeyCache();
  const xPublic = new KeyCache();
  let jwkPrivate = true;
  const makePrivate = (crv: 'Ed25519' | 'X25519', secret: Uint8Array): NodeKeyObject => {
    if (jwkPrivate) {
      try {
        return nc.createPrivateKey({ key: { kty: 'OKP', crv, d: b64url(secret), x: PLACEHOLDER_X }, format: 'jwk' });
      } catch {
        jwkPrivate = false; // this Node wants a real `x`: use PKCS#8 DER from now on
      }
    }
    const der = new Uint8Array(PKCS8_PREFIX[crv].length + 32);
    der.set(PKCS8_PREFIX[crv]);
    der.set(secret, PKCS8_PREFIX[crv].length);
    try {
      return nc.createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
    } finally {
      der.fill(0);
    }
  };
  const makeEdPrivate = (seed: Uint8Array) => makePrivate('Ed25519', seed);
  const makeEdPublic = (pub: Uint8Array) =>
    strictEd25519PublicKey(pub) ? nc.createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: b64url(pub) }, format: 'jwk' }) : null;
  const makeXPrivate = (secret: Uint8Array) => makePrivate('X25519', secret);
  const makeXPublic = (pub: Uint8Array) => nc.createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: b64url(pub) }, format: 'jwk' });

  const keyPair = (type: 'ed25519' | 'x25519', privCache: KeyCache): KeyPair => {
    const { privateKey } = nc.generateKeyPairSync(type);
    const jwk = privateKey.export({ format: 'jwk' });
    const pair = { secretKey: fromB64url(jwk.d, 'd'), publicKey: fromB64url(jwk.x, 'x') };
    privCache.set(pair.secretKey, privateKey);
    return pair;
  };

  const chachaSeal = (key: Uint8Array, nonce: Uint8Array, plaintext: Uint8Array, aad?: Uint8Array): Uint8Array => {
    const cipher = nc.createCipheriv('chacha20-poly1305', key, nonce, { authTagLength: 16 });
    if (aad !== undefined && aad.length > 0) cipher.setAAD(aad);
    const body = cipher.update(plaintext);
    return joined([body, cipher.final(), cipher.getAuthTag()], false);
  };
  const chachaOpen = (key: Uint8Array, nonce: Uint8Array, ciphertext: Uint8Array, aad?: Uint8Array): Uint8Array => {
    if (ciphertext.length < 16) throw new Error('ciphertext shorter than the tag');
    const decipher = nc.createDecipheriv('chacha20-poly1305', key, nonce, { authTagLength: 16 });
    decipher.setAuthTag(ciphertext.subarray(ciphertext.length - 16));
    if (aad !== undefined && aad.length > 0) decipher.setAAD(aad);
    const body = decipher.update(ciphertext.subarray(0, ciphertext.length - 16));
    let tail: Uint8Array;
    try {
      tail = decipher.final(); // throws when the tag does not verify
    } catch (cause) {
      body.fill(0);
      throw cause;
    }
    return joined([body, tail], true);
  };
  /** draft-irtf-cfrg-xchacha §2.3: (HChaCha20 subkey, 0x00000000 || nonce[16..24]). */
  const xchachaSubkey = (key: Uint8Array, nonce: Uint8Array): [Uint8Array, Uint8Array] => {
    const k = key.slice(); // fresh, 4-byte-aligned copies for the Uint32Array views
    const n = nonce.slice(0, 16);
    const subkey = new Uint8Array(32);
    hchacha(SIGMA, u32(k), u32(n), u32(subkey));
    k.fill(0);
    const iv = new Uint8Array(12);
    iv.set(nonce.subarray(16, 24), 4);
    return [subkey, iv];
  };

  return {
    name: 'node',
    implementation: version,
    ed25519Keygen: () => keyPair('ed25519', edPrivate),
    ed25519PublicKey(secretKey) {
      return fromB64url(edPrivate.get(secretKey, makeEdPrivate).export({ format: 'jwk' }).x, 'x');
    },
    ed25519Sign(message, secretKey) {
      const sig = nc.sign(null, message, edPrivate.get(secretKey, makeEdPrivate));
      return joined([sig], false);
    },
    ed25519Verify(signature, message, publicKey) {
      const key = edPublic.get(publicKey, makeEdPublic);
      return key !== null && nc.verify(null, message, key, signature);
    },
    x25519Keygen: () => keyPair('x25519', xPrivate),
    x25519PublicKey(secretKey) {
      return fromB64url(xPrivate.get(secretKey, makeXPrivate).export({ format: 'jwk' }).x, 'x');
    },
    x25519DH(secretKey, publicKey) {
      const shared = nc.diffieHellman({ privateKey: xPrivate.get(secretKey, makeXPrivate), publicKey: xPublic.get(publicKey, makeXPublic) });
      const out = joined([shared], true);
      let acc = 0;
      for (const b of out) acc |= b;
      if (acc === 0) throw new Error('X25519 output is all-zero (low-order public key)');
      return out;
    },
    chacha20poly1305Encrypt: chachaSeal,
    chacha20poly1305Decrypt: chachaOpen,
    xchacha20poly1305Encrypt(key, nonce, plaintext, aad) {
      const [subkey, iv] = xchachaSubkey(key, nonce);
      try {
        return chachaSeal(subkey, iv, plaintext, aad);
      } finally {
        subkey.fill(0);
      }
    },
    xchacha20poly1305Decrypt(key, nonce, ciphertext, aad) {
      const [subkey, iv] = xchachaSubkey(key, nonce);
      try {
        return chachaOpen(subkey, iv, ciphertext, aad);
      } finally {
        subkey.fill(0);
      }
    },
    hmacSha256(key, data) {
      const h = nc.createHmac('sha256', key);
      h.update(data);
      return joined([h.digest()], true);
    },
    hkdfSha256(ikm, salt, info, length) {
      if (info.length > NODE_HKDF_MAX_INFO) return nobleBackend.hkdfSha256(ikm, salt, info, length);
      return new Uint8Array(nc.hkdfSync('sha256', ikm, salt, info, length));
    },
    forget(bytes) {
      edPrivate.forget(bytes);
      xPrivate.forget(bytes);
      xPublic.forget(bytes);
    },
  };
}
