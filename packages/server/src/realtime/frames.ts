/**
 * Client-to-service WebSocket frames (SPEC §6.1, DESIGN §7), validated with compiled TypeBox
 * schemas. Frames are `{event, data}`; `client_ref` travels inside `data`.
 */
import { FormatRegistry, Type, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { UUID_RE } from '../lib/ids.js';
import { KeyHex, MessageFields, SignatureHex, Uuid } from '../http/schemas.js';

// The compiled checks need the string formats the shared schemas use (Fastify's Ajv has its own).
if (!FormatRegistry.Has('uuid')) FormatRegistry.Set('uuid', (v) => UUID_RE.test(v));

const ClientRef = Type.Optional(Type.String({ maxLength: 200 }));

export const MessageFrame = Type.Object({ conversation_id: Uuid, ...MessageFields, client_ref: ClientRef });
export type MessageFrame = Static<typeof MessageFrame>;

/** `client_key_register` (DESIGN §7): key material of an API-key client, with its proof of possession. */
export const ClientKeyFrame = Type.Object({
  identity_public_key: KeyHex,
  ephemeral_public_key: KeyHex,
  signature: SignatureHex,
  platform: Type.Optional(Type.String({ maxLength: 100 })),
});
export type ClientKeyFrame = Static<typeof ClientKeyFrame>;

export const TypingFrame = Type.Object({ conversation_id: Uuid });

export const Envelope = Type.Object({ event: Type.String({ minLength: 1, maxLength: 64 }), data: Type.Optional(Type.Unknown()) });

export const checkEnvelope = TypeCompiler.Compile(Envelope);
export const checkMessage = TypeCompiler.Compile(MessageFrame);
export const checkTyping = TypeCompiler.Compile(TypingFrame);
export const checkClientKey = TypeCompiler.Compile(ClientKeyFrame);

/** First validation error of a compiled check, as `path: message`. */
export function firstError(check: { Errors(v: unknown): Iterable<{ path: string; message: string }> }, value: unknown): string {
  for (const e of check.Errors(value)) return `${e.path || 'data'}: ${e.message}`;
  return 'invalid frame';
}
