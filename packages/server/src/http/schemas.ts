/**
 * Shared TypeBox schemas (DESIGN §7 wire conventions). One schema drives validation, types and
 * the OpenAPI document.
 */
import { Type, type TSchema } from '@sinclair/typebox';

export const Uuid = Type.String({ format: 'uuid', description: 'UUID' });
/** 32-byte key as 64 hex characters (Ed25519 or X25519, DESIGN §7); stored lowercase. */
export const KeyHex = Type.String({ pattern: '^[0-9a-fA-F]{64}$', description: '32-byte key, hex' });
/** 64-byte Ed25519 signature as 128 hex characters. */
export const SignatureHex = Type.String({ pattern: '^[0-9a-fA-F]{128}$', description: 'Ed25519 signature, hex' });
export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601' });
export const Base64 = Type.String({ pattern: '^[A-Za-z0-9+/]*={0,2}$', description: 'base64' });
export const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

export const DeviceStatus = Type.Union(['PENDING', 'APPROVED', 'ACTIVE', 'REVOKED'].map((s) => Type.Literal(s)));
export const MessageType = Type.Union(
  [
    'text',
    'decision_request',
    'status_alert',
    'action_confirmation',
    'artifact',
    'attachment',
    'policy_alert',
    'approval_request',
    'approval_response',
  ].map((s) => Type.Literal(s)),
);
export const Priority = Type.Union(['low', 'normal', 'high', 'urgent'].map((s) => Type.Literal(s)));

/**
 * A copy of `schema` in which every `additionalProperties: false` refuses unknown keys. The app's
 * validator runs with `removeAdditional: true`, which silently drops such keys; a policy must not
 * silently lose a condition and a setting must not silently be ignored, so an unknown key is a
 * 400 naming it (DESIGN §8.5, §8.22).
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

export const IdParams = Type.Object({ id: Uuid });

/** `since` (ISO timestamp or `next_cursor`), `limit` (DESIGN §8.12: default 50, max 200). */
export const PageQuery = {
  since: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'ISO 8601 timestamp or a next_cursor value (exclusive)' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
  topic_id: Type.Optional(Uuid),
};

/** The fields a sender gives for one message (REST body and `message` frame; SPEC §6.1). */
export const MessageFields = {
  header_blob: Base64,
  ciphertext: Base64,
  message_type: Type.Optional(MessageType),
  priority: Type.Optional(Priority),
  topic_id: Type.Optional(Uuid),
  message_group_id: Type.Optional(Uuid),
};

/** A stored message as answered by history routes and sent in `message` frames (SPEC §6.1). */
export const MessageOut = Type.Object({
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
});

export const MessageList = Type.Object({ messages: Type.Array(MessageOut), next_cursor: Nullable(Type.String()) });
