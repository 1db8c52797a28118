/**
 * The key directory's log (design §8.39) held in memory: an RFC 9162 §2.1 tree over SHA-256 whose
 * leaf inputs are the 104-byte log entries (`@parley/protocol` key-directory/structures.ts). Every
 * complete subtree is kept as it completes (level `l`, index `i` covers leaves [i·2^l, (i+1)·2^l)),
 * so appends cost O(log n) hashes and any root, audit path or consistency proof of any size up to
 * the current one is a right fold of the subtrees that tile its ranges (lib/merkle-ranges.ts), as
 * the audit log's tree does in its table. Appends never change a stored subtree, so proofs for a
 * size stay valid while the tree grows.
 */
import { createHash } from 'node:crypto';
import { merkleTreeHashing } from '@parley/protocol';
import { consistencyRanges, inclusionRanges, rangeNodes, type LeafRange } from '../../lib/merkle-ranges.js';

/** SHA-256 of the concatenated parts (Node's). */
export const sha256 = (...parts: Uint8Array[]): Buffer => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};
const { leafHash, nodeHash, emptyRoot } = merkleTreeHashing(sha256);

export class LogTree {
  /** levels[l][i]: the complete subtree (l, i). */
  private readonly levels: Buffer[][] = [[]];

  /** Leaves appended. */
  get size(): number {
    return this.levels[0]!.length;
  }

  /** Append one leaf (its input bytes), storing each subtree it completes. */
  append(input: Uint8Array): void {
    let hash = leafHash(input);
    let index = this.size;
    this.levels[0]!.push(hash);
    for (let level = 0; index % 2 === 1; level++, index = (index - 1) / 2) {
      hash = nodeHash(this.levels[level]![index - 1]!, hash);
      (this.levels[level + 1] ??= []).push(hash);
    }
  }

  private hash(range: LeafRange): Buffer {
    return rangeNodes(range)
      .map((n) => this.levels[n.level]![n.index]!)
      .reduceRight((right, left) => nodeHash(left, right));
  }

  /** The root of the tree of the first `size` leaves (0 <= size <= this.size). */
  root(size: number): Buffer {
    return size === 0 ? emptyRoot() : this.hash({ start: 0, end: size });
  }

  /** The audit path of leaf `index` in the tree of `size` leaves (RFC 9162 §2.1.3.1), deepest first. */
  inclusion(index: number, size: number): Buffer[] {
    return inclusionRanges(index, size).map((r) => this.hash(r));
  }

  /** The consistency proof from `first` to `second` leaves (RFC 9162 §2.1.4.1); empty when first is 0 or equal to second. */
  consistency(first: number, second: number): Buffer[] {
    return first === 0 || first === second ? [] : consistencyRanges(first, second).map((r) => this.hash(r));
  }
}
