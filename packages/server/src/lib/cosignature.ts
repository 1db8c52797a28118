/**
 * Witness verifier keys and cosignature lines (C2SP tlog-cosignature, Ed25519 `cosignature/v1`),
 * for the key directory's witness policy and checkpoint publication (design §8.39):
 *
 * - a witness vkey is `<name>+<key id, 8 hex>+<base64(0x04 || Ed25519 public key, 32 bytes)>`
 *   (C2SP signed-note vkeys, signature type 0x04), the key id being the first 4 bytes of
 *   SHA-256(name || 0x0A || 0x04 || public key);
 * - a cosignature line is `— <name> base64(key id (4) || time (8, big-endian) || signature (64))`,
 *   the signature over `cosignature/v1\ntime <time>\n` followed by the checkpoint's note text.
 *
 * Ed25519 and SHA-256 are node:crypto's.
 */
import { createHash, createPublicKey, verify } from 'node:crypto';

/** The signature type byte of Ed25519 `cosignature/v1` keys. */
const COSIGNATURE_ALG = 0x04;
/** The DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410 §4), followed by the 32 key bytes. */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const MAX_TIME = 2n ** 63n - 1n;

/** A parsed witness vkey: its name, key id (8 lowercase hex characters) and Ed25519 public key (32 bytes). */
export interface WitnessKey {
  name: string;
  keyId: string;
  publicKey: Buffer;
}

/** A C2SP signed-note key name: non-empty, no Unicode whitespace, no `+`. */
const isKeyName = (name: string) => name.length > 0 && !/[\s+]/u.test(name);

/** The key id of an Ed25519 cosigner: the first 4 bytes of SHA-256(name || 0x0A || 0x04 || key), 8 hex characters. */
function keyIdOf(name: string, publicKey: Uint8Array): string {
  return createHash('sha256').update(name, 'utf8').update(Uint8Array.of(0x0a, COSIGNATURE_ALG)).update(publicKey).digest().subarray(0, 4).toString('hex');
}

/**
 * Parse a witness vkey (C2SP tlog-cosignature, type 0x04), checking its key id against its name
 * and key.
 * @returns the key, or undefined for anything but a well-formed Ed25519 cosignature vkey
 */
export function parseWitnessVkey(vkey: string): WitnessKey | undefined {
  const parts = vkey.split('+');
  if (parts.length < 3) return undefined;
  const [name, keyId] = parts as [string, string];
  const b64 = parts.slice(2).join('+');
  if (!isKeyName(name) || !/^[0-9a-f]{8}$/.test(keyId) || !BASE64.test(b64)) return undefined;
  const key = Buffer.from(b64, 'base64');
  if (key.length !== 33 || key[0] !== COSIGNATURE_ALG || key.toString('base64') !== b64) return undefined;
  const publicKey = key.subarray(1);
  if (keyIdOf(name, publicKey) !== keyId) return undefined;
  return { name, keyId, publicKey };
}

/** The text of a signed note: everything up to and including the line before the first empty line. */
export function noteText(note: string): string {
  const end = note.indexOf('\n\n');
  if (end < 0) throw new Error('a signed note has an empty line between its text and its signatures');
  return note.slice(0, end + 1);
}

/**
 * Whether `line` (a cosignature line, with or without its final newline) is `witness`'s valid
 * `cosignature/v1` on the signed note `note` (its text is what is signed).
 * @returns the cosignature's time (POSIX seconds), or undefined when the line is not one by
 *   `witness` or does not verify
 */
export function verifyCosignatureLine(witness: WitnessKey, note: string, line: string): bigint | undefined {
  const m = /^\u2014 (\S+) ([A-Za-z0-9+/]+={0,2})\n?$/u.exec(line);
  if (!m || m[1] !== witness.name) return undefined;
  const blob = Buffer.from(m[2]!, 'base64');
  if (blob.length !== 4 + 8 + 64 || blob.subarray(0, 4).toString('hex') !== witness.keyId) return undefined;
  const time = blob.readBigUInt64BE(4);
  if (time > MAX_TIME) return undefined;
  const message = Buffer.from(`cosignature/v1\ntime ${time}\n${noteText(note)}`, 'utf8');
  const key = createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, witness.publicKey]), format: 'der', type: 'spki' });
  return verify(null, message, key, blob.subarray(12)) ? time : undefined;
}
