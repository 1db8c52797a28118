/**
 * The WebSocket protocol at {@link WS_PATH}, as one catalogue: every frame a client sends and every
 * event the service sends, each with the schema of its `data`, who sends or receives it, and what
 * answers it; the close codes; and how a socket authenticates. Frames are JSON text messages
 * `{event, data}` (RFC 6455 text frames). The server's gateway serves exactly the client frames
 * listed here and its notifier emits only the events listed here (their names are typed by this
 * catalogue); the AsyncAPI document (asyncapi.ts) is generated from it. {@link WS_SERVICE_FRAMES} is
 * the event -> frame-schema table of the service's events, with the static `data` type of each
 * ({@link WsServiceEventData}); {@link WsClientFrameData} types the client frames alike.
 */
import { Type, type Static, type TLiteral, type TObject, type TSchema } from '@sinclair/typebox';
import { WS_PATH } from './contract.js';
import { A2aChannelActivatedEvent, A2aChannelApprovedEvent, A2aChannelClosedEvent, A2aKeyExchangeAck, A2aKeyExchangeEvent, A2aMessage, A2aMessageFrame, A2aSendResult, KeyExchangeFrame, RequestedA2aChannel } from './areas/a2a.js';
import { ClientKeyAccepted, ClientKeyRegistration } from './areas/api-keys.js';
import { ErrorFrame, MessageAck, MessageEvent, OutgoingMessage, TopicCreatedEvent, TypingEvent, TypingFrame } from './areas/conversations.js';
import { Decision, DecisionResponseEvent } from './areas/decisions.js';
import { DeviceApprovedEvent, DeviceLinkedEvent, DevicePendingEvent, OwnerDeviceLinkedEvent } from './areas/devices.js';
import { KeyDirectoryAlertEvent } from './areas/key-directory.js';
import { DisputeUpdatedEvent, PayoutUpdatedEvent, RentalUpdatedEvent } from './areas/marketplace.js';
import { OutgoingRentalMessage, RentalMessage, RentalMessageAck } from './areas/rental-room.js';
import { PolicyAlertEvent } from './areas/policies.js';
import { MAX_RECEIPT_IDS, MessageDeliveredEvent, MessageReadAck, MessageReadEvent, MessageReadFrame, RoomMessageDeliveredEvent, RoomMessageReadAck, RoomMessageReadEvent, RoomMessageReadFrame } from './areas/receipts.js';
import { MemberJoinedEvent, MemberLeftEvent, OutgoingRoomMessage, RoomJoinedEvent, RoomMessageAck, RoomMessageEvent } from './areas/rooms.js';
import { SpendAlertEvent } from './areas/spend.js';

/** The empty `data` of `ping` and `pong`. */
const Empty = Type.Object({});

/** One frame a client sends to the service. */
export interface WsClientFrame {
  readonly summary: string;
  /** Markdown: what the service does with it, limits, who may send it. */
  readonly description: string;
  /** Schema of the frame's `data`. */
  readonly data: TSchema;
  /** The service events that answer it on the same socket (its ack, `error`); empty: none. */
  readonly replies: readonly WsServiceEventName[];
}

/** One event the service sends to clients. */
export interface WsServiceEvent {
  readonly summary: string;
  /** Markdown: when it is sent and to which sockets. */
  readonly description: string;
  /** Schema of the event's `data`. */
  readonly data: TSchema;
}

const CLIENT_REF = 'Answered by its ack or an `error` event carrying the frame\'s `client_ref`.';
const MESSAGE_BUDGET = 'Counts against the sending device\'s 60 messages per minute (shared with the REST send routes); beyond it the `error` event has status 429 and `retry_after_ms`.';

/** Every event the service sends on a socket, by `event` name. */
export const WS_SERVICE_EVENTS = {
  ping: { summary: 'Keepalive', description: 'Sent every 30 seconds (`WS_PING_INTERVAL_MS`); the client answers `pong`. A socket that sends nothing for 90 seconds (`WS_DEAD_TIMEOUT_MS`) is terminated.', data: Empty },
  pong: { summary: 'Answer to a client ping', description: 'Answers a `ping` frame the client sent.', data: Empty },
  error: {
    summary: 'A refused frame',
    description: 'A frame was refused; the socket stays open. `status` is HTTP-like: 400 malformed JSON, envelope, unknown event or invalid `data`; 403 not allowed (e.g. an API-key socket before `client_key_register`); 404, 409, 413 as the matching REST route answers; 429 over the message budget (with `retry_after_ms`); 503 while the service shuts down or the database is unreachable. `client_ref` echoes the refused frame\'s.',
    data: ErrorFrame,
  },
  message: { summary: 'A conversation message', description: 'A stored end-to-end encrypted message, to the recipient device\'s sockets and the sender\'s other sockets. Receiving it marks it delivered.', data: MessageEvent },
  message_ack: { summary: 'A sent message was stored', description: 'Answers a `message` frame once the message is committed.', data: MessageAck },
  typing: { summary: 'The counterpart is typing', description: 'Relayed from the other side of a conversation, with its `device_id`.', data: TypingEvent },
  message_delivered: { summary: 'Delivered receipts', description: `To the sender's sockets: these of its messages reached the recipient device (batched, at most ${MAX_RECEIPT_IDS} ids a frame).`, data: MessageDeliveredEvent },
  message_read: { summary: 'A read receipt', description: 'To the sender\'s sockets: the recipient read everything up to a message (when read receipts are on for it and its tenant).', data: MessageReadEvent },
  message_read_ack: { summary: 'A read mark was taken', description: 'Answers a `message_read` frame.', data: MessageReadAck },
  room_message: { summary: 'A room message envelope', description: 'This device\'s envelope of a room message released to it (by the policies, or an owner\'s approval of a held one).', data: RoomMessageEvent },
  room_message_ack: { summary: 'A room message was stored', description: 'Answers a `room_message` frame with each recipient\'s policy outcome.', data: RoomMessageAck },
  room_message_delivered: { summary: 'Room delivered receipts', description: 'To the sender\'s sockets: these of its room messages reached a member.', data: RoomMessageDeliveredEvent },
  room_message_read: { summary: 'A room read receipt', description: 'To the senders\' sockets: a member read everything released to it up to a room message.', data: RoomMessageReadEvent },
  room_message_read_ack: { summary: 'A room read mark was taken', description: 'Answers a `room_message_read` frame.', data: RoomMessageReadAck },
  room_joined: { summary: 'Added to a room', description: 'To a new member: the room, its members with their keys and the device\'s pairwise conversations.', data: RoomJoinedEvent },
  member_joined: { summary: 'A member joined a room', description: 'To owner devices and the room\'s other agent members.', data: MemberJoinedEvent },
  member_left: { summary: 'A member left a room', description: 'To owner devices, the removed device and the remaining agent members.', data: MemberLeftEvent },
  topic_created: { summary: 'A new topic', description: 'To every device of the conversation group.', data: TopicCreatedEvent },
  client_key_accepted: { summary: 'Key material registered', description: 'Answers `client_key_register`: the socket now serves the key\'s device, with its conversations to owner devices.', data: ClientKeyAccepted },
  device_pending: { summary: 'An agent enrolled', description: 'To owner devices: a device enrolled with an invite and awaits approval.', data: DevicePendingEvent },
  device_approved: { summary: 'This device was approved', description: 'To the enrolling agent: an owner approved it; it may activate now.', data: DeviceApprovedEvent },
  device_linked: { summary: 'An agent became ACTIVE', description: 'To owner devices: an agent activated (or an API key registered key material) and has conversations with them.', data: DeviceLinkedEvent },
  owner_device_linked: { summary: 'A new owner device', description: 'To an agent: an owner device registered (or was relinked) and a conversation with it was created, with its keys.', data: OwnerDeviceLinkedEvent },
  decision_created: { summary: 'A decision awaits the owner', description: 'To owner devices: an agent asked for a decision.', data: Decision },
  decision_response: { summary: 'A decision was resolved', description: 'To the asking agent: the owner approved, denied or deferred it, or its deadline passed.', data: DecisionResponseEvent },
  policy_alert: { summary: 'A policy matched', description: 'To owner devices: a `notify` or `hold` policy matched a room, A2A or rental message.', data: PolicyAlertEvent },
  key_directory_alert: { summary: 'A key failed key transparency', description: 'To owner devices: a device of the tenant refused a key whose key-transparency proof failed, or found a key in its own name that it did not publish.', data: KeyDirectoryAlertEvent },
  spend_alert: { summary: 'A spend threshold was crossed', description: 'To owner devices: an agent\'s spend crossed a threshold of its daily or monthly cap.', data: SpendAlertEvent },
  a2a_channel_requested: { summary: 'An A2A channel was requested', description: 'To the responder tenant\'s owner devices: a channel awaits approval.', data: RequestedA2aChannel },
  a2a_channel_approved: { summary: 'An A2A channel was approved', description: 'To both agents: their role and the peer\'s keys; they exchange keys next.', data: A2aChannelApprovedEvent },
  a2a_channel_rejected: { summary: 'An A2A channel was rejected', description: 'To the initiating agent.', data: A2aChannelClosedEvent },
  a2a_channel_activated: { summary: 'An A2A channel is active', description: 'To both agents: both handshakes arrived.', data: A2aChannelActivatedEvent },
  a2a_channel_revoked: { summary: 'An A2A channel was revoked', description: 'To both agents.', data: A2aChannelClosedEvent },
  a2a_key_exchange: { summary: 'The peer\'s handshake', description: 'The other party\'s `a2a_key_exchange`, relayed.', data: A2aKeyExchangeEvent },
  a2a_key_exchange_ack: { summary: 'A handshake was relayed', description: 'Answers `a2a_key_exchange` with the channel\'s state.', data: A2aKeyExchangeAck },
  a2a_message: { summary: 'An A2A message', description: 'To the recipient agent and the sender\'s other sockets.', data: A2aMessage },
  a2a_message_ack: { summary: 'An A2A message was stored', description: 'Answers `a2a_message` with what both tenants\' policies made of it.', data: A2aSendResult },
  rental_message: { summary: 'A rental-room message', description: 'An envelope of a rental-room message released to this device.', data: RentalMessage },
  rental_message_ack: { summary: 'A rental-room message was stored', description: 'Answers `rental_message` with each recipient\'s outcome.', data: RentalMessageAck },
  rental_updated: { summary: 'A rental changed status', description: 'To the owner devices of both tenants of the rental.', data: RentalUpdatedEvent },
  dispute_updated: { summary: 'A dispute was filed or resolved', description: 'To the owner devices of both tenants.', data: DisputeUpdatedEvent },
  payout_updated: { summary: 'A payout changed status', description: 'To the developer tenant\'s owner devices.', data: PayoutUpdatedEvent },
} as const satisfies Record<string, WsServiceEvent>;

/** Name of an event the service sends. */
export type WsServiceEventName = keyof typeof WS_SERVICE_EVENTS;

/** The TypeBox schema of a whole service frame `{event, data}` of event `K`. */
export type TWsServiceFrame<K extends WsServiceEventName> = TObject<{ event: TLiteral<K>; data: (typeof WS_SERVICE_EVENTS)[K]['data'] }>;

/**
 * The event -> frame-schema table of the service's events: for each event name of
 * {@link WS_SERVICE_EVENTS}, the schema of the frame `{event: <name>, data}` it is sent as. The
 * server's notifier and gateway send these frames; the SDK's realtime client dispatches received
 * frames through the same names ({@link WsServiceEventData} gives each `data` type).
 */
export const WS_SERVICE_FRAMES = Object.fromEntries(
  Object.entries(WS_SERVICE_EVENTS).map(([event, e]) => [event, Type.Object({ event: Type.Literal(event), data: e.data })]),
) as { readonly [K in WsServiceEventName]: TWsServiceFrame<K> };

/** Whether `event` names an event of {@link WS_SERVICE_EVENTS} (a frame a client may dispatch by the table). */
export function isWsServiceEvent(event: string): event is WsServiceEventName {
  return Object.prototype.hasOwnProperty.call(WS_SERVICE_EVENTS, event);
}

/** The `data` type of each service event, by event name (the static types of {@link WS_SERVICE_EVENTS}' schemas). */
export type WsServiceEventData = { [K in WsServiceEventName]: Static<(typeof WS_SERVICE_EVENTS)[K]['data']> };

/** A service frame `{event, data}`; without `K`, the union of every event's frame (discriminated by `event`). */
export type WsServiceFrame<K extends WsServiceEventName = WsServiceEventName> = { [E in K]: { event: E; data: WsServiceEventData[E] } }[K];

/** Every frame a client may send, by `event` name. */
export const WS_CLIENT_FRAMES = {
  ping: { summary: 'Keepalive from the client', description: 'The service answers `pong`.', data: Empty, replies: ['pong'] },
  pong: { summary: 'Answer to ping', description: 'Required answer to the service\'s `ping`; any frame counts as activity.', data: Empty, replies: [] },
  message: {
    summary: 'Send a conversation message',
    description: `An end-to-end encrypted message to the other side of a conversation the device is part of; the REST twin is \`POST /api/v1/conversations/{id}/messages\`. ${MESSAGE_BUDGET} ${CLIENT_REF}`,
    data: OutgoingMessage,
    replies: ['message_ack', 'error'],
  },
  typing: { summary: 'Typing indicator', description: 'Relayed to the counterpart as `typing`; no ack, and its `error` events carry no `client_ref`.', data: TypingFrame, replies: ['error'] },
  message_read: { summary: 'Read receipt', description: `Everything addressed to this device in the conversation up to and including a message was read. ${CLIENT_REF}`, data: MessageReadFrame, replies: ['message_read_ack', 'error'] },
  room_message: {
    summary: 'Send a room message',
    description: `One envelope per recipient member, or one \`*\` envelope for MLS; the tenant's policies decide per recipient. ${MESSAGE_BUDGET} ${CLIENT_REF}`,
    data: OutgoingRoomMessage,
    replies: ['room_message_ack', 'error'],
  },
  room_message_read: { summary: 'Room read receipt', description: `Everything released to this member in the room up to and including a room message was read. ${CLIENT_REF}`, data: RoomMessageReadFrame, replies: ['room_message_read_ack', 'error'] },
  client_key_register: {
    summary: 'Register an API key\'s key material',
    description: 'First message of an API-key socket whose key has no device yet (trust on first use): the identity and X25519 keys with a proof of possession and, preferably, a `key_binding`. Until it is accepted the socket gets no deliveries and may send only this, `ping` and `pong`. Key material other than the key\'s is answered with an `error` and the socket closes with 4003. Its `error` events carry no `client_ref`.',
    data: ClientKeyRegistration,
    replies: ['client_key_accepted', 'error'],
  },
  a2a_key_exchange: { summary: 'A2A handshake', description: `An opaque handshake (e.g. an X3DH initial message or an MLS Welcome) to the peer of an approved channel; the channel becomes active once both sides sent one. ${CLIENT_REF}`, data: KeyExchangeFrame, replies: ['a2a_key_exchange_ack', 'error'] },
  a2a_message: { summary: 'Send an A2A message', description: `An encrypted message on an active channel; both tenants' policies apply. ${MESSAGE_BUDGET} ${CLIENT_REF}`, data: A2aMessageFrame, replies: ['a2a_message_ack', 'error'] },
  rental_message: {
    summary: 'Send a rental-room message',
    description: `Envelopes to the other side of a rental room, from the renter's owner device or the rented agent; both tenants' policies apply. ${MESSAGE_BUDGET} ${CLIENT_REF}`,
    data: OutgoingRentalMessage,
    replies: ['rental_message_ack', 'error'],
  },
} as const satisfies Record<string, WsClientFrame>;

/** Name of a frame a client sends. */
export type WsClientFrameName = keyof typeof WS_CLIENT_FRAMES;

/** The `data` type of each client frame, by event name (the static types of {@link WS_CLIENT_FRAMES}' schemas). */
export type WsClientFrameData = { [K in WsClientFrameName]: Static<(typeof WS_CLIENT_FRAMES)[K]['data']> };

/** WebSocket close codes the service's own refusals use (the socket is accepted, then closed). */
export const WS_CLOSE = { revoked: 4001, forbidden: 4003, unauthorized: 4401 } as const;

/** Every close code a client may see from the service, with its meaning (RFC 6455 §7.4 and the 4000–4999 private range). */
export const WS_CLOSE_CODES: readonly { code: number; meaning: string }[] = [
  { code: 1001, meaning: 'going away: the service is shutting down; reconnect (to another instance).' },
  { code: 1009, meaning: 'message too big: a frame above the size limit (1 MiB, or twice `LIMIT_MESSAGE_BYTES` when larger).' },
  { code: 1012, meaning: 'service restart: the instance lost and regained its event bus; reconnect and catch up by cursor.' },
  { code: 1013, meaning: 'try again later: the database is unreachable while authenticating.' },
  { code: WS_CLOSE.revoked, meaning: 'device revoked: the device (or its API key) was revoked, removed or deleted. Do not reconnect.' },
  { code: WS_CLOSE.forbidden, meaning: 'forbidden: the credential is valid but may not open this socket (device not ACTIVE, `device_id` not one of the owner\'s devices, an owner without a tenant, key material that does not match the API key).' },
  { code: WS_CLOSE.unauthorized, meaning: 'unauthorized: no token, or a malformed, expired, unknown or repeated one.' },
];

/** How a socket authenticates: the query string of the upgrade request (there is no hello frame). */
export const WS_AUTH = {
  query: Type.Object({
    token: Type.String({ description: 'a device JWT, an owner JWT (with `device_id`), or an API key `svc_agent_sk_…`; given once' }),
    device_id: Type.Optional(Type.String({ format: 'uuid', description: 'owner JWT only: the ACTIVE owner device of the caller the socket serves' })),
  }),
  description: `Connect to \`${WS_PATH}?token=…\`. A device JWT serves its ACTIVE device; an owner JWT serves the caller's ACTIVE owner device named by \`device_id\`; an API key serves its registered device, or, before it has one, an unregistered socket that must send \`client_key_register\` first. A refused credential closes the socket right after the upgrade (4401, 4003, 4001).`,
} as const;
