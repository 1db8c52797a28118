/**
 * The audit log's Merkle tree as a verifier sees it (design §8.33): RFC 9162 §2.1 hashing over
 * SHA-256 (leaf = SHA-256(0x00 || input), node = SHA-256(0x01 || left || right), the empty tree's
 * root = SHA-256 of nothing) and the verification of inclusion proofs (§2.1.3.2) and consistency
 * proofs (§2.1.4.2). Pure and browser-safe; sizes and indexes are safe integers (arithmetic, not
 * 32-bit bit operations).
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { merkleTreeHashing } from '@parley/protocol';
import { CodedError } from '../errors.js';
import { concatBytes, equalBytes } from '../crypto/primitives.js';

/** Bytes of every tree hash (SHA-256). */
export const TREE_HASH_BYTES = 32;

/** Why a proof, a checkpoint or an event did not verify. */
export type AuditLogErrorCode =
  /** Input that does not parse: a note, a vkey, base64, a proof answer's shape. */
  | 'malformed'
  /** The checkpoint carries no valid signature by the given key (or names another log). */
  | 'bad_signature'
  /** An inclusion proof does not lead to the checkpoint's root. */
  | 'inclusion_failed'
  /** A consistency proof does not connect the two checkpoints' roots. */
  | 'consistency_failed'
  /** The event's contents do not hash to the leaf the proof is for. */
  | 'event_mismatch';

/** The one error type of the audit-log verifier; `code` says which check failed. */
export class AuditLogError extends CodedError<AuditLogErrorCode> {
  override readonly name = 'AuditLogError';
}

const rfc9162 = merkleTreeHashing((...parts: Uint8Array[]): Uint8Array => sha256(concatBytes(...parts)));

/** RFC 9162 leaf hash: SHA-256(0x00 || input) (the contract's, as the server computes it). */
export const leafHash: (input: Uint8Array) => Uint8Array = rfc9162.leafHash;

/** RFC 9162 interior node hash: SHA-256(0x01 || left || right). */
export const nodeHash: (left: Uint8Array, right: Uint8Array) => Uint8Array = rfc9162.nodeHash;

/** The root of the empty tree: SHA-256 of the empty string. */
export const emptyRoot: () => Uint8Array = rfc9162.emptyRoot;

const isSize = (n: number) => Number.isSafeInteger(n) && n >= 0;
const odd = (n: number) => n % 2 === 1;
const half = (n: number) => Math.floor(n / 2);

function checkHashes(hashes: readonly Uint8Array[], code: AuditLogErrorCode, what: string): void {
  for (const h of hashes) if (h.length !== TREE_HASH_BYTES) throw new AuditLogError(code, `${what}: every hash must be ${TREE_HASH_BYTES} bytes`);
}

/**
 * The root that the audit path `path` leads to from leaf `index` (0-based) with hash `leaf` in a
 * tree of `size` leaves (RFC 9162 §2.1.3.2, steps 1-4).
 * @throws AuditLogError `inclusion_failed` when the index is outside the tree or the path has the wrong length.
 */
export function rootFromInclusionProof(index: number, size: number, leaf: Uint8Array, path: readonly Uint8Array[]): Uint8Array {
  if (!isSize(index) || !isSize(size) || index >= size) throw new AuditLogError('inclusion_failed', `leaf index ${index} is not inside a tree of size ${size}`);
  checkHashes([leaf, ...path], 'inclusion_failed', 'inclusion proof');
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of path) {
    if (sn === 0) throw new AuditLogError('inclusion_failed', 'the inclusion proof is longer than the tree is deep');
    if (odd(fn) || fn === sn) {
      r = nodeHash(p, r);
      if (!odd(fn)) {
        while (!odd(fn) && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = half(fn);
    sn = half(sn);
  }
  if (sn !== 0) throw new AuditLogError('inclusion_failed', 'the inclusion proof is shorter than the tree is deep');
  return r;
}

/**
 * Check that `path` proves leaf `index` with hash `leaf` in the tree of `size` leaves whose root is `root`.
 * @throws AuditLogError `inclusion_failed` when it does not.
 */
export function verifyInclusion(index: number, size: number, leaf: Uint8Array, path: readonly Uint8Array[], root: Uint8Array): void {
  if (!equalBytes(rootFromInclusionProof(index, size, leaf, path), root)) throw new AuditLogError('inclusion_failed', 'the inclusion proof does not lead to the root');
}

/**
 * Check that the tree of `second` leaves with root `secondRoot` extends the tree of `first`
 * leaves with root `firstRoot` (RFC 9162 §2.1.4.2). Equal sizes need equal roots and an empty
 * proof; the empty tree is a prefix of every tree (empty proof).
 * @throws AuditLogError `consistency_failed` when the proof does not connect the two roots.
 */
export function verifyConsistency(first: number, second: number, firstRoot: Uint8Array, secondRoot: Uint8Array, proof: readonly Uint8Array[]): void {
  const fail = (why: string): never => {
    throw new AuditLogError('consistency_failed', why);
  };
  if (!isSize(first) || !isSize(second) || first > second) fail(`tree size ${second} cannot extend tree size ${first}`);
  checkHashes([firstRoot, secondRoot, ...proof], 'consistency_failed', 'consistency proof');
  if (first === second) {
    if (proof.length !== 0) fail('a proof between equal sizes must be empty');
    if (!equalBytes(firstRoot, secondRoot)) fail('equal tree sizes with different roots');
    return;
  }
  if (first === 0) {
    if (proof.length !== 0) fail('a proof from the empty tree must be empty');
    return;
  }
  // Step 1 (an empty proof fails) and step 2 (a power-of-two first size starts from its own root).
  if (proof.length === 0) fail('the consistency proof is empty');
  const path = isPowerOfTwo(first) ? [firstRoot, ...proof] : proof;
  let fn = first - 1;
  let sn = second - 1;
  while (odd(fn)) {
    fn = half(fn);
    sn = half(sn);
  }
  let fr = path[0]!;
  let sr = path[0]!;
  for (const c of path.slice(1)) {
    if (sn === 0) fail('the consistency proof is longer than the tree is deep');
    if (odd(fn) || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      if (!odd(fn)) {
        while (!odd(fn) && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = half(fn);
    sn = half(sn);
  }
  if (sn !== 0) fail('the consistency proof is shorter than the tree is deep');
  if (!equalBytes(fr, firstRoot)) fail('the consistency proof does not lead to the first root');
  if (!equalBytes(sr, secondRoot)) fail('the consistency proof does not lead to the second root');
}

function isPowerOfTwo(n: number): boolean {
  while (n > 1 && !odd(n)) n = half(n);
  return n === 1;
}
