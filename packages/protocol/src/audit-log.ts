/**
 * What the service and a verifier of its audit log (design §8.10, §8.33) must compute alike: the
 * fields an audit event's chain hash covers, and the RFC 9162 §2.1 (RFC 6962) tree hashing of the
 * transparency log. The package depends on TypeBox alone, so the caller brings its SHA-256 (the
 * server Node's, the SDK a browser-safe one); building proofs stays with the server, checking
 * them with the SDK.
 */

/**
 * The fields of an audit event that its chain hash covers (design §8.10):
 * `hash = hex(BLAKE2b-256(bytes(prev_hash) || UTF-8(JCS(event))))` over exactly these, with
 * `created_at` in ISO 8601 UTC, `Date.prototype.toISOString()` form (millisecond precision).
 */
export interface AuditChainEvent {
  event_id: string;
  tenant_id: string;
  seq: number;
  type: string;
  actor: string;
  subject: string | null;
  data: unknown;
  created_at: string;
}

/** SHA-256 of the concatenation of `parts`, answered as the caller's byte type `H`. */
export type Sha256Parts<H extends Uint8Array> = (...parts: Uint8Array[]) => H;

/** The hash functions of an RFC 9162 Merkle tree, each a SHA-256 of the caller's. */
export interface MerkleTreeHashing<H extends Uint8Array> {
  /** RFC 9162 leaf hash: SHA-256(0x00 || input). */
  leafHash(input: Uint8Array): H;
  /** RFC 9162 interior node hash: SHA-256(0x01 || left || right). */
  nodeHash(left: Uint8Array, right: Uint8Array): H;
  /** The root of the empty tree: SHA-256 of nothing. */
  emptyRoot(): H;
}

const LEAF_PREFIX = Uint8Array.of(0x00);
const NODE_PREFIX = Uint8Array.of(0x01);

/** RFC 9162 §2.1 tree hashing over `sha256` (leaf and node inputs domain-separated by a 0x00 / 0x01 prefix). */
export function merkleTreeHashing<H extends Uint8Array>(sha256: Sha256Parts<H>): MerkleTreeHashing<H> {
  return {
    leafHash: (input) => sha256(LEAF_PREFIX, input),
    nodeHash: (left, right) => sha256(NODE_PREFIX, left, right),
    emptyRoot: () => sha256(),
  };
}
