/**
 * Delivery and read receipts (contract §6.1; docs/decisions.md "Delivery and read
 * receipts"): the frames that tell a sender `sent -> delivered -> read`, per message and per
 * recipient device, and the REST routes that record a read without a socket.
 *
 * - Delivered: once a recipient device received a message (a live frame written to one of its
 *   sockets, or a history / member-timeline page fetched by it), the sender's sockets get
 *   `message_delivered` (pairwise conversations) or `room_message_delivered` (room envelopes, also
 *   MLS rooms: per member). Receipts are collected for about 20 ms and sent batched: one frame per
 *   sender, recipient and conversation (or room) with many ids, at most
 *   {@link MAX_RECEIPT_IDS} per frame, on every instance. Each message is reported delivered once.
 * - Read: the recipient sends `message_read {conversation_id, up_to_message_id}` or
 *   `room_message_read {room_id, up_to_room_message_id}` (or the REST routes below). A read is a
 *   mark, "read up to here", kept per (conversation or room, reader device): it covers every
 *   message to the reader at or before that one. Only a message addressed to the reader that it
 *   received can be marked (404 for another conversation's or room's, the reader's own, or an
 *   unknown message; 409 for one not received yet); a mark that does not move forward changes
 *   nothing. An advanced mark is forwarded as `message_read` / `room_message_read` to the senders
 *   of the newly covered messages. Receipts are metadata only, never content.
 * - Read receipts off (the device's `read_receipts_enabled` setting, `PATCH
 *   /devices/{id}/settings` or `/devices/self/settings`, or the tenant's, `PATCH /settings`): a
 *   read is answered (`read_receipts_enabled: false`) but nothing is stored or forwarded, as
 *   Signal allows. Delivered receipts are always sent.
 */
import { Type, type Static } from '@sinclair/typebox';
import { defineRoute } from '../contract.js';
import { IdParams, Nullable, Timestamp, Uuid } from '../common.js';

/** Most message ids in one `message_delivered` / `room_message_delivered` / `room_message_read` frame (a larger batch is split). */
export const MAX_RECEIPT_IDS = 1000;

const ClientRef = Type.Optional(Type.String({ maxLength: 200, description: 'correlates the ack / error frame (at most 200 characters)' }));
const Ids = Type.Array(Uuid, { minItems: 1, maxItems: MAX_RECEIPT_IDS });

// ---------------------------------------------------------------- pairwise conversations

/**
 * `message_delivered` (service -> the sender's sockets): messages of `conversation_id` the sender
 * sent reached recipient device `device_id` at `delivered_at`; `message_ids` in send order.
 */
export const MessageDeliveredEvent = Type.Object({
  conversation_id: Uuid,
  device_id: Type.String({ format: 'uuid', description: 'the recipient device that received them' }),
  message_ids: Ids,
  delivered_at: Timestamp,
});
export type MessageDeliveredEvent = Static<typeof MessageDeliveredEvent>;

/** `message_read` send frame (reader -> service): everything to this device in the conversation up to and including `up_to_message_id` was read. */
export const MessageReadFrame = Type.Object({ conversation_id: Uuid, up_to_message_id: Uuid, client_ref: ClientRef });
export type MessageReadFrame = Static<typeof MessageReadFrame>;

/**
 * `message_read` event (service -> the sender's sockets): reader `device_id` read every message
 * it received in `conversation_id` up to `up_to_message_id`, whose cursor is `cursor` (so the
 * sender marks all its messages with a cursor up to it), at `read_at`.
 */
export const MessageReadEvent = Type.Object({
  conversation_id: Uuid,
  device_id: Type.String({ format: 'uuid', description: 'the reader' }),
  up_to_message_id: Uuid,
  cursor: Type.String({ description: "the cursor of up_to_message_id: the reader's mark covers every message at or before it" }),
  read_at: Timestamp,
});
export type MessageReadEvent = Static<typeof MessageReadEvent>;

/** `POST /api/v1/conversations/{id}/read` body. */
export const ReadConversationRequest = Type.Object({ up_to_message_id: Uuid });
export type ReadConversationRequest = Static<typeof ReadConversationRequest>;

const ackFields = {
  recorded: Type.Boolean({ description: 'true when the mark moved forward (stored and forwarded); false when it already covered the message or read receipts are off' }),
  read_receipts_enabled: Type.Boolean({ description: "false when the device's or the tenant's setting turns read receipts off (nothing stored or forwarded)" }),
  read_at: Nullable(Timestamp),
};

/**
 * `message_read_ack` (service -> the reading socket; adds the frame's `client_ref`) and the answer
 * of `POST /conversations/{id}/read`. `read_at` is the time of the reader's mark (null when none
 * is stored).
 */
export const MessageReadAck = Type.Object({ conversation_id: Uuid, up_to_message_id: Uuid, ...ackFields, client_ref: ClientRef });
export type MessageReadAck = Static<typeof MessageReadAck>;

// ---------------------------------------------------------------- rooms (pairwise envelopes and MLS, per recipient)

/**
 * `room_message_delivered` (service -> the sender's sockets): the sender's room messages
 * `room_message_ids` (in release order) reached member `device_id` at `delivered_at`. An MLS room
 * message is reported per member like a pairwise one.
 */
export const RoomMessageDeliveredEvent = Type.Object({
  room_id: Uuid,
  device_id: Type.String({ format: 'uuid', description: 'the recipient member that received them' }),
  room_message_ids: Ids,
  delivered_at: Timestamp,
});
export type RoomMessageDeliveredEvent = Static<typeof RoomMessageDeliveredEvent>;

/** `room_message_read` send frame (member -> service): everything released to this device in the room up to and including `up_to_room_message_id` was read. */
export const RoomMessageReadFrame = Type.Object({ room_id: Uuid, up_to_room_message_id: Uuid, client_ref: ClientRef });
export type RoomMessageReadFrame = Static<typeof RoomMessageReadFrame>;

/**
 * `room_message_read` event (service -> each sender's sockets): member `device_id` read the
 * sender's `room_message_ids` (the ones its mark newly covers, in release order) at `read_at`;
 * `up_to_room_message_id` is the message the member marked.
 */
export const RoomMessageReadEvent = Type.Object({
  room_id: Uuid,
  device_id: Type.String({ format: 'uuid', description: 'the reader' }),
  room_message_ids: Ids,
  up_to_room_message_id: Uuid,
  read_at: Timestamp,
});
export type RoomMessageReadEvent = Static<typeof RoomMessageReadEvent>;

/** `POST /api/v1/rooms/{id}/read` body. */
export const ReadRoomRequest = Type.Object({ up_to_room_message_id: Uuid });
export type ReadRoomRequest = Static<typeof ReadRoomRequest>;

/** `room_message_read_ack` (service -> the reading socket; adds the frame's `client_ref`) and the answer of `POST /rooms/{id}/read`. */
export const RoomMessageReadAck = Type.Object({ room_id: Uuid, up_to_room_message_id: Uuid, ...ackFields, client_ref: ClientRef });
export type RoomMessageReadAck = Static<typeof RoomMessageReadAck>;

// ---------------------------------------------------------------- routes

/** `X-Device-Id`: the owner's reading device (owner callers; device JWTs and API keys read as their own device). */
const ReadingDeviceHeader = Type.Object({ 'x-device-id': Type.Optional(Type.String({ description: "owner callers: the owner device that read" })) });

/** Route rows of this area. */
export const receiptsRoutes = {
  readConversation: defineRoute({
    method: 'POST',
    path: '/api/v1/conversations/{id}/read',
    auth: 'any',
    tags: ['conversations'],
    summary: 'Mark messages to the reading device read up to one (read receipt; owners name their device in X-Device-Id)',
    description:
      'Read receipt over REST (the twin of the `message_read` frame): everything addressed to the reading device in the conversation up to and including `up_to_message_id` was read. When read receipts are on for the device and tenant and the mark moves forward, it is stored and the other side receives `message_read`. Answers whether the mark moved and the read time. The reader is the calling device (device JWT, or an API key\'s registered device), or for an owner the owner device named in `X-Device-Id`. 400 when an owner names no `X-Device-Id`. 403 when the reader is not a side of the conversation, the `X-Device-Id` device is not the caller\'s, or the API key has not registered key material. 404 when the conversation is unknown or the message is not addressed to the reader there. 409 when the reader has not received that message yet.',
    params: IdParams,
    headers: ReadingDeviceHeader,
    body: ReadConversationRequest,
    responses: { 200: MessageReadAck },
    errors: [400, 401, 403, 404, 409],
  }),
  readRoom: defineRoute({
    method: 'POST',
    path: '/api/v1/rooms/{id}/read',
    auth: 'any',
    tags: ['rooms'],
    summary: 'Mark room messages released to the reading member read up to one (read receipt; owners name their device in X-Device-Id)',
    description:
      'Read receipt over REST (the twin of the `room_message_read` frame): everything released to the reading member in the room up to and including `up_to_room_message_id` was read. When read receipts are on and the mark moves forward, each sender of a newly covered message receives `room_message_read`. Answers whether the mark moved and the read time. The reader is the calling device (device JWT, or an API key\'s registered device), or for an owner the owner device named in `X-Device-Id`. 400 when an owner names no `X-Device-Id`. 403 when the `X-Device-Id` device is not the caller\'s, or the API key has not registered key material. 404 when the room message was not released to the reader in this room. 409 when the reader has not received it yet.',
    params: IdParams,
    headers: ReadingDeviceHeader,
    body: ReadRoomRequest,
    responses: { 200: RoomMessageReadAck },
    errors: [400, 401, 403, 404, 409],
  }),
};
