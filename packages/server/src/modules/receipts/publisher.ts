/**
 * Publishing delivery and read receipts (@parley/protocol `areas/receipts.ts`):
 * the rows a delivered write just marked become `message_delivered` / `room_message_delivered`
 * frames for the senders' sockets, grouped per (sender, recipient, conversation or room), many ids
 * per frame (at most MAX_RECEIPT_IDS), and ALL the frames of one write go out as ONE bus message
 * (Notifier.toEach), so every instance delivers them and a batch of thousands of deliveries costs
 * one publish. Read receipts are published the same way (receipts/service.ts).
 */
import { MAX_RECEIPT_IDS, type MessageDeliveredEvent, type RoomMessageDeliveredEvent, type WsServiceEventName } from '@parley/protocol';
import type { Notifier } from '../../realtime/notifier.js';
import type { DeliveredMessage } from '../conversations/index.js';

/** A room envelope that just became received (a `room_receipt_batches` row recorded it in the statement that answers it). */
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
 * Group rows by their keys (`keys`: one function per level, e.g. thread, sender, recipient), in
 * order of each group's first row, each group's rows ordered by `order` (ascending), keeping the
 * first row of each group as its representative. Nested maps, one level per key: no key string
 * is built per row (a batch of room receipts groups thousands of rows).
 */
export function groupRows<T>(rows: readonly T[], keys: readonly ((r: T) => string)[], order: (r: T) => number): { first: T; rows: T[] }[] {
  type Level = Map<string, Level | T[]>;
  const root: Level = new Map();
  const groups: T[][] = [];
  const last = keys.length - 1;
  for (const r of rows) {
    let level = root;
    for (let i = 0; i < last; i++) {
      const k = keys[i]!(r);
      let next = level.get(k) as Level | undefined;
      if (!next) level.set(k, (next = new Map()));
      level = next;
    }
    const k = keys[last]!(r);
    const g = level.get(k) as T[] | undefined;
    if (g) g.push(r);
    else {
      const created = [r];
      level.set(k, created);
      groups.push(created);
    }
  }
  return groups.map((g) => {
    g.sort((a, b) => order(a) - order(b));
    return { first: g[0]!, rows: g };
  });
}

const senderOf = (r: { sender_device_id: string }) => r.sender_device_id;
const recipientOf = (r: { recipient_device_id: string }) => r.recipient_device_id;

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
  return groupRows(rows, [thread, senderOf, recipientOf], order).flatMap(({ first, rows: group }) =>
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
  publish<D>(tenantId: string, event: WsServiceEventName, frames: ReceiptFrame<D>[]): Promise<void> {
    return this.notifier.toEach(tenantId, event, frames);
  }
}
