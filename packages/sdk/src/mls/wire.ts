/**
 * The envelope MLS traffic travels in through Parley's ordinary message fields. The server treats
 * both fields as opaque:
 *
 *   header_blob = base64(UTF-8 JSON {v: 1, protocol: "mls", group_id, kind, epoch})
 *   ciphertext  = base64(MLSMessage bytes, RFC 9420 §6 encoding)
 *
 * `epoch` is the epoch the MLS message belongs to: for an application message or a commit, the
 * epoch it was created in (a commit moves the group from `epoch` to `epoch + 1`); for a Welcome,
 * the epoch the new member joins at. X3DH/Double Ratchet headers never carry `protocol: "mls"`, so
 * `isMlsHeaderBlob` tells the two apart on receipt.
 */
import { decodeMlsMessage, type MLSMessage } from 'ts-mls';
import { base64ToBytes, bytesToBase64, utf8Decode, utf8Encode } from './base64.js';
import { MlsClientError } from './errors.js';

export type MlsWireKind = 'welcome' | 'commit' | 'application';

export interface MlsEnvelopeHeader {
  v: 1;
  protocol: 'mls';
  group_id: string;
  kind: MlsWireKind;
  epoch: number;
}

/** The two wire fields of a Parley message, both base64 strings. */
export interface MlsWireFields {
  header_blob: string;
  ciphertext: string;
}

export interface MlsEnvelopeInput {
  groupId: string;
  kind: MlsWireKind;
  epoch: number | bigint;
  /** The encoded MLSMessage (Welcome, commit or application message) as produced by MlsClient. */
  message: Uint8Array;
}

const KINDS: readonly MlsWireKind[] = ['welcome', 'commit', 'application'];

function toEpochNumber(epoch: number | bigint): number {
  const n = typeof epoch === 'bigint' ? Number(epoch) : epoch;
  if (!Number.isSafeInteger(n) || n < 0 || (typeof epoch === 'bigint' && BigInt(n) !== epoch)) {
    throw new MlsClientError('invalid_argument', 'epoch must be a non-negative safe integer');
  }
  return n;
}

export function encodeMlsHeader(groupId: string, kind: MlsWireKind, epoch: number | bigint): string {
  if (typeof groupId !== 'string' || groupId.length === 0) {
    throw new MlsClientError('invalid_argument', 'group_id must be a non-empty string');
  }
  if (!KINDS.includes(kind)) throw new MlsClientError('invalid_argument', `unknown kind ${String(kind)}`);
  const header: MlsEnvelopeHeader = { v: 1, protocol: 'mls', group_id: groupId, kind, epoch: toEpochNumber(epoch) };
  return bytesToBase64(utf8Encode(JSON.stringify(header)));
}

/** Parses and validates a header_blob; throws `MlsClientError('malformed_message')` if it is not an MLS v1 header. */
export function decodeMlsHeader(headerBlob: string): MlsEnvelopeHeader {
  let parsed: unknown;
  try {
    const text = utf8Decode(base64ToBytes(headerBlob));
    if (text === undefined) throw new TypeError('header is not UTF-8');
    parsed = JSON.parse(text);
  } catch (cause) {
    throw new MlsClientError('malformed_message', 'header_blob is not base64 UTF-8 JSON', { cause });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new MlsClientError('malformed_message', 'header_blob is not a JSON object');
  }
  const h = parsed as Record<string, unknown>;
  if (h.v !== 1) throw new MlsClientError('malformed_message', 'unsupported MLS envelope version');
  if (h.protocol !== 'mls') throw new MlsClientError('malformed_message', 'header_blob is not an MLS envelope');
  if (typeof h.group_id !== 'string' || h.group_id.length === 0) {
    throw new MlsClientError('malformed_message', 'group_id missing');
  }
  if (typeof h.kind !== 'string' || !KINDS.includes(h.kind as MlsWireKind)) {
    throw new MlsClientError('malformed_message', 'kind must be welcome, commit or application');
  }
  if (typeof h.epoch !== 'number' || !Number.isSafeInteger(h.epoch) || h.epoch < 0) {
    throw new MlsClientError('malformed_message', 'epoch must be a non-negative integer');
  }
  return { v: 1, protocol: 'mls', group_id: h.group_id, kind: h.kind as MlsWireKind, epoch: h.epoch };
}

/** True when a header_blob carries an MLS envelope (as opposed to an X3DH/Double Ratchet header). */
export function isMlsHeaderBlob(headerBlob: string): boolean {
  try {
    decodeMlsHeader(headerBlob);
    return true;
  } catch {
    return false;
  }
}

export function encodeMlsEnvelope(input: MlsEnvelopeInput): MlsWireFields {
  return {
    header_blob: encodeMlsHeader(input.groupId, input.kind, input.epoch),
    ciphertext: bytesToBase64(input.message),
  };
}

/** What can be read from an MLSMessage without any keys. */
export type MlsMessageInfo =
  | { wireformat: 'welcome' }
  | { wireformat: 'key_package' }
  | { wireformat: 'group_info' }
  | {
      wireformat: 'private_message' | 'public_message';
      /** The group id bytes as UTF-8, or undefined when they are not valid UTF-8. */
      groupId: string | undefined;
      epoch: bigint;
      contentType: 'application' | 'proposal' | 'commit';
    };

/**
 * Decode bytes that must hold exactly one MLSMessage (RFC 9420 §6), nothing before or after it.
 * @throws MlsClientError `invalid_argument` for a non-Uint8Array, `malformed_message` otherwise.
 */
export function decodeWholeMlsMessage(bytes: Uint8Array): MLSMessage {
  if (!(bytes instanceof Uint8Array)) throw new MlsClientError('invalid_argument', 'expected a Uint8Array');
  let decoded: [MLSMessage, number] | undefined;
  try {
    decoded = decodeMlsMessage(bytes, 0);
  } catch (cause) {
    throw new MlsClientError('malformed_message', 'not an MLS message', { cause });
  }
  if (decoded === undefined || decoded[1] !== bytes.length) {
    throw new MlsClientError('malformed_message', 'not an MLS message');
  }
  return decoded[0];
}

/** Decodes the cleartext framing of an MLSMessage; throws `malformed_message` for anything else. */
export function inspectMlsMessage(bytes: Uint8Array): MlsMessageInfo {
  const msg = decodeWholeMlsMessage(bytes);
  switch (msg.wireformat) {
    case 'mls_welcome':
      return { wireformat: 'welcome' };
    case 'mls_key_package':
      return { wireformat: 'key_package' };
    case 'mls_group_info':
      return { wireformat: 'group_info' };
    case 'mls_private_message':
      return {
        wireformat: 'private_message',
        groupId: utf8Decode(msg.privateMessage.groupId),
        epoch: msg.privateMessage.epoch,
        contentType: msg.privateMessage.contentType,
      };
    case 'mls_public_message':
      return {
        wireformat: 'public_message',
        groupId: utf8Decode(msg.publicMessage.content.groupId),
        epoch: msg.publicMessage.content.epoch,
        contentType: msg.publicMessage.content.contentType,
      };
  }
}

/**
 * Decodes both wire fields and checks that the header agrees with the MLS message it carries
 * (wire format, content type, group id and epoch, as far as they are visible without keys). A
 * relay cannot make a commit pass for an application message or move a message to another group.
 */
export function decodeMlsEnvelope(fields: MlsWireFields): { header: MlsEnvelopeHeader; message: Uint8Array } {
  const header = decodeMlsHeader(fields.header_blob);
  let message: Uint8Array;
  try {
    message = base64ToBytes(fields.ciphertext);
  } catch (cause) {
    throw new MlsClientError('malformed_message', 'ciphertext is not base64', { cause });
  }
  const info = inspectMlsMessage(message);
  if (header.kind === 'welcome') {
    if (info.wireformat !== 'welcome') throw new MlsClientError('malformed_message', 'kind welcome carries no Welcome');
  } else {
    if (info.wireformat !== 'private_message' && info.wireformat !== 'public_message') {
      throw new MlsClientError('malformed_message', `kind ${header.kind} carries no framed MLS message`);
    }
    if (info.contentType !== header.kind) {
      throw new MlsClientError('malformed_message', `header kind ${header.kind} but message is ${info.contentType}`);
    }
    if (info.groupId !== header.group_id) {
      throw new MlsClientError('wrong_group', 'header group_id does not match the MLS message');
    }
    if (info.epoch !== BigInt(header.epoch)) {
      throw new MlsClientError('malformed_message', 'header epoch does not match the MLS message');
    }
  }
  return { header, message };
}
