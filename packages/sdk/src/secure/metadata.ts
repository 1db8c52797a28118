/**
 * The authenticated-metadata envelope: what a `SecureMessenger` actually encrypts, in every
 * protocol (X3DH + Double Ratchet and MLS alike), so that the metadata the recipient acts on comes
 * from the sender and not from the service.
 *
 * `message_type`, `priority` and `topic_id` travel in clear next to the ciphertext (the service
 * routes and filters by them), so the service could rewrite them on the way. The sender therefore
 * also seals them inside the ciphertext; the recipient compares the service's values with the
 * sealed ones and, when they differ, uses the sealed ones and reports the mismatch.
 *
 * Layout of the encrypted bytes:
 * ```
 * MAGIC (4 bytes: 0x00 'P' 'M' 0x01) || u32 big-endian length L || L bytes of UTF-8 JSON || application plaintext
 * ```
 * The JSON is the RFC 8785 canonical form of {@link AuthenticatedMeta} with the service's
 * defaults filled in (`message_type` `text`, `priority` `normal`), so an omitted field compares
 * with what the service reports for it. A message sealed without `topic_id` is filed by the
 * service under the conversation's default topic, which the sender does not know: its topic is
 * then the service's claim, unchecked ({@link metaMismatch}). The leading 0x00 keeps an older SDK from mistaking the
 * envelope for a content envelope (the `{type, payload}` JSON of `content/types.ts`).
 */
import { canonicalJson } from '../crypto/frame.js';
import { utf8Decode, utf8Encode } from '../crypto/primitives.js';

/** First bytes of an envelope (version 1 of this layout). */
export const META_ENVELOPE_MAGIC = Uint8Array.of(0x00, 0x50, 0x4d, 0x01);
/** The service's `message_type` when the sender names none. */
export const DEFAULT_MESSAGE_TYPE = 'text';
/** The service's `priority` when the sender names none. */
export const DEFAULT_PRIORITY = 'normal';
/** Upper bound on the sealed metadata JSON, in bytes. */
const MAX_META_BYTES = 4096;

/** The per-message metadata a sender authenticates (values as the service reports them). */
export interface AuthenticatedMeta {
  message_type: string;
  priority: string;
  topic_id?: string;
}

/** A metadata field the service reported differently from the sender's sealed value. */
export type MetaField = keyof AuthenticatedMeta;

/** Thrown by {@link openMeta} for bytes that are not an envelope (`legacy`: no magic at all). */
export class MetaEnvelopeError extends Error {
  override readonly name = 'MetaEnvelopeError';
  constructor(
    message: string,
    /** True when the bytes do not start with the magic: the sender predates the envelope. */
    readonly legacy: boolean,
  ) {
    super(message);
  }
}

/** The metadata to seal for what a sender passes (the service's defaults filled in). */
export function resolveMeta(options: { message_type?: string; priority?: string; topic_id?: string }): AuthenticatedMeta {
  return {
    message_type: options.message_type ?? DEFAULT_MESSAGE_TYPE,
    priority: options.priority ?? DEFAULT_PRIORITY,
    ...(options.topic_id !== undefined ? { topic_id: options.topic_id } : {}),
  };
}

/** MAGIC || u32be(L) || canonical JSON of `meta` || `plaintext` (see the file comment). */
export function sealMeta(meta: AuthenticatedMeta, plaintext: Uint8Array): Uint8Array {
  const json = utf8Encode(canonicalJson({ ...meta }));
  const magic = META_ENVELOPE_MAGIC.length;
  const out = new Uint8Array(magic + 4 + json.length + plaintext.length);
  out.set(META_ENVELOPE_MAGIC, 0);
  new DataView(out.buffer).setUint32(magic, json.length);
  out.set(json, magic + 4);
  out.set(plaintext, magic + 4 + json.length);
  return out;
}

function startsWithMagic(bytes: Uint8Array): boolean {
  return META_ENVELOPE_MAGIC.every((b, i) => bytes[i] === b);
}

function parseMeta(json: Uint8Array): AuthenticatedMeta {
  const o: unknown = JSON.parse(utf8Decode(json));
  const isStr = (v: unknown) => typeof v === 'string';
  if (typeof o !== 'object' || o === null) throw new Error('not an object');
  const { message_type, priority, topic_id } = o as Record<string, unknown>;
  if (!isStr(message_type) || !isStr(priority) || (topic_id !== undefined && !isStr(topic_id))) throw new Error('wrong field types');
  return { message_type: message_type as string, priority: priority as string, ...(topic_id !== undefined ? { topic_id: topic_id as string } : {}) };
}

/**
 * Split decrypted bytes into the sealed metadata and the application plaintext.
 * @throws MetaEnvelopeError `legacy` when the bytes carry no envelope (an older sender), else for
 *   a malformed one.
 */
export function openMeta(bytes: Uint8Array): { meta: AuthenticatedMeta; plaintext: Uint8Array } {
  const magic = META_ENVELOPE_MAGIC.length;
  if (bytes.length < magic + 4 || !startsWithMagic(bytes)) {
    throw new MetaEnvelopeError('the message carries no authenticated metadata: the sender runs an older Parley SDK and must upgrade', true);
  }
  const length = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(magic);
  if (length > MAX_META_BYTES || magic + 4 + length > bytes.length) throw new MetaEnvelopeError('malformed metadata envelope: bad length', false);
  try {
    return { meta: parseMeta(bytes.subarray(magic + 4, magic + 4 + length)), plaintext: bytes.slice(magic + 4 + length) };
  } catch (err) {
    throw new MetaEnvelopeError(`malformed metadata envelope: ${(err as Error).message}`, false);
  }
}

/** The metadata the service claims for a received message (the cleartext fields of its receive frame). */
export interface ClaimedMeta {
  message_type: string;
  priority: string;
  topic_id?: string | undefined;
}

/**
 * The fields where the service's claim differs from the sealed metadata (empty: they agree).
 * `topic_id` is compared only when the sender sealed one (see the file comment).
 */
export function metaMismatch(claimed: ClaimedMeta, sealed: AuthenticatedMeta): MetaField[] {
  const fields: MetaField[] = sealed.topic_id === undefined ? ['message_type', 'priority'] : ['message_type', 'priority', 'topic_id'];
  return fields.filter((f) => (claimed[f] || undefined) !== sealed[f]);
}

/**
 * The metadata to hand to the application: the sealed values, and the service's topic when the
 * sender sealed none (the conversation's default topic).
 */
export function deliveredMeta(claimed: ClaimedMeta, sealed: AuthenticatedMeta): AuthenticatedMeta {
  const topic = sealed.topic_id ?? (claimed.topic_id || undefined);
  return { message_type: sealed.message_type, priority: sealed.priority, ...(topic !== undefined ? { topic_id: topic } : {}) };
}
