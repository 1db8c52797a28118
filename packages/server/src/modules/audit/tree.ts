/**
 * The tenant's Merkle tree over its audit events (design §8.33): RFC 9162 §2.1 over SHA-256, leaf
 * `i` = the event of `seq = i + 1`, leaf input = the 32 raw bytes of the event's chain `hash`.
 *
 * Storage (`audit_tree_nodes`): every COMPLETE subtree, as node (`level`, `idx`) covering leaves
 * [idx * 2^level, (idx + 1) * 2^level). Appending leaf `i` writes the leaf and every subtree it
 * completes (as many as `i` has trailing one bits), in the appending transaction, under the
 * chain's lock ({@link appendLeaf}); nothing is ever rewritten. The hash of any range the RFC's
 * recursions ask for (a root at a past size, the subtrees of an audit path or a consistency proof)
 * is a right fold of the complete subtrees that tile it ({@link rangeNodes}), so every answer costs
 * one indexed read of at most a few dozen nodes ({@link hashRanges}), whatever the tree's size.
 * The SDK's verifier (`@parley/sdk` audit-log) checks what these functions make.
 */
import { createHash } from 'node:crypto';
import { merkleTreeHashing } from '@parley/protocol';
import { and, eq, sql } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { auditTreeNodes } from '../../db/schema/index.js';
import { consistencyRanges, inclusionRanges, rangeNodes, type LeafRange, type NodeId } from '../../lib/merkle-ranges.js';

const sha256 = (...parts: Uint8Array[]): Buffer => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};
/** RFC 9162 leaf and node hashes (the contract's, as the SDK's verifier computes them) over Node's SHA-256. */
const { leafHash, nodeHash, emptyRoot } = merkleTreeHashing(sha256);
/** The root of the empty tree: SHA-256 of nothing. */
const EMPTY_ROOT: Buffer = emptyRoot();

const key = (level: number, index: number) => `${level}:${index}`;

/**
 * The stored nodes `ids` of `tenantId`'s tree, by `level:index`, in one read.
 * @throws when one is missing (a tree that does not match its chain: a server error, never a proof).
 */
async function readNodes(tx: Tx, tenantId: string, ids: readonly NodeId[]): Promise<Map<string, Buffer>> {
  const wanted = [...new Map(ids.map((i) => [key(i.level, i.index), i])).values()];
  const found = new Map<string, Buffer>();
  if (wanted.length === 0) return found;
  const rows = await tx
    .select({ level: auditTreeNodes.level, idx: auditTreeNodes.idx, hash: auditTreeNodes.hash })
    .from(auditTreeNodes)
    .where(
      and(
        eq(auditTreeNodes.tenantId, tenantId),
        sql`(${auditTreeNodes.level}, ${auditTreeNodes.idx}) in (${sql.join(
          wanted.map((i) => sql`(${i.level}::smallint, ${i.index}::bigint)`),
          sql`, `,
        )})`,
      ),
    );
  for (const r of rows) found.set(key(r.level, r.idx), r.hash);
  const missing = wanted.find((i) => !found.has(key(i.level, i.index)));
  if (missing) throw new Error(`audit tree of tenant ${tenantId} has no node (level ${missing.level}, index ${missing.index})`);
  return found;
}

/** The Merkle tree hash of each range (RFC 9162 MTH), from one read of the subtrees that tile them. */
export async function hashRanges(tx: Tx, tenantId: string, ranges: readonly LeafRange[]): Promise<Buffer[]> {
  const tiles = ranges.map(rangeNodes);
  const nodes = await readNodes(tx, tenantId, tiles.flat());
  return tiles.map((t) => t.map((n) => nodes.get(key(n.level, n.index))!).reduceRight((right, left) => nodeHash(left, right)));
}

/** The root of `tenantId`'s tree at `size` leaves (any size up to the current one). */
export async function rootAt(tx: Tx, tenantId: string, size: number): Promise<Buffer> {
  if (size === 0) return EMPTY_ROOT;
  const [root] = await hashRanges(tx, tenantId, [{ start: 0, end: size }]);
  return root!;
}

/** The leaf hash of leaf `index` and its audit path in the tree of `size` leaves. */
export async function inclusionProof(tx: Tx, tenantId: string, index: number, size: number): Promise<{ leaf: Buffer; path: Buffer[] }> {
  const [leaf, ...path] = await hashRanges(tx, tenantId, [{ start: index, end: index + 1 }, ...inclusionRanges(index, size)]);
  return { leaf: leaf!, path };
}

/** The consistency proof from size `first` to size `second` (empty when they are equal). */
export async function consistencyProof(tx: Tx, tenantId: string, first: number, second: number): Promise<Buffer[]> {
  return first === second ? [] : hashRanges(tx, tenantId, consistencyRanges(first, second));
}

/**
 * Append leaf `index` (input: the event's chain hash bytes) to `tenantId`'s tree within the
 * appending transaction, which holds the chain's lock (so leaves arrive in order, one at a time):
 * writes the leaf and each subtree it completes. Their left siblings are the tree's frontier
 * nodes of the levels where `index` has its trailing one bits: given by level in `frontier` (the
 * append's first read, repo.ts `appendPoint`), or read here when it is not given.
 */
export async function appendLeaf(tx: Tx, tenantId: string, index: number, input: Uint8Array, frontier?: ReadonlyMap<number, Buffer>): Promise<void> {
  const siblings: NodeId[] = [];
  for (let i = index, level = 0; i % 2 === 1; i = (i - 1) / 2, level++) siblings.push({ level, index: i - 1 });
  const stored = frontier ? new Map(siblings.map((s) => [key(s.level, s.index), frontier.get(s.level)!])) : await readNodes(tx, tenantId, siblings);
  let hash = leafHash(input);
  const rows = [{ tenantId, level: 0, idx: index, hash }];
  for (const s of siblings) {
    const left = stored.get(key(s.level, s.index));
    if (!left) throw new Error(`audit tree of tenant ${tenantId} has no node (level ${s.level}, index ${s.index})`);
    hash = nodeHash(left, hash);
    rows.push({ tenantId, level: s.level + 1, idx: s.index / 2, hash });
  }
  await tx.insert(auditTreeNodes).values(rows);
}
