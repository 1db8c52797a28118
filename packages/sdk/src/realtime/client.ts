/**
 * `RealtimeClient`: the WebSocket side of the SDK (contract §4.18, §6.1, §8; design §6, §7). Works
 * on wire fields (`header_blob`, `ciphertext` as base64); encryption happens before `send` and
 * decryption in the `message` listener. Runs in browsers and on Node (inject a WebSocket
 * implementation, e.g. `nodeWebSocket()` from `@parley/sdk/node`, where no global one exists).
 *
 * Behaviour:
 * - Connects to `/api/v1/ws?token=…[&device_id=…]`; the token may be a function (called on every
 *   connection, so a renewed device JWT is used). The service has authenticated the socket when
 *   it answers the client's first `ping` (or sends anything); the client then catches up, flushes
 *   its queue and only then reports `open`.
 * - Answers every service `ping` with `pong`; a socket silent for `deadTimeoutMs` is dropped and
 *   re-opened.
 * - Reconnects with exponential back-off and jitter, except after close 4001 (state `revoked`),
 *   4003 (`unauthorized`) and 4401 (`unauthorized`; when the token is a function, one immediate
 *   retry is made if it yields a different token).
 * - Outbound queue (contract §6.1 rule 4): while not connected, `send` queues up to `outboxSize`
 *   (default 50) messages, flushed in order after the next connection is authenticated and caught
 *   up. When the queue is full the NEW message is refused (its promise rejects with `queue_full`):
 *   messages already accepted are never dropped silently and the order of what is sent is kept.
 * - `send` resolves with the `message_ack` (after commit) matched by `client_ref`, and rejects with
 *   the `error` frame carrying the same `client_ref` (e.g. 429 with `retryAfterMs`).
 * - Messages sent but not acknowledged when the socket drops are looked up in the catch-up
 *   history after reconnecting (same conversation, header and ciphertext): found means stored (the
 *   promise resolves with the stored id and cursor), not found means not stored (re-sent, ahead of
 *   the queue). Without catch-up sources, or if catch-up fails, they reject with `ack_lost`.
 * - Catch-up (design §6): after every authenticated connection each {@link CatchUpSource} is read
 *   from its last cursor; live messages of a source being caught up are held back and merged, so
 *   the `message` listener sees each message once (de-duplicated by message_id) and in cursor
 *   order per conversation. Outside catch-up, live messages are handed over in the order the
 *   service sends them (its commit order); a message the service delivers late is still handed
 *   over rather than dropped. A source with no cursor yet (first connection, no `initialCursors`)
 *   only records the newest cursor: history from before the client started is not replayed.
 * - Resume point after a disconnection: with several service instances, live messages may arrive
 *   slightly out of cursor order (each instance publishes what it committed). The next catch-up
 *   therefore starts from the newest cursor received live at least `reorderWindowMs` (default
 *   2 000) before the disconnection, or from where this connection's catch-up ended if newer;
 *   messages read again are skipped by message_id. After close 1012 (service restart: the service's
 *   event bus lost its connection, so messages of other instances may be missing however old) it
 *   starts from where this connection's catch-up ended (docs/operations.md "Faults").
 * - Rooms (design §8.5): `sendRoom` sends a `room_message` frame through the same queue and
 *   resolves with its `room_message_ack`; an unacknowledged one is never re-sent after a drop
 *   (`ack_lost`). Received `room_message` frames are de-duplicated and handed to `room_message`
 *   listeners through the same serial chain as messages; `room_joined`, `member_joined` and
 *   `policy_alert` are emitted as typed events.
 * - Receipts (issue 20 part 1): `statuses` tracks every message sent through the queue (`pending`
 *   -> `sent` -> `delivered` -> `read`, or `failed`; realtime/status.ts) from acks,
 *   `message_delivered` / `message_read` / `room_message_delivered` / `room_message_read` frames
 *   (also emitted as typed events) and the `delivered_at` / `read_at` of caught-up history; after a
 *   reconnection it re-reads one page of history per source for messages still unread, so receipts
 *   missed while offline are learnt. `markRead` / `markRoomRead` send read receipts (the latest one
 *   per conversation or room waits while offline). A message refused with 429 is retried after
 *   `retry_after_ms` (at most `maxRetryDelayMs`), in queue order, and one not acknowledged before a
 *   drop is re-sent after reconciliation; after `maxSendAttempts` sends it fails (`retries_exhausted`,
 *   or the last refusal) and its status becomes `failed`.
 * - Keeps the last `historySize` (default 500) received messages (`history()`).
 * - Outbound scanning (contract §6.1 rule 5): `sendPlaintext` / `scanOutbound` run the `scanner` hook
 *   on the plaintext before encryption and emit `scan_blocked` when it blocks.
 *
 * Delivery is at-least-once from the service (design §6); the de-duplication window holds the last
 * `dedupeSize` message ids (default 10 000).
 */
import { WS_PATH } from '../client/routes.js';
import type { TokenSource } from '../client/rest.js';
import type { MessageDeliveredEvent, MessageReadAck, MessageReadEvent, RoomMessageDeliveredEvent, RoomMessageReadAck, RoomMessageReadEvent, StoredMessage } from '@parley/protocol';
import { TypedEmitter } from './emitter.js';
import { MessageStatusTracker, type StatusTarget } from './status.js';
import {
  RealtimeError,
  type CatchUpSource,
  type MessageAck,
  type OutboundScanner,
  type OutgoingMessage,
  type OutgoingRoomMessage,
  type RoomMessageAck,
  type RoomMessageEvent,
  type RealtimeEvents,
  type RealtimeState,
  type ScanMeta,
  type StateChangeEvent,
  type WebSocketLike,
  type WebSocketLikeConstructor,
} from './types.js';

/** Reconnection policy. Delay of attempt n (1-based): `min(maxDelayMs, initialDelayMs * factor^(n-1)) * (1 - jitter * random())`. */
export interface ReconnectOptions {
  /** Reconnect after unexpected closes (default true). */
  enabled?: boolean;
  /** First delay in ms (default 500). */
  initialDelayMs?: number;
  /** Largest delay in ms (default 30 000). */
  maxDelayMs?: number;
  /** Growth factor per attempt (default 2). */
  factor?: number;
  /** Fraction of the delay randomly taken off, 0–1 (default 0.5: the delay is in [d/2, d]). */
  jitter?: number;
  /** Give up (state `closed`) after this many consecutive failed attempts (default: never). */
  maxAttempts?: number;
}

/** Options of {@link RealtimeClient}. */
export interface RealtimeClientOptions {
  /**
   * Service base URL (`https://host`, `http://host:8080`) or the full `ws(s)://host/api/v1/ws`
   * address; in browsers it may be relative to the page (e.g. `/`).
   */
  url: string;
  /** Owner JWT, device JWT or API key (contract §4.18), or a function returning the current one. */
  token: TokenSource;
  /** Owner sockets: the registered owner device (design §6, `&device_id=`). */
  deviceId?: string;
  /** WebSocket implementation; defaults to `globalThis.WebSocket` (browsers, Node 22+). */
  WebSocket?: WebSocketLikeConstructor;
  /** Where missed messages are read after (re)connecting; see `deviceCatchUp` / `conversationCatchUp`. */
  catchUp?: CatchUpSource | CatchUpSource[];
  /** Resume points per source key (from a previous `cursors()`): messages after them are delivered on the first connection. */
  initialCursors?: Record<string, string>;
  /** Outbound scanner hook (contract §6.1 rule 5). */
  scanner?: OutboundScanner;
  /** Offline queue capacity (default 50, contract §8). */
  outboxSize?: number;
  /** Received-message history kept in memory (default 500, contract §8). */
  historySize?: number;
  /** De-duplication window: number of message ids remembered (default 10 000). */
  dedupeSize?: number;
  /** Reconnection policy. */
  reconnect?: ReconnectOptions;
  /** Reject a sent message with `ack_timeout` when no ack arrives in this many ms (default 30 000). */
  ackTimeoutMs?: number;
  /**
   * Sends of one message before it fails (default 3): a 429 refusal is retried after its
   * `retry_after_ms`, and a message whose ack was lost with the socket is re-sent after
   * reconciliation; each send counts.
   */
  maxSendAttempts?: number;
  /** Longest wait before retrying a rate-limited message, in ms (default 30 000). */
  maxRetryDelayMs?: number;
  /** Give up on a connection attempt not authenticated within this many ms (default 15 000). */
  connectTimeoutMs?: number;
  /** Drop a socket that received nothing for this many ms (default 90 000, contract §6.1 rule 2; 0 disables). */
  deadTimeoutMs?: number;
  /** Page size of catch-up reads (default 200, the service maximum). */
  catchUpPageSize?: number;
  /** Most pages read per source and catch-up (default 50); more is reported as `catch_up_failed` and resumed later. */
  maxCatchUpPages?: number;
  /** Cursor order; default: numeric for digit strings, else lexicographic. */
  compareCursors?: (a: string, b: string) => number;
  /** How late a live message may arrive after one with a higher cursor (default 2 000 ms); see the class comment. */
  reorderWindowMs?: number;
}

/** Default cursor order: decimal strings compare numerically (the service's `seq`), others lexicographically. */
export function defaultCompareCursors(a: string, b: string): number {
  if (/^\d+$/.test(a) && /^\d+$/.test(b)) {
    const x = a.replace(/^0+(?=\d)/, '');
    const y = b.replace(/^0+(?=\d)/, '');
    if (x.length !== y.length) return x.length - y.length;
    return x < y ? -1 : x > y ? 1 : 0;
  }
  return a < b ? -1 : a > b ? 1 : 0;
}

/** `string` = after this cursor; `null` = from the beginning; `undefined` = unknown (bootstrap). */
type Position = string | null | undefined;

interface SourceState {
  source: CatchUpSource;
  pos: Position;
  /** Where the last completed catch-up ended (the rewind point after close 1012). */
  caughtUpAt?: Position;
  /** Cursors received live within the reorder window, oldest first. */
  recent: { cursor: string; at: number }[];
  /** Newest cursor received live longer ago than the reorder window on this connection. */
  settled?: Position;
  syncing: boolean;
  failed: boolean;
}

/** A frame waiting for its ack: a `message` or a `room_message` (design §7, §8.5). */
type OutboxFrame = { event: 'message'; data: OutgoingMessage & { client_ref: string } } | { event: 'room_message'; data: OutgoingRoomMessage & { client_ref: string } };

interface OutboxEntry {
  frame: OutboxFrame;
  seq: number;
  /** Times the frame was written to a socket. */
  attempts: number;
  resolve(ack: MessageAck | RoomMessageAck): void;
  reject(err: RealtimeError): void;
  timer?: ReturnType<typeof setTimeout>;
  /** Source positions when the frame went out (catch-up starts no later, to find it). */
  snapshot?: Map<string, Position>;
}

interface Waiter {
  resolve(): void;
  reject(err: RealtimeError): void;
}

/** A read receipt frame and the callers waiting for its ack. */
interface PendingRead {
  /** `conversation:<id>` or `room:<id>`. */
  thread: string;
  event: 'message_read' | 'room_message_read';
  data: { client_ref: string } & Record<string, string>;
  waiters: { resolve(ack: MessageReadAck | RoomMessageReadAck): void; reject(err: RealtimeError): void }[];
  timer?: ReturnType<typeof setTimeout>;
}

const EPOCH = '1970-01-01T00:00:00.000Z';
const TERMINAL: ReadonlySet<RealtimeState> = new Set(['closed', 'revoked', 'unauthorized']);

/** A bounded set remembering the most recently added keys. */
class RecentSet {
  private readonly set = new Set<string>();
  constructor(private readonly max: number) {}
  has(k: string): boolean {
    return this.set.has(k);
  }
  add(k: string): void {
    if (this.set.has(k)) return;
    this.set.add(k);
    if (this.set.size > this.max) this.set.delete(this.set.values().next().value as string);
  }
}

function randomRef(): string {
  const c = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
  if (c?.randomUUID) return c.randomUUID();
  return `ref-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 12)}`;
}

function frameText(data: unknown): string | undefined {
  if (typeof data === 'string') return data;
  if (data instanceof ArrayBuffer) return new TextDecoder().decode(new Uint8Array(data));
  if (ArrayBuffer.isView(data)) return new TextDecoder().decode(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  if (Array.isArray(data)) return data.map(frameText).join('');
  return undefined;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function isWireMessage(v: unknown): v is StoredMessage {
  return isObject(v) && typeof v.message_id === 'string' && typeof v.conversation_id === 'string' && typeof v.cursor === 'string';
}

function isRoomMessage(v: unknown): v is RoomMessageEvent {
  return isObject(v) && typeof v.room_id === 'string' && typeof v.room_message_id === 'string' && typeof v.sender_device_id === 'string' && typeof v.header === 'string' && typeof v.ciphertext === 'string';
}

const contentKey = (m: { conversation_id: string; header_blob: string; ciphertext: string }) => `${m.conversation_id}\n${m.header_blob}\n${m.ciphertext}`;

/**
 * Realtime connection of one device (an agent with its device JWT, or an owner device with the
 * owner JWT and `deviceId`). See the file comment for the guarantees.
 *
 * @example
 * const rt = new RealtimeClient({ url, token: () => client.currentDeviceToken(), WebSocket: nodeWebSocket(),
 *   catchUp: deviceCatchUp(client, deviceId) });
 * rt.on('message', async (m) => handle(await decrypt(m)));
 * await rt.connect();
 * await rt.send({ conversation_id, header_blob, ciphertext });
 */
export class RealtimeClient extends TypedEmitter<RealtimeEvents> {
  private readonly opts: Required<
    Pick<
      RealtimeClientOptions,
      'outboxSize' | 'historySize' | 'ackTimeoutMs' | 'connectTimeoutMs' | 'deadTimeoutMs' | 'catchUpPageSize' | 'maxCatchUpPages' | 'reorderWindowMs' | 'maxSendAttempts' | 'maxRetryDelayMs'
    >
  >;
  /** Status of every message sent through this client (and of those reported to it): see realtime/status.ts. */
  readonly statuses: MessageStatusTracker;
  private readonly reconnectOpts: Required<ReconnectOptions>;
  private readonly WS: WebSocketLikeConstructor;
  private readonly compare: (a: string, b: string) => number;
  private readonly sources: SourceState[];
  private readonly seen: RecentSet;

  private _state: RealtimeState = 'idle';
  /** Generation of the current connection; events of older sockets are ignored. */
  private gen = 0;
  private ws: WebSocketLike | undefined;
  private authenticated = false;
  /** Authenticated, caught up and flushed: `send` writes to the socket directly. */
  private ready = false;
  private closing = false;
  private attempt = 0;
  private authRetried = false;
  private lastToken: string | undefined;
  private lastFrameAt = 0;
  private sendSeq = 0;

  private readonly outbox: OutboxEntry[] = [];
  private readonly inflight = new Map<string, OutboxEntry>();
  private unconfirmed: OutboxEntry[] = [];
  private liveBuffer: StoredMessage[] = [];
  private readonly _history: StoredMessage[] = [];
  /** Rate limited: the queue waits until then (ms since the epoch). */
  private throttledUntil = 0;
  private throttleTimer: ReturnType<typeof setTimeout> | undefined;
  /** Read receipts not sent yet, the latest per conversation or room. */
  private readonly unsentReads = new Map<string, PendingRead>();
  /** Read receipts sent and awaiting their ack, by client_ref. */
  private readonly sentReads = new Map<string, PendingRead>();
  private delivery: Promise<void> = Promise.resolve();
  private waiters: Waiter[] = [];

  private connectTimer: ReturnType<typeof setTimeout> | undefined;
  private reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  private deadTimer: ReturnType<typeof setInterval> | undefined;
  private syncRetryTimer: ReturnType<typeof setTimeout> | undefined;
  private syncRetryDelay = 1000;

  constructor(private readonly options: RealtimeClientOptions) {
    super((err, event) => {
      if (event !== 'error') this.emit('error', new RealtimeError('listener_failed', `a "${String(event)}" listener failed: ${(err as Error)?.message ?? String(err)}`, { cause: err }));
    });
    const WS = options.WebSocket ?? (globalThis as { WebSocket?: WebSocketLikeConstructor }).WebSocket;
    if (!WS) throw new TypeError('RealtimeClient: no WebSocket implementation; pass options.WebSocket (e.g. nodeWebSocket() from @parley/sdk/node)');
    this.WS = WS;
    this.opts = {
      outboxSize: options.outboxSize ?? 50,
      historySize: options.historySize ?? 500,
      ackTimeoutMs: options.ackTimeoutMs ?? 30_000,
      connectTimeoutMs: options.connectTimeoutMs ?? 15_000,
      deadTimeoutMs: options.deadTimeoutMs ?? 90_000,
      catchUpPageSize: options.catchUpPageSize ?? 200,
      maxCatchUpPages: options.maxCatchUpPages ?? 50,
      reorderWindowMs: options.reorderWindowMs ?? 2_000,
      maxSendAttempts: Math.max(1, options.maxSendAttempts ?? 3),
      maxRetryDelayMs: options.maxRetryDelayMs ?? 30_000,
    };
    this.statuses = new MessageStatusTracker(options.compareCursors ? { compareCursors: options.compareCursors } : {});
    const r = options.reconnect ?? {};
    this.reconnectOpts = {
      enabled: r.enabled ?? true,
      initialDelayMs: r.initialDelayMs ?? 500,
      maxDelayMs: r.maxDelayMs ?? 30_000,
      factor: r.factor ?? 2,
      jitter: Math.min(1, Math.max(0, r.jitter ?? 0.5)),
      maxAttempts: r.maxAttempts ?? Infinity,
    };
    this.compare = options.compareCursors ?? defaultCompareCursors;
    this.seen = new RecentSet(Math.max(options.dedupeSize ?? 10_000, this.opts.historySize));
    const list = options.catchUp === undefined ? [] : Array.isArray(options.catchUp) ? options.catchUp : [options.catchUp];
    this.sources = list.map((source) => ({ source, pos: options.initialCursors?.[source.key], syncing: false, failed: false, recent: [] }));
  }

  // ------------------------------------------------------------------ public API

  /**
   * Add a catch-up source after construction (an owner's new conversation, `device_linked`):
   * messages after `cursor` (default: from the beginning) are read now when the connection is
   * open, and after every reconnection. A source whose key is already present is left as it is.
   * @returns false when the key was already present.
   */
  addCatchUp(source: CatchUpSource, cursor?: string): boolean {
    if (this.sources.some((s) => s.source.key === source.key)) return false;
    const state: SourceState = { source, pos: cursor ?? null, syncing: false, failed: false, recent: [] };
    this.sources.push(state);
    if (this.ready) void this.sync(this.gen, [state], false);
    return true;
  }

  /** Current connection state. */
  get state(): RealtimeState {
    return this._state;
  }

  /** Messages waiting to be sent (offline queue, plus unacknowledged ones awaiting reconciliation). */
  get queuedCount(): number {
    return this.outbox.length + this.unconfirmed.length;
  }

  /** Messages sent and awaiting their `message_ack`. */
  get inflightCount(): number {
    return this.inflight.size;
  }

  /**
   * Open the connection (no-op when already connecting or open). Resolves when the connection is
   * `open` (authenticated, caught up, queue flushed); rejects with a RealtimeError when the connection ends for good first
   * (`revoked`, `unauthorized`, or `closed` by `close()` / `maxAttempts`). Reconnection after
   * failures is automatic; the promise stays pending across attempts.
   */
  connect(): Promise<void> {
    if (this._state === 'revoked' || this._state === 'unauthorized') {
      return Promise.reject(new RealtimeError(this._state, `connection ended for good (${this._state})`));
    }
    if (this._state === 'open') return Promise.resolve();
    const p = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }));
    if (this._state === 'idle' || this._state === 'closed') {
      this.closing = false;
      this.attempt = 0;
      this.connectNow();
    }
    return p;
  }

  /**
   * Close the connection for good (state `closed`; `connect()` may open it again). Queued and
   * unacknowledged messages reject with `closed`.
   */
  close(reason = 'client closed'): void {
    this.closing = true;
    this.gen++;
    this.clearTimers();
    this.dropSocket(1000, reason);
    this.authenticated = false;
    this.ready = false;
    this.rejectAll('closed', 'the client was closed');
    this.setState('closed', { reason });
  }

  /**
   * Send an encrypted message (contract §6.1 `message` frame). Resolves with the `message_ack` after
   * the service committed it; rejects with a RealtimeError: `server` (error frame with the same
   * client_ref: 400 validation, 403 not a side, 404, 413, 429 with `retryAfterMs`), `queue_full`,
   * `ack_timeout`, `ack_lost`, `closed`, `revoked`, `unauthorized`. While not connected the
   * message waits in the offline queue (see the file comment).
   */
  send(message: OutgoingMessage): Promise<MessageAck> {
    return this.enqueue({ event: 'message', data: { ...message, client_ref: message.client_ref ?? randomRef() } }) as Promise<MessageAck>;
  }

  /**
   * Send a room message (design §8.5 `room_message` frame: one envelope per recipient, or one `*`
   * envelope in an MLS room). Resolves with the `room_message_ack` (the room_message_id and each
   * recipient's policy outcome: delivered, held, blocked, notified) matched by `client_ref`;
   * rejects like {@link send}, with one difference: a room message whose ack was lost with the
   * socket rejects with `ack_lost` (it is not looked up in history nor re-sent). Queued while
   * offline in the same queue as `send`, so the two keep their relative order.
   */
  sendRoom(message: OutgoingRoomMessage): Promise<RoomMessageAck> {
    return this.enqueue({ event: 'room_message', data: { ...message, client_ref: message.client_ref ?? randomRef() } }) as Promise<RoomMessageAck>;
  }

  private enqueue(frame: OutboxFrame): Promise<MessageAck | RoomMessageAck> {
    const state = this._state;
    if (state === 'closed' || state === 'revoked' || state === 'unauthorized') {
      return Promise.reject(new RealtimeError(state, `cannot send: connection is ${state}`));
    }
    return new Promise<MessageAck | RoomMessageAck>((resolve, reject) => {
      const ref = frame.data.client_ref;
      const target: StatusTarget = frame.event === 'message' ? { conversation_id: frame.data.conversation_id } : { room_id: frame.data.room_id };
      this.statuses.pending(ref, target);
      const entry: OutboxEntry = {
        frame,
        seq: ++this.sendSeq,
        attempts: 0,
        resolve: (ack) => {
          const expected = 'deliveries' in ack ? ack.deliveries.filter((d) => d.outcome !== 'blocked').map((d) => d.recipient_device_id) : undefined;
          this.statuses.sent(ref, target, { message_id: 'room_message_id' in ack ? ack.room_message_id : ack.message_id, cursor: ack.cursor, timestamp: ack.timestamp, ...(expected ? { expected } : {}) });
          resolve(ack);
        },
        reject: (err) => {
          this.statuses.failed(ref, err.message);
          reject(err);
        },
      };
      if (this.ready && this.outbox.length === 0 && !this.throttled()) return this.transmit(entry);
      if (this.outbox.length >= this.opts.outboxSize) {
        return entry.reject(new RealtimeError('queue_full', `offline queue is full (${this.opts.outboxSize} messages)`, { clientRef: ref }));
      }
      this.outbox.push(entry);
    });
  }

  /**
   * Run the outbound scanner on a plaintext (contract §6.1 rule 5). Resolves when allowed (or when no
   * scanner is configured); when blocked emits `scan_blocked` and rejects with `scan_blocked`; a
   * throwing scanner rejects with `scan_failed` (fail closed).
   */
  async scanOutbound(plaintext: Uint8Array | string, meta: ScanMeta): Promise<void> {
    const scanner = this.options.scanner;
    if (!scanner) return;
    let verdict;
    try {
      verdict = await scanner(plaintext, meta);
    } catch (err) {
      throw new RealtimeError('scan_failed', `outbound scanner failed: ${(err as Error)?.message ?? String(err)}`, { cause: err });
    }
    if (verdict.blocked) {
      const reason = verdict.reason ?? 'blocked by the outbound scanner';
      this.emit('scan_blocked', { reason, meta });
      throw new RealtimeError('scan_blocked', `message blocked: ${reason}`);
    }
  }

  /**
   * Scan a plaintext, encrypt it with `encrypt` and send the result: the scanner runs before
   * encryption, so a blocked plaintext is never encrypted (no ratchet step) nor sent.
   * @throws RealtimeError `scan_blocked` / `scan_failed`, or as {@link send}.
   */
  async sendPlaintext(
    plaintext: Uint8Array | string,
    meta: ScanMeta,
    encrypt: (plaintext: Uint8Array | string, meta: ScanMeta) => OutgoingMessage | Promise<OutgoingMessage>,
  ): Promise<MessageAck> {
    await this.scanOutbound(plaintext, meta);
    const state = this._state;
    // Do not advance a ratchet for a message that cannot be sent any more.
    if (state === 'closed' || state === 'revoked' || state === 'unauthorized') throw new RealtimeError(state, `cannot send: connection is ${state}`);
    return this.send(await encrypt(plaintext, meta));
  }

  /**
   * Send a read receipt (`message_read`): everything this device received in the conversation up
   * to and including `upToMessageId` was read. Resolves with the `message_read_ack` (`recorded`:
   * the mark moved; `read_receipts_enabled`: false when the device or tenant turned read receipts
   * off, nothing stored or forwarded); rejects with a RealtimeError (`server`: 404 not a message
   * to this device there, 409 not received yet; `ack_timeout`; `closed` / `revoked` /
   * `unauthorized`). While not connected only the latest read per conversation waits.
   */
  markRead(conversationId: string, upToMessageId: string): Promise<MessageReadAck> {
    return this.sendRead(`conversation:${conversationId}`, 'message_read', { conversation_id: conversationId, up_to_message_id: upToMessageId }) as Promise<MessageReadAck>;
  }

  /** {@link markRead} for a room (`room_message_read`): everything released to this device up to `upToRoomMessageId`. */
  markRoomRead(roomId: string, upToRoomMessageId: string): Promise<RoomMessageReadAck> {
    return this.sendRead(`room:${roomId}`, 'room_message_read', { room_id: roomId, up_to_room_message_id: upToRoomMessageId }) as Promise<RoomMessageReadAck>;
  }

  private sendRead(thread: string, event: PendingRead['event'], fields: Record<string, string>): Promise<MessageReadAck | RoomMessageReadAck> {
    const state = this._state;
    if (TERMINAL.has(state)) return Promise.reject(new RealtimeError(state as 'closed', `cannot send: connection is ${state}`));
    return new Promise((resolve, reject) => {
      const previous = this.unsentReads.get(thread);
      const read: PendingRead = { thread, event, data: { ...fields, client_ref: randomRef() }, waiters: [...(previous?.waiters ?? []), { resolve, reject }] };
      this.unsentReads.set(thread, read);
      this.flushReads();
    });
  }

  private flushReads(): void {
    const ws = this.ws;
    if (!ws || !this.ready) return;
    for (const read of [...this.unsentReads.values()]) {
      if (!this.rawSend(ws, read.event, read.data)) return;
      this.unsentReads.delete(read.thread);
      const ref = read.data.client_ref;
      this.sentReads.set(ref, read);
      read.timer = setTimeout(() => {
        if (this.sentReads.get(ref) !== read) return;
        this.sentReads.delete(ref);
        for (const w of read.waiters) w.reject(new RealtimeError('ack_timeout', `no ${read.event}_ack within ${this.opts.ackTimeoutMs} ms`, { clientRef: ref }));
      }, this.opts.ackTimeoutMs);
    }
  }

  /** A `message_read_ack` / `room_message_read_ack`, or the error frame refusing a read; false when `ref` is no read of ours. */
  private settleRead(ref: string | undefined, outcome: { ack: MessageReadAck | RoomMessageReadAck } | { err: RealtimeError }): boolean {
    const read = ref === undefined ? undefined : this.sentReads.get(ref);
    if (!read || ref === undefined) return false;
    this.sentReads.delete(ref);
    if (read.timer !== undefined) clearTimeout(read.timer);
    for (const w of read.waiters) if ('ack' in outcome) w.resolve(outcome.ack);
    else w.reject(outcome.err);
    return true;
  }

  /** Send a `typing` notice for a conversation (contract §6.1). Not queued: returns false when not connected. */
  sendTyping(conversationId: string): boolean {
    if (!this.ready || !this.ws) return false;
    return this.rawSend(this.ws, 'typing', { conversation_id: conversationId });
  }

  /** The last received messages (at most `historySize`), oldest first; optionally of one conversation. */
  history(conversationId?: string): StoredMessage[] {
    return conversationId === undefined ? [...this._history] : this._history.filter((m) => m.conversation_id === conversationId);
  }

  /** Current resume point per catch-up source key (persist it and pass it as `initialCursors`). */
  cursors(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const s of this.sources) if (typeof s.pos === 'string') out[s.source.key] = s.pos;
    return out;
  }

  /** Resolves once every message handed to `message` listeners so far has been processed. */
  settled(): Promise<void> {
    return this.delivery;
  }

  // ------------------------------------------------------------------ connection

  private setState(state: RealtimeState, extra: Omit<StateChangeEvent, 'state' | 'previous'> = {}): void {
    const previous = this._state;
    if (previous === state && state !== 'reconnecting') return;
    this._state = state;
    const event: StateChangeEvent = { state, previous };
    for (const [k, v] of Object.entries(extra)) if (v !== undefined) (event as unknown as Record<string, unknown>)[k] = v;
    this.emit('stateChange', event);
    if (state === 'open') for (const w of this.waiters.splice(0)) w.resolve();
    if (TERMINAL.has(state)) {
      const code = state === 'revoked' ? 'revoked' : state === 'unauthorized' ? 'unauthorized' : 'closed';
      for (const w of this.waiters.splice(0)) w.reject(new RealtimeError(code, `connection ${state}${extra.reason ? `: ${extra.reason}` : ''}`));
    }
  }

  private wsAddress(token: string): string {
    const base = (globalThis as { location?: { href?: string } }).location?.href;
    const u = new URL(this.options.url, base);
    if (u.protocol === 'http:') u.protocol = 'ws:';
    else if (u.protocol === 'https:') u.protocol = 'wss:';
    if (!u.pathname.endsWith(WS_PATH)) u.pathname = u.pathname.replace(/\/+$/, '') + WS_PATH;
    u.search = '';
    u.searchParams.set('token', token);
    if (this.options.deviceId) u.searchParams.set('device_id', this.options.deviceId);
    return u.toString();
  }

  private async resolveToken(): Promise<string | undefined> {
    const t = this.options.token;
    return typeof t === 'function' ? await t() : t;
  }

  private connectNow(token?: string): void {
    const gen = ++this.gen;
    this.setState('connecting');
    (token !== undefined ? Promise.resolve(token) : this.resolveToken()).then(
      (token) => {
        if (gen !== this.gen) return;
        if (!token) return this.terminate('unauthorized', undefined, 'no token');
        this.lastToken = token;
        let ws: WebSocketLike;
        try {
          ws = new this.WS(this.wsAddress(token));
        } catch (err) {
          this.emit('error', new RealtimeError('invalid_frame', `cannot open a WebSocket: ${(err as Error)?.message ?? String(err)}`, { cause: err }));
          return this.onDisconnect(gen, undefined, 'cannot open a WebSocket');
        }
        this.ws = ws;
        ws.onopen = () => {
          if (gen === this.gen) this.rawSend(ws, 'ping', {});
        };
        ws.onmessage = (ev) => {
          if (gen === this.gen) this.onFrame(gen, ev.data);
        };
        ws.onclose = (ev) => {
          if (gen === this.gen) this.onDisconnect(gen, ev.code, ev.reason);
        };
        ws.onerror = () => undefined; // a close event follows
        this.connectTimer = setTimeout(() => {
          if (gen === this.gen && !this.authenticated) this.onDisconnect(gen, undefined, 'connection attempt timed out');
        }, this.opts.connectTimeoutMs);
      },
      (err: unknown) => {
        if (gen !== this.gen) return;
        this.emit('error', new RealtimeError('unauthorized', `token provider failed: ${(err as Error)?.message ?? String(err)}`, { cause: err }));
        this.onDisconnect(gen, undefined, 'token provider failed');
      },
    );
  }

  private rawSend(ws: WebSocketLike, event: string, data: unknown): boolean {
    try {
      ws.send(JSON.stringify({ event, data }));
      return true;
    } catch {
      return false;
    }
  }

  private dropSocket(code: number, reason: string): void {
    const ws = this.ws;
    this.ws = undefined;
    if (!ws) return;
    ws.onopen = ws.onmessage = ws.onclose = null;
    ws.onerror = () => undefined;
    try {
      // Browsers refuse close reasons over 123 bytes.
      if (ws.readyState === 0 || ws.readyState === 1) ws.close(code, reason.slice(0, 100));
    } catch {
      /* already closing */
    }
  }

  private clearTimers(): void {
    for (const t of [this.connectTimer, this.reconnectTimer, this.syncRetryTimer, this.throttleTimer]) if (t !== undefined) clearTimeout(t);
    if (this.deadTimer !== undefined) clearInterval(this.deadTimer);
    this.connectTimer = this.reconnectTimer = this.syncRetryTimer = this.deadTimer = this.throttleTimer = undefined;
    this.throttledUntil = 0;
  }

  private onAuthenticated(gen: number): void {
    this.authenticated = true;
    this.attempt = 0;
    this.authRetried = false;
    this.syncRetryDelay = 1000;
    if (this.connectTimer !== undefined) clearTimeout(this.connectTimer);
    this.connectTimer = undefined;
    if (this.opts.deadTimeoutMs > 0) {
      this.deadTimer = setInterval(
        () => {
          if (gen === this.gen && Date.now() - this.lastFrameAt > this.opts.deadTimeoutMs) this.onDisconnect(gen, undefined, `no data from the service for ${this.opts.deadTimeoutMs} ms`);
        },
        Math.max(50, Math.floor(this.opts.deadTimeoutMs / 4)),
      );
    }
    void this.afterOpen(gen);
  }

  /** Authenticated: catch up, flush the queue, then report `open`. */
  private async afterOpen(gen: number): Promise<void> {
    await this.sync(gen, this.sources, true);
    if (gen !== this.gen) return;
    this.ready = true;
    this.flush();
    this.flushReads();
    if (gen === this.gen && this.ready) this.setState('open');
    void this.refreshStatuses(gen);
  }

  /**
   * Receipts missed while disconnected: one page of history per catch-up source from just before
   * the oldest sent message of it still unread (its `delivered_at` / `read_at`). Best effort; a
   * failure is reported as `catch_up_failed`.
   */
  private async refreshStatuses(gen: number): Promise<void> {
    const open = this.statuses.outstanding().filter((m) => m.conversation_id !== undefined);
    for (const s of this.sources) {
      const times = open
        .filter((m) => m.timestamp !== undefined && s.source.covers({ conversation_id: m.conversation_id } as StoredMessage))
        .map((m) => Date.parse(m.timestamp!))
        .filter((t) => !Number.isNaN(t));
      if (times.length === 0) continue;
      // `since` is exclusive: a millisecond before the oldest unread message's commit time.
      const since = new Date(Math.min(...times) - 1).toISOString();
      try {
        const page = await s.source.fetchPage(since, this.opts.catchUpPageSize);
        if (gen !== this.gen) return;
        this.statuses.fromHistory(page.messages);
      } catch (err) {
        this.emit('error', new RealtimeError('catch_up_failed', `refreshing receipts of ${s.source.key} failed: ${(err as Error)?.message ?? String(err)}`, { cause: err }));
      }
    }
  }

  private onDisconnect(gen: number, code: number | undefined, reason: string): void {
    if (gen !== this.gen) return;
    this.gen++;
    this.clearTimers();
    this.dropSocket(1000, reason);
    this.authenticated = false;
    this.ready = false;
    for (const e of this.inflight.values()) {
      if (e.timer !== undefined) clearTimeout(e.timer);
      this.unconfirmed.push(e);
    }
    this.inflight.clear();
    this.unconfirmed.sort((a, b) => a.seq - b.seq);
    // Unacknowledged reads are sent again after the reconnection (a read is idempotent), unless a newer one of the thread waits.
    for (const read of this.sentReads.values()) {
      if (read.timer !== undefined) clearTimeout(read.timer);
      const newer = this.unsentReads.get(read.thread);
      if (newer) newer.waiters.unshift(...read.waiters);
      else this.unsentReads.set(read.thread, read);
    }
    this.sentReads.clear();
    for (const s of this.sources) s.syncing = false;
    // Resume below live messages that may have overtaken others (see the class comment).
    for (const s of this.sources) {
      this.settle(s, Date.now());
      const safe = code === 1012 ? s.caughtUpAt : this.maxPos(s.caughtUpAt, s.settled);
      if (safe !== undefined && s.caughtUpAt !== undefined) s.pos = this.minPos(s.pos, safe);
      s.recent = [];
      s.settled = undefined;
    }
    this.liveBuffer = [];
    if (this.closing) return;
    const why = reason || undefined;
    if (code === 4001) return this.terminate('revoked', code, why);
    if (code === 4003) return this.terminate('unauthorized', code, why);
    if (code === 4401) {
      if (typeof this.options.token === 'function' && !this.authRetried) {
        this.authRetried = true;
        const refused = this.lastToken;
        const g = this.gen;
        void this.resolveToken().then(
          (t) => {
            if (g !== this.gen || this.closing) return;
            if (t && t !== refused) this.connectNow(t);
            else this.terminate('unauthorized', code, why);
          },
          () => g === this.gen && this.terminate('unauthorized', code, why),
        );
        return;
      }
      return this.terminate('unauthorized', code, why);
    }
    this.scheduleReconnect(code, why);
  }

  private terminate(state: 'revoked' | 'unauthorized' | 'closed', code: number | undefined, reason: string | undefined): void {
    this.gen++;
    this.clearTimers();
    this.dropSocket(1000, reason ?? state);
    this.rejectAll(state, `connection ${state}${reason ? `: ${reason}` : ''}`);
    this.setState(state, { code, reason });
  }

  private scheduleReconnect(code: number | undefined, reason: string | undefined): void {
    const r = this.reconnectOpts;
    if (!r.enabled || this.attempt >= r.maxAttempts) return this.terminate('closed', code, reason ?? 'reconnection disabled or exhausted');
    this.attempt++;
    const base = Math.min(r.maxDelayMs, r.initialDelayMs * Math.pow(r.factor, this.attempt - 1));
    const delayMs = Math.round(base * (1 - r.jitter * Math.random()));
    this.setState('reconnecting', { code, reason, delayMs, attempt: this.attempt });
    const gen = this.gen;
    this.reconnectTimer = setTimeout(() => {
      if (gen === this.gen && !this.closing) this.connectNow();
    }, delayMs);
  }

  private rejectAll(code: 'closed' | 'revoked' | 'unauthorized', message: string): void {
    const all = [...this.inflight.values(), ...this.unconfirmed, ...this.outbox];
    this.inflight.clear();
    this.unconfirmed = [];
    this.outbox.length = 0;
    for (const e of all) {
      if (e.timer !== undefined) clearTimeout(e.timer);
      e.reject(new RealtimeError(code, message, { clientRef: e.frame.data.client_ref }));
    }
    const reads = [...this.sentReads.values(), ...this.unsentReads.values()];
    this.sentReads.clear();
    this.unsentReads.clear();
    for (const read of reads) {
      if (read.timer !== undefined) clearTimeout(read.timer);
      for (const w of read.waiters) w.reject(new RealtimeError(code, message, { clientRef: read.data.client_ref }));
    }
  }

  // ------------------------------------------------------------------ frames

  private onFrame(gen: number, raw: unknown): void {
    const text = frameText(raw);
    let frame: unknown;
    try {
      frame = text === undefined ? undefined : JSON.parse(text);
    } catch {
      frame = undefined;
    }
    if (!isObject(frame) || typeof frame.event !== 'string') {
      this.emit('error', new RealtimeError('invalid_frame', 'the service sent a frame that is not {event, data} JSON'));
      return;
    }
    this.lastFrameAt = Date.now();
    if (!this.authenticated) this.onAuthenticated(gen);
    if (gen !== this.gen) return;
    const data = frame.data;
    switch (frame.event) {
      case 'ping':
        if (this.ws) this.rawSend(this.ws, 'pong', {});
        return;
      case 'pong':
        return;
      case 'message':
        if (!isWireMessage(data)) {
          this.emit('error', new RealtimeError('invalid_frame', 'a message frame lacks message_id, conversation_id or cursor'));
          return;
        }
        return this.onLiveMessage(data);
      case 'message_ack':
      case 'room_message_ack':
        return this.onAck(data);
      case 'room_message':
        if (!isRoomMessage(data)) {
          this.emit('error', new RealtimeError('invalid_frame', 'a room_message frame lacks room_id, room_message_id, sender_device_id, header or ciphertext'));
          return;
        }
        return this.onRoomMessage(data);
      case 'room_joined':
      case 'member_joined':
      case 'policy_alert':
        if (isObject(data)) this.emit(frame.event, data as never);
        return;
      case 'message_delivered':
      case 'room_message_delivered':
        if (isObject(data) && typeof data.device_id === 'string' && Array.isArray(data.message_ids ?? data.room_message_ids)) {
          this.statuses.delivered(data as unknown as MessageDeliveredEvent | RoomMessageDeliveredEvent);
          this.emit(frame.event, data as never);
        }
        return;
      case 'message_read':
      case 'room_message_read':
        if (isObject(data) && typeof data.device_id === 'string' && typeof data.read_at === 'string') {
          this.statuses.read(data as unknown as MessageReadEvent | RoomMessageReadEvent);
          this.emit(frame.event, data as never);
        }
        return;
      case 'message_read_ack':
      case 'room_message_read_ack':
        if (isObject(data)) this.settleRead(typeof data.client_ref === 'string' ? data.client_ref : undefined, { ack: data as unknown as MessageReadAck });
        return;
      case 'error':
        return this.onErrorFrame(data);
      case 'typing':
        if (isObject(data) && typeof data.conversation_id === 'string' && typeof data.device_id === 'string') {
          this.emit('typing', { conversation_id: data.conversation_id, device_id: data.device_id });
        }
        return;
      default:
        this.emit('event', { event: frame.event, data });
    }
  }

  private onAck(data: unknown): void {
    if (!isObject(data)) return;
    if (typeof data.message_id === 'string') this.seen.add(data.message_id);
    if (typeof data.room_message_id === 'string') this.seen.add(data.room_message_id);
    const ref = typeof data.client_ref === 'string' ? data.client_ref : undefined;
    const e = ref === undefined ? undefined : this.inflight.get(ref);
    if (!e || ref === undefined) return;
    this.inflight.delete(ref);
    if (e.timer !== undefined) clearTimeout(e.timer);
    if (e.frame.event === 'room_message') {
      const deliveries = Array.isArray(data.deliveries) ? (data.deliveries as RoomMessageAck['deliveries']) : [];
      e.resolve({ room_message_id: String(data.room_message_id), timestamp: String(data.timestamp), cursor: String(data.cursor), deliveries, client_ref: ref });
    } else {
      e.resolve({ message_id: String(data.message_id), timestamp: String(data.timestamp), cursor: String(data.cursor), client_ref: ref });
    }
  }

  /** A live room message: de-duplicated, then handed over through the same serial chain as messages. */
  private onRoomMessage(m: RoomMessageEvent): void {
    if (this.seen.has(m.room_message_id)) return;
    this.seen.add(m.room_message_id);
    this.delivery = this.delivery.then(() => this.emitSerial('room_message', m));
  }

  private onErrorFrame(data: unknown): void {
    const d = isObject(data) ? data : {};
    const status = typeof d.status === 'number' ? d.status : undefined;
    const detail = typeof d.detail === 'string' ? d.detail : 'error';
    const ref = typeof d.client_ref === 'string' ? d.client_ref : undefined;
    const retryAfterMs = typeof d.retry_after_ms === 'number' ? d.retry_after_ms : undefined;
    const err = new RealtimeError('server', `service error${status !== undefined ? ` ${status}` : ''}: ${detail}`, {
      ...(status !== undefined ? { status } : {}),
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
      ...(ref !== undefined ? { clientRef: ref } : {}),
    });
    if (this.settleRead(ref, { err })) return;
    const e = ref === undefined ? undefined : this.inflight.get(ref);
    if (e && ref !== undefined) {
      this.inflight.delete(ref);
      if (e.timer !== undefined) clearTimeout(e.timer);
      if (status === 429 && e.attempts < this.opts.maxSendAttempts) return this.retryLater(e, retryAfterMs ?? 1000);
      e.reject(err);
      return;
    }
    this.emit('error', err);
  }

  /** Rate limited: hold the whole queue until the limit allows, with `e` back in its place (queue order is kept). */
  private retryLater(e: OutboxEntry, delayMs: number): void {
    const at = Date.now() + Math.min(Math.max(0, delayMs), this.opts.maxRetryDelayMs);
    this.outbox.push(e);
    this.outbox.sort((a, b) => a.seq - b.seq);
    if (at <= this.throttledUntil) return;
    this.throttledUntil = at;
    if (this.throttleTimer !== undefined) clearTimeout(this.throttleTimer);
    const gen = this.gen;
    // The timer is always the one for the latest `throttledUntil` (an extension replaces it). When
    // it fires the wait is over: clear the mark rather than compare clocks, since a timer may fire
    // a millisecond before Date.now() reaches `at`, and a flush that still saw the queue throttled
    // would leave it held with no timer to wake it.
    this.throttleTimer = setTimeout(() => {
      this.throttleTimer = undefined;
      this.throttledUntil = 0;
      if (gen === this.gen) this.flush();
    }, at - Date.now());
  }

  private throttled(): boolean {
    return Date.now() < this.throttledUntil;
  }

  // ------------------------------------------------------------------ sending

  private snapshot(): Map<string, Position> {
    return new Map(this.sources.map((s) => [s.source.key, s.pos]));
  }

  private transmit(e: OutboxEntry): void {
    const ws = this.ws;
    if (!ws || !this.ready) {
      this.outbox.unshift(e);
      return;
    }
    const ref = e.frame.data.client_ref;
    e.snapshot = this.snapshot();
    e.attempts++;
    this.inflight.set(ref, e);
    e.timer = setTimeout(() => {
      if (this.inflight.get(ref) !== e) return;
      this.inflight.delete(ref);
      e.reject(new RealtimeError('ack_timeout', `no ${e.frame.event}_ack within ${this.opts.ackTimeoutMs} ms; the message may or may not be stored`, { clientRef: ref }));
    }, this.opts.ackTimeoutMs);
    if (!this.rawSend(ws, e.frame.event, e.frame.data)) {
      // The socket is closing: not sent; keep it first in line and stop flushing.
      e.attempts--;
      this.inflight.delete(ref);
      clearTimeout(e.timer);
      e.timer = undefined;
      this.ready = false;
      this.outbox.unshift(e);
    }
  }

  private flush(): void {
    while (this.ready && this.outbox.length > 0 && !this.throttled()) this.transmit(this.outbox.shift()!);
  }

  // ------------------------------------------------------------------ receiving, catch-up

  private onLiveMessage(m: StoredMessage): void {
    if (this.sources.some((s) => s.syncing && s.source.covers(m))) this.liveBuffer.push(m);
    else this.deliver(m);
  }

  /** Move live cursors older than the reorder window into `settled`. */
  private settle(s: SourceState, now: number): void {
    while (s.recent.length > 0 && s.recent[0]!.at <= now - this.opts.reorderWindowMs) s.settled = this.maxPos(s.settled, s.recent.shift()!.cursor);
  }

  private maxPos(a: Position, b: Position): Position {
    if (typeof a !== 'string') return typeof b === 'string' ? b : a === null || b === null ? null : undefined;
    if (typeof b !== 'string') return a;
    return this.compare(a, b) >= 0 ? a : b;
  }

  private minPos(a: Position, b: Position): Position {
    if (a === null || b === null) return null;
    if (a === undefined) return b;
    if (b === undefined) return a;
    return this.compare(a, b) <= 0 ? a : b;
  }

  private deliver(m: StoredMessage): void {
    if (this.seen.has(m.message_id)) return;
    this.seen.add(m.message_id);
    const now = Date.now();
    for (const s of this.sources) {
      if (!s.syncing && !s.failed && s.pos !== undefined && s.source.covers(m)) {
        s.pos = this.maxPos(s.pos, m.cursor);
        s.recent.push({ cursor: m.cursor, at: now });
        this.settle(s, now);
      }
    }
    this._history.push(m);
    if (this._history.length > this.opts.historySize) this._history.splice(0, this._history.length - this.opts.historySize);
    this.delivery = this.delivery.then(() => this.emitSerial('message', m));
  }

  /** Read one source from `from` to its end. Returns the messages and the new position. */
  private async readSource(s: SourceState, from: Position): Promise<{ messages: StoredMessage[]; pos: Position; complete: boolean }> {
    if (from === undefined) {
      // Bootstrap: only learn the newest cursor (history before the client started is not replayed).
      const page = await s.source.fetchPage(undefined, 1);
      return { messages: [], pos: page.next_cursor ?? page.messages.at(-1)?.cursor ?? null, complete: true };
    }
    const messages: StoredMessage[] = [];
    let pos: Position = from;
    const size = this.opts.catchUpPageSize;
    for (let i = 0; i < this.opts.maxCatchUpPages; i++) {
      const page = await s.source.fetchPage(pos === null ? EPOCH : pos, size);
      messages.push(...page.messages);
      const next = page.next_cursor ?? page.messages.at(-1)?.cursor ?? null;
      if (next !== null) pos = next;
      if (page.messages.length < size || next === null) return { messages, pos, complete: true };
    }
    return { messages, pos, complete: false };
  }

  /**
   * Catch up the given sources; when `reconcile`, also settle the messages that were sent but
   * not acknowledged before the last disconnect.
   */
  private async sync(gen: number, states: SourceState[], reconcile: boolean): Promise<void> {
    const unconfirmed = reconcile ? this.unconfirmed.splice(0) : [];
    for (const s of states) s.syncing = true;
    const results = await Promise.all(
      states.map(async (s) => {
        let from = s.pos;
        for (const e of unconfirmed) if (e.snapshot?.has(s.source.key)) from = this.minPos(from, e.snapshot.get(s.source.key));
        try {
          const r = await this.readSource(s, from);
          if (!r.complete) {
            this.emit('error', new RealtimeError('catch_up_failed', `catch-up of ${s.source.key} stopped after ${this.opts.maxCatchUpPages} pages; resuming later`));
          }
          return { s, ok: r.complete, ...r };
        } catch (err) {
          this.emit('error', new RealtimeError('catch_up_failed', `catch-up of ${s.source.key} failed: ${(err as Error)?.message ?? String(err)}`, { cause: err }));
          return { s, ok: false, messages: [] as StoredMessage[], pos: s.pos, complete: false };
        }
      }),
    );
    if (gen !== this.gen) {
      // Disconnected meanwhile: try again on the next connection.
      this.unconfirmed = [...unconfirmed, ...this.unconfirmed].sort((a, b) => a.seq - b.seq);
      return;
    }
    const allOk = states.length > 0 && results.every((r) => r.ok);
    const fetched: StoredMessage[] = [];
    for (const r of results) {
      fetched.push(...r.messages);
      r.s.syncing = false;
      r.s.failed = !r.ok;
      r.s.pos = this.maxPos(r.s.pos, r.pos);
      if (r.ok) r.s.caughtUpAt = r.s.pos;
    }

    if (unconfirmed.length > 0) {
      const stored = new Map<string, StoredMessage>();
      for (const m of fetched) stored.set(contentKey(m), m);
      const resend: OutboxEntry[] = [];
      for (const e of unconfirmed) {
        const f = e.frame;
        const m = f.event === 'message' ? stored.get(contentKey(f.data)) : undefined;
        if (m) {
          this.seen.add(m.message_id);
          e.resolve({ message_id: m.message_id, timestamp: m.timestamp, cursor: m.cursor, client_ref: f.data.client_ref });
        } else if (allOk && f.event === 'message' && e.attempts >= this.opts.maxSendAttempts) {
          e.reject(new RealtimeError('retries_exhausted', `not stored after ${e.attempts} sends; giving up`, { clientRef: f.data.client_ref }));
        } else if (allOk && f.event === 'message') {
          resend.push(e);
        } else {
          e.reject(
            new RealtimeError('ack_lost', 'the connection dropped before the service acknowledged the message, and history could not confirm it; it may or may not be stored', {
              clientRef: f.data.client_ref,
            }),
          );
        }
      }
      this.outbox.unshift(...resend);
    }

    this.statuses.fromHistory(fetched);
    const batch = [...fetched, ...this.liveBuffer.splice(0)];
    const unique = new Map<string, StoredMessage>();
    for (const m of batch) if (!unique.has(m.message_id)) unique.set(m.message_id, m);
    const ordered = [...unique.values()].sort((a, b) => this.compare(a.cursor, b.cursor));
    for (const m of ordered) this.deliver(m);

    const failed = this.sources.filter((s) => s.failed);
    if (failed.length > 0) {
      const delay = this.syncRetryDelay;
      this.syncRetryDelay = Math.min(30_000, this.syncRetryDelay * 2);
      if (this.syncRetryTimer !== undefined) clearTimeout(this.syncRetryTimer);
      this.syncRetryTimer = setTimeout(() => {
        if (gen === this.gen) void this.sync(gen, this.sources.filter((s) => s.failed), false);
      }, delay);
    }
  }
}
