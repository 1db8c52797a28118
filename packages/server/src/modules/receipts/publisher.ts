/**
 * Publishing delivery and read receipts (issue 20 part 1; @parley/protocol `areas/receipts.ts`):
 * the rows a delivered write just marked become `message_delivered` / `room_message_delivered`
 * frames for the senders' sockets, grouped per (sender, recipient, conversation or room), many ids
 * per frame (at most MAX_RECEIPT_IDS), and ALL the frames of one write go out as ONE bus message
 * (Notifier.toEach), so every instance delivers them and a batch of thousands of deliveries costs
 * one publish. Read receipts are published the same way (receipts/service.ts).
 */
import { MAX_RECEIPT_IDS, type MessageDeliveredEvent, type RoomMessageDeliveredEvent } from '@parley/protocol';
import type { Notifier } from '../../realtime/notifier.js';
import type { DeliveredMessage } from '../conversations/deliveries.js';

/** A room envelope that just became received (its `room_receipts` row was inserted by the statement that answers it). */
export interface ReceivedEnvelope {
  room_message_id: string;
  room_id: string;
  sender_device_id: string;
  recipient_device_id: string;
  release_seq: string | number;
  /** Epoch milliseconds (the receipt insert answers them so; no per-row timestamp parse). */
  received_at: number;
}

/** One frame for one device. */
export interface ReceiptFrame<D> {
  deviceIds: string[];
  data: D;
}

const iso = (t: string | Date | number) => (t instanceof Date ? t : new Date(t)).toISOString();

/** `items` split into runs of at most `size`. */
export function chunks<T>(items: readonly T[], size = MAX_RECEIPT_IDS): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * Group rows by `key`, each group's rows ordered by `order` (ascending), keeping the first row of
 * each group as its representative.
 */
export function groupRows<T>(rows: readonly T[], key: (r: T) => string, order: (r: T) => number): { first: T; rows: T[] }[] {
  const groups = new Map<string, T[]>();
  for (const r of rows) {
    const k = key(r);
    const g = groups.get(k);
    if (g) g.push(r);
    else groups.set(k, [r]);
  }
  return [...groups.values()].map((g) => {
    g.sort((a, b) => order(a) - order(b));
    return { first: g[0]!, rows: g };
  });
}

/**
 * The delivered frames of freshly delivered rows: one group per (thread, sender, recipient), ids in
 * `order`, at most MAX_RECEIPT_IDS per frame, to the sender; `build` names the frame's fields.
 */
function deliveredFrames<R extends { sender_device_id: string; recipient_device_id: string }, D>(
  rows: readonly R[],
  thread: (r: R) => string,
  order: (r: R) => number,
  build: (first: R, part: R[]) => D,
): ReceiptFrame<D>[] {
  return groupRows(rows, (r) => `${thread(r)}:${r.sender_device_id}:${r.recipient_device_id}`, order).flatMap(({ first, rows: group }) =>
    chunks(group).map((part) => ({ deviceIds: [first.sender_device_id], data: build(first, part) })),
  );
}

/** The `message_delivered` frames of freshly delivered messages: per (conversation, sender, recipient), in send order. */
export function messageDeliveredFrames(rows: readonly DeliveredMessage[]): ReceiptFrame<MessageDeliveredEvent>[] {
  return deliveredFrames(
    rows,
    (r) => r.conversation_id,
    (r) => Number(r.seq),
    (first, part) => ({ conversation_id: first.conversation_id, device_id: first.recipient_device_id, message_ids: part.map((r) => r.id), delivered_at: iso(part.at(-1)!.delivered_at) }),
  );
}

/** The `room_message_delivered` frames of freshly received envelopes: per (room, sender, recipient), in release order. */
export function roomDeliveredFrames(rows: readonly ReceivedEnvelope[]): ReceiptFrame<RoomMessageDeliveredEvent>[] {
  return deliveredFrames(
    rows,
    (r) => r.room_id,
    (r) => Number(r.release_seq),
    (first, part) => ({ room_id: first.room_id, device_id: first.recipient_device_id, room_message_ids: part.map((r) => r.room_message_id), delivered_at: iso(part.at(-1)!.received_at) }),
  );
}

/** Sends receipts to the senders' sockets on every instance (one bus message per call). */
export class ReceiptPublisher {
  constructor(private readonly notifier: Notifier) {}

  /** `message_delivered` for messages a delivered write just marked (MessageService `onDelivered`). */
  messagesDelivered(tenantId: string, rows: readonly DeliveredMessage[]): Promise<void> {
    return this.notifier.toEach(tenantId, 'message_delivered', messageDeliveredFrames(rows));
  }

  /** `room_message_delivered` for envelopes a received write just marked (RoomDeliveries). */
  roomMessagesDelivered(tenantId: string, rows: readonly ReceivedEnvelope[]): Promise<void> {
    return this.notifier.toEach(tenantId, 'room_message_delivered', roomDeliveredFrames(rows));
  }

  /** Any receipt frames of one event, as one bus message (read receipts). */
  publish<D>(tenantId: string, event: string, frames: ReceiptFrame<D>[]): Promise<void> {
    return this.notifier.toEach(tenantId, event, frames);
  }
}
