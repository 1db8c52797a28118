/**
 * The generic part of client-to-service WebSocket frames (contract §6.1, design §7): the `{event,
 * data}` envelope, the shared `client_ref` field and validation messages. The frames themselves
 * are defined and served by their modules (conversations: `message`, `typing`; api-keys:
 * `client_key_register`; rooms; A2A), registered with `Gateway.registerFrame`. Importing this
 * module registers the `uuid` string format the compiled TypeBox checks need.
 */
import { FormatRegistry, Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { UUID_RE } from '../lib/ids.js';

// The compiled checks need the string formats the shared schemas use (Fastify's Ajv has its own).
if (!FormatRegistry.Has('uuid')) FormatRegistry.Set('uuid', (v) => UUID_RE.test(v));

/** The optional `client_ref` a frame's `data` may carry; acks and error frames echo it. */
export const ClientRef = Type.Optional(Type.String({ maxLength: 200 }));

export const Envelope = Type.Object({ event: Type.String({ minLength: 1, maxLength: 64 }), data: Type.Optional(Type.Unknown()) });

export const checkEnvelope = TypeCompiler.Compile(Envelope);

/** First validation error of a compiled check, as `path: message`. */
export function firstError(check: { Errors(v: unknown): Iterable<{ path: string; message: string }> }, value: unknown): string {
  for (const e of check.Errors(value)) return `${e.path || 'data'}: ${e.message}`;
  return 'invalid frame';
}
