/**
 * The encrypted-envelope pipeline of every message path: conversation messages
 * (modules/conversations/messages.ts), room envelopes (modules/rooms/send.ts), A2A messages and
 * key exchanges (modules/a2a/messages.ts, key-exchange.ts) and rental-room envelopes
 * (modules/marketplace/room.ts). The service never inspects an envelope (contract §2.4): a
 * `header_blob` and a `ciphertext` arrive base64 (the protocol's `Base64` and `Ciphertext`
 * schemas, already checked by the route or frame schema), are decoded here once, checked against
 * the ciphertext limit (design §8.12, `LIMIT_MESSAGE_BYTES`), stored as bytes, and encoded back to
 * base64 on the way out. Which recipients an envelope may name stays with each path (a
 * conversation's other side, a room's other members or `*`, a channel's peer, a rental room's
 * other side).
 */
import { AppError, ErrorCode, badRequest } from './errors.js';

/** The two base64 fields of an envelope as the wire carries them (REST bodies and socket frames). */
export interface EnvelopeBlobs {
  header_blob: string;
  ciphertext: string;
}

/** An envelope's decoded bytes: `header` from `header_blob`, `ciphertext` at most the limit. */
export interface DecodedBlobs {
  header: Buffer;
  ciphertext: Buffer;
}

/**
 * Decode a base64 wire field (`header_blob`, `ciphertext`: RFC 4648 §4 alphabet, padded, the
 * protocol's `Base64` pattern `^[A-Za-z0-9+/]*={0,2}$` with a length that is a multiple of 4);
 * 400 `{field} must be base64` when it is not. Checked on the decoded bytes instead of a second run
 * of the pattern (the frame and route schemas already ran it; it costs about 3 µs per 400
 * characters, the decode under 1): Node's decoder skips or stops at characters outside the
 * alphabet and takes the URL-safe `-` and `_`, so a string is base64 exactly when its length is a
 * multiple of 4, it decodes to three bytes per four characters less its `=` padding, and it has
 * no `-` or `_` (test/http/base64-decode.test.ts compares this with the pattern).
 */
export function decodeBase64(field: string, s: string): Buffer {
  const bytes = Buffer.from(s, 'base64');
  const padding = s.endsWith('==') ? 2 : s.endsWith('=') ? 1 : 0;
  if (s.length % 4 !== 0 || bytes.length !== (s.length / 4) * 3 - padding || s.includes('-') || s.includes('_')) throw badRequest(`${field} must be base64`);
  return bytes;
}

/**
 * Decode and check one envelope, in this order: `header_blob` base64, `ciphertext` base64, then
 * the ciphertext's decoded size against `maxCiphertextBytes` (bytes; design §8.12). `prefix` is
 * put before the field names of the 400 details (`envelopes[2].` for an envelope of a list
 * whose errors name its index).
 * @throws 400 `{prefix}header_blob must be base64` / `{prefix}ciphertext must be base64`;
 *   413 `ciphertext exceeds {maxCiphertextBytes} bytes`.
 */
export function decodeEnvelope(e: EnvelopeBlobs, maxCiphertextBytes: number, prefix = ''): DecodedBlobs {
  const header = decodeBase64(`${prefix}header_blob`, e.header_blob);
  const ciphertext = decodeBase64(`${prefix}ciphertext`, e.ciphertext);
  if (ciphertext.length > maxCiphertextBytes) throw new AppError(ErrorCode.PayloadTooLarge, `ciphertext exceeds ${maxCiphertextBytes} bytes`);
  return { header, ciphertext };
}

/**
 * A stored blob on the wire: its base64 (RFC 4648 §4, padded), or `''` for a blob that is not kept
 * (a blocked message's, or an MLS recipient row's, which carry no bytes).
 */
export const encodeBlob = (b: Buffer | null | undefined): string => b?.toString('base64') ?? '';

/** The wire blobs of a stored envelope (`headerBlob`, `ciphertext`: bytes, or null when not kept), each by {@link encodeBlob}. */
export const blobsOut = (m: { headerBlob: Buffer | null; ciphertext: Buffer | null }): EnvelopeBlobs => ({ header_blob: encodeBlob(m.headerBlob), ciphertext: encodeBlob(m.ciphertext) });
