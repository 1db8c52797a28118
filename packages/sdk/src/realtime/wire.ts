/**
 * Small wire helpers of the realtime client (contract §6.1; design §7): reading a received
 * WebSocket message as a `{event, data}` frame, the shape checks the client relies on before it
 * hands a frame's `data` on, `client_ref` generation and the bounded de-duplication set.
 */
import type { StoredMessage } from '@parley/protocol';
import { RealtimeError, type RoomMessageEvent } from './types.js';

/** A bounded set remembering the most recently added keys (the oldest are forgotten first). */
export class RecentSet {
  private readonly set = new Set<string>();
  constructor(private readonly max: number) {}
  /** Whether `k` is among the remembered keys. */
  has(k: string): boolean {
    return this.set.has(k);
  }
  /** Remember `k`, forgetting the oldest key beyond `max`. */
  add(k: string): void {
    if (this.set.has(k)) return;
    this.set.add(k);
    if (this.set.size > this.max) this.set.delete(this.set.values().next().value as string);
  }
}

/** A fresh `client_ref`: a random UUID where `crypto.randomUUID` exists, else a time-and-random string. */
export function randomRef(): string {
  const c = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
  if (c?.randomUUID) return c.randomUUID();
  return `ref-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 12)}`;
}

/** The text of a WebSocket message's `data` (string, ArrayBuffer, a view, or `ws` fragments); undefined for anything else. */
function frameText(data: unknown): string | undefined {
  if (typeof data === 'string') return data;
  if (data instanceof ArrayBuffer) return new TextDecoder().decode(new Uint8Array(data));
  if (ArrayBuffer.isView(data)) return new TextDecoder().decode(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  if (Array.isArray(data)) return data.map(frameText).join('');
  return undefined;
}

/** Whether `v` is a plain (non-array) object. */
export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A received frame `{event, data}`, or undefined when the message is not JSON of that shape. */
export function parseFrame(raw: unknown): { event: string; data: unknown } | undefined {
  const text = frameText(raw);
  let frame: unknown;
  try {
    frame = text === undefined ? undefined : JSON.parse(text);
  } catch {
    frame = undefined;
  }
  if (!isObject(frame) || typeof frame.event !== 'string') return undefined;
  return { event: frame.event, data: frame.data };
}

/** A `message` frame's data carries what the client relies on: `message_id`, `conversation_id`, `cursor`. */
export function isWireMessage(v: unknown): v is StoredMessage {
  return isObject(v) && typeof v.message_id === 'string' && typeof v.conversation_id === 'string' && typeof v.cursor === 'string';
}

/** A `room_message` frame's data carries its room, id, sender, header and ciphertext. */
export function isRoomMessage(v: unknown): v is RoomMessageEvent {
  return isObject(v) && typeof v.room_id === 'string' && typeof v.room_message_id === 'string' && typeof v.sender_device_id === 'string' && typeof v.header === 'string' && typeof v.ciphertext === 'string';
}

/** What identifies a sent message in history when its ack was lost: conversation, header and ciphertext. */
export const contentKey = (m: { conversation_id: string; header_blob: string; ciphertext: string }) => `${m.conversation_id}\n${m.header_blob}\n${m.ciphertext}`;

/**
 * The WebSocket address of a service `url` (contract §4.18): `http(s)` becomes `ws(s)`, the path
 * ends with `wsPath`, and the query is `token` and, for owner sockets, `device_id`. A relative
 * `url` resolves against the page's location in browsers.
 */
export function socketAddress(url: string, wsPath: string, token: string, deviceId: string | undefined): string {
  const base = (globalThis as { location?: { href?: string } }).location?.href;
  const u = new URL(url, base);
  if (u.protocol === 'http:') u.protocol = 'ws:';
  else if (u.protocol === 'https:') u.protocol = 'wss:';
  if (!u.pathname.endsWith(wsPath)) u.pathname = u.pathname.replace(/\/+$/, '') + wsPath;
  u.search = '';
  u.searchParams.set('token', token);
  if (deviceId) u.searchParams.set('device_id', deviceId);
  return u.toString();
}

/** The `server` RealtimeError of an `error` frame's data (read defensively: `status`, `detail`, `client_ref`, `retry_after_ms`). */
export function refusal(d: Record<string, unknown>): RealtimeError {
  const status = typeof d.status === 'number' ? d.status : undefined;
  const detail = typeof d.detail === 'string' ? d.detail : 'error';
  const ref = typeof d.client_ref === 'string' ? d.client_ref : undefined;
  const retryAfterMs = typeof d.retry_after_ms === 'number' ? d.retry_after_ms : undefined;
  return new RealtimeError('server', `service error${status !== undefined ? ` ${status}` : ''}: ${detail}`, {
    ...(status !== undefined ? { status } : {}),
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    ...(ref !== undefined ? { clientRef: ref } : {}),
  });
}

/** A catch-up position: `string` = after this cursor; `null` = from the beginning; `undefined` = unknown (bootstrap). */
export type Position = string | null | undefined;
