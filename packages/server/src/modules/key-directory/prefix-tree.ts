/**
 * The key directory's prefix tree (design §8.39; hashing in `@parley/protocol`
 * key-directory/structures.ts) as a persistent binary trie: {@link PrefixTree.with} answers a new
 * tree that shares every untouched subtree with the old one (path copying), so an appending
 * transaction computes the roots of its entries without changing the tree that lookups read, and
 * a failed transaction leaves nothing to undo. A subtree holding one entry is that entry's leaf
 * (the canonical shape the verifier relies on); entries are never removed.
 */
import { indexBit, keyDirectoryHashing, PREFIX_EMPTY } from '@parley/protocol';
import { sha256 } from './log-tree.js';

const hashing = keyDirectoryHashing(sha256);

/** One label's latest version: what the leaf commits to, and what a lookup opens. */
export interface PrefixLeaf {
  readonly kind: 'leaf';
  readonly index: Buffer;
  readonly version: number;
  readonly commitment: Buffer;
  /** The commitment's opening (answered to whoever looks the label up). */
  readonly opening: Buffer;
  readonly hash: Buffer;
}

interface Inner {
  readonly kind: 'inner';
  readonly left: Node | null;
  readonly right: Node | null;
  readonly hash: Buffer;
}

type Node = PrefixLeaf | Inner;

const hashOf = (n: Node | null): Uint8Array => n?.hash ?? PREFIX_EMPTY;
const inner = (left: Node | null, right: Node | null): Inner => ({ kind: 'inner', left, right, hash: hashing.prefixNode(hashOf(left), hashOf(right)) });

/** The subtree at `depth` holding two leaves of different indexes. */
function split(depth: number, a: PrefixLeaf, b: PrefixLeaf): Inner {
  const bit = indexBit(a.index, depth);
  if (bit === indexBit(b.index, depth)) {
    const below = split(depth + 1, a, b);
    return bit === 0 ? inner(below, null) : inner(null, below);
  }
  return bit === 0 ? inner(a, b) : inner(b, a);
}

function insert(node: Node | null, depth: number, leaf: PrefixLeaf): Node {
  if (node === null) return leaf;
  if (node.kind === 'leaf') return node.index.equals(leaf.index) ? leaf : split(depth, node, leaf);
  return indexBit(leaf.index, depth) === 0 ? inner(insert(node.left, depth + 1, leaf), node.right) : inner(node.left, insert(node.right, depth + 1, leaf));
}

/** A leaf's contents, as {@link PrefixTree.with} and {@link PrefixTree.build} take them. */
export interface LeafInput {
  index: Buffer;
  version: number;
  commitment: Buffer;
  opening: Buffer;
}

const leafOf = (e: LeafInput): PrefixLeaf => ({ kind: 'leaf', ...e, hash: hashing.prefixLeaf(e.index, e.version, e.commitment) });

/** The canonical subtree at `depth` over `sorted[lo, hi)` (sorted by index, distinct indexes). */
function buildRange(sorted: readonly LeafInput[], lo: number, hi: number, depth: number): Node | null {
  if (hi - lo === 0) return null;
  if (hi - lo === 1) return leafOf(sorted[lo]!);
  // The first leaf whose bit at `depth` is 1 (the bits of a sorted range are 0s then 1s).
  let a = lo;
  let b = hi;
  while (a < b) {
    const mid = (a + b) >>> 1;
    if (indexBit(sorted[mid]!.index, depth) === 0) a = mid + 1;
    else b = mid;
  }
  return inner(buildRange(sorted, lo, a, depth + 1), buildRange(sorted, a, hi, depth + 1));
}

export class PrefixTree {
  /** The empty tree. */
  static readonly EMPTY = new PrefixTree(null);

  private constructor(private readonly top: Node | null) {}

  /**
   * The tree holding `leaves` (one per index), built in one pass: the same tree as inserting them
   * one by one in any order, at a fraction of the hashing (each node once).
   * @throws Error when two leaves have one index.
   */
  static build(leaves: readonly LeafInput[]): PrefixTree {
    const sorted = [...leaves].sort((x, y) => Buffer.compare(x.index, y.index));
    for (let i = 1; i < sorted.length; i++) if (sorted[i]!.index.equals(sorted[i - 1]!.index)) throw new Error('PrefixTree.build: two leaves with one index');
    return new PrefixTree(buildRange(sorted, 0, sorted.length, 0));
  }

  /** The root hash (32 zero bytes when empty). */
  get root(): Uint8Array {
    return hashOf(this.top);
  }

  /** A tree where `index` holds `version`, `commitment` and its `opening` (a new leaf or a replaced one). */
  with(index: Buffer, version: number, commitment: Buffer, opening: Buffer): PrefixTree {
    return new PrefixTree(insert(this.top, 0, leafOf({ index, version, commitment, opening })));
  }

  /** The leaf of `index` and the hashes beside its search path, deepest first; undefined when absent. */
  find(index: Buffer): { leaf: PrefixLeaf; path: Uint8Array[] } | undefined {
    const siblings: Uint8Array[] = [];
    let node = this.top;
    for (let depth = 0; node?.kind === 'inner'; depth++) {
      const right = indexBit(index, depth) === 1;
      siblings.push(hashOf(right ? node.left : node.right));
      node = right ? node.right : node.left;
    }
    if (!node || !node.index.equals(index)) return undefined;
    return { leaf: node, path: siblings.reverse() };
  }
}
