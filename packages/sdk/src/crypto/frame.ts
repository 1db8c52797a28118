/**
 * The wire frame of an X3DH + Double Ratchet message (protocol `x3dh-dr`, frame version 2).
 *
 * A frame is a header, an Ed25519 signature over the header by the sender's identity key, and the
 * XChaCha20-Poly1305 ciphertext. It travels as the two fields the server stores opaquely:
 *
 * - `header_blob`: base64 of the UTF-8 JSON `{"v":2,"protocol":"x3dh-dr","header":{…},"signature":"<hex>"}`
 * - `ciphertext`:  base64 of the AEAD output (ciphertext || 16-byte Poly1305 tag)
 *
 * Header fields: `device_id` (sender device UUID), `recipient_device_id` (the device the frame is
 * for), `conversation_id` (the session context both devices name the conversation by),
 * `ratchet_pub` (sender's current ratchet public key, hex), `msg_num` (N, message number in the
 * sending chain), `pn` (PN, length of the previous sending chain), `nonce` (the 24-byte random
 * XChaCha20 nonce, hex) and, on the initiator's messages until the first reply arrives, `x3dh`
 * (what the responder needs for X3DH §3.3, with `x3dh.pq` when the session was agreed with
 * PQXDH: the KEM ciphertext, ~2.2 kB more per header). The receiving session checks
 * `conversation_id` and `recipient_device_id` against its own context (`wrong_context`), so a
 * frame replayed by the server into another conversation or to another device is refused.
 *
 * Canonical header bytes ({@link headerSigningBytes}): the UTF-8 bytes of the JSON object
 * `{"header":{…},"protocol":"x3dh-dr","v":2}` serialised with object keys sorted by code unit,
 * no whitespace and integers in decimal (RFC 8785 JCS for this value set). The signature covers
 * them domain-separated ({@link headerSignatureMessage}: `parley/v2/message-header` || 0x00 ||
 * canonical bytes, `@parley/protocol` signing domains); the AEAD associated data is the X3DH
 * associated data followed by the canonical bytes themselves. So version, protocol and every
 * header field are authenticated twice.
 *
 * Version 1 frames (no conversation binding, undomained signature) are refused with
 * `unsupported_version`: their sender runs an older Parley SDK and must upgrade.
 */
import { SIGNING_DOMAINS, domainSeparated } from '@parley/protocol';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import {
  CryptoError,
  SIGNATURE_BYTES,
  base64ToBytes,
  bytesToBase64,
  bytesToHex,
  ed25519Verify,
  hexToBytes,
  utf8Decode,
  utf8Encode,
} from './primitives.js';

/** `v` of the header blob: 2 since headers name their conversation and recipient device. */
export const FRAME_VERSION = 2;
/** `protocol` of the header blob (the legacy 1:1 protocol of contract §1.3). */
export const FRAME_PROTOCOL = 'x3dh-dr';
/** Upper bound on the `header_blob` string, in base64 characters (a real one is ~500). */
export const MAX_HEADER_BLOB_CHARS = 8192;
/** Upper bound on `msg_num` and `pn` (32-bit counters). */
export const MAX_COUNTER = 0xffffffff;

const Hex32 = Type.String({ pattern: '^[0-9a-f]{64}$' });
/** A prekey identifier: 16 bytes, 32 lowercase hex characters. */
const PrekeyId = Type.String({ pattern: '^[0-9a-f]{32}$' });

/**
 * The PQXDH additions to the initial-message fields (PQXDH §3.3): the KEM, the identifier of the
 * responder's PQ prekey used and the ML-KEM-768 ciphertext CT (1088 bytes, hex). Absent on
 * classical X3DH messages, whose headers stay byte for byte what they were.
 */
export const PqHeaderSchema = Type.Object(
  {
    kem: Type.Literal('ML-KEM-768'),
    prekey_id: PrekeyId,
    ciphertext: Type.String({ pattern: '^[0-9a-f]{2176}$' }),
  },
  { additionalProperties: false },
);
export type PqHeader = Static<typeof PqHeaderSchema>;

/** The X3DH initial-message fields (X3DH §3.3): who Alice is and which keys she used; `pq` for PQXDH. */
export const X3dhHeaderSchema = Type.Object(
  {
    /** IK_A: initiator's Ed25519 identity public key, hex. */
    identity_key: Hex32,
    /** EK_A: initiator's X25519 ephemeral public key, hex. */
    ephemeral_key: Hex32,
    /**
     * SPK_B, hex: the responder's signed prekey when `signed_prekey_id` is set, else (a legacy
     * peer that published none) its `ephemeral_public_key`.
     */
    signed_prekey: Hex32,
    /** Identifier of the signed prekey SPK_B used (X3DH §3.3; crypto/prekeys.ts `prekeyId`). */
    signed_prekey_id: Type.Optional(PrekeyId),
    /** Identifier of the one-time prekey OPK_B used, when one was (X3DH §3.3: DH4). */
    one_time_prekey_id: Type.Optional(PrekeyId),
    /** PQXDH only: the KEM ciphertext and the PQ prekey it was made for. */
    pq: Type.Optional(PqHeaderSchema),
  },
  { additionalProperties: false },
);
export type X3dhHeader = Static<typeof X3dhHeaderSchema>;

/** Upper bound on `conversation_id` of a header (and of a session context), in characters. */
export const MAX_CONVERSATION_ID_CHARS = 256;

/**
 * The signed message header (Double Ratchet §3.2 HEADER with `pn`, the X3DH fields, and the
 * session context: sender, recipient and conversation).
 */
export const MessageHeaderSchema = Type.Object(
  {
    device_id: Type.String({ minLength: 1, maxLength: 128 }),
    recipient_device_id: Type.String({ minLength: 1, maxLength: 128 }),
    conversation_id: Type.String({ minLength: 1, maxLength: MAX_CONVERSATION_ID_CHARS }),
    ratchet_pub: Hex32,
    msg_num: Type.Integer({ minimum: 0, maximum: MAX_COUNTER }),
    pn: Type.Integer({ minimum: 0, maximum: MAX_COUNTER }),
    nonce: Type.String({ pattern: '^[0-9a-f]{48}$' }),
    x3dh: Type.Optional(X3dhHeaderSchema),
  },
  { additionalProperties: false },
);
export type MessageHeader = Static<typeof MessageHeaderSchema>;

const HeaderBlobSchema = Type.Object(
  {
    v: Type.Literal(FRAME_VERSION),
    protocol: Type.Literal(FRAME_PROTOCOL),
    header: MessageHeaderSchema,
    signature: Type.String({ pattern: '^[0-9a-f]{128}$' }),
  },
  { additionalProperties: false },
);

/** A decoded frame: header, 64-byte Ed25519 signature, AEAD ciphertext (with tag). */
export interface Frame {
  header: MessageHeader;
  signature: Uint8Array;
  ciphertext: Uint8Array;
}

/** The two wire fields of a message (contract §2.4), both base64. */
export interface WireMessage {
  header_blob: string;
  ciphertext: string;
}

type Canonical = string | number | boolean | null | Canonical[] | { [key: string]: Canonical | undefined };

/**
 * Canonical JSON (RFC 8785 JCS restricted to strings, safe integers, booleans, null, arrays and
 * objects): keys sorted by UTF-16 code unit, no whitespace; `undefined` members are omitted.
 */
export function canonicalJson(value: Canonical): string {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new CryptoError('invalid_input', 'canonical JSON holds only safe integers');
    return String(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const members = Object.keys(value)
    .filter((k) => value[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k] as Canonical)}`);
  return `{${members.join(',')}}`;
}

/** The canonical header bytes (RFC 8785): what the AEAD authenticates after the X3DH AD (see module doc). */
export function headerSigningBytes(header: MessageHeader): Uint8Array {
  return utf8Encode(canonicalJson({ header: header as unknown as Canonical, protocol: FRAME_PROTOCOL, v: FRAME_VERSION }));
}

/**
 * What the sender's identity key signs for a header: `parley/v2/message-header` || 0x00 ||
 * {@link headerSigningBytes} (`domainSeparated` of `@parley/protocol`).
 */
export function headerSignatureMessage(header: MessageHeader): Uint8Array {
  return domainSeparated(SIGNING_DOMAINS.messageHeader, headerSigningBytes(header));
}

/** True when `value` is a well-formed {@link MessageHeader}. */
export function isMessageHeader(value: unknown): value is MessageHeader {
  return Value.Check(MessageHeaderSchema, value);
}

/**
 * Verify the frame's signature against the sender's Ed25519 identity public key (32 bytes).
 * Never throws.
 */
export function verifyFrameSignature(frame: Frame, senderIdentityKey: Uint8Array): boolean {
  return ed25519Verify(frame.signature, headerSignatureMessage(frame.header), senderIdentityKey);
}

/** Encode a frame into the two wire fields (`header_blob`, `ciphertext`), base64. */
export function encodeFrame(frame: Frame): WireMessage {
  if (!isMessageHeader(frame.header)) throw new CryptoError('invalid_input', 'malformed message header');
  if (frame.signature.length !== SIGNATURE_BYTES) throw new CryptoError('invalid_input', 'signature must be 64 bytes');
  const blob = { v: FRAME_VERSION, protocol: FRAME_PROTOCOL, header: frame.header, signature: bytesToHex(frame.signature) };
  return {
    header_blob: bytesToBase64(utf8Encode(JSON.stringify(blob))),
    ciphertext: bytesToBase64(frame.ciphertext),
  };
}

/**
 * Refuse a header blob of protocol `x3dh-dr` in another version than {@link FRAME_VERSION}.
 * @throws CryptoError `unsupported_version`.
 */
function checkVersion(parsed: unknown): void {
  if (typeof parsed !== 'object' || parsed === null) return;
  const { v, protocol } = parsed as { v?: unknown; protocol?: unknown };
  if (protocol !== FRAME_PROTOCOL || v === FRAME_VERSION || typeof v !== 'number') return;
  const why =
    v < FRAME_VERSION
      ? 'the sender runs an older Parley SDK whose messages are not bound to their conversation and recipient; it must upgrade'
      : 'the sender runs a newer Parley SDK; upgrade this one';
  throw new CryptoError('unsupported_version', `x3dh-dr frame version ${v} is not supported (this SDK speaks ${FRAME_VERSION}): ${why}`);
}

/**
 * Parse and validate the two wire fields. Checks shape only: the signature is NOT verified here —
 * use {@link decodeAndVerifyFrame} (or a session's `decrypt`) before trusting any field.
 * @throws CryptoError `unsupported_version` for an `x3dh-dr` frame of another version (v1: an
 *   older SDK without conversation binding); `malformed_frame` when a field is not base64, not
 *   UTF-8 JSON or of the wrong shape.
 */
export function decodeFrame(wire: WireMessage): Frame {
  let parsed: unknown;
  try {
    if (!wire || typeof wire.header_blob !== 'string' || typeof wire.ciphertext !== 'string') {
      throw new Error('header_blob and ciphertext must be strings');
    }
    if (wire.header_blob.length > MAX_HEADER_BLOB_CHARS) throw new Error('header_blob too large');
    parsed = JSON.parse(utf8Decode(base64ToBytes(wire.header_blob, 'header_blob')));
  } catch (cause) {
    throw new CryptoError('malformed_frame', `malformed frame: ${(cause as Error).message}`, { cause });
  }
  checkVersion(parsed);
  try {
    if (!Value.Check(HeaderBlobSchema, parsed)) throw new Error(`header_blob does not have the x3dh-dr v${FRAME_VERSION} shape`);
    return {
      header: parsed.header,
      signature: hexToBytes(parsed.signature, SIGNATURE_BYTES, 'signature'),
      ciphertext: base64ToBytes(wire.ciphertext, 'ciphertext'),
    };
  } catch (cause) {
    throw new CryptoError('malformed_frame', `malformed frame: ${(cause as Error).message}`, { cause });
  }
}

/**
 * Decode the wire fields and verify the header signature against the sender's identity key.
 * @throws CryptoError `malformed_frame` (see {@link decodeFrame}) or `bad_signature`.
 */
export function decodeAndVerifyFrame(wire: WireMessage, senderIdentityKey: Uint8Array): Frame {
  const frame = decodeFrame(wire);
  if (!verifyFrameSignature(frame, senderIdentityKey)) {
    throw new CryptoError('bad_signature', 'header signature does not verify against the sender identity key');
  }
  return frame;
}
