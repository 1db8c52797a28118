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
 * - Receipts: `statuses` tracks every message sent through the queue (`pending`
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
 *
 * The client is assembled from parts: options.ts (options and defaults), outbox.ts (queue, acks,
 * retries, reconciliation), reads.ts (read receipts), inbox.ts (catch-up, de-duplication,
 * history), dispatch.ts (received frames, routed by the contract's service-event table) and
 * wire.ts (frame parsing and shape checks); this file holds the connection and the public API.
 */
import { WS_PATH } from '../client/routes.js';
import type { MessageReadAck, RoomMessageReadAck, StoredMessage } from '@parley/protocol';
import { dispatchFrame, type FrameReceiver } from './dispatch.js';
import { TypedEmitter } from './emitter.js';
import { Inbox } from './inbox.js';
import { defaultCompareCursors, resolveOptions, resolveReconnect, type RealtimeClientOptions, type ReconnectOptions, type ResolvedOptions } from './options.js';
import { Outbox, type FrameWriter, type OutboxFrame } from './outbox.js';
import { ReadReceipts } from './reads.js';
import { MessageStatusTracker } from './status.js';
import {
  RealtimeError,
  type CatchUpSource,
  type MessageAck,
  type OutgoingMessage,
  type OutgoingRoomMessage,
  type RoomMessageAck,
  type RealtimeEvents,
  type RealtimeState,
  type ScanMeta,
  type StateChangeEvent,
  type WebSocketLike,
  type WebSocketLikeConstructor,
} from './types.js';
import { parseFrame, randomRef, refusal, socketAddress } from './wire.js';

export { defaultCompareCursors, type RealtimeClientOptions, type ReconnectOptions } from './options.js';

interface Waiter {
  resolve(): void;
  reject(err: RealtimeError): void;
}

const TERMINAL: ReadonlySet<RealtimeState> = new Set(['closed', 'revoked', 'unauthorized']);

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
  private readonly opts: ResolvedOptions;
  /** Status of every message sent through this client (and of those reported to it): see realtime/status.ts. */
  readonly statuses: MessageStatusTracker;
  private readonly reconnectOpts: Required<ReconnectOptions>;
  private readonly WS: WebSocketLikeConstructor;
  private readonly outbox: Outbox;
  private readonly reads: ReadReceipts;
  private readonly inbox: Inbox;
  /** What dispatch.ts calls for each received frame. */
  private readonly receiver: FrameReceiver;

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
  private delivery: Promise<void> = Promise.resolve();
  private waiters: Waiter[] = [];

  private connectTimer: ReturnType<typeof setTimeout> | undefined;
  private reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  private deadTimer: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly options: RealtimeClientOptions) {
    super((err, event) => {
      if (event !== 'error') this.emit('error', new RealtimeError('listener_failed', `a "${String(event)}" listener failed: ${(err as Error)?.message ?? String(err)}`, { cause: err }));
    });
    const WS = options.WebSocket ?? (globalThis as { WebSocket?: WebSocketLikeConstructor }).WebSocket;
    if (!WS) throw new TypeError('RealtimeClient: no WebSocket implementation; pass options.WebSocket (e.g. nodeWebSocket() from @parley/sdk/node)');
    this.WS = WS;
    this.opts = resolveOptions(options);
    this.statuses = new MessageStatusTracker(options.compareCursors ? { compareCursors: options.compareCursors } : {});
    this.reconnectOpts = resolveReconnect(options.reconnect);
    const writer: FrameWriter = {
      ready: () => this.ready && this.ws !== undefined,
      generation: () => this.gen,
      write: (event, data) => (this.ws ? this.rawSend(this.ws, event, data) : false),
      halt: () => {
        this.ready = false;
      },
    };
    this.outbox = new Outbox(writer, this.opts, this.statuses, () => this.inbox.snapshot());
    this.reads = new ReadReceipts(writer, this.opts.ackTimeoutMs);
    const list = options.catchUp === undefined ? [] : Array.isArray(options.catchUp) ? options.catchUp : [options.catchUp];
    this.inbox = new Inbox(
      {
        generation: () => this.gen,
        error: (err) => this.emit('error', err),
        handOver: (m) => {
          this.delivery = this.delivery.then(() => this.emitSerial('message', m));
        },
      },
      this.outbox,
      this.statuses,
      this.opts,
      options.compareCursors ?? defaultCompareCursors,
      list,
      options.initialCursors,
      options.dedupeSize ?? 10_000,
    );
    this.receiver = this.frameReceiver();
  }

  // ------------------------------------------------------------------ public API

  /**
   * Add a catch-up source after construction (an owner's new conversation, `device_linked`):
   * messages after `cursor` (default: from the beginning) are read now when the connection is
   * open, and after every reconnection. A source whose key is already present is left as it is.
   * @returns false when the key was already present.
   */
  addCatchUp(source: CatchUpSource, cursor?: string): boolean {
    const state = this.inbox.add(source, cursor);
    if (!state) return false;
    if (this.ready) void this.inbox.sync(this.gen, [state], false);
    return true;
  }

  /** Current connection state. */
  get state(): RealtimeState {
    return this._state;
  }

  /** Messages waiting to be sent (offline queue, plus unacknowledged ones awaiting reconciliation). */
  get queuedCount(): number {
    return this.outbox.queuedCount;
  }

  /** Messages sent and awaiting their `message_ack`. */
  get inflightCount(): number {
    return this.outbox.inflightCount;
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
    return this.outbox.enqueue(frame);
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


  private sendRead(thread: string, event: 'message_read' | 'room_message_read', fields: Record<string, string>): Promise<MessageReadAck | RoomMessageReadAck> {
    const state = this._state;
    if (TERMINAL.has(state)) return Promise.reject(new RealtimeError(state as 'closed', `cannot send: connection is ${state}`));
    return this.reads.send(thread, event, fields);
  }

  /** Send a `typing` notice for a conversation (contract §6.1). Not queued: returns false when not connected. */
  sendTyping(conversationId: string): boolean {
    if (!this.ready || !this.ws) return false;
    return this.rawSend(this.ws, 'typing', { conversation_id: conversationId });
  }

  /** The last received messages (at most `historySize`), oldest first; optionally of one conversation. */
  history(conversationId?: string): StoredMessage[] {
    return this.inbox.history(conversationId);
  }

  /** Current resume point per catch-up source key (persist it and pass it as `initialCursors`). */
  cursors(): Record<string, string> {
    return this.inbox.cursors();
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
    return socketAddress(this.options.url, WS_PATH, token, this.options.deviceId);
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
    for (const t of [this.connectTimer, this.reconnectTimer]) if (t !== undefined) clearTimeout(t);
    if (this.deadTimer !== undefined) clearInterval(this.deadTimer);
    this.connectTimer = this.reconnectTimer = this.deadTimer = undefined;
    this.inbox.cancelRetry();
    this.outbox.clearThrottle();
  }

  private onAuthenticated(gen: number): void {
    this.authenticated = true;
    this.attempt = 0;
    this.authRetried = false;
    this.inbox.resetRetry();
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
    await this.inbox.sync(gen, undefined, true);
    if (gen !== this.gen) return;
    this.ready = true;
    this.outbox.flush();
    this.reads.flush();
    if (gen === this.gen && this.ready) this.setState('open');
    void this.inbox.refreshStatuses(gen);
  }

  private onDisconnect(gen: number, code: number | undefined, reason: string): void {
    if (gen !== this.gen) return;
    this.gen++;
    this.clearTimers();
    this.dropSocket(1000, reason);
    this.authenticated = false;
    this.ready = false;
    this.outbox.onDisconnect();
    // Unacknowledged reads are sent again after the reconnection (a read is idempotent), unless a newer one of the thread waits.
    this.reads.onDisconnect();
    // Resume below live messages that may have overtaken others (see the class comment).
    this.inbox.onDisconnect(code);
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
    this.outbox.rejectAll(code, message);
    this.reads.rejectAll(code, message);
  }

  // ------------------------------------------------------------------ frames

  private onFrame(gen: number, raw: unknown): void {
    const frame = parseFrame(raw);
    if (!frame) {
      this.emit('error', new RealtimeError('invalid_frame', 'the service sent a frame that is not {event, data} JSON'));
      return;
    }
    this.lastFrameAt = Date.now();
    if (!this.authenticated) this.onAuthenticated(gen);
    if (gen !== this.gen) return;
    dispatchFrame(this.receiver, frame.event, frame.data);
  }

  /** The client's handling of each received frame, as dispatch.ts routes them. */
  private frameReceiver(): FrameReceiver {
    return {
      pong: () => {
        if (this.ws) this.rawSend(this.ws, 'pong', {});
      },
      message: (m) => this.inbox.onLiveMessage(m),
      ack: (data) => {
        if (typeof data.message_id === 'string') this.inbox.markSeen(data.message_id);
        if (typeof data.room_message_id === 'string') this.inbox.markSeen(data.room_message_id);
        this.outbox.onAck(data);
      },
      // A live room message: de-duplicated, then handed over through the same serial chain as messages.
      roomMessage: (m) => {
        if (!this.inbox.firstSight(m.room_message_id)) return;
        this.delivery = this.delivery.then(() => this.emitSerial('room_message', m));
      },
      delivered: (e) => this.statuses.delivered(e),
      read: (e) => this.statuses.read(e),
      readAck: (ack) => void this.reads.settle(typeof ack.client_ref === 'string' ? ack.client_ref : undefined, { ack }),
      refused: (d) => this.onErrorFrame(d),
      emit: (event, data) => this.emit(event, ...([data] as Parameters<RealtimeEvents[typeof event]>)),
      other: (event, data) => this.emit('event', { event, data }),
      invalid: (detail) => this.emit('error', new RealtimeError('invalid_frame', detail)),
    };
  }

  /** An `error` frame: it settles the read or the outbox frame carrying its `client_ref`, else reaches the `error` listeners. */
  private onErrorFrame(d: Record<string, unknown>): void {
    const err = refusal(d);
    const ref = err.clientRef;
    if (this.reads.settle(ref, { err })) return;
    if (this.outbox.onRefused(ref, err)) return;
    this.emit('error', err);
  }
}
