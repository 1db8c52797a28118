/**
 * Read receipts (@parley/protocol `areas/receipts.ts`; docs/decisions.md
 * "Delivery and read receipts"). A read moves the reader's mark for a conversation or a room
 * forward ("read up to here"), in one statement that also checks the target and the settings
 * (repo.ts), and forwards the advance to the senders of the newly covered messages:
 * - pairwise conversation: `message_read {conversation_id, device_id, up_to_message_id, cursor,
 *   read_at}` to the other side (the sender of every message the reader received there);
 * - room: `room_message_read {room_id, device_id, room_message_ids, up_to_room_message_id,
 *   read_at}` to each sender of a newly covered envelope, with its own ids.
 *
 * A read of a message this instance delivered moments ago first waits for that delivery's batch
 * (at most ~20 ms), so the sender hears "delivered" before "read" and the read is not refused.
 */
import { type MessageReadAck, type MessageReadEvent, type RoomMessageReadAck, type RoomMessageReadEvent } from '@parley/protocol';
import type { Db } from '../../db/client.js';
import { drizzleTenantWriter, type TenantWriter } from '../../db/tenant-writer.js';
import { conflict, notFound } from '../../lib/errors.js';
import type { MessageService } from '../conversations/index.js';
import { chunks, groupRows, type ReceiptPublisher } from './publisher.js';
import { readConversationStatement, readRoomStatement, type ReadOutcome, type RoomReadOutcome } from './repo.js';
import type { RoomDeliveries } from './room-deliveries.js';

export interface ReceiptServiceDeps {
  db: Db;
  /** The tenant writer of the read statements (db/tenant-writer.ts); drizzle transactions without it. */
  writer?: TenantWriter;
  /** Conversation sides (403 / 404) and this instance's pending delivered receipts. */
  messages: Pick<MessageService, 'counterpart' | 'whenDelivered'>;
  /** This instance's pending room delivered receipts. */
  roomDeliveries: Pick<RoomDeliveries, 'whenReceived'>;
  publisher: ReceiptPublisher;
  /** The tenant setting's default (settings/service.ts READ_RECEIPTS_DEFAULT). */
  readReceiptsDefault: boolean;
}

const iso = (t: string | Date) => (t instanceof Date ? t : new Date(t)).toISOString();

/**
 * The checks every read shares: the target must be addressed to the reader (404 otherwise: another
 * conversation's or room's message, the reader's own, or an unknown one) and received by it (409).
 */
function check(row: ReadOutcome | undefined, what: string): ReadOutcome {
  if (!row?.found) throw notFound(`${what} addressed to this device`);
  if (!row.received) throw conflict(`the device has not received this ${what} (yet): a read receipt needs the delivery first`);
  return row;
}

/** The ack fields of a read: whether the mark moved, whether read receipts are on, the mark's time. */
function ackOf(row: ReadOutcome) {
  const at = row.advanced_at ?? row.previous_at;
  return { recorded: row.advanced_at !== null, read_receipts_enabled: row.enabled, read_at: row.enabled && at !== null ? iso(at) : null };
}

export class ReceiptService {
  private readonly writer: TenantWriter;

  constructor(private readonly deps: ReceiptServiceDeps) {
    this.writer = deps.writer ?? drizzleTenantWriter(deps.db);
  }

  /**
   * `reader` read everything addressed to it in pairwise conversation `conversationId` up to and
   * including message `upTo`. With read receipts on and the mark moving forward, the mark is
   * stored and `message_read` goes to the other side's sockets (every instance).
   * @throws 403 the reader is not a side, 404 unknown conversation or `upTo` not addressed to the
   *   reader there, 409 `upTo` not received by the reader yet.
   */
  async readConversation(tenantId: string, reader: string, conversationId: string, upTo: string): Promise<MessageReadAck> {
    const { peer } = await this.deps.messages.counterpart(tenantId, conversationId, reader);
    await this.deps.messages.whenDelivered(upTo);
    const [found] = await this.writer.write<ReadOutcome>({
      tenantId,
      name: 'parley_read_conversation',
      statement: readConversationStatement(tenantId, conversationId, reader, upTo, this.deps.readReceiptsDefault),
    });
    const row = check(found, 'message');
    if (row.advanced_at !== null) {
      const data: MessageReadEvent = { conversation_id: conversationId, device_id: reader, up_to_message_id: upTo, cursor: String(row.pos), read_at: iso(row.advanced_at) };
      await this.deps.publisher.publish(tenantId, 'message_read', [{ deviceIds: [peer], data }]);
    }
    return { conversation_id: conversationId, up_to_message_id: upTo, ...ackOf(row) };
  }

  /**
   * Member `reader` read everything released to it in room `roomId` up to and including room
   * message `upTo` (its pairwise envelope, or its row of an MLS message). With read receipts on
   * and the mark moving forward, the mark is stored and each sender of a newly covered message
   * gets `room_message_read` with its ids.
   * @throws 404 `upTo` is not a message of the room released to the reader, 409 not received yet.
   */
  async readRoom(tenantId: string, reader: string, roomId: string, upTo: string): Promise<RoomMessageReadAck> {
    await this.deps.roomDeliveries.whenReceived({ roomMessageId: upTo, recipientDeviceId: reader });
    const [found] = await this.writer.write<RoomReadOutcome>({
      tenantId,
      name: 'parley_read_room',
      statement: readRoomStatement(tenantId, roomId, reader, upTo, this.deps.readReceiptsDefault),
    });
    const row = check(found, 'room message') as RoomReadOutcome;
    if (row.advanced_at !== null && row.covered) {
      const readAt = iso(row.advanced_at);
      const order = new Map(row.covered.map((c, i) => [c.id, i]));
      const frames = groupRows(row.covered, [(c) => c.sender], (c) => order.get(c.id)!).flatMap(({ first, rows }) =>
        chunks(rows).map((part) => {
          const data: RoomMessageReadEvent = { room_id: roomId, device_id: reader, room_message_ids: part.map((c) => c.id), up_to_room_message_id: upTo, read_at: readAt };
          return { deviceIds: [first.sender], data };
        }),
      );
      await this.deps.publisher.publish(tenantId, 'room_message_read', frames);
    }
    return { room_id: roomId, up_to_room_message_id: upTo, ...ackOf(row) };
  }
}
