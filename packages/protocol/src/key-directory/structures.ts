/**
 * The key directory's verifiable structures (design §8.39), computed alike by the service that
 * builds the directory and the clients that verify it. The construction follows the combined tree
 * of IETF draft-ietf-keytrans-protocol and WhatsApp's AKD, over SHA-256:
 *
 * - A **label** (`device/<id>`, `device/<id>/signed-prekey`, … see `labels.ts`) is hidden behind
 *   its **index**, the first 32 bytes of the ECVRF output of the label (RFC 9381, `vrf.ts`; a device's
 *   prekeys derive theirs from the device's output, `labels.ts`), so a proof about one label says
 *   nothing about the others.
 * - A **value** (the key material served for the label) is bound by a **commitment**:
 *   SHA-256("parley/v1/key-directory/commitment" || 0x00 || opening (32 random bytes) ||
 *   uint32(len(label)) || label || value), opened only to whoever looks the label up.
 * - The **prefix tree** maps each index to its latest version: a binary trie over the index bits
 *   (most significant first) where a subtree holding one entry is that entry's leaf
 *   SHA-256(0x00 || index || uint64(version) || commitment), an empty subtree is 32 zero bytes and
 *   a node is SHA-256(0x01 || left || right). The tree is canonical: a leaf sits at the shallowest
 *   depth where no other index shares its prefix.
 * - Each update appends one **log entry** (index || uint64(version) || commitment || prefix root
 *   after the update, 104 bytes) to an RFC 9162 log whose checkpoints are C2SP signed notes. The
 *   newest entry's prefix root is the directory's state at a checkpoint.
 *
 * Integers are big-endian. The caller brings SHA-256 (Node's on the server, a browser-safe one in
 * the SDK), as for the audit log's tree (`audit-log.ts`).
 */
import { utf8ToBytes } from '@noble/hashes/utils.js';
import type { Sha256Parts } from '../audit-log.js';

/** Bytes of an index, a commitment, an opening and every tree hash. */
export const KEY_DIRECTORY_HASH_BYTES = 32;
/** Bytes of one log entry: index, version, commitment, prefix root. */
export const KEY_DIRECTORY_ENTRY_BYTES = 32 + 8 + 32 + 32;
/** Deepest possible prefix-tree leaf: the index's bit length. */
export const PREFIX_TREE_MAX_DEPTH = 256;

/** The domain separator of commitments. */
const COMMITMENT_DOMAIN = 'parley/v1/key-directory/commitment';
/** The domain separator of the indexes derived from a device's VRF output. */
const INDEX_DOMAIN = 'parley/v1/key-directory/index';

/** One log entry of the directory (see the file comment). */
export interface KeyDirectoryEntry {
  /** 32 bytes: the VRF-derived index of the label. */
  index: Uint8Array;
  /** 1 for a label's first value, then +1 for each update. */
  version: number;
  /** 32 bytes: the commitment to the label's value at this version. */
  commitment: Uint8Array;
  /** 32 bytes: the prefix tree's root once this entry is applied. */
  prefixRoot: Uint8Array;
}

/** The hashes of the directory over one SHA-256. */
export interface KeyDirectoryHashing<H extends Uint8Array> {
  /** The commitment to `value` for `label` under `opening` (32 bytes). */
  commitment(opening: Uint8Array, label: string, value: Uint8Array): H;
  /** A prefix-tree leaf: the latest version of `index` and its commitment. */
  prefixLeaf(index: Uint8Array, version: number, commitment: Uint8Array): H;
  /** A prefix-tree node over its two children. */
  prefixNode(left: Uint8Array, right: Uint8Array): H;
  /** A label's index from its VRF output (64 bytes) and, for a device's other labels, the rest of the label (labels.ts `vrfInputOf`). */
  labelIndex(vrfOutput: Uint8Array, subKey?: string): Uint8Array;
}


/** `n` as `bytes` big-endian bytes (n a safe non-negative integer). */
function uint(n: number, bytes: number): Uint8Array {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`not a non-negative safe integer: ${n}`);
  const out = new Uint8Array(bytes);
  let v = n;
  for (let i = bytes - 1; i >= 0 && v > 0; i--) {
    out[i] = v % 256;
    v = Math.floor(v / 256);
  }
  return out;
}

/** The key directory's hashes over the caller's SHA-256 (see the file comment for each input). */
export function keyDirectoryHashing<H extends Uint8Array>(sha256: Sha256Parts<H>): KeyDirectoryHashing<H> {
  const domain = utf8ToBytes(COMMITMENT_DOMAIN);
  const indexDomain = utf8ToBytes(INDEX_DOMAIN);
  return {
    labelIndex: (vrfOutput, subKey) => (subKey === undefined ? vrfOutput.slice(0, KEY_DIRECTORY_HASH_BYTES) : sha256(indexDomain, Uint8Array.of(0), vrfOutput, utf8ToBytes(subKey))),
    commitment(opening, label, value) {
      const l = utf8ToBytes(label);
      return sha256(domain, Uint8Array.of(0), opening, uint(l.length, 4), l, value);
    },
    prefixLeaf: (index, version, commitment) => sha256(Uint8Array.of(0), index, uint(version, 8), commitment),
    prefixNode: (left, right) => sha256(Uint8Array.of(1), left, right),
  };
}

/** The hash of an empty prefix subtree: 32 zero bytes. */
export const PREFIX_EMPTY: Uint8Array = new Uint8Array(KEY_DIRECTORY_HASH_BYTES);

/** Bit `depth` of `index` (0 = the most significant bit of byte 0). */
export const indexBit = (index: Uint8Array, depth: number): 0 | 1 => ((index[depth >> 3]! >> (7 - (depth & 7))) & 1) as 0 | 1;

/**
 * The prefix-tree root that a search path leads to from a leaf: `siblings` are the hashes beside
 * the path, deepest first, so the leaf sits at depth `siblings.length`.
 * @throws RangeError when the path is deeper than {@link PREFIX_TREE_MAX_DEPTH}.
 */
export function prefixRootFromPath<H extends Uint8Array>(hashing: KeyDirectoryHashing<H>, index: Uint8Array, leaf: Uint8Array, siblings: readonly Uint8Array[]): Uint8Array {
  if (siblings.length > PREFIX_TREE_MAX_DEPTH) throw new RangeError('a prefix-tree path is at most 256 deep');
  let h: Uint8Array = leaf;
  siblings.forEach((sibling, k) => {
    const depth = siblings.length - 1 - k;
    h = indexBit(index, depth) === 0 ? hashing.prefixNode(h, sibling) : hashing.prefixNode(sibling, h);
  });
  return h;
}

/** The 104 bytes of a log entry (the RFC 9162 leaf input). */
export function encodeKeyDirectoryEntry(e: KeyDirectoryEntry): Uint8Array {
  const out = new Uint8Array(KEY_DIRECTORY_ENTRY_BYTES);
  out.set(e.index, 0);
  out.set(uint(e.version, 8), 32);
  out.set(e.commitment, 40);
  out.set(e.prefixRoot, 72);
  return out;
}

/**
 * Read a log entry's bytes.
 * @throws RangeError unless they are {@link KEY_DIRECTORY_ENTRY_BYTES} long with a safe version.
 */
export function decodeKeyDirectoryEntry(bytes: Uint8Array): KeyDirectoryEntry {
  if (bytes.length !== KEY_DIRECTORY_ENTRY_BYTES) throw new RangeError(`a key directory entry is ${KEY_DIRECTORY_ENTRY_BYTES} bytes`);
  let version = 0;
  for (let i = 32; i < 40; i++) version = version * 256 + bytes[i]!;
  if (!Number.isSafeInteger(version)) throw new RangeError('a key directory entry version is a safe integer');
  return { index: bytes.slice(0, 32), version, commitment: bytes.slice(40, 72), prefixRoot: bytes.slice(72, 104) };
}
