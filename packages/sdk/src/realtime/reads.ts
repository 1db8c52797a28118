/**
 * Read receipts the realtime client sends (`message_read`, `room_message_read`; @parley/protocol
 * areas/receipts.ts, docs/decisions.md "Delivery and read receipts"): while not connected only the
 * latest read per conversation or room waits (a read covers everything before it); a sent read
 * waits `ackTimeoutMs` for its `*_read_ack`, matched by `client_ref`; reads not acknowledged
 * before a drop are sent again after the reconnection (a read is idempotent).
 */
import type { MessageReadAck, RoomMessageReadAck } from '@parley/protocol';
import type { FrameWriter } from './outbox.js';
import { RealtimeError } from './types.js';
import { randomRef } from './wire.js';

/** A read receipt frame and the callers waiting for its ack. */
interface PendingRead {
  /** `conversation:<id>` or `room:<id>`. */
  thread: string;
  event: 'message_read' | 'room_message_read';
  data: { client_ref: string } & Record<string, string>;
  waiters: { resolve(ack: MessageReadAck | RoomMessageReadAck): void; reject(err: RealtimeError): void }[];
  timer?: ReturnType<typeof setTimeout>;
}

/** The read receipts of one realtime client (see the file comment). */
export class ReadReceipts {
  /** Read receipts not sent yet, the latest per conversation or room. */
  private readonly unsent = new Map<string, PendingRead>();
  /** Read receipts sent and awaiting their ack, by client_ref. */
  private readonly sent = new Map<string, PendingRead>();

  constructor(
    private readonly writer: FrameWriter,
    private readonly ackTimeoutMs: number,
  ) {}

  /**
   * Send read receipt `event` with `fields` for `thread` (replacing an unsent one of the same
   * thread, whose callers then wait for this one); resolves with its ack.
   */
  send(thread: string, event: PendingRead['event'], fields: Record<string, string>): Promise<MessageReadAck | RoomMessageReadAck> {
    return new Promise((resolve, reject) => {
      const previous = this.unsent.get(thread);
      const read: PendingRead = { thread, event, data: { ...fields, client_ref: randomRef() }, waiters: [...(previous?.waiters ?? []), { resolve, reject }] };
      this.unsent.set(thread, read);
      this.flush();
    });
  }

  /** Write the unsent reads while the client is ready. */
  flush(): void {
    if (!this.writer.ready()) return;
    for (const read of [...this.unsent.values()]) {
      if (!this.writer.write(read.event, read.data)) return;
      this.unsent.delete(read.thread);
      const ref = read.data.client_ref;
      this.sent.set(ref, read);
      read.timer = setTimeout(() => {
        if (this.sent.get(ref) !== read) return;
        this.sent.delete(ref);
        for (const w of read.waiters) w.reject(new RealtimeError('ack_timeout', `no ${read.event}_ack within ${this.ackTimeoutMs} ms`, { clientRef: ref }));
      }, this.ackTimeoutMs);
    }
  }

  /** A `message_read_ack` / `room_message_read_ack`, or the error frame refusing a read; false when `ref` is no read of ours. */
  settle(ref: string | undefined, outcome: { ack: MessageReadAck | RoomMessageReadAck } | { err: RealtimeError }): boolean {
    const read = ref === undefined ? undefined : this.sent.get(ref);
    if (!read || ref === undefined) return false;
    this.sent.delete(ref);
    if (read.timer !== undefined) clearTimeout(read.timer);
    for (const w of read.waiters) if ('ack' in outcome) w.resolve(outcome.ack);
    else w.reject(outcome.err);
    return true;
  }

  /** The socket dropped: unacknowledged reads wait to be sent again, unless a newer one of the thread waits. */
  onDisconnect(): void {
    for (const read of this.sent.values()) {
      if (read.timer !== undefined) clearTimeout(read.timer);
      const newer = this.unsent.get(read.thread);
      if (newer) newer.waiters.unshift(...read.waiters);
      else this.unsent.set(read.thread, read);
    }
    this.sent.clear();
  }

  /** Reject every read's callers with `code`: the connection ended. */
  rejectAll(code: 'closed' | 'revoked' | 'unauthorized', message: string): void {
    const reads = [...this.sent.values(), ...this.unsent.values()];
    this.sent.clear();
    this.unsent.clear();
    for (const read of reads) {
      if (read.timer !== undefined) clearTimeout(read.timer);
      for (const w of read.waiters) w.reject(new RealtimeError(code, message, { clientRef: read.data.client_ref }));
    }
  }
}
