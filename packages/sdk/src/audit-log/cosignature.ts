/**
 * Witness cosignatures on checkpoints: C2SP `tlog-cosignature`, the Ed25519 `cosignature/v1` type
 * (design §8.33, key transparency's witnesses):
 *
 * - a cosigner's verifier key is `<name>+<key id, 8 hex>+<base64(0x04 || Ed25519 public key)>`
 *   (C2SP `signed-note` vkeys with signature type 0x04), the key id being the first 4 bytes of
 *   SHA-256(name || 0x0A || 0x04 || public key);
 * - the signed message is `cosignature/v1\ntime <POSIX seconds, decimal>\n` followed by the
 *   checkpoint's note text (every line, extension lines included, with its final newline);
 * - the signature line is `— <name> base64(key id (4) || timestamp (8, big-endian) || Ed25519 signature (64))`,
 *   an ordinary signed-note signature line that verifiers of other keys ignore.
 *
 * The message does not commit to the cosigner's name: one key must serve one cosigner name only.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { base64ToBytes, bytesToBase64, concatBytes, ed25519Verify, utf8Encode } from '../crypto/primitives.js';
import { AuditLogError } from './merkle.js';
import { isNoteKeyName, parseSignedNote, type NoteVerifierKey } from './note.js';

/** The signature type byte of Ed25519 `cosignature/v1` keys (C2SP tlog-cosignature). */
export const COSIGNATURE_ALG = 0x04;
/** Bytes after the key id in a cosignature: the 8-byte timestamp and the 64-byte Ed25519 signature. */
const TIMESTAMPED_SIGNATURE_BYTES = 8 + 64;
/** A timestamp MUST NOT exceed 2^63 - 1 (C2SP tlog-cosignature). */
const MAX_TIMESTAMP = 2n ** 63n - 1n;

/**
 * A cosigner's (witness's) parsed verifier key: its name, key id (computed with
 * {@link COSIGNATURE_ALG}, as an unsigned integer) and Ed25519 public key (32 bytes).
 */
export type WitnessVerifierKey = NoteVerifierKey;

/** A verified cosignature: the witness's name and the time it cosigned at (POSIX seconds). */
export interface VerifiedCosignature {
  name: string;
  time: number;
}

const malformed = (why: string): never => {
  throw new AuditLogError('malformed', why);
};
const hex8 = (n: number) => n.toString(16).padStart(8, '0');

/** The key id of an Ed25519 cosigner: first 4 bytes of SHA-256(name || 0x0A || 0x04 || key), big-endian. */
export function cosignatureKeyId(name: string, publicKey: Uint8Array): number {
  const h = sha256(concatBytes(utf8Encode(name), Uint8Array.of(0x0a, COSIGNATURE_ALG), publicKey));
  return ((h[0]! << 24) | (h[1]! << 16) | (h[2]! << 8) | h[3]!) >>> 0;
}

/**
 * The verifier key (`name+id+base64(0x04 || key)`) of the cosigner `name` with the 32-byte Ed25519 `publicKey`.
 * @throws AuditLogError `malformed` when the name is empty or holds whitespace or `+`, or the key is not 32 bytes.
 */
export function formatWitnessVkey(name: string, publicKey: Uint8Array): string {
  if (!isNoteKeyName(name)) malformed('a key name must be non-empty, without spaces or "+"');
  if (publicKey.length !== 32) malformed('an Ed25519 public key is 32 bytes');
  return `${name}+${hex8(cosignatureKeyId(name, publicKey))}+${bytesToBase64(concatBytes(Uint8Array.of(COSIGNATURE_ALG), publicKey))}`;
}

/**
 * Parse a cosigner's verifier key, checking its key id against its name and key.
 * @throws AuditLogError `malformed` for anything but a well-formed type-0x04 Ed25519 vkey.
 */
export function parseWitnessVkey(vkey: string): WitnessVerifierKey {
  const parts = vkey.trim().split('+');
  if (parts.length < 3) malformed('a vkey is <name>+<key id>+<key>');
  const [name, id] = parts as [string, string];
  if (!isNoteKeyName(name) || !/^[0-9a-f]{8}$/.test(id)) malformed('a vkey is <name>+<8 hex key id>+<base64 key>');
  let key: Uint8Array;
  try {
    key = base64ToBytes(parts.slice(2).join('+'), 'vkey key');
  } catch {
    return malformed('the vkey key is not base64');
  }
  if (key.length !== 33 || key[0] !== COSIGNATURE_ALG) malformed('the vkey is not an Ed25519 cosignature key (0x04 and 32 bytes)');
  const publicKey = key.slice(1);
  const keyId = cosignatureKeyId(name, publicKey);
  if (hex8(keyId) !== id) malformed('the vkey key id does not match its name and key');
  return { name, keyId, publicKey };
}

function timestamp(time: number | bigint): bigint {
  const t = typeof time === 'bigint' ? time : Number.isSafeInteger(time) ? BigInt(time) : -1n;
  if (t < 0n || t > MAX_TIMESTAMP) malformed('a cosignature time is an integer number of seconds in 0..2^63-1');
  return t;
}

/**
 * The message a `cosignature/v1` signs: `cosignature/v1\ntime <seconds>\n` || the checkpoint text.
 * @param checkpointText the note's text (its signed part), ending with a newline
 * @param timeSeconds POSIX seconds (an integer in 0..2^63-1)
 * @throws AuditLogError `malformed` for a text without its final newline or a time out of range
 */
export function cosignatureMessage(checkpointText: string, timeSeconds: number | bigint): Uint8Array {
  if (!checkpointText.endsWith('\n')) malformed('a checkpoint text ends with a newline');
  return utf8Encode(`cosignature/v1\ntime ${timestamp(timeSeconds)}\n${checkpointText}`);
}

/**
 * The cosignature line (ending with a newline) of the cosigner `name` with the Ed25519 seed
 * `secretKey` (32 bytes) on `checkpointText`, at `timeSeconds` (POSIX seconds).
 * @throws AuditLogError `malformed` for a bad name, text or time
 */
export function cosignLine(checkpointText: string, signer: { name: string; secretKey: Uint8Array }, timeSeconds: number): string {
  if (!isNoteKeyName(signer.name)) malformed('a key name must be non-empty, without spaces or "+"');
  const t = timestamp(timeSeconds);
  const signature = ed25519.sign(cosignatureMessage(checkpointText, t), signer.secretKey);
  const blob = new Uint8Array(4 + TIMESTAMPED_SIGNATURE_BYTES);
  const view = new DataView(blob.buffer);
  view.setUint32(0, cosignatureKeyId(signer.name, ed25519.getPublicKey(signer.secretKey)));
  view.setBigUint64(4, t);
  blob.set(signature, 12);
  return `\u2014 ${signer.name} ${bytesToBase64(blob)}\n`;
}

/**
 * Split the part after the key id of a cosignature (`timestamped_signature`) into its time and
 * its Ed25519 signature.
 * @throws AuditLogError `bad_signature` when it is not 72 bytes or its time exceeds 2^63-1
 */
export function splitCosignature(sig: Uint8Array): { time: bigint; signature: Uint8Array } {
  if (sig.length !== TIMESTAMPED_SIGNATURE_BYTES) throw new AuditLogError('bad_signature', 'a cosignature is a timestamp and an Ed25519 signature (72 bytes)');
  const time = new DataView(sig.buffer, sig.byteOffset, sig.byteLength).getBigUint64(0);
  if (time > MAX_TIMESTAMP) throw new AuditLogError('bad_signature', 'a cosignature timestamp exceeds 2^63-1');
  return { time, signature: sig.subarray(8) };
}

/**
 * The valid cosignatures on the signed note `note` by the witnesses `witnesses`: one per witness
 * name (its latest time when it signed more than once, e.g. with two keys across a rotation). Signature lines by other keys (the log's own, other
 * witnesses') are ignored; a quorum policy counts the answer's entries.
 * @param opts.notAfter refuse cosignatures timestamped after this time (POSIX seconds), e.g. now plus a clock skew
 * @throws AuditLogError `malformed` for a malformed note; `bad_signature` when a line by one of
 *   `witnesses` does not verify, or is timestamped after `opts.notAfter` or beyond 2^53-1
 */
export function verifyCosignatures(note: string, witnesses: readonly WitnessVerifierKey[], opts: { notAfter?: number } = {}): VerifiedCosignature[] {
  const { text, signatures } = parseSignedNote(note);
  const found = new Map<string, VerifiedCosignature>();
  for (const sig of signatures) {
    const key = witnesses.find((k) => k.name === sig.name && k.keyId === sig.keyId);
    if (!key) continue;
    const who = `${key.name}+${hex8(key.keyId)}`;
    const { time, signature } = splitCosignature(sig.signature);
    if (!ed25519Verify(signature, cosignatureMessage(text, time), key.publicKey)) throw new AuditLogError('bad_signature', `the cosignature of ${who} does not verify`);
    if (time > BigInt(Number.MAX_SAFE_INTEGER) || (opts.notAfter !== undefined && Number(time) > opts.notAfter)) {
      throw new AuditLogError('bad_signature', `the cosignature of ${who} is timestamped in the future (${time})`);
    }
    const prev = found.get(key.name);
    if (!prev || prev.time < Number(time)) found.set(key.name, { name: key.name, time: Number(time) });
  }
  return [...found.values()];
}
