/**
 * ECVRF-EDWARDS25519-SHA512-TAI, the elliptic-curve verifiable random function of RFC 9381
 * (suite_string 0x03, §5.5): proving (§5.1), proof to hash (§5.2), verifying (§5.3) with key
 * validation (§5.4.5), over edwards25519 with SHA-512, try-and-increment encode_to_curve
 * (§5.4.1.1), RFC 8032 nonce generation (§5.4.2.2) and a 16-byte challenge (§5.4.3).
 *
 * Only the protocol steps live here: point decoding (RFC 8032 §5.1.3, strict: non-canonical y and
 * a negative zero x are rejected), point arithmetic and key expansion are `@noble/curves`', the
 * hash is `@noble/hashes`' SHA-512. Integers are little-endian (int_to_string / string_to_int).
 * Browser-safe: Uint8Array only.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { bytesToNumberLE, concatBytes, numberToBytesLE } from '@noble/curves/utils.js';
import { sha512 } from '@noble/hashes/sha2.js';

/** Length in bytes of a proof pi = Gamma (32) || c (16) || s (32), RFC 9381 §5.5 (ptLen + cLen + qLen). */
export const VRF_PROOF_BYTES = 80;
/** Length in bytes of a VRF output beta (the SHA-512 output of proof_to_hash, RFC 9381 §5.2). */
export const VRF_OUTPUT_BYTES = 64;
/** The ciphersuite name of RFC 9381 §5.5 that this module implements. */
export const VRF_SUITE = 'ECVRF-EDWARDS25519-SHA512-TAI';

const Point = ed25519.Point;
type EdwardsPoint = InstanceType<typeof Point>;
const Fn = Point.Fn;
/** q, the prime order of the edwards25519 base point. */
const Q = Fn.ORDER;
const PT_LEN = 32;
const C_LEN = 16;
const Q_LEN = 32;
const SUITE = Uint8Array.of(0x03);
const ENCODE_FRONT = Uint8Array.of(0x01);
const CHALLENGE_FRONT = Uint8Array.of(0x02);
const PROOF_TO_HASH_FRONT = Uint8Array.of(0x03);
const BACK = Uint8Array.of(0x00);

/** string_to_point (RFC 9381 §5.5, RFC 8032 §5.1.3 decode), or null for INVALID. */
function decodePoint(bytes: Uint8Array): EdwardsPoint | null {
  try {
    return Point.fromBytes(bytes, false);
  } catch {
    return null;
  }
}

/**
 * ECVRF_encode_to_curve_try_and_increment (RFC 9381 §5.4.1.1) with encode_to_curve_salt =
 * PK_string: the first ctr in 0..255 for which the first 32 bytes of
 * SHA-512(suite || 0x01 || PK_string || alpha || ctr || 0x00) decode to a point, times the
 * cofactor 8. Throws if no ctr works (probability about 2^-256).
 */
function encodeToCurve(pkString: Uint8Array, alpha: Uint8Array): EdwardsPoint {
  for (let ctr = 0; ctr < 256; ctr++) {
    const hash = sha512(concatBytes(SUITE, ENCODE_FRONT, pkString, alpha, Uint8Array.of(ctr), BACK));
    const h = decodePoint(hash.subarray(0, PT_LEN));
    if (h) return h.clearCofactor();
  }
  throw new Error('ECVRF encode_to_curve: no valid point for ctr 0..255');
}

/**
 * ECVRF_nonce_generation_RFC8032 (RFC 9381 §5.4.2.2): k = SHA-512(prefix || h_string) mod q,
 * where prefix is the second half of SHA-512(SK).
 */
function nonce(prefix: Uint8Array, hString: Uint8Array): bigint {
  return Fn.create(bytesToNumberLE(sha512(concatBytes(prefix, hString))));
}

/**
 * ECVRF_challenge_generation (RFC 9381 §5.4.3): the first cLen = 16 bytes of
 * SHA-512(suite || 0x02 || Y || H || Gamma || U || V || 0x00), as an integer.
 */
function challenge(points: Uint8Array[]): bigint {
  const hash = sha512(concatBytes(SUITE, CHALLENGE_FRONT, ...points, BACK));
  return bytesToNumberLE(hash.subarray(0, C_LEN));
}

/** ECVRF_decode_proof (RFC 9381 §5.4.4): Gamma, c and s, or null for INVALID (bad length, Gamma not a point, s >= q). */
function decodeProof(pi: Uint8Array): { gamma: EdwardsPoint; c: bigint; s: bigint } | null {
  if (!(pi instanceof Uint8Array) || pi.length !== VRF_PROOF_BYTES) return null;
  const gamma = decodePoint(pi.subarray(0, PT_LEN));
  if (!gamma) return null;
  const c = bytesToNumberLE(pi.subarray(PT_LEN, PT_LEN + C_LEN));
  const s = bytesToNumberLE(pi.subarray(PT_LEN + C_LEN));
  if (s >= Q) return null;
  return { gamma, c, s };
}

/** beta = SHA-512(suite || 0x03 || point_to_string(cofactor * Gamma) || 0x00), RFC 9381 §5.2 step 4-6. */
function gammaToHash(gamma: EdwardsPoint): Uint8Array {
  return sha512(concatBytes(SUITE, PROOF_TO_HASH_FRONT, gamma.clearCofactor().toBytes(), BACK));
}

/**
 * The VRF public key PK_string (32 bytes) of a secret key: the RFC 8032 §5.1.5 public key of the
 * 32-byte Ed25519 seed (RFC 9381 §5.5: x is the clamped first half of SHA-512(SK), Y = x*B).
 * Throws if `secretKey` is not 32 bytes.
 */
export function vrfPublicKey(secretKey: Uint8Array): Uint8Array {
  return ed25519.utils.getExtendedPublicKey(secretKey).pointBytes;
}

/**
 * ECVRF_prove (RFC 9381 §5.1): the 80-byte proof pi = Gamma || c || s that `alpha` (any length)
 * maps to the output vrfProofToHash(pi) under `secretKey` (a 32-byte Ed25519 seed). Deterministic.
 * Secret scalars are multiplied with noble's constant-time `multiply`. Throws if `secretKey` is not 32 bytes.
 */
export function vrfProve(secretKey: Uint8Array, alpha: Uint8Array): Uint8Array {
  const { prefix, scalar: x, pointBytes: pk } = ed25519.utils.getExtendedPublicKey(secretKey);
  const H = encodeToCurve(pk, alpha);
  const hString = H.toBytes();
  const gammaString = H.multiply(x).toBytes();
  const k = nonce(prefix, hString);
  const c = challenge([pk, hString, gammaString, Point.BASE.multiply(k).toBytes(), H.multiply(k).toBytes()]);
  const s = Fn.create(k + c * x);
  return concatBytes(gammaString, numberToBytesLE(c, C_LEN), numberToBytesLE(s, Q_LEN));
}

/**
 * ECVRF_proof_to_hash (RFC 9381 §5.2): the 64-byte output beta of a proof. It does not verify
 * the proof: call it only on a proof vrfVerify accepted (or use vrfVerify's result).
 * Throws if `pi` does not decode (not 80 bytes, Gamma not a valid point encoding, or s >= q).
 */
export function vrfProofToHash(pi: Uint8Array): Uint8Array {
  const decoded = decodeProof(pi);
  if (!decoded) throw new Error('invalid ECVRF proof: expected 80 bytes, a valid Gamma and s < q');
  return gammaToHash(decoded.gamma);
}

/**
 * ECVRF_verify (RFC 9381 §5.3) with validate_key = TRUE (§5.4.5): the 64-byte beta when `pi` is a
 * valid proof for `alpha` under `publicKey`, else null. Null also when the public key is not
 * 32 bytes, does not decode (RFC 8032 §5.1.3, non-canonical rejected) or is of small order, and
 * when the proof does not decode (§5.4.4: not 80 bytes, Gamma invalid, s >= q).
 * Uses variable-time arithmetic: every input is public.
 */
export function vrfVerify(publicKey: Uint8Array, pi: Uint8Array, alpha: Uint8Array): Uint8Array | null {
  if (!(publicKey instanceof Uint8Array) || publicKey.length !== PT_LEN || !(alpha instanceof Uint8Array)) return null;
  const Y = decodePoint(publicKey);
  if (!Y || Y.isSmallOrder()) return null;
  const decoded = decodeProof(pi);
  if (!decoded) return null;
  const { gamma, c, s } = decoded;
  const H = encodeToCurve(publicKey, alpha);
  const U = Point.BASE.multiplyUnsafe(s).subtract(Y.multiplyUnsafe(c));
  const V = H.multiplyUnsafe(s).subtract(gamma.multiplyUnsafe(c));
  const expected = challenge([publicKey, H.toBytes(), pi.subarray(0, PT_LEN), U.toBytes(), V.toBytes()]);
  return expected === c ? gammaToHash(gamma) : null;
}
