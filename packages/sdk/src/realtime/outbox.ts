/**
 * The realtime client's sending side (contract §6.1 rules 3-4, §8; design §7): the outbound queue
 * of `message` and `room_message` frames, their acks matched by `client_ref`, rate-limit retries,
 * and the messages whose ack was lost with the socket, settled against catch-up history after
 * the next connection (see the `RealtimeClient` file comment for the guarantees).
 *
 * - While the client is not ready, frames wait in the queue (at most `outboxSize`; a new frame
 *   beyond it is refused with `queue_full`, so nothing accepted is dropped and order is kept).
 * - A frame written to the socket waits for its ack `ackTimeoutMs` (`ack_timeout` after it).
 * - A 429 `error` frame holds the whole queue for its `retry_after_ms` (at most
 *   `maxRetryDelayMs`), with the refused frame back in its place; after `maxSendAttempts` sends
 *   a frame fails.
 * - On a drop, frames awaiting their ack become unconfirmed; {@link Outbox.reconcile} resolves
 *   those found in history, re-sends the other `message` frames ahead of the queue, and rejects
 *   `room_message` frames (and everything when history could not be read) with `ack_lost`.
 */
import type { StoredMessage } from '@parley/protocol';
import type { ResolvedOptions } from './options.js';
import type { MessageStatusTracker, StatusTarget } from './status.js';
import { RealtimeError, type MessageAck, type OutgoingMessage, type OutgoingRoomMessage, type RoomMessageAck } from './types.js';
import { contentKey, type Position } from './wire.js';

/** The client's current socket, as the outbox and the read receipts write to it. */
export interface FrameWriter {
  /** Authenticated, caught up and flushed, with a socket: frames may be written now. */
  ready(): boolean;
  /** Generation of the current connection (timers of an older one do nothing). */
  generation(): number;
  /** Write `{event, data}` on the current socket; false when there is none or it refused. */
  write(event: string, data: unknown): boolean;
  /** The socket refused a write (it is closing): stop writing until the next connection is ready. */
  halt(): void;
}

/** A frame waiting for its ack: a `message` or a `room_message` (design §7, §8.5). */
export type OutboxFrame = { event: 'message'; data: OutgoingMessage & { client_ref: string } } | { event: 'room_message'; data: OutgoingRoomMessage & { client_ref: string } };

/** A queued or sent frame and the caller waiting for its ack. */
export interface OutboxEntry {
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

/** The fields of a `message_ack` / `room_message_ack` the outbox reads (checked at run time). */
export type AckData = Partial<Record<'message_id' | 'room_message_id' | 'timestamp' | 'cursor' | 'client_ref' | 'deliveries', unknown>>;

/** Outbound queue, in-flight frames and unconfirmed frames of one realtime client (see the file comment). */
export class Outbox {
  private readonly queue: OutboxEntry[] = [];
  private readonly inflight = new Map<string, OutboxEntry>();
  private unconfirmed: OutboxEntry[] = [];
  private sendSeq = 0;
  /** Rate limited: the queue waits until then (ms since the epoch). */
  private throttledUntil = 0;
  private throttleTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly writer: FrameWriter,
    private readonly opts: Pick<ResolvedOptions, 'outboxSize' | 'ackTimeoutMs' | 'maxSendAttempts' | 'maxRetryDelayMs'>,
    private readonly statuses: MessageStatusTracker,
    /** The catch-up sources' positions now (kept with a frame when it goes out). */
    private readonly snapshot: () => Map<string, Position>,
  ) {}

  /** Frames waiting to be sent (queue, plus unacknowledged ones awaiting reconciliation). */
  get queuedCount(): number {
    return this.queue.length + this.unconfirmed.length;
  }

  /** Frames sent and awaiting their ack. */
  get inflightCount(): number {
    return this.inflight.size;
  }

  /** Queue `frame` (or write it now when ready and nothing waits); resolves with its ack. */
  enqueue(frame: OutboxFrame): Promise<MessageAck | RoomMessageAck> {
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
      if (this.writer.ready() && this.queue.length === 0 && !this.throttled()) return this.transmit(entry);
      if (this.queue.length >= this.opts.outboxSize) {
        return entry.reject(new RealtimeError('queue_full', `offline queue is full (${this.opts.outboxSize} messages)`, { clientRef: ref }));
      }
      this.queue.push(entry);
    });
  }

  /** Write queued frames while the client is ready and not rate limited. */
  flush(): void {
    while (this.writer.ready() && this.queue.length > 0 && !this.throttled()) this.transmit(this.queue.shift()!);
  }

  /** A `message_ack` / `room_message_ack`: resolve the frame it answers (by `client_ref`); other acks are ignored. */
  onAck(data: AckData): void {
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

  /**
   * An `error` frame carrying `ref`: a frame in flight is rejected with `err`, or, refused with 429
   * and below `maxSendAttempts`, queued again after `retryAfterMs`. False when `ref` is no frame
   * of the outbox.
   */
  onRefused(ref: string | undefined, err: RealtimeError): boolean {
    const e = ref === undefined ? undefined : this.inflight.get(ref);
    if (!e || ref === undefined) return false;
    this.inflight.delete(ref);
    if (e.timer !== undefined) clearTimeout(e.timer);
    if (err.status === 429 && e.attempts < this.opts.maxSendAttempts) this.retryLater(e, err.retryAfterMs ?? 1000);
    else e.reject(err);
    return true;
  }

  /** The socket dropped: frames awaiting their ack become unconfirmed (settled by {@link reconcile}). */
  onDisconnect(): void {
    for (const e of this.inflight.values()) {
      if (e.timer !== undefined) clearTimeout(e.timer);
      this.unconfirmed.push(e);
    }
    this.inflight.clear();
    this.unconfirmed.sort((a, b) => a.seq - b.seq);
  }

  /** Take the unconfirmed frames for a reconciliation (their snapshots tell where catch-up must start). */
  takeUnconfirmed(): OutboxEntry[] {
    return this.unconfirmed.splice(0);
  }

  /** Put frames taken by {@link takeUnconfirmed} back (the connection dropped before they were settled). */
  restoreUnconfirmed(entries: OutboxEntry[]): void {
    this.unconfirmed = [...entries, ...this.unconfirmed].sort((a, b) => a.seq - b.seq);
  }

  /**
   * Settle unconfirmed frames against the history caught up after a reconnection: a `message` found
   * there (same conversation, header and ciphertext) resolves with the stored id and cursor
   * (`onStored` is told its id); when every source was read completely, one not found is re-sent
   * ahead of the queue, or fails with `retries_exhausted` after `maxSendAttempts` sends; anything
   * else (room messages, incomplete history) rejects with `ack_lost`.
   */
  reconcile(entries: OutboxEntry[], fetched: readonly StoredMessage[], allOk: boolean, onStored: (messageId: string) => void): void {
    const stored = new Map<string, StoredMessage>();
    for (const m of fetched) stored.set(contentKey(m), m);
    const resend: OutboxEntry[] = [];
    for (const e of entries) {
      const f = e.frame;
      const m = f.event === 'message' ? stored.get(contentKey(f.data)) : undefined;
      if (m) {
        onStored(m.message_id);
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
    this.queue.unshift(...resend);
  }

  /** Reject every frame (in flight, unconfirmed, queued) with `code`: the connection ended. */
  rejectAll(code: 'closed' | 'revoked' | 'unauthorized', message: string): void {
    const all = [...this.inflight.values(), ...this.unconfirmed, ...this.queue];
    this.inflight.clear();
    this.unconfirmed = [];
    this.queue.length = 0;
    for (const e of all) {
      if (e.timer !== undefined) clearTimeout(e.timer);
      e.reject(new RealtimeError(code, message, { clientRef: e.frame.data.client_ref }));
    }
  }

  /** Forget a rate-limit wait (the connection ended; the next one starts unthrottled). */
  clearThrottle(): void {
    if (this.throttleTimer !== undefined) clearTimeout(this.throttleTimer);
    this.throttleTimer = undefined;
    this.throttledUntil = 0;
  }

  /** Rate limited: hold the whole queue until the limit allows, with `e` back in its place (queue order is kept). */
  private retryLater(e: OutboxEntry, delayMs: number): void {
    const at = Date.now() + Math.min(Math.max(0, delayMs), this.opts.maxRetryDelayMs);
    this.queue.push(e);
    this.queue.sort((a, b) => a.seq - b.seq);
    if (at <= this.throttledUntil) return;
    this.throttledUntil = at;
    if (this.throttleTimer !== undefined) clearTimeout(this.throttleTimer);
    const gen = this.writer.generation();
    // The timer is always the one for the latest `throttledUntil` (an extension replaces it). When
    // it fires the wait is over: clear the mark rather than compare clocks, since a timer may fire
    // a millisecond before Date.now() reaches `at`, and a flush that still saw the queue throttled
    // would leave it held with no timer to wake it.
    this.throttleTimer = setTimeout(() => {
      this.throttleTimer = undefined;
      this.throttledUntil = 0;
      if (gen === this.writer.generation()) this.flush();
    }, at - Date.now());
  }

  private throttled(): boolean {
    return Date.now() < this.throttledUntil;
  }

  private transmit(e: OutboxEntry): void {
    if (!this.writer.ready()) {
      this.queue.unshift(e);
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
    if (!this.writer.write(e.frame.event, e.frame.data)) {
      // The socket is closing: not sent; keep it first in line and stop flushing.
      e.attempts--;
      this.inflight.delete(ref);
      clearTimeout(e.timer);
      e.timer = undefined;
      this.writer.halt();
      this.queue.unshift(e);
    }
  }
}
