/**
 * The key directory's verifier (design §8.39; structures in `@parley/protocol` key-directory/*):
 * the checks a client runs on a lookup answer before it trusts a key it was served, against what
 * it pinned (origin, log keys, VRF key, witness policy) and the last checkpoint it accepted.
 *
 * 1. The checkpoint is a C2SP signed note of the pinned origin, signed by a pinned log key, and
 *    cosigned (C2SP tlog-cosignature) by at least the required number of trusted witnesses.
 * 2. It is not older than the last accepted one (a stale checkpoint), and extends it (RFC 9162
 *    §2.1.4.2 consistency; two checkpoints of one size must have one root): a forked directory is
 *    caught as soon as a client sees both sides.
 * 3. The newest log entry is the last leaf of that tree (RFC 9162 §2.1.3.2 inclusion).
 * 4. The label's VRF proof verifies (RFC 9381) and gives its index.
 * 5. The commitment to the key the client holds, under the answered opening, with the answered
 *    version, is the leaf that the prefix-tree path leads from to the entry's prefix root.
 *
 * Pure and browser-safe (the web app runs it too).
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { decodeKeyDirectoryEntry, keyDirectoryHashing, prefixRootFromPath, vrfInputOf, vrfVerify, type KeyDirectoryInfo, type KeyLookup, type KeyLookups } from '@parley/protocol';
import { CodedError } from '../errors.js';
import { base64ToBytes, concatBytes, equalBytes, hexToBytes, utf8Encode } from '../crypto/primitives.js';
import { AuditLogError, leafHash, verifyConsistency, verifyInclusion } from '../audit-log/merkle.js';
import { parseCheckpointText, parseVkey, verifyNote, type NoteVerifierKey } from '../audit-log/note.js';
import { parseWitnessVkey, verifyCosignatures, type WitnessVerifierKey } from '../audit-log/cosignature.js';

/** Which key-transparency check failed. */
export type KeyTransparencyErrorCode =
  /** An answer that does not parse, or a checkpoint of another origin. */
  | 'malformed'
  /** The checkpoint is not signed by a pinned log key. */
  | 'bad_signature'
  /** Fewer valid witness cosignatures than the policy requires. */
  | 'too_few_cosignatures'
  /** The checkpoint is older than the last one accepted. */
  | 'stale_checkpoint'
  /** The checkpoint does not extend the last one accepted (a forked directory). */
  | 'inconsistent_checkpoint'
  /** The newest entry is not the last leaf of the checkpoint's tree. */
  | 'inclusion_failed'
  /** The label's VRF proof does not verify. */
  | 'bad_vrf_proof'
  /** The key the client holds is not the one the directory holds for the label. */
  | 'key_mismatch'
  /** The directory holds no such label. */
  | 'not_in_directory'
  /** The service answers other pinned facts (log keys, VRF key, origin) than the client pinned. */
  | 'pinned_keys_changed';

/** The one error type of key transparency; the message names it, `code` says which check failed. */
export class KeyTransparencyError extends CodedError<KeyTransparencyErrorCode> {
  override readonly name = 'KeyTransparencyError';
  /** The label whose check failed, when the failure is one label's (VRF proof, key, absence). */
  readonly label?: string;
  constructor(code: KeyTransparencyErrorCode, message: string, options?: { cause?: unknown; label?: string }) {
    super(code, `key transparency: ${message}`, options);
    if (options?.label !== undefined) this.label = options.label;
  }
}

/** What a client verifies the directory against (pinned on first use, or configured). */
export interface KeyDirectoryTrust {
  /** `<host>/keys`. */
  origin: string;
  logKeys: readonly NoteVerifierKey[];
  /** The VRF public key (32 bytes). */
  vrfPublicKey: Uint8Array;
  witnesses: readonly WitnessVerifierKey[];
  minCosignatures: number;
}

/**
 * The trust of a `GET /key-directory` answer (what a client pins on first use).
 * @throws KeyTransparencyError `malformed` for a vkey or VRF key that does not parse.
 */
export function trustFromInfo(info: KeyDirectoryInfo): KeyDirectoryTrust {
  try {
    return {
      origin: info.origin,
      logKeys: info.log_keys.map((k) => parseVkey(k.vkey)),
      vrfPublicKey: hexToBytes(info.vrf_public_key, 32, 'vrf_public_key'),
      witnesses: info.witnesses.map(parseWitnessVkey),
      minCosignatures: info.min_cosignatures,
    };
  } catch (err) {
    throw new KeyTransparencyError('malformed', `the key directory's pinned keys do not parse (${(err as Error).message})`, { cause: err });
  }
}

/** A checkpoint a client accepted: its tree size and root. */
export interface AcceptedCheckpoint {
  size: number;
  root: Uint8Array;
}

const hashing = keyDirectoryHashing((...parts: Uint8Array[]) => sha256(concatBytes(...parts)));

function b64(value: string, what: string): Uint8Array {
  try {
    return base64ToBytes(value, what);
  } catch (err) {
    throw new KeyTransparencyError('malformed', `${what} is not base64`, { cause: err });
  }
}

/** Rethrow an audit-log verifier error as the key-transparency one of `code`. */
function as<T>(code: KeyTransparencyErrorCode, what: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof AuditLogError) throw new KeyTransparencyError(err.code === 'malformed' ? 'malformed' : code, `${what}: ${err.message}`, { cause: err });
    throw err;
  }
}

/**
 * Checks 1-2: the checkpoint note and its consistency with `last`.
 * @returns the accepted checkpoint (the new `last`).
 * @throws KeyTransparencyError `malformed`, `bad_signature`, `too_few_cosignatures`, `stale_checkpoint`, `inconsistent_checkpoint`.
 */
export function verifyDirectoryCheckpoint(trust: KeyDirectoryTrust, last: AcceptedCheckpoint | undefined, note: string, consistency: readonly string[], now: number = Date.now()): AcceptedCheckpoint {
  const { text } = as('bad_signature', 'the checkpoint', () => verifyNote(note, trust.logKeys));
  const body = as('malformed', 'the checkpoint', () => parseCheckpointText(text));
  if (body.origin !== trust.origin) throw new KeyTransparencyError('malformed', `the checkpoint is of ${body.origin}, not ${trust.origin}`);
  if (trust.minCosignatures > 0) {
    const cosigned = as('too_few_cosignatures', 'a witness cosignature', () => verifyCosignatures(note, trust.witnesses, { notAfter: Math.floor(now / 1000) + 600 }));
    if (cosigned.length < trust.minCosignatures) throw new KeyTransparencyError('too_few_cosignatures', `the checkpoint of size ${body.treeSize} has ${cosigned.length} of the ${trust.minCosignatures} witness cosignatures required`);
  }
  const accepted = { size: body.treeSize, root: body.rootHash };
  if (!last) return accepted;
  if (accepted.size < last.size) throw new KeyTransparencyError('stale_checkpoint', `the service answered a checkpoint of size ${accepted.size}, older than the one of size ${last.size} already accepted`);
  const proof = consistency.map((h, i) => b64(h, `consistency[${i}]`));
  as('inconsistent_checkpoint', `the checkpoint of size ${accepted.size} does not extend the one of size ${last.size} accepted before (a forked directory)`, () =>
    verifyConsistency(last.size, accepted.size, last.root, accepted.root, proof),
  );
  return accepted;
}

/** Options of {@link verifyKeyLookups}. */
export interface VerifyLookupOptions {
  /**
   * VRF outputs already verified, by VRF input (`vrfInputOf`): used instead of checking the
   * answer's proof again, and filled with the outputs this call verifies. Valid for one pinned VRF
   * key (an output never changes for it).
   */
  vrfOutputs?: Map<string, Uint8Array>;
  /** The current time (ms), for the cosignatures' timestamps. */
  now?: number;
}

/**
 * Checks 1-5 on a lookups answer (one checkpoint, one newest entry) for `keys`, the labels and
 * the values the client holds (labels.ts), in the order asked.
 * @returns the accepted checkpoint and each label's version.
 * @throws KeyTransparencyError naming the failed check (and the label, for 4-5).
 */
export function verifyKeyLookups(
  trust: KeyDirectoryTrust,
  last: AcceptedCheckpoint | undefined,
  keys: readonly (readonly [label: string, value: Uint8Array])[],
  answer: KeyLookups,
  opts: VerifyLookupOptions = {},
): { checkpoint: AcceptedCheckpoint; versions: number[] } {
  if (answer.proofs.length !== keys.length || answer.proofs.some((p, i) => p.label !== keys[i]![0])) {
    throw new KeyTransparencyError('malformed', `the service answered the proofs of ${answer.proofs.map((p) => p.label).join(', ')}, not of ${keys.map((k) => k[0]).join(', ')}`);
  }
  const checkpoint = verifyDirectoryCheckpoint(trust, last, answer.checkpoint.checkpoint, answer.consistency, opts.now);
  if (answer.head.leaf_index !== checkpoint.size - 1) throw new KeyTransparencyError('inclusion_failed', `the newest entry must be leaf ${checkpoint.size - 1}, not ${answer.head.leaf_index}`);
  const entryBytes = b64(answer.head.entry, 'head.entry');
  let entry;
  try {
    entry = decodeKeyDirectoryEntry(entryBytes);
  } catch (err) {
    throw new KeyTransparencyError('malformed', 'the newest entry is not a key directory entry', { cause: err });
  }
  const path = answer.head.audit_path.map((h, i) => b64(h, `head.audit_path[${i}]`));
  as('inclusion_failed', 'the newest entry', () => verifyInclusion(answer.head.leaf_index, checkpoint.size, leafHash(entryBytes), path, checkpoint.root));
  const versions = answer.proofs.map((p, i) => {
    const [label, value] = keys[i]!;
    const { vrfLabel, subKey } = vrfInputOf(label);
    let output = opts.vrfOutputs?.get(vrfLabel);
    if (!output) {
      output = vrfVerify(trust.vrfPublicKey, b64(p.vrf_proof, 'vrf_proof'), utf8Encode(vrfLabel)) ?? undefined;
      if (!output) throw new KeyTransparencyError('bad_vrf_proof', `the VRF proof of ${label} does not verify`, { label });
      opts.vrfOutputs?.set(vrfLabel, output);
    }
    const index = hashing.labelIndex(output, subKey);
    const leaf = hashing.prefixLeaf(index, p.version, hashing.commitment(b64(p.opening, 'opening'), label, value));
    const siblings = p.prefix_path.map((h, j) => b64(h, `prefix_path[${j}]`));
    if (siblings.length > 256 || !equalBytes(prefixRootFromPath(hashing, index, leaf, siblings), entry.prefixRoot)) {
      throw new KeyTransparencyError('key_mismatch', `the key served for ${label} is not the one the key directory holds for it (version ${p.version}, checkpoint of size ${checkpoint.size})`, { label });
    }
    return p.version;
  });
  return { checkpoint, versions };
}

/**
 * {@link verifyKeyLookups} of a one-label answer (`GET /key-directory/lookup`) for `label`, whose
 * value the client holds as `value`.
 * @returns the accepted checkpoint and the label's version.
 * @throws KeyTransparencyError naming the failed check.
 */
export function verifyKeyLookup(trust: KeyDirectoryTrust, last: AcceptedCheckpoint | undefined, label: string, value: Uint8Array, answer: KeyLookup, now = Date.now()): { checkpoint: AcceptedCheckpoint; version: number } {
  const { label: answered, version, opening, vrf_proof, prefix_path, ...rest } = answer;
  const { checkpoint, versions } = verifyKeyLookups(trust, last, [[label, value]], { ...rest, proofs: [{ label: answered, version, opening, vrf_proof, prefix_path }] }, { now });
  return { checkpoint, version: versions[0]! };
}
