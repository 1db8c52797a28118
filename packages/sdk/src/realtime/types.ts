/**
 * Types of the realtime client (contract §4.18, §6.1; design §6, §7): the injected WebSocket
 * implementation, frames, local events and errors.
 */
import type { MessageAck as WireMessageAck, TypingEvent } from '@parley/protocol';
import type { StoredMessage } from '@parley/protocol';

/**
 * Frames and events of conversations and devices (contract §6.1; design §7), from the wire contract:
 * `OutgoingMessage` is the `message` send frame (`header_blob`, `ciphertext` base64; `client_ref`
 * correlates the `message_ack` / error frame, generated when absent, at most 200 characters);
 * `TypingEvent` is `typing` (`device_id` is the typing device, filled in by the service);
 * `ErrorFrame` is the `error` event (`retry_after_ms` with a 429); `DevicePendingEvent`,
 * `DeviceApprovedEvent`, `DeviceLinkedEvent` and `TopicCreatedEvent` arrive as `event` events.
 */
export type {
  DeviceApprovedEvent,
  DeviceLinkedEvent,
  DevicePendingEvent,
  ErrorFrame,
  OutgoingMessage,
  TopicCreatedEvent,
  TypingEvent,
  TypingFrame,
} from '@parley/protocol';

/** What the client reads from a WebSocket `message` event (`data` is a string for text frames). */
export interface MessageEventLike {
  data: unknown;
}

/** What the client reads from a WebSocket `close` event. */
export interface CloseEventLike {
  code: number;
  reason: string;
}

// Handlers are declared through a method signature so they are checked bivariantly: both the
// browser's WebSocket and the `ws` package's then satisfy the interface.
type Handler<E> = { bivarianceHack(event: E): void }['bivarianceHack'];

/**
 * The subset of the WHATWG WebSocket API the client uses. Browsers' and Node 22+'s global
 * `WebSocket` and the `ws` package's `WebSocket` all satisfy it.
 */
export interface WebSocketLike {
  /** 0 CONNECTING, 1 OPEN, 2 CLOSING, 3 CLOSED. */
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: Handler<unknown> | null;
  onmessage: Handler<MessageEventLike> | null;
  onclose: Handler<CloseEventLike> | null;
  onerror: Handler<unknown> | null;
}

/** A WebSocket constructor (`new WebSocket(url)`). */
export type WebSocketLikeConstructor = new (url: string) => WebSocketLike;

/**
 * Connection state, reported by the `stateChange` event:
 * - `idle`: created, `connect()` not called yet;
 * - `connecting`: a socket is opening, being authenticated by the service, or (authenticated)
 *   catching up and flushing the offline queue;
 * - `open`: authenticated, caught up, queue flushed: `send` writes straight to the socket;
 * - `reconnecting`: waiting for the back-off delay before the next attempt;
 * - `closed`: closed by `close()` (terminal until `connect()` is called again);
 * - `revoked`: the service closed with 4001, the device was revoked (terminal, contract §3.1);
 * - `unauthorized`: the service closed with 4401 (missing/invalid token, and a token function
 *   gave no new token) or 4003 (device not ACTIVE / not the caller's) (terminal).
 */
export type RealtimeState = 'idle' | 'connecting' | 'open' | 'reconnecting' | 'closed' | 'revoked' | 'unauthorized';

/** Payload of `stateChange`. */
export interface StateChangeEvent {
  state: RealtimeState;
  previous: RealtimeState;
  /** Close code of the socket that ended, when the change follows a close. */
  code?: number;
  /** Close reason given by the service, when any. */
  reason?: string;
  /** For `reconnecting`: the delay before the next attempt (ms) and the attempt number (1-based). */
  delayMs?: number;
  attempt?: number;
}

/**
 * `message_ack` (design §7): sent by the service after the message is committed. The client
 * always sends a `client_ref`, so the ack `send` resolves with carries it.
 */
export type MessageAck = WireMessageAck & { client_ref: string };

export type {
  ClientKeyAccepted,
  ClientKeyRegistration,
  MemberJoinedEvent,
  MemberLeftEvent,
  OutgoingRoomMessage,
  PolicyAlertEvent,
  RoomJoinedEvent,
  RoomMessageAck,
  RoomMessageEvent,
} from '@parley/protocol';
import type {
  MemberJoinedEvent,
  MessageDeliveredEvent,
  MessageReadEvent,
  PolicyAlertEvent,
  RoomJoinedEvent,
  RoomMessageDeliveredEvent,
  RoomMessageEvent,
  RoomMessageReadEvent,
} from '@parley/protocol';

/**
 * Any other service frame (`device_pending`, `device_approved`, `device_linked`, `topic_created`,
 * …; contract §6.1): passed through as `{event, data}`.
 */
export interface ServerEvent {
  event: string;
  data: unknown;
}

/** Metadata handed to the outbound scanner with the plaintext (contract §6.1 rule 5). */
export interface ScanMeta {
  conversation_id: string;
  message_type?: string;
  priority?: string;
  topic_id?: string;
  [key: string]: unknown;
}

/** Verdict of an outbound scanner. */
export interface ScanVerdict {
  blocked: boolean;
  /** Why the plaintext was blocked (shown to the user / logged; never the plaintext itself). */
  reason?: string;
}

/**
 * Outbound scanner hook (contract §6.1 rule 5): inspects a plaintext before encryption; a
 * `{blocked: true}` verdict stops the send and emits `scan_blocked`. May be async.
 */
export type OutboundScanner = (plaintext: Uint8Array | string, meta: ScanMeta) => ScanVerdict | Promise<ScanVerdict>;

/** Payload of `scan_blocked` (a local event, contract §6.1 rule 5). The plaintext is not included. */
export interface ScanBlockedEvent {
  reason: string;
  meta: ScanMeta;
}

/**
 * Why a realtime operation failed:
 * - `server`: an `error` frame (`status`, `detail`, `retryAfterMs` for 429; design §7);
 * - `queue_full`: the offline queue already holds `outboxSize` messages (the new one is refused);
 * - `closed`: `close()` was called before the message was acknowledged;
 * - `revoked` / `unauthorized`: the connection ended for good (4001 / 4401, 4003);
 * - `ack_timeout`: no `message_ack` / `room_message_ack` within `ackTimeoutMs` (the message may
 *   or may not be stored);
 * - `ack_lost`: the socket dropped after sending and the client could not tell from history
 *   whether the service stored the message (no catch-up source, or catch-up failed; always for
 *   room messages, which are not re-sent blindly);
 * - `retries_exhausted`: a message whose ack was lost was re-sent `maxSendAttempts` times and is
 *   still not stored (its status becomes `failed`);
 * - `scan_blocked` / `scan_failed`: the outbound scanner blocked the plaintext / threw;
 * - `catch_up_failed`: fetching missed messages failed (retried while connected);
 * - `listener_failed`: a listener threw (the error is `cause`);
 * - `invalid_frame`: the service sent something that is not a `{event, data}` JSON frame.
 */
export type RealtimeErrorCode =
  | 'server'
  | 'queue_full'
  | 'closed'
  | 'revoked'
  | 'unauthorized'
  | 'ack_timeout'
  | 'ack_lost'
  | 'retries_exhausted'
  | 'scan_blocked'
  | 'scan_failed'
  | 'catch_up_failed'
  | 'listener_failed'
  | 'invalid_frame';

/** Error of the realtime client (rejections of `send` and `error` events). */
export class RealtimeError extends Error {
  override readonly name = 'RealtimeError';
  /** HTTP-like status of a service `error` frame (400, 403, 404, 413, 429, 500, …). */
  readonly status?: number;
  /** `retry_after_ms` of a 429 error frame. */
  readonly retryAfterMs?: number;
  /** The `client_ref` of the message concerned, when any. */
  readonly clientRef?: string;

  constructor(
    readonly code: RealtimeErrorCode,
    message: string,
    extra: { status?: number; retryAfterMs?: number; clientRef?: string; cause?: unknown } = {},
  ) {
    super(message, extra.cause !== undefined ? { cause: extra.cause } : undefined);
    if (extra.status !== undefined) this.status = extra.status;
    if (extra.retryAfterMs !== undefined) this.retryAfterMs = extra.retryAfterMs;
    if (extra.clientRef !== undefined) this.clientRef = extra.clientRef;
  }
}

/**
 * A source of missed messages, read after every (re)connection from the last cursor it saw
 * (design §6: catch-up by `since` cursor). See `deviceCatchUp` / `conversationCatchUp`.
 */
export interface CatchUpSource {
  /** Stable name of the source (key of `cursors()` / `initialCursors`). */
  readonly key: string;
  /** Whether a live message belongs to this source (its cursor then advances). */
  covers(message: StoredMessage): boolean;
  /** One page of history after `since` (exclusive; an ISO timestamp or a cursor; undefined = latest), oldest first. */
  fetchPage(since: string | undefined, limit: number): Promise<{ messages: StoredMessage[]; next_cursor: string | null }>;
}

/** Local events of {@link RealtimeClient} (contract §6.1 rule 5) and their listener signatures. */
export interface RealtimeEvents {
  /**
   * A received message (live or caught up), de-duplicated by message_id and in cursor order per
   * conversation. A listener may return a promise: the next message is handed over only after it
   * settles (decryption advances ratchets).
   */
  message: (message: StoredMessage) => void | Promise<void>;
  /** Connection state changed. */
  stateChange: (event: StateChangeEvent) => void;
  /** A failure not tied to a pending `send` (error frames without client_ref, catch-up, listeners). */
  error: (error: RealtimeError) => void;
  /** The outbound scanner blocked a plaintext before encryption; nothing was sent. */
  scan_blocked: (event: ScanBlockedEvent) => void;
  /** The counterpart is typing. */
  typing: (event: TypingEvent) => void;
  /**
   * This device's envelope of a room message (live; not caught up by the client, see
   * `RoomMessenger.catchUp`), de-duplicated by room_message_id and handed over in arrival order;
   * a returned promise is awaited before the next message (of either kind).
   */
  room_message: (message: RoomMessageEvent) => void | Promise<void>;
  /** This device was added to a room. */
  room_joined: (event: RoomJoinedEvent) => void;
  /** A device joined a room (owner sockets). */
  member_joined: (event: MemberJoinedEvent) => void;
  /** A `notify` policy matched a message (owner sockets). */
  policy_alert: (event: PolicyAlertEvent) => void;
  /** Messages this device sent reached a recipient device (delivery receipt; also in `statuses`). */
  message_delivered: (event: MessageDeliveredEvent) => void;
  /** A recipient device read this device's messages up to a cursor (read receipt; also in `statuses`). */
  message_read: (event: MessageReadEvent) => void;
  /** Room messages this device sent reached a member (delivery receipt; also in `statuses`). */
  room_message_delivered: (event: RoomMessageDeliveredEvent) => void;
  /** A member read room messages this device sent (read receipt; also in `statuses`). */
  room_message_read: (event: RoomMessageReadEvent) => void;
  /** Any other service event (`device_pending`, `device_approved`, `device_linked`, …). */
  event: (event: ServerEvent) => void;
}
