/**
 * The `room_message` socket frame (contract §6.1; design §8.5; schema `OutgoingRoomMessage` of
 * @parley/protocol, sharing its fields with `POST /rooms/{id}/messages`): `{room_id, message_type?, priority?, envelopes:
 * [{recipient_device_id, header_blob, ciphertext}], client_ref?}`, answered by
 * `room_message_ack {room_message_id, timestamp, cursor, deliveries, client_ref?}`. Any member
 * device may send it: enrolled agents, API-key agents and owner devices (an ACTIVE owner device
 * that is not a member joins the room by sending).
 */
import { OutgoingRoomMessage } from '@parley/protocol';
import { TypeCompiler } from '@sinclair/typebox/compiler';
// Registers the `uuid` string format for compiled checks (a side effect of that module).
import '../../realtime/frames.js';
import type { Gateway } from '../../realtime/gateway.js';
import type { RoomContext } from './internal.js';
import { sendRoomMessage } from './send.js';

const checkRoomMessage = TypeCompiler.Compile(OutgoingRoomMessage);

/**
 * Serve `room_message` frames on the gateway (rate limited like `message`, contract §8), pipelined:
 * the socket's next frame starts as soon as this one's release position is taken (or it failed),
 * and its ack follows when its send completes. Order stays what a serial chain gave:
 * - release positions: the next frame of the socket takes its position after this one (it only
 *   starts once this one holds its position, and a room's positions are taken under a lock held to
 *   commit), so recipients' member timelines list a sender's messages in send order;
 * - frames: a send publishes after the socket's previous send has published (`after`) and after
 *   every earlier position of its room (release-order.ts), so recipients receive a sender's
 *   messages in send order, across rooms too;
 * - acks may overtake each other in principle; clients match them by `client_ref`.
 */
export function registerRoomFrames(gateway: Gateway, rooms: RoomContext): void {
  /** Per socket: settles when its newest send has published or failed (removed once idle). */
  const lastSend = new Map<string, Promise<unknown>>();
  gateway.registerFrame('room_message', {
    check: checkRoomMessage,
    rateLimited: true,
    async handle(sender, data) {
      const { room_id: roomId, message_type, priority, envelopes } = data;
      let positioned!: () => void;
      const ordered = new Promise<void>((resolve) => (positioned = resolve));
      const after = lastSend.get(sender.socketId);
      const sending = sendRoomMessage(
        rooms,
        sender.tenantId,
        { deviceId: sender.deviceId, kind: sender.kind },
        roomId.toLowerCase(),
        { envelopes, ...(message_type ? { message_type } : {}), ...(priority ? { priority } : {}) },
        { positioned, ...(after ? { after } : {}) },
      );
      const settled = sending.then(
        () => undefined,
        () => undefined,
      );
      lastSend.set(sender.socketId, settled);
      void settled.then(() => {
        if (lastSend.get(sender.socketId) === settled) lastSend.delete(sender.socketId);
      });
      await ordered;
      return { ack: sending.then((result) => ({ event: 'room_message_ack', data: { ...result } })) };
    },
  });
}
