/**
 * ECVRF-EDWARDS25519-SHA512-TAI against the test vectors of RFC 9381 Appendix B.3 (key
 * derivation, proof bytes, beta), and the rejections of §5.3, §5.4.4 and §5.4.5: altered proofs,
 * another alpha or key, small-order and non-canonical public keys, s >= q, wrong lengths.
 */
import { describe, expect, it } from 'vitest';
import {
  VRF_OUTPUT_BYTES,
  VRF_PROOF_BYTES,
  VRF_SUITE,
  vrfProofToHash,
  vrfProve,
  vrfPublicKey,
  vrfVerify,
} from '../src/key-directory/vrf.js';

const hex = (s: string): Uint8Array => Uint8Array.from(s.match(/../g) ?? [], (b) => parseInt(b, 16));
const toHex = (b: Uint8Array): string => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');

/** RFC 9381 Appendix B.3, Examples 16-18 (SK, PK, alpha, pi, beta). */
const VECTORS = [
  {
    sk: '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60',
    pk: 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a',
    alpha: '',
    pi: '8657106690b5526245a92b003bb079ccd1a92130477671f6fc01ad16f26f723f26f8a57ccaed74ee1b190bed1f479d9727d2d0f9b005a6e456a35d4fb0daab1268a1b0db10836d9826a528ca76567805',
    beta: '90cf1df3b703cce59e2a35b925d411164068269d7b2d29f3301c03dd757876ff66b71dda49d2de59d03450451af026798e8f81cd2e333de5cdf4f3e140fdd8ae',
  },
  {
    sk: '4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb',
    pk: '3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c',
    alpha: '72',
    pi: 'f3141cd382dc42909d19ec5110469e4feae18300e94f304590abdced48aed5933bf0864a62558b3ed7f2fea45c92a465301b3bbf5e3e54ddf2d935be3b67926da3ef39226bbc355bdc9850112c8f4b02',
    beta: 'eb4440665d3891d668e7e0fcaf587f1b4bd7fbfe99d0eb2211ccec90496310eb5e33821bc613efb94db5e5b54c70a848a0bef4553a41befc57663b56373a5031',
  },
  {
    sk: 'c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7',
    pk: 'fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025',
    alpha: 'af82',
    pi: '9bc0f79119cc5604bf02d23b4caede71393cedfbb191434dd016d30177ccbf8096bb474e53895c362d8628ee9f9ea3c0e52c7a5c691b6c18c9979866568add7a2d41b00b05081ed0f58ee5e31b3a970e',
    beta: '645427e5d00c62a23fb703732fa5d892940935942101e456ecca7bb217c61c452118fec1219202a0edcf038bb6373241578be7217ba85a2687f7a0310b2df19f',
  },
];
const V1 = VECTORS[0]!;
const pk1 = hex(V1.pk);
const pi1 = hex(V1.pi);
const alpha1 = hex(V1.alpha);

/** q = 2^252 + 27742317777372353535851937790883648493, little-endian. */
const Q_LE = hex('edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010');
const IDENTITY = hex('01' + '00'.repeat(31));
/** (0, -1), the point of order 2: y = p - 1. */
const ORDER_TWO = hex('ec' + 'ff'.repeat(30) + '7f');
/** y = p (2^255 - 19), the non-canonical encoding of y = 0. */
const NON_CANONICAL = hex('ed' + 'ff'.repeat(30) + '7f');

const flip = (bytes: Uint8Array, index: number, bit = 0): Uint8Array => {
  const out = bytes.slice();
  out[index]! ^= 1 << bit;
  return out;
};

describe('ECVRF-EDWARDS25519-SHA512-TAI (RFC 9381)', () => {
  it('names the suite and its sizes', () => {
    expect(VRF_SUITE).toBe('ECVRF-EDWARDS25519-SHA512-TAI');
    expect([VRF_PROOF_BYTES, VRF_OUTPUT_BYTES]).toEqual([80, 64]);
  });

  it.each(VECTORS.map((v, i) => [i + 16, v] as const))('matches RFC 9381 Appendix B.3 Example %i', (_n, v) => {
    expect(toHex(vrfPublicKey(hex(v.sk)))).toBe(v.pk);
    const pi = vrfProve(hex(v.sk), hex(v.alpha));
    expect(toHex(pi)).toBe(v.pi);
    expect(toHex(vrfProofToHash(hex(v.pi)))).toBe(v.beta);
    const beta = vrfVerify(hex(v.pk), hex(v.pi), hex(v.alpha));
    expect(beta && toHex(beta)).toBe(v.beta);
  });

  it('round-trips a proof of another key and a long alpha', () => {
    const sk = new Uint8Array(32).fill(0x42);
    const alpha = new TextEncoder().encode('alice@example.org'.repeat(20));
    const pi = vrfProve(sk, alpha);
    expect(pi).toHaveLength(VRF_PROOF_BYTES);
    expect(vrfVerify(vrfPublicKey(sk), pi, alpha)).toEqual(vrfProofToHash(pi));
    expect(vrfProve(sk, alpha)).toEqual(pi);
  });

  it.each([
    ['Gamma', 0],
    ['Gamma (last byte)', 31],
    ['c', 32],
    ['c (last byte)', 47],
    ['s', 48],
    ['s (last byte)', 79],
  ])('rejects a proof with a flipped bit in %s (byte %i)', (_part, index) => {
    expect(vrfVerify(pk1, flip(pi1, index), alpha1)).toBeNull();
  });

  it('rejects another alpha and another key', () => {
    expect(vrfVerify(pk1, pi1, hex('00'))).toBeNull();
    expect(vrfVerify(hex(VECTORS[1]!.pk), pi1, alpha1)).toBeNull();
    expect(vrfVerify(pk1, hex(VECTORS[1]!.pi), hex(VECTORS[1]!.alpha))).toBeNull();
  });

  it('rejects small-order, undecodable and non-canonical public keys (validate_key, §5.4.5)', () => {
    for (const pk of [IDENTITY, ORDER_TWO, NON_CANONICAL, new Uint8Array(32).fill(0xff)]) {
      expect(vrfVerify(pk, pi1, alpha1)).toBeNull();
    }
  });

  it('rejects s >= q and an invalid Gamma (decode_proof, §5.4.4)', () => {
    const bigS = pi1.slice();
    bigS.set(Q_LE, 48);
    expect(vrfVerify(pk1, bigS, alpha1)).toBeNull();
    expect(() => vrfProofToHash(bigS)).toThrow(/invalid ECVRF proof/);
    const badGamma = pi1.slice();
    badGamma.set(NON_CANONICAL, 0);
    expect(vrfVerify(pk1, badGamma, alpha1)).toBeNull();
    expect(() => vrfProofToHash(badGamma)).toThrow(/invalid ECVRF proof/);
  });

  it('rejects wrong lengths', () => {
    expect(vrfVerify(pk1, pi1.subarray(0, 79), alpha1)).toBeNull();
    expect(vrfVerify(pk1, new Uint8Array([...pi1, 0]), alpha1)).toBeNull();
    expect(vrfVerify(pk1.subarray(0, 31), pi1, alpha1)).toBeNull();
    expect(vrfVerify(new Uint8Array([...pk1, 0]), pi1, alpha1)).toBeNull();
    expect(() => vrfProofToHash(pi1.subarray(0, 79))).toThrow(/invalid ECVRF proof/);
    expect(() => vrfProve(new Uint8Array(31), alpha1)).toThrow();
    expect(() => vrfPublicKey(new Uint8Array(33))).toThrow();
  });
});
