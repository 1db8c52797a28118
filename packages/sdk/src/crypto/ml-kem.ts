/**
 * ML-KEM-768 (FIPS 203, "Module-Lattice-Based Key-Encapsulation Mechanism Standard", August 2024)
 * for PQXDH (pqxdh.ts), through `@noble/post-quantum` (audited, pure JavaScript). This file
 * implements nothing itself: it fixes the parameter set, checks lengths and turns the library's
 * errors into {@link CryptoError}s.
 *
 * Sizes (FIPS 203 Table 3): encapsulation key 1184 bytes, decapsulation key 2400 bytes,
 * ciphertext 1088 bytes, shared secret 32 bytes. A key pair is fully determined by its 64-byte
 * seed d || z (FIPS 203 §6.1, ML-KEM.KeyGen_internal), which is what a device stores.
 *
 * Input checks of FIPS 203 §7.2 (encapsulation key modulus check) and §7.3 (decapsulation key
 * hash check) are the library's; decapsulation of a malformed ciphertext of the right length
 * does not fail but yields an unrelated secret (implicit rejection, FIPS 203 §6.3).
 */
import { ml_kem768 } from '@noble/post-quantum/ml-kem.js';
import { CryptoError, randomBytes } from './primitives.js';

/** ML-KEM-768 encapsulation (public) key length, bytes. */
export const MLKEM768_PUBLIC_KEY_BYTES = 1184;
/** ML-KEM-768 decapsulation (secret) key length, bytes. */
export const MLKEM768_SECRET_KEY_BYTES = 2400;
/** ML-KEM-768 ciphertext length, bytes. */
export const MLKEM768_CIPHERTEXT_BYTES = 1088;
/** ML-KEM shared secret length, bytes. */
export const MLKEM_SHARED_SECRET_BYTES = 32;
/** Key-generation seed d || z, bytes (FIPS 203 Algorithm 16). */
export const MLKEM_SEED_BYTES = 64;
/** Encapsulation randomness m, bytes (FIPS 203 Algorithm 17). */
export const MLKEM_MESSAGE_BYTES = 32;

/** An ML-KEM-768 key pair: 1184-byte encapsulation key, 2400-byte decapsulation key. */
export interface MlKemKeyPair {
  publicKey: Uint8Array;
  secretKey: Uint8Array;
}

/** What encapsulation produces: the 1088-byte ciphertext to send and the 32-byte shared secret. */
export interface MlKemEncapsulation {
  ciphertext: Uint8Array;
  sharedSecret: Uint8Array;
}

function bytes(value: Uint8Array, length: number, what: string): Uint8Array {
  if (!(value instanceof Uint8Array) || value.length !== length) {
    throw new CryptoError('invalid_input', `${what} must be ${length} bytes`);
  }
  return value;
}

/**
 * ML-KEM.KeyGen (FIPS 203 Algorithm 19; Algorithm 16 with the given seed).
 * @param seed d || z, 64 bytes; omitted, fresh bytes from the platform CSPRNG. Pass a seed only
 *   to re-derive a stored key pair or in known-answer tests.
 * @throws CryptoError `invalid_input` for a seed of another length.
 */
export function mlKem768Keygen(seed?: Uint8Array): MlKemKeyPair {
  const s = seed === undefined ? randomBytes(MLKEM_SEED_BYTES) : bytes(seed, MLKEM_SEED_BYTES, 'ML-KEM seed');
  const { publicKey, secretKey } = ml_kem768.keygen(s);
  return { publicKey, secretKey };
}

/**
 * ML-KEM.Encaps (FIPS 203 Algorithm 20; Algorithm 17 with the given randomness) to `publicKey`.
 * @param randomness m, 32 bytes, for known-answer tests only; omitted, from the platform CSPRNG.
 * @throws CryptoError `invalid_input` for wrong lengths, `invalid_key` when the key fails the
 *   FIPS 203 §7.2 modulus check.
 */
export function mlKem768Encapsulate(publicKey: Uint8Array, randomness?: Uint8Array): MlKemEncapsulation {
  bytes(publicKey, MLKEM768_PUBLIC_KEY_BYTES, 'ML-KEM-768 public key');
  const m = randomness === undefined ? randomBytes(MLKEM_MESSAGE_BYTES) : bytes(randomness, MLKEM_MESSAGE_BYTES, 'ML-KEM randomness');
  try {
    const { cipherText, sharedSecret } = ml_kem768.encapsulate(publicKey, m);
    return { ciphertext: cipherText, sharedSecret };
  } catch (cause) {
    throw new CryptoError('invalid_key', 'ML-KEM-768 public key is not a valid encapsulation key', { cause });
  }
}

/**
 * ML-KEM.Decaps (FIPS 203 Algorithm 21). A tampered ciphertext of the right length gives an
 * unrelated secret rather than an error (implicit rejection): the caller's AEAD detects it.
 * @throws CryptoError `invalid_input` for wrong lengths, `invalid_key` when the decapsulation
 *   key fails the FIPS 203 §7.3 hash check.
 */
export function mlKem768Decapsulate(ciphertext: Uint8Array, secretKey: Uint8Array): Uint8Array {
  bytes(ciphertext, MLKEM768_CIPHERTEXT_BYTES, 'ML-KEM-768 ciphertext');
  bytes(secretKey, MLKEM768_SECRET_KEY_BYTES, 'ML-KEM-768 secret key');
  try {
    return ml_kem768.decapsulate(ciphertext, secretKey);
  } catch (cause) {
    throw new CryptoError('invalid_key', 'ML-KEM-768 secret key is not a valid decapsulation key', { cause });
  }
}
