/**
 * Rental rooms (contract §4.16 "renting creates a cross-tenant encrypted room; each tenant keeps its
 * own ratchet sessions"): the room of a marketplace rental (`room_id` = the rental id) joins the
 * rented agent device (side `developer`) and the renter's ACTIVE owner devices (side `renter`); a
 * message is one envelope per member of the OTHER side. They run on {@link RoomMessenger} — its
 * pairwise sessions, ordering, durability, catch-up and statuses — with {@link rentalRoomSource}:
 *
 * - members come from `GET /marketplace/rentals/{id}/members`; each member of the other side is
 *   the peer of a pairwise conversation local to this device (`rental:<rental_id>:<peer id>`: the
 *   service relays envelopes by recipient and keeps no conversation), X3DH + Double Ratchet from
 *   the member's published keys, its sessions bound to `rental:<rental_id>` and the two devices
 *   (the same on both sides, {@link rentalSessionContext});
 * - catch-up reads this device's relayed messages (`GET /marketplace/rentals/{id}/messages`, from
 *   the room's resume cursor), live ones are the `rental_message` frames addressed to this device;
 * - sending: a `rental_message` frame answered `rental_message_ack` ({@link realtimeRentalTransport},
 *   through the socket's frame tap), or `POST /marketplace/rentals/{id}/messages`
 *   ({@link restRentalTransport}; the renter's owner device with `X-Device-Id`); both tenants'
 *   policies decide per recipient (`deliveries`);
 * - received messages arrive on the messenger's `message` event with `rental_id` set (`message_id`
 *   = the relayed message's id); rental rooms have no read receipts.
 *
 * ```ts
 * // The renter's owner device (REST sends) or the rented agent (frames on its socket):
 * const rentals = await openRentalRooms({ messenger, store, client, realtime, transport: restRentalTransport(client, ownerDeviceId) });
 * messenger.on('message', (m) => { if (m.rental_id) console.log(m.rental_id, m.content); });
 * await rentals.sendText(rentalId, 'hello');
 * ```
 */
import type { RentalMembers, RentalMessage, RentalMessageAck, RentalSendResult } from '@parley/protocol';
import type { ParleyClient } from '../client/rest.js';
import type { RealtimeClient } from '../realtime/client.js';
import { FrameLink, type FrameTap } from '../realtime/frames.js';
import type { RoomMessageEvent } from '../realtime/types.js';
import type { SessionStore } from '../storage.js';
import type { SecureMessenger } from './messenger.js';
import { RoomMessenger, type RoomInfo, type RoomSource, type RoomTransport, type RoomTransportResult } from './rooms.js';
import { SecureMessengerError } from './types.js';

/** The socket frame of a rental-room message (sent, and received). */
export const RENTAL_MESSAGE = 'rental_message';

/** The local pairwise conversation of this device with `peerDeviceId` in rental `rentalId`. */
export const rentalConversationId = (rentalId: string, peerDeviceId: string) => `rental:${rentalId}:${peerDeviceId}`;

/** The conversation id the pairwise sessions of rental `rentalId` are bound to (with both device ids). */
export const rentalSessionContext = (rentalId: string) => `rental:${rentalId}`;

/**
 * A rental room as {@link RoomMessenger} registers it for `deviceId`: every member, and one
 * pairwise conversation with each member of the other side.
 * @throws SecureMessengerError `unknown_conversation` when `deviceId` is not a member.
 */
export function rentalRoomInfo(room: RentalMembers, deviceId: string): RoomInfo {
  const me = room.members.find((m) => m.device_id === deviceId);
  if (!me) throw new SecureMessengerError('unknown_conversation', `device ${deviceId} is not a member of the room of rental ${room.rental_id}`);
  return {
    room_id: room.rental_id,
    conversation_id: room.room_id,
    name: `rental ${room.rental_id}`,
    members: room.members.map((m) => ({ device_id: m.device_id, kind: m.kind, identity_public_key: m.identity_public_key, ephemeral_public_key: m.ephemeral_public_key, fingerprint: m.fingerprint })),
    conversations: room.members.filter((m) => m.side !== me.side).map((m) => ({ conversation_id: rentalConversationId(room.rental_id, m.device_id), device_ids: [deviceId, m.device_id] })),
  };
}

/** A relayed rental-room message as the room layer receives it. */
const asRoomEvent = (m: RentalMessage): RoomMessageEvent => ({
  room_id: m.rental_id,
  room_message_id: m.message_id,
  sender_device_id: m.sender_device_id,
  header: m.header_blob,
  ciphertext: m.ciphertext,
  message_type: m.message_type,
  priority: m.priority,
  timestamp: m.timestamp,
  cursor: m.cursor,
});

const isRentalMessage = (d: unknown): d is RentalMessage =>
  typeof d === 'object' && d !== null && ['message_id', 'rental_id', 'sender_device_id', 'recipient_device_id', 'header_blob', 'ciphertext', 'cursor'].every((k) => typeof (d as Record<string, unknown>)[k] === 'string');

/**
 * The rental rooms of device `deviceId` (see the file comment), read with `client` (the agent's
 * device JWT or API key, or the owner's JWT: then sent with `X-Device-Id: deviceId`).
 */
export function rentalRoomSource(client: ParleyClient, deviceId: string): RoomSource {
  return {
    kind: 'rental',
    reads: true,
    sessionContext: rentalSessionContext,
    read: async (rentalId) => rentalRoomInfo(await client.rentalMembers(rentalId, { deviceId }), deviceId),
    async timeline(rentalId, since, limit) {
      const page = await client.rentalMessages(rentalId, { since, limit }, { deviceId });
      const received = page.messages.filter((m) => m.recipient_device_id === deviceId && m.sender_device_id !== deviceId).map(asRoomEvent);
      return { received, own: [], size: page.messages.length, next_cursor: page.next_cursor };
    },
    subscribe: (realtime, rooms) => [
      realtime.on('event', (e) => {
        if (e.event === RENTAL_MESSAGE && isRentalMessage(e.data) && e.data.recipient_device_id === deviceId) void rooms.receive(asRoomEvent(e.data));
      }),
    ],
  };
}

/** A rental send result in the room layer's shape (`room_message_id`: the first recipient's message id). */
function fromRental(r: RentalSendResult): RoomTransportResult {
  return {
    room_message_id: r.deliveries[0]!.message_id,
    timestamp: r.timestamp,
    deliveries: r.deliveries.map((d) => ({ recipient_device_id: d.recipient_device_id, outcome: d.outcome, ...(d.held_message_id ? { held_message_id: d.held_message_id } : {}) })),
  };
}

/**
 * Send rental-room messages with `POST /marketplace/rentals/{id}/messages`, as owner device
 * `deviceId` (`X-Device-Id`; default: the client's acting device) or as the client's agent.
 */
export function restRentalTransport(client: ParleyClient, deviceId?: string): RoomTransport {
  return {
    async send({ room_id, client_ref: _ref, ...body }) {
      return fromRental(await client.sendRentalMessage(room_id, body, deviceId === undefined ? undefined : { deviceId }));
    },
  };
}

/**
 * Send rental-room messages as `rental_message` frames on `realtime`'s socket (written through
 * `tap`, the frame tap its WebSocket was made with), resolving with the `rental_message_ack`; the
 * socket must be open (no offline queue). The client's outbound scanner runs first.
 */
export function realtimeRentalTransport(realtime: RealtimeClient, tap: FrameTap): RoomTransport {
  const link = new FrameLink(realtime, tap);
  return {
    async send({ room_id, client_ref: _ref, ...body }) {
      return fromRental(await link.request<RentalMessageAck>(RENTAL_MESSAGE, { rental_id: room_id, ...body }, 'rental_message_ack'));
    },
    scan: (plaintext, meta) => realtime.scanOutbound(plaintext, meta),
  };
}

/**
 * Open the rental-room layer of `messenger`'s device (its rooms saved in `store` under
 * `rental-rooms-<device_id>`), attached to `realtime` when given (live messages, catch-up on
 * every connection), sending with `transport`. Register a rental with `refresh(rentalId)` (its
 * first send or live message does it too).
 */
export async function openRentalRooms(options: { messenger: SecureMessenger; store: SessionStore; client: ParleyClient; realtime?: RealtimeClient; transport: RoomTransport }): Promise<RoomMessenger> {
  const rooms = await RoomMessenger.open({
    messenger: options.messenger,
    store: options.store,
    client: options.client,
    source: rentalRoomSource(options.client, options.messenger.deviceId),
    transport: options.transport,
  });
  if (options.realtime) rooms.attach(options.realtime, { transport: false });
  return rooms;
}
