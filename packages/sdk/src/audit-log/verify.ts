/**
 * Verifying Parley's audit log with nothing but the service's answers and the platform's public
 * key (design §8.33): a checkpoint's signature and origin, an event's inclusion in a checkpoint
 * (and that the event's contents hash to its leaf), and one checkpoint's consistency with an
 * earlier one. Sizes and roots are always taken from the signed notes, never from the JSON fields
 * beside them (a field that disagrees with its note makes the answer malformed).
 */
import type { AuditChainEvent, AuditConsistencyProof, AuditEvent, AuditEventProof } from '@parley/protocol';
import canonicalize from 'canonicalize';
import { base64ToBytes, blake2b256, bytesToHex, concatBytes, equalBytes, hexToBytes, utf8Encode } from '../crypto/primitives.js';
import { AuditLogError, leafHash, verifyConsistency, verifyInclusion } from './merkle.js';
import { parseCheckpointText, parseVkey, verifyNote, type NoteVerifierKey } from './note.js';

/** The key name suffix and origin path of the audit log: `<host>/audit-log` signs `<host>/audit/<tenant_id>`. */
const KEY_SUFFIX = '/audit-log';
const ORIGIN_PATH = '/audit/';
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TIMESTAMP_LINE = /^timestamp (\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z)$/;

/** What a verified checkpoint says. */
export interface VerifiedCheckpoint {
  /** `<host>/audit/<tenant_id>`. */
  origin: string;
  tenantId: string;
  treeSize: number;
  rootHash: Uint8Array;
  /** The `timestamp` line's ISO 8601 time, or null when the note has none. */
  timestamp: string | null;
  /** The vkeys (`name+id`) whose signatures verified. */
  signedBy: string[];
}

/** Which keys to trust: one or more vkey strings, or parsed keys. */
export type AuditLogKeys = string | NoteVerifierKey | readonly (string | NoteVerifierKey)[];

/** Options of the verifiers. */
export interface VerifyOptions {
  /** Require the checkpoint to be this tenant's log (its origin's tenant id). */
  tenantId?: string;
}

const keysOf = (keys: AuditLogKeys): NoteVerifierKey[] => (Array.isArray(keys) ? keys : [keys]).map((k: string | NoteVerifierKey) => (typeof k === 'string' ? parseVkey(k) : k));

const malformed = (why: string): never => {
  throw new AuditLogError('malformed', why);
};

function treeHash(b64: string, what: string): Uint8Array {
  try {
    const h = base64ToBytes(b64, what);
    if (h.length === 32) return h;
  } catch {
    /* reported below */
  }
  return malformed(`${what} is not a base64 SHA-256 hash`);
}

/**
 * Verify a checkpoint note: signed by one of `keys`, its origin `<host>/audit/<tenant_id>` of the
 * same host as the signing key's name `<host>/audit-log`.
 * @throws AuditLogError `malformed` (note, vkey), `bad_signature` (no valid signature by the keys, or a foreign origin).
 */
export function verifyCheckpoint(note: string, keys: AuditLogKeys, opts: VerifyOptions = {}): VerifiedCheckpoint {
  const { text, signedBy } = verifyNote(note, keysOf(keys));
  const body = parseCheckpointText(text);
  const hosts = signedBy.filter((k) => k.name.endsWith(KEY_SUFFIX)).map((k) => k.name.slice(0, -KEY_SUFFIX.length));
  const host = hosts.find((h) => body.origin.startsWith(`${h}${ORIGIN_PATH}`));
  if (host === undefined) throw new AuditLogError('bad_signature', `the origin ${body.origin} is not an audit log of the signing key's host`);
  const tenantId = body.origin.slice(host.length + ORIGIN_PATH.length);
  if (!UUID_RE.test(tenantId)) malformed(`the origin ${body.origin} does not end with a tenant id`);
  if (opts.tenantId !== undefined && opts.tenantId.toLowerCase() !== tenantId) throw new AuditLogError('bad_signature', `the checkpoint is the log of tenant ${tenantId}, not ${opts.tenantId}`);
  const stamp = body.extensions.map((l) => TIMESTAMP_LINE.exec(l)?.[1]).find((t) => t !== undefined) ?? null;
  return {
    origin: body.origin,
    tenantId,
    treeSize: body.treeSize,
    rootHash: body.rootHash,
    timestamp: stamp,
    signedBy: signedBy.map((k) => `${k.name}+${k.keyId.toString(16).padStart(8, '0')}`),
  };
}

/** An event's chain hash: hex(BLAKE2b-256(bytes(prev_hash) || UTF-8(JCS(event)))) (design §8.10). */
export function auditEventHash(prevHash: string, event: AuditChainEvent): string {
  const canonical = canonicalize({ ...event });
  if (canonical === undefined) return malformed('the audit event cannot be canonicalised');
  return bytesToHex(blake2b256(concatBytes(hexToBytes(prevHash, 32, 'prev_hash'), utf8Encode(canonical))));
}

/** What {@link verifyEventProof} established. */
export interface VerifiedEventProof {
  checkpoint: VerifiedCheckpoint;
  eventId: string;
  leafIndex: number;
  /** The event's chain hash: the leaf input. */
  eventHash: string;
}

/**
 * Verify an event's proof bundle (`GET /audit/events/{id}/proof`): the checkpoint's signature, the
 * event's chain hash recomputed from its contents (tenant from the origin, `seq = leaf_index + 1`),
 * that hash as the leaf, and the audit path from that leaf to the checkpoint's root.
 * @throws AuditLogError `malformed`, `bad_signature`, `event_mismatch` or `inclusion_failed`.
 */
export function verifyEventProof(proof: AuditEventProof, keys: AuditLogKeys, opts: VerifyOptions = {}): VerifiedEventProof {
  const checkpoint = verifyCheckpoint(proof.checkpoint, keys, opts);
  if (proof.tree_size !== checkpoint.treeSize) malformed(`tree_size ${proof.tree_size} disagrees with the checkpoint's ${checkpoint.treeSize}`);
  const e: AuditEvent = proof.event;
  if (e.event_id !== proof.event_id) throw new AuditLogError('event_mismatch', 'the bundle holds another event than the proof is for');
  const recomputed = auditEventHash(e.prev_hash, {
    event_id: e.event_id,
    tenant_id: checkpoint.tenantId,
    seq: proof.leaf_index + 1,
    type: e.type,
    actor: e.actor,
    subject: e.subject,
    data: e.data,
    created_at: e.created_at,
  });
  if (recomputed !== e.hash) throw new AuditLogError('event_mismatch', `the event's contents hash to ${recomputed}, not to its recorded hash ${e.hash}`);
  const leaf = leafHash(hexToBytes(e.hash, 32, 'event hash'));
  if (!equalBytes(leaf, treeHash(proof.leaf_hash, 'leaf_hash'))) throw new AuditLogError('event_mismatch', "the proof's leaf is not the event's hash");
  verifyInclusion(
    proof.leaf_index,
    checkpoint.treeSize,
    leaf,
    proof.audit_path.map((p) => treeHash(p, 'audit_path entry')),
    checkpoint.rootHash,
  );
  return { checkpoint, eventId: e.event_id, leafIndex: proof.leaf_index, eventHash: e.hash };
}

/**
 * Verify that the checkpoint `newer` extends `older` (`GET /audit/consistency?first=<older size>&second=<newer size>`):
 * both signed, both the same log, the proof connecting their roots.
 * @throws AuditLogError `malformed`, `bad_signature` or `consistency_failed`.
 */
export function verifyCheckpointConsistency(older: string, newer: string, proof: AuditConsistencyProof, keys: AuditLogKeys, opts: VerifyOptions = {}): { older: VerifiedCheckpoint; newer: VerifiedCheckpoint } {
  const a = verifyCheckpoint(older, keys, opts);
  const b = verifyCheckpoint(newer, keys, opts);
  if (a.origin !== b.origin) throw new AuditLogError('consistency_failed', `the checkpoints are of two logs (${a.origin}, ${b.origin})`);
  if (proof.first !== a.treeSize || proof.second !== b.treeSize) malformed(`the proof is for sizes ${proof.first} -> ${proof.second}, the checkpoints are ${a.treeSize} -> ${b.treeSize}`);
  verifyConsistency(
    a.treeSize,
    b.treeSize,
    a.rootHash,
    b.rootHash,
    proof.proof.map((p) => treeHash(p, 'proof entry')),
  );
  return { older: a, newer: b };
}
