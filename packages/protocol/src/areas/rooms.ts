/**
 * Rooms (contract §2.5, §4.6, §6.1; design §8.5): schemas, route rows and frames. A room is a named
 * set of member devices of one tenant with one pairwise conversation per member pair; a room
 * message carries one envelope per recipient (or one MLS envelope addressed to `*`).
 */
import { Type, type Static } from '@sinclair/typebox';
import { defineRoute } from '../contract.js';
import { Base64, Ciphertext, IdParams, lit, MessageType, Nullable, PageQueryFields, Priority, Timestamp, Uuid } from '../common.js';
import { Page } from '../paging.js';

/** Room security levels: `strict` rooms hold agent-sent messages unless a policy allows them (design §8.5). */
export const ROOM_SECURITY_LEVELS = ['standard', 'strict'] as const;
/** Per-recipient outcome of a room message, as decided by the policies (design §8.3, §8.5). */
export const DELIVERY_OUTCOMES = ['delivered', 'held', 'blocked', 'notified'] as const;
/** Kinds of member device. */
export const ROOM_MEMBER_KINDS = ['owner', 'agent'] as const;
/** Most members a room may have (contract §4.6 leaves it open; design §8.5 keeps it at 100). */
export const MAX_MEMBERS = 100;
/** The recipient of an MLS room's single envelope. */
export const ALL_MEMBERS = '*';

export const RoomSecurityLevel = lit(ROOM_SECURITY_LEVELS);
/** Room security level: `strict` rooms hold agent-sent messages unless a policy allows them (design §8.5). */
export type RoomSecurityLevel = Static<typeof RoomSecurityLevel>;
/** What the policies decided for one recipient of a room message (design §8.3, §8.5). */
export type DeliveryOutcome = (typeof DELIVERY_OUTCOMES)[number];

const Name = Type.String({ minLength: 1, maxLength: 100 });

/**
 * A room member. The public keys (hex) and fingerprint (design §7) let members set up the pairwise
 * end-to-end sessions of the room without the owner-only `GET /conversations/{id}/keys`.
 */
export const RoomMember = Type.Object({ device_id: Uuid, kind: lit(ROOM_MEMBER_KINDS), identity_public_key: Type.String(), ephemeral_public_key: Type.String(), fingerprint: Type.String() });
export type RoomMember = Static<typeof RoomMember>;

/** One pairwise conversation of a room: exactly two member devices (design §8.5). */
export const RoomConversation = Type.Object({ conversation_id: Uuid, device_ids: Type.Array(Uuid, { minItems: 2, maxItems: 2 }) });
export type RoomConversation = Static<typeof RoomConversation>;

const summaryFields = {
  room_id: Uuid,
  conversation_id: Type.String({ format: 'uuid', description: 'the room timeline' }),
  name: Type.String(),
  security_level: RoomSecurityLevel,
  workspace_id: Nullable(Uuid),
  archived: Type.Boolean(),
  created_at: Timestamp,
  mls_capable: Type.Boolean({ description: 'every member published an MLS KeyPackage' }),
  members: Type.Array(RoomMember),
  policies: Type.Array(Uuid, { description: 'ids of the policies scoped to this room' }),
};

/**
 * A room as listed (`GET /rooms`). `conversation_id` is the room's timeline; `mls_capable` tells
 * whether every member published an MLS KeyPackage; `policies` are the ids of the policies scoped
 * to the room; a room with a `workspace_id` is a team room.
 */
export const RoomSummary = Type.Object(summaryFields);
export type RoomSummary = Static<typeof RoomSummary>;

/** A room with its pairwise conversations between current members, one per member pair (`POST /rooms`, `GET /rooms/{id}`). */
export const Room = Type.Object({ ...summaryFields, conversations: Type.Array(RoomConversation) });
export type Room = Static<typeof Room>;

/** `GET /api/v1/rooms`. */
export const RoomList = Type.Object({ rooms: Type.Array(RoomSummary) });
export type RoomList = Static<typeof RoomList>;

/** `POST /api/v1/rooms` body: the members are ACTIVE devices of the tenant (owner and agent devices). */
export const CreateRoomRequest = Type.Object({
  name: Name,
  member_device_ids: Type.Array(Uuid, { minItems: 1, maxItems: MAX_MEMBERS }),
  security_level: Type.Optional(RoomSecurityLevel),
  workspace_id: Type.Optional(Type.String({ format: 'uuid', description: 'refused (400): team rooms are created with POST /team-rooms, which checks workspace membership' })),
});
export type CreateRoomRequest = Static<typeof CreateRoomRequest>;

/** `PATCH /api/v1/rooms/{id}` body; `policies` scopes existing policies of the tenant to the room. */
export const UpdateRoomRequest = Type.Object(
  {
    name: Type.Optional(Name),
    security_level: Type.Optional(RoomSecurityLevel),
    policies: Type.Optional(Type.Array(Uuid, { maxItems: 100, description: 'policy ids to scope to this room' })),
  },
  { minProperties: 1 },
);
export type UpdateRoomRequest = Static<typeof UpdateRoomRequest>;

/** `POST /api/v1/rooms/{id}/members` body. */
export const AddRoomMemberRequest = Type.Object({ device_id: Uuid });
export type AddRoomMemberRequest = Static<typeof AddRoomMemberRequest>;

/** `DELETE /api/v1/rooms/{id}/members/{device_id}` path. */
export const RoomMemberParams = Type.Object({ id: Uuid, device_id: Uuid });

/**
 * One envelope of a room message: the ciphertext for one recipient (its pairwise session), or
 * for every other member of an MLS room (`recipient_device_id: "*"`). base64.
 */
export const RoomEnvelope = Type.Object({
  recipient_device_id: Type.Union([Uuid, Type.Literal(ALL_MEMBERS)], { description: 'a member device, or "*" (MLS: every other member)' }),
  header_blob: Base64,
  ciphertext: Ciphertext,
});
export type RoomEnvelope = Static<typeof RoomEnvelope>;

/** Fields of a room send (REST body and `room_message` frame). */
const RoomSendFields = {
  message_type: Type.Optional(MessageType),
  priority: Type.Optional(Priority),
  envelopes: Type.Array(RoomEnvelope, { minItems: 1, maxItems: MAX_MEMBERS }),
};

/** `POST /api/v1/rooms/{id}/messages` body and the `room_message` send frame's fields (design §8.5). */
export const RoomMessageInput = Type.Object(RoomSendFields);
export type RoomMessageInput = Static<typeof RoomMessageInput>;

/** One recipient's outcome; `held_message_id` names the held message when `held`. */
export const RoomDelivery = Type.Object({
  recipient_device_id: Uuid,
  outcome: lit(DELIVERY_OUTCOMES),
  held_message_id: Type.Optional(Uuid),
});
export type RoomDelivery = Static<typeof RoomDelivery>;

/**
 * Answer to a room message (REST 201; the socket's `room_message_ack` adds `client_ref`). `cursor`
 * is the sender's member-timeline position (also the cursor of every envelope released at send).
 */
export const RoomMessageResult = Type.Object({
  room_message_id: Uuid,
  timestamp: Type.String({ format: 'date-time' }),
  cursor: Type.String({ description: 'timeline position; usable as `since`' }),
  deliveries: Type.Array(RoomDelivery),
});
export type RoomMessageResult = Static<typeof RoomMessageResult>;

/**
 * A room timeline entry (`GET /rooms/{id}/messages`, oldest first). `cursor`: owner view, the
 * message's send order; member view, the viewer's release position. `envelope` is the viewer's
 * own envelope (or the MLS one), once released to it (absent for its own messages, blocked or
 * still held ones). Each delivery carries its recipient's receipt times, `delivered_at` and
 * `read_at` (per member in MLS rooms too; docs/decisions.md "Delivery and read receipts"); a
 * member-view page marks the envelopes it hands over delivered.
 */
export const RoomTimelineEntry = Type.Object({
  room_message_id: Uuid,
  sender_device_id: Uuid,
  message_type: Type.String(),
  priority: Type.String(),
  timestamp: Timestamp,
  cursor: Type.String({ description: 'opaque, total-ordered position (owner view: send order; member view: release order); usable as `since`' }),
  deliveries: Type.Array(
    Type.Object({
      recipient_device_id: Uuid,
      outcome: Type.String(),
      delivered_at: Nullable(Type.String({ format: 'date-time', description: 'when the recipient device received its envelope (null: not yet)' })),
      read_at: Nullable(Type.String({ format: 'date-time', description: "when the recipient's read mark covered it (null: not yet, or read receipts off)" })),
    }),
  ),
  envelope: Type.Optional(Type.Object({ header_blob: Type.String(), ciphertext: Type.String() })),
});
export type RoomTimelineEntry = Static<typeof RoomTimelineEntry>;

/** A page of a room timeline; `next_cursor` resumes after its last entry. */
export const RoomTimelinePage = Page('messages', RoomTimelineEntry);
export type RoomTimelinePage = Static<typeof RoomTimelinePage>;

/** Timeline views (design §8.5). */
export const ROOM_TIMELINE_VIEWS = ['owner', 'member'] as const;

/**
 * Room timeline query: `since` is exclusive (cursor or ISO timestamp); `limit` 1–200. `view`:
 * `owner` (default for owner tokens) lists every message in send order; `member` (devices and API
 * keys always; owners with `X-Device-Id`) what the device sent or received, in release order
 * (an approved held message appears when released). Cursors belong to one view.
 */
export const RoomTimelineQuery = Type.Object({
  since: PageQueryFields.since,
  limit: PageQueryFields.limit,
  view: Type.Optional(
    lit(ROOM_TIMELINE_VIEWS, {
      description:
        'owner (default for owner tokens): every message by send order; member (devices and API keys always; owners with X-Device-Id): what the device sent or received, by release order (an approved held message appears when released)',
    }),
  ),
});
export type RoomTimelineQuery = Static<typeof RoomTimelineQuery>;

/** The owner's acting device (`X-Device-Id`) of the send and timeline routes. */
const ActingDeviceHeader = Type.Object({ 'x-device-id': Type.Optional(Type.String({ description: "the owner's acting device" })) });

const tags = ['rooms'];

export const roomsRoutes = {
  createRoom: defineRoute({
    method: 'POST',
    path: '/api/v1/rooms',
    auth: 'owner',
    tags,
    summary: 'Create a room with members and pairwise conversations; the owner device named in X-Device-Id joins it',
    description:
      'Creates a room (name, optional security level: the tenant\'s `default_room_security_level` otherwise) with 1 to 100 ACTIVE member devices of the tenant and one pairwise conversation per member pair, in one transaction. The owner device named by `X-Device-Id` joins as a member even when not listed. Members receive `room_joined`, owner devices and agent members `member_joined`; answers 201 with the room, members (with public keys) and conversations. 400 when a member is not an ACTIVE device of the tenant, there are not 1 to 100 members, `workspace_id` is given (team rooms are created with `POST /team-rooms`) or `X-Device-Id` is not a UUID. 403 when the `X-Device-Id` device is not the caller\'s owner device or is revoked. 404 when the `X-Device-Id` device is unknown in the tenant.',
    headers: ActingDeviceHeader,
    body: CreateRoomRequest,
    responses: { 201: Room },
    errors: [400, 401, 403, 404],
  }),
  listRooms: defineRoute({
    method: 'GET',
    path: '/api/v1/rooms',
    auth: 'owner',
    tags,
    summary: 'List active rooms',
    description:
      'The tenant\'s rooms that are not archived, oldest first, each with its name, security level, workspace, members (with public keys), the policies scoped to it and whether every member published an MLS KeyPackage; without the pairwise conversations.',
    responses: { 200: RoomList },
    errors: [401, 403],
  }),
  getRoom: defineRoute({
    method: 'GET',
    path: '/api/v1/rooms/{id}',
    auth: 'any',
    tags,
    summary: 'Room details with members (and their public keys) and conversations; a device must be a member',
    description:
      'A room with its members (and their public keys, for encrypting envelopes) and pairwise conversations. Owners read any room of the tenant; a device or API-key agent only a room it is a member of. 403 when the calling device is not a member, or the API key has not registered key material yet. 404 when the room is unknown in the tenant.',
    params: IdParams,
    responses: { 200: Room },
    errors: [400, 401, 403, 404],
  }),
  updateRoom: defineRoute({
    method: 'PATCH',
    path: '/api/v1/rooms/{id}',
    auth: 'owner',
    tags,
    summary: 'Rename, change the security level, scope existing policies to the room',
    description:
      'Renames a room, changes its security level, and/or scopes existing policies of the tenant to it (a policy scoped to another room moves here). Answers the room. 404 when the room or a named policy is unknown in the tenant. 409 when a named policy is scoped to a skill.',
    params: IdParams,
    body: UpdateRoomRequest,
    responses: { 200: Room },
    errors: [400, 401, 403, 404, 409],
  }),
  addRoomMember: defineRoute({
    method: 'POST',
    path: '/api/v1/rooms/{id}/members',
    auth: 'owner',
    tags,
    summary: 'Add a member (pairwise conversations with every member)',
    description:
      'Adds an ACTIVE device of the tenant to a room, with a pairwise conversation to every member. The new member receives `room_joined`; owner devices and the other agent members `member_joined`. Answers 201 with the room. 400 when the device is not an ACTIVE device of the tenant. 404 when the room is unknown in the tenant. 409 when the device is already a member, or the room is archived or has 100 members.',
    params: IdParams,
    body: AddRoomMemberRequest,
    responses: { 201: Room },
    errors: [400, 401, 403, 404, 409],
  }),
  removeRoomMember: defineRoute({
    method: 'DELETE',
    path: '/api/v1/rooms/{id}/members/{device_id}',
    auth: 'owner',
    tags,
    summary: 'Remove a member (history stays)',
    description:
      'Removes a member from a room; its conversations and messages stay for the history, and messages still held for it in this room are denied (their ciphertext dropped). Owner devices, the removed device and the remaining agent members receive `member_left`. Answers 204. 404 when the room is unknown in the tenant or the device is not a member.',
    params: RoomMemberParams,
    responses: { 204: null },
    errors: [400, 401, 403, 404],
  }),
  sendRoomMessage: defineRoute({
    method: 'POST',
    path: '/api/v1/rooms/{id}/messages',
    auth: 'owner',
    tags,
    summary: 'Fan out an encrypted message (one envelope per recipient, or "*" for MLS); policies are evaluated per recipient; the owner device in X-Device-Id joins the room first when it is not a member',
    description:
      'The owner device named by `X-Device-Id` sends a room message: one encrypted envelope per recipient member (or one envelope to `*` for an MLS group message). The tenant\'s policies decide per recipient (`delivered`, `notified`, `held` for an owner\'s approval, `blocked`); released envelopes go to their recipients as `room_message`. The sending owner device joins the room first when it is not a member. Counts against the device\'s 60 messages per minute, shared with the WebSocket. Answers 201 with the stored message and each recipient\'s outcome. 400 when `X-Device-Id` is missing, there are no envelopes, an envelope names a non-member or a recipient twice, an MLS envelope is not the only one, or a base64 field is malformed. 403 when the `X-Device-Id` device is not the caller\'s owner device or is revoked. 404 when the room (or the `X-Device-Id` device) is unknown in the tenant. 409 when the room is archived, or full while the sending device would join. 413 when a decoded ciphertext is larger than `LIMIT_MESSAGE_BYTES`. 429 also when the device exceeds its message budget.',
    params: IdParams,
    headers: ActingDeviceHeader,
    body: RoomMessageInput,
    responses: { 201: RoomMessageResult },
    errors: [400, 401, 403, 404, 409, 413],
  }),
  roomTimeline: defineRoute({
    method: 'GET',
    path: '/api/v1/rooms/{id}/messages',
    auth: 'any',
    tags,
    summary: 'Aggregated timeline, oldest first; since = ISO timestamp or next_cursor (of the same view)',
    description:
      'A room\'s messages, oldest first, paged by `since` (an ISO 8601 timestamp or the previous page\'s `next_cursor` of the same view) and `limit`. The owner view (owners\' default) lists every message with every recipient\'s outcome and receipt times, by send order; with `X-Device-Id` it carries that device\'s envelopes. The member view (`view=member`; devices and API keys always) lists what the device sent and what was released to it, by release position, and marks the handed-over envelopes delivered. 400 when `since` is neither a timestamp nor a cursor, or `view=member` comes from an owner without `X-Device-Id`. 403 when a device or API key asks for `view=owner`, or the reading device is not a member. 404 when the room (or the `X-Device-Id` device) is unknown in the tenant.',
    params: IdParams,
    headers: ActingDeviceHeader,
    query: RoomTimelineQuery,
    responses: { 200: RoomTimelinePage },
    errors: [400, 401, 403, 404],
  }),
};

// ---------------------------------------------------------------- frames (contract §6.1; design §8.5)

/**
 * A room message to send: the `room_message` send frame (design §8.5), one envelope per recipient.
 * `client_ref` correlates the `room_message_ack` / error frame (the SDK generates one when absent).
 */
export const OutgoingRoomMessage = Type.Object({ room_id: Uuid, ...RoomSendFields, client_ref: Type.Optional(Type.String({ maxLength: 200 })) });
export type OutgoingRoomMessage = Static<typeof OutgoingRoomMessage>;

/** `room_message_ack` (design §8.5): the stored room message and each recipient's policy outcome. */
export const RoomMessageAck = Type.Object({ ...RoomMessageResult.properties, client_ref: Type.String() });
export type RoomMessageAck = Static<typeof RoomMessageAck>;

/**
 * `room_message` receive frame (design §8.5): this device's envelope of a room message.
 * `header` (the envelope's header_blob) and `ciphertext` are base64; `cursor` is the recipient's
 * member-timeline position of this message (its release).
 */
export const RoomMessageEvent = Type.Object({
  room_id: Uuid,
  room_message_id: Uuid,
  sender_device_id: Uuid,
  header: Type.String(),
  ciphertext: Type.String(),
  message_type: Type.String(),
  priority: Type.String(),
  timestamp: Timestamp,
  cursor: Type.String(),
});
export type RoomMessageEvent = Static<typeof RoomMessageEvent>;

/** `room_joined` (design §8.5): this device was added to a room; `conversations` are its own pairwise ones. */
export const RoomJoinedEvent = Type.Object({
  room_id: Uuid,
  conversation_id: Uuid,
  name: Type.String(),
  security_level: RoomSecurityLevel,
  members: Type.Array(RoomMember),
  conversations: Type.Array(RoomConversation),
});
export type RoomJoinedEvent = Static<typeof RoomJoinedEvent>;

/** `member_joined` (design §8.5; owner sockets and the room's other agent members): a device joined a room. */
export const MemberJoinedEvent = Type.Object({ room_id: Uuid, device_id: Uuid });
export type MemberJoinedEvent = Static<typeof MemberJoinedEvent>;

/** `member_left` (design §8.5; owner sockets, the removed device and the remaining agent members): a device left a room. */
export const MemberLeftEvent = Type.Object({ room_id: Uuid, device_id: Uuid });
export type MemberLeftEvent = Static<typeof MemberLeftEvent>;
