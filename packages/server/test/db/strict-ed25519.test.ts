/**
 * The service's one Ed25519 verification (lib/crypto.ts `verifyEd25519`) is strict (RFC 8032
 * §5.1.7 with canonical encodings, no small-order R or A, cofactored and cofactorless equations
 * both): crafted signatures that node:crypto's (OpenSSL's) verify accepts are refused.
 */
import { createPublicKey, verify } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { sha512 } from '@noble/hashes/sha2.js';
import { describe, expect, it } from 'vitest';
import { verifyEd25519 } from '../../src/lib/crypto.js';

const L = ed25519.Point.Fn.ORDER;
const Point = ed25519.Point;
const message = Buffer.from('activate:00000000-0000-4000-8000-000000000000', 'utf8');

const leToBig = (b: Uint8Array) => BigInt('0x' + Buffer.from(b).reverse().toString('hex'));
const bigToLe = (n: bigint) => Buffer.from(n.toString(16).padStart(64, '0'), 'hex').reverse();
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
/** k = SHA-512(R || A || M) mod L (RFC 8032 §5.1.6). */
const challenge = (r: Uint8Array, a: Uint8Array, m: Uint8Array) => leToBig(sha512(Buffer.concat([r, a, m]))) % L;

/** What node:crypto (OpenSSL) says, with the same key and signature. */
function nodeAccepts(publicKeyHex: string, m: Uint8Array, signatureHex: string): boolean {
  try {
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKeyHex, 'hex').toString('base64url') }, format: 'jwk' });
    return verify(null, m, key, Buffer.from(signatureHex, 'hex'));
  } catch {
    return false;
  }
}

/** A key pair with its secret scalar, and a signature with a chosen R encoding and scalar r (R = [r]B + extra). */
function signer() {
  const secret = ed25519.utils.randomSecretKey();
  const { scalar, pointBytes } = ed25519.utils.getExtendedPublicKey(secret);
  const forgeWith = (rBytes: Uint8Array, r: bigint) => {
    const k = challenge(rBytes, pointBytes, message);
    return hex(Buffer.concat([rBytes, bigToLe((r + k * scalar) % L)]));
  };
  return { secret, a: scalar, A: hex(pointBytes), forgeWith };
}

const IDENTITY = Uint8Array.from(Buffer.from('01' + '00'.repeat(31), 'hex'));
/** y = p + 1 ≡ 1: a non-canonical encoding of the identity (RFC 8032 §5.1.3 requires y < p). */
const IDENTITY_NON_CANONICAL = Uint8Array.from(Buffer.from('ee' + 'ff'.repeat(30) + '7f', 'hex'));
/** A point of order 8 (the torsion subgroup). */
const ORDER_8 = Uint8Array.from(Buffer.from('c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a', 'hex'));

describe('strict Ed25519 verification', () => {
  it('accepts an honest signature (as node:crypto does)', () => {
    const s = signer();
    const sig = hex(ed25519.sign(message, s.secret));
    expect(nodeAccepts(s.A, message, sig)).toBe(true);
    expect(verifyEd25519(s.A, message, sig)).toBe(true);
    expect(verifyEd25519(s.A, Buffer.from('another message'), sig)).toBe(false);
  });

  it('refuses S + L (a non-canonical S)', () => {
    const s = signer();
    const sig = Buffer.from(ed25519.sign(message, s.secret));
    const big = bigToLe(leToBig(sig.subarray(32)) + L);
    const malleated = hex(Buffer.concat([sig.subarray(0, 32), big]));
    expect(verifyEd25519(s.A, message, malleated)).toBe(false);
  });

  it('refuses a small-order R (R = identity, S = k·a), which node:crypto accepts', () => {
    const s = signer();
    const sig = s.forgeWith(IDENTITY, 0n);
    expect(nodeAccepts(s.A, message, sig)).toBe(true);
    expect(verifyEd25519(s.A, message, sig)).toBe(false);
  });

  it('refuses R of order 8 added to an honest R (mixed-order R), which the cofactored equation alone accepts', () => {
    const s = signer();
    const r = leToBig(Buffer.from(sha512(Buffer.from('nonce')))) % L;
    const R = Point.BASE.multiply(r).add(Point.fromBytes(ORDER_8)).toBytes();
    const sig = s.forgeWith(R, r);
    expect(ed25519.verify(Buffer.from(sig, 'hex'), message, Buffer.from(s.A, 'hex'), { zip215: false })).toBe(true);
    expect(verifyEd25519(s.A, message, sig)).toBe(false);
  });

  it('refuses a non-canonical R encoding', () => {
    const s = signer();
    const sig = s.forgeWith(IDENTITY_NON_CANONICAL, 0n);
    expect(verifyEd25519(s.A, message, sig)).toBe(false);
  });

  it('refuses the identity as public key with the universal signature (R = identity, S = 0), which node:crypto accepts', () => {
    const A = hex(IDENTITY);
    const universal = hex(Buffer.concat([IDENTITY, Buffer.alloc(32)]));
    expect(nodeAccepts(A, message, universal)).toBe(true);
    expect(verifyEd25519(A, message, universal)).toBe(false);
  });

  it('refuses a small-order public key of order 8 with a signature that verifies under it', () => {
    const A = hex(ORDER_8);
    // R = identity, S = 0: [S]B = 0 and R + [k]A = [k]A, zero when 8 | k; search a message for it.
    let m = message;
    for (let i = 0; challenge(IDENTITY, ORDER_8, m) % 8n !== 0n; i++) m = Buffer.from(`m${i}`);
    const sig = hex(Buffer.concat([IDENTITY, Buffer.alloc(32)]));
    expect(nodeAccepts(A, m, sig)).toBe(true);
    expect(verifyEd25519(A, m, sig)).toBe(false);
  });

  it('refuses malformed input without throwing', () => {
    expect(verifyEd25519('zz', message, '00')).toBe(false);
    expect(verifyEd25519('ff'.repeat(32), message, '00'.repeat(64))).toBe(false);
  });
});
