/**
 * The `room_message` socket frame (SPEC §6.1; DESIGN §8.5) and the wire schemas it shares with
 * `POST /rooms/{id}/messages`: `{room_id, message_type?, priority?, envelopes:
 * [{recipient_device_id, header_blob, ciphertext}], client_ref?}`, answered by
 * `room_message_ack {room_message_id, timestamp, cursor, deliveries, client_ref?}`. Any member
 * device may send it: enrolled agents, API-key agents and owner devices.
 */
import { Type, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
// Registers the `uuid` string format for compiled checks (a side effect of that module).
import '../../realtime/frames.js';
import { Base64, MessageType, Priority, Uuid } from '../../http/schemas.js';
import type { Gateway } from '../../realtime/gateway.js';
import { ALL_MEMBERS, MAX_MEMBERS, type RoomService } from './service.js';

/** One envelope: a member's device id, or `*` for an MLS room's single ciphertext. */
export const EnvelopeIn = Type.Object({
  recipient_device_id: Type.Union([Uuid, Type.Literal(ALL_MEMBERS)], { description: 'a member device, or "*" (MLS: every other member)' }),
  header_blob: Base64,
  ciphertext: Base64,
});

/** Fields of a room send (REST body and frame). */
export const RoomSendFields = {
  message_type: Type.Optional(MessageType),
  priority: Type.Optional(Priority),
  envelopes: Type.Array(EnvelopeIn, { minItems: 1, maxItems: MAX_MEMBERS }),
};

export const Delivery = Type.Object({
  recipient_device_id: Uuid,
  outcome: Type.Union(['delivered', 'held', 'blocked', 'notified'].map((o) => Type.Literal(o))),
  held_message_id: Type.Optional(Uuid),
});

/** Answer of a room send (`201` over REST, `room_message_ack` over the socket). */
export const RoomSendOut = Type.Object({
  room_message_id: Uuid,
  timestamp: Type.String({ format: 'date-time' }),
  cursor: Type.String({ description: 'timeline position; usable as `since`' }),
  deliveries: Type.Array(Delivery),
});

export const RoomMessageFrame = Type.Object({ room_id: Uuid, ...RoomSendFields, client_ref: Type.Optional(Type.String({ maxLength: 200 })) });
export type RoomMessageFrame = Static<typeof RoomMessageFrame>;

const checkRoomMessage = TypeCompiler.Compile(RoomMessageFrame);

/**
 * Serve `room_message` frames on the gateway (rate limited like `message`, SPEC §8), pipelined:
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
export function registerRoomFrames(gateway: Gateway, rooms: RoomService): void {
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
      const sending = rooms.send(
        sender.tenantId,
        sender.deviceId,
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
