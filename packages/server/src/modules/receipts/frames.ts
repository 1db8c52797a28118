/**
 * The receipt socket frames (@parley/protocol `areas/receipts.ts`), served through
 * {@link Gateway.registerFrame}:
 * - `message_read {conversation_id, up_to_message_id, client_ref?}` -> `message_read_ack`;
 * - `room_message_read {room_id, up_to_room_message_id, client_ref?}` -> `room_message_read_ack`.
 * Both are answered off the socket's order (a read may wait for its delivery's batch): the
 * socket's next frame does not wait. They do not count against the per-device message limit (a
 * read is metadata, and a refused read would leave a sender's ticks wrong).
 *
 * Delivered receipts of room envelopes: every `room_message` frame written to a socket of its
 * recipient is queued in {@link RoomDeliveries} (the pairwise `message` frames are queued by the
 * conversations module, whose delivered batch also records `delivered_at`).
 */
import { MessageReadFrame, RoomMessageReadFrame } from '@parley/protocol';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import '../../realtime/frames.js'; // registers the `uuid` format the compiled checks need
import type { Gateway } from '../../realtime/gateway.js';
import type { RoomDeliveries } from './room-deliveries.js';
import type { ReceiptService } from './service.js';

/** Serve the read frames and record room deliveries (called once by the composition root). */
export function registerReceiptFrames(gateway: Pick<Gateway, 'registerFrame' | 'onDeliver'>, receipts: ReceiptService, roomDeliveries: RoomDeliveries): void {
  gateway.registerFrame('message_read', {
    check: TypeCompiler.Compile(MessageReadFrame),
    async handle(sender, data) {
      const conversationId = data.conversation_id.toLowerCase();
      return { ack: receipts.readConversation(sender.tenantId, sender.deviceId, conversationId, data.up_to_message_id.toLowerCase()).then((ack) => ({ event: 'message_read_ack', data: { ...ack } })) };
    },
  });
  gateway.registerFrame('room_message_read', {
    check: TypeCompiler.Compile(RoomMessageReadFrame),
    async handle(sender, data) {
      return {
        ack: receipts.readRoom(sender.tenantId, sender.deviceId, data.room_id.toLowerCase(), data.up_to_room_message_id.toLowerCase()).then((ack) => ({ event: 'room_message_read_ack', data: { ...ack } })),
      };
    },
  });
  gateway.onDeliver('room_message', (recipient, data) => {
    const m = data as { room_id: string; room_message_id: string; sender_device_id: string; cursor: string };
    if (recipient.deviceId !== m.sender_device_id) {
      roomDeliveries.delivered(recipient.tenantId, { roomMessageId: m.room_message_id, recipientDeviceId: recipient.deviceId, roomId: m.room_id, senderDeviceId: m.sender_device_id, releaseSeq: Number(m.cursor) });
    }
  });
}
