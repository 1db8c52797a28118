/**
 * Shared TypeBox building blocks of the wire (design §7 conventions): ids, keys, signatures,
 * timestamps, base64, the `{detail}` error body, paging queries and the message fields shared by
 * the REST body and the `message` frame (contract §2.4, §6.1). One schema drives the server's
 * validation, the OpenAPI document and the SDK's static types.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Page, PageCursor, PageLimit } from './paging.js';

export const Uuid = Type.String({ format: 'uuid', description: 'UUID' });
/** 32-byte key as 64 hex characters (Ed25519 or X25519, design §7); stored lowercase. */
export const KeyHex = Type.String({ pattern: '^[0-9a-fA-F]{64}$', description: '32-byte key, hex' });
/** 64-byte Ed25519 signature as 128 hex characters. */
export const SignatureHex = Type.String({ pattern: '^[0-9a-fA-F]{128}$', description: 'Ed25519 signature, hex' });
/** ISO 8601 timestamp. */
export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601' });
/** Standard base64 (RFC 4648 §4). */
export const Base64 = Type.String({ pattern: '^[A-Za-z0-9+/]*={0,2}$', description: 'base64' });
/** A sent ciphertext: standard base64 of at least one byte (an empty one is a 400). */
export const Ciphertext = Type.String({ pattern: Base64.pattern, minLength: 1, description: 'base64, not empty' });
/** `T | null`. */
export const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
/** A union of string literals from a constant list (the list stays the one source of the values). */
export const lit = <T extends string>(values: readonly T[], options?: { description?: string }) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    options,
  );

/** `{detail}`: the error body of every route and of `error` frames (contract §7). */
export const ErrorBody = Type.Object({ detail: Type.String() }, { $id: 'Error' });
export type ErrorBody = Static<typeof ErrorBody>;

/** Device status (contract §2.3, uppercase on the wire per design §7). */
export const DEVICE_STATUSES = ['PENDING', 'APPROVED', 'ACTIVE', 'REVOKED'] as const;
export const DeviceStatus = lit(DEVICE_STATUSES);
export type DeviceStatus = Static<typeof DeviceStatus>;

/** Message types (contract §2.4). */
export const MESSAGE_TYPES = [
  'text',
  'decision_request',
  'status_alert',
  'action_confirmation',
  'artifact',
  'attachment',
  'policy_alert',
  'approval_request',
  'approval_response',
] as const;
export const MessageType = lit(MESSAGE_TYPES);
export type MessageType = Static<typeof MessageType>;

/** Message priority (contract §2.4; the service defaults to `normal`). */
export const PRIORITIES = ['low', 'normal', 'high', 'urgent'] as const;
export const Priority = lit(PRIORITIES);
export type Priority = Static<typeof Priority>;

/**
 * A copy of `schema` in which every `additionalProperties: false` refuses unknown keys. The
 * server's validator runs with `removeAdditional: true`, which silently drops such keys; a policy
 * must not silently lose a condition and a setting must not silently be ignored, so an unknown key
 * is a 400 naming it (design §8.5, §8.22). The static type is unchanged.
 */
export function refuseUnknownKeys<T extends TSchema>(schema: T): T {
  const walk = (s: unknown): unknown => {
    if (Array.isArray(s)) return s.map(walk);
    if (s === null || typeof s !== 'object') return s;
    const out: Record<string | symbol, unknown> = {};
    for (const k of Reflect.ownKeys(s)) {
      const v = (s as Record<string | symbol, unknown>)[k];
      out[k] = k === 'additionalProperties' && v === false ? Type.Never({ description: 'unknown keys are refused' }) : walk(v);
    }
    return out;
  };
  return walk(schema) as T;
}

/** `{id}` path parameter. */
export const IdParams = Type.Object({ id: Uuid });

/** `since` (ISO timestamp or `next_cursor`), `limit` (design §8.12: default 50, max 200), `topic_id`. */
export const PageQueryFields = {
  since: PageCursor({ maxLength: 64, description: 'ISO 8601 timestamp or a next_cursor value (exclusive)' }),
  limit: PageLimit(),
  topic_id: Type.Optional(Uuid),
};

/** The fields a sender gives for one message (REST body and `message` frame; contract §6.1). */
export const MessageFields = {
  header_blob: Base64,
  ciphertext: Ciphertext,
  message_type: Type.Optional(MessageType),
  priority: Type.Optional(Priority),
  topic_id: Type.Optional(Uuid),
  message_group_id: Type.Optional(Uuid),
};

/**
 * A stored message as answered by history routes and sent in `message` frames (contract §6.1).
 * History entries also carry the recipient device's receipt times (docs/decisions.md "Delivery
 * and read receipts"): `delivered_at` (null until the recipient received it) and `read_at` (null
 * until the recipient's read mark covers it, or when it keeps read receipts off); live `message`
 * frames leave both out.
 */
export const StoredMessage = Type.Object({
  message_id: Uuid,
  conversation_id: Uuid,
  sender_device_id: Uuid,
  header_blob: Type.String(),
  ciphertext: Type.String(),
  timestamp: Type.String(),
  message_type: Type.String(),
  priority: Type.String(),
  topic_id: Uuid,
  message_group_id: Uuid,
  cursor: Type.String({ description: 'opaque, total-ordered position; usable as `since`' }),
  delivered_at: Type.Optional(Nullable(Timestamp)),
  read_at: Type.Optional(Nullable(Timestamp)),
});
export type StoredMessage = Static<typeof StoredMessage>;

/** A page of stored messages, oldest first; `next_cursor` continues it (null at the end). */
export const MessagePage = Page('messages', StoredMessage);
export type MessagePage = Static<typeof MessagePage>;
