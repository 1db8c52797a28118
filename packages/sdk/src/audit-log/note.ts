/**
 * C2SP signed notes and transparency-log checkpoints as a verifier reads them (design §8.33):
 *
 * - a verifier key (`vkey`) is `<name>+<key id, 8 hex>+<base64(0x01 || Ed25519 public key)>`,
 *   the key id being the first 4 bytes (big-endian) of SHA-256(name || 0x0A || 0x01 || public key);
 * - a signed note is its text (lines ending in a newline), a blank line, then signature lines
 *   `— <name> <base64(4-byte key id || Ed25519 signature over the text)>`; signatures by unknown
 *   keys are ignored, one by a known key must verify;
 * - a checkpoint's text is the origin, the tree size in decimal, the root hash in base64, then
 *   optional extension lines (the audit log writes one: `timestamp <ISO 8601>`).
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { base64ToBytes, bytesToBase64, concatBytes, ed25519Verify, utf8Encode } from '../crypto/primitives.js';
import { AuditLogError, TREE_HASH_BYTES } from './merkle.js';

/** The signed-note algorithm byte of Ed25519 keys. */
export const NOTE_ALG_ED25519 = 0x01;
/** A note with more signature lines than this is malformed (as Go's `note.Open`). */
const MAX_SIGNATURES = 100;
const SIG_PREFIX = '\u2014 ';

/** A parsed verifier key. */
export interface NoteVerifierKey {
  name: string;
  /** The 4-byte key id as an unsigned integer. */
  keyId: number;
  /** Ed25519 public key (32 bytes). */
  publicKey: Uint8Array;
}

/** One signature line of a note. */
export interface NoteSignature {
  name: string;
  keyId: number;
  signature: Uint8Array;
}

const malformed = (why: string): never => {
  throw new AuditLogError('malformed', why);
};

/** A key name is non-empty and has neither whitespace nor `+`. */
export const isNoteKeyName = (name: string): boolean => name.length > 0 && !/[\s+]/u.test(name);

/** The signed-note key id of an Ed25519 key: first 4 bytes of SHA-256(name || 0x0A || 0x01 || key), big-endian. */
export function noteKeyId(name: string, publicKey: Uint8Array): number {
  const h = sha256(concatBytes(utf8Encode(name), Uint8Array.of(0x0a, NOTE_ALG_ED25519), publicKey));
  return ((h[0]! << 24) | (h[1]! << 16) | (h[2]! << 8) | h[3]!) >>> 0;
}

const hex8 = (n: number) => n.toString(16).padStart(8, '0');

/** The verifier key string of an Ed25519 public key named `name`. */
export function formatVkey(name: string, publicKey: Uint8Array): string {
  if (!isNoteKeyName(name)) malformed('a key name must be non-empty, without spaces or "+"');
  return `${name}+${hex8(noteKeyId(name, publicKey))}+${bytesToBase64(concatBytes(Uint8Array.of(NOTE_ALG_ED25519), publicKey))}`;
}

/**
 * Parse a verifier key, checking its key id against its name and key.
 * @throws AuditLogError `malformed` for anything but a well-formed Ed25519 vkey.
 */
export function parseVkey(vkey: string): NoteVerifierKey {
  const parts = vkey.trim().split('+');
  // The name cannot hold '+', the base64 key may: split off the name and the id only.
  if (parts.length < 3) malformed('a vkey is <name>+<key id>+<key>');
  const [name, id] = parts as [string, string];
  const keyB64 = parts.slice(2).join('+');
  if (!isNoteKeyName(name) || !/^[0-9a-f]{8}$/.test(id)) malformed('a vkey is <name>+<8 hex key id>+<base64 key>');
  let key: Uint8Array;
  try {
    key = base64ToBytes(keyB64, 'vkey key');
  } catch {
    return malformed('the vkey key is not base64');
  }
  if (key.length !== 33 || key[0] !== NOTE_ALG_ED25519) malformed('the vkey is not an Ed25519 key (0x01 and 32 bytes)');
  const publicKey = key.slice(1);
  const keyId = noteKeyId(name, publicKey);
  if (hex8(keyId) !== id) malformed('the vkey key id does not match its name and key');
  return { name, keyId, publicKey };
}

/** A note split into its text and its signature lines. */
export interface SignedNote {
  /** The signed text, ending with a newline. */
  text: string;
  signatures: NoteSignature[];
}

/**
 * Split a signed note (C2SP `signed-note`): text, blank line, one or more signature lines.
 * @throws AuditLogError `malformed` when it has another shape, control characters or a bad line.
 */
export function parseSignedNote(note: string): SignedNote {
  // Control characters other than the newline are not allowed anywhere (no \r, no tabs).
  for (let i = 0; i < note.length; i++) {
    const c = note.charCodeAt(i);
    if ((c < 0x20 && c !== 0x0a) || c === 0x7f) malformed('a note has no control characters but newlines');
  }
  const split = note.lastIndexOf('\n\n');
  if (split < 0 || !note.endsWith('\n')) malformed('a note is its text, a blank line and signature lines');
  const text = note.slice(0, split + 1);
  const lines = note.slice(split + 2, -1).split('\n');
  if (lines.length > MAX_SIGNATURES) malformed('too many signatures');
  const signatures = lines.map((line): NoteSignature => {
    if (!line.startsWith(SIG_PREFIX)) return malformed('a signature line starts with "— "');
    const rest = line.slice(SIG_PREFIX.length);
    const space = rest.indexOf(' ');
    const name = rest.slice(0, space);
    if (space <= 0 || !isNoteKeyName(name)) return malformed('a signature line is "— <name> <base64>"');
    let blob: Uint8Array;
    try {
      blob = base64ToBytes(rest.slice(space + 1), 'signature');
    } catch {
      return malformed('a signature is not base64');
    }
    if (blob.length < 5) malformed('a signature is too short');
    const keyId = ((blob[0]! << 24) | (blob[1]! << 16) | (blob[2]! << 8) | blob[3]!) >>> 0;
    return { name, keyId, signature: blob.slice(4) };
  });
  return { text, signatures };
}

/**
 * The keys among `keys` whose signature on `note` verifies (at least one).
 * @throws AuditLogError `malformed` for a malformed note; `bad_signature` when a signature by one
 *   of `keys` does not verify, or none of them signed.
 */
export function verifyNote(note: string, keys: readonly NoteVerifierKey[]): { text: string; signedBy: NoteVerifierKey[] } {
  const { text, signatures } = parseSignedNote(note);
  const message = utf8Encode(text);
  const signedBy: NoteVerifierKey[] = [];
  for (const sig of signatures) {
    const key = keys.find((k) => k.name === sig.name && k.keyId === sig.keyId);
    if (!key) continue;
    if (sig.signature.length !== 64 || !ed25519Verify(sig.signature, message, key.publicKey)) {
      throw new AuditLogError('bad_signature', `the signature of ${key.name}+${hex8(key.keyId)} does not verify`);
    }
    if (!signedBy.includes(key)) signedBy.push(key);
  }
  if (signedBy.length === 0) throw new AuditLogError('bad_signature', `the note is signed by none of: ${keys.map((k) => `${k.name}+${hex8(k.keyId)}`).join(', ') || 'no key given'}`);
  return { text, signedBy };
}

/** The body of a checkpoint (C2SP `tlog-checkpoint`). */
export interface CheckpointBody {
  origin: string;
  treeSize: number;
  rootHash: Uint8Array;
  /** Extension lines after the root hash, if any. */
  extensions: string[];
}

/**
 * Parse a checkpoint's text (the signed part of the note).
 * @throws AuditLogError `malformed` when it is not origin / decimal size / base64 root (32 bytes) / non-empty extension lines.
 */
export function parseCheckpointText(text: string): CheckpointBody {
  const lines = text.split('\n');
  if (lines.length < 4 || lines.at(-1) !== '') malformed('a checkpoint has an origin, a size and a root hash line');
  const [origin, size, root, ...rest] = lines.slice(0, -1) as [string, string, string, ...string[]];
  if (origin.length === 0) malformed('a checkpoint origin is not empty');
  if (!/^(0|[1-9][0-9]{0,15})$/.test(size) || !Number.isSafeInteger(Number(size))) malformed('a checkpoint size is a decimal number without leading zeros');
  let rootHash: Uint8Array;
  try {
    rootHash = base64ToBytes(root, 'root hash');
  } catch {
    return malformed('a checkpoint root hash is base64');
  }
  if (rootHash.length !== TREE_HASH_BYTES) malformed(`a checkpoint root hash is ${TREE_HASH_BYTES} bytes`);
  if (rest.some((l) => l.length === 0)) malformed('checkpoint extension lines are not empty');
  return { origin, treeSize: Number(size), rootHash, extensions: rest };
}
