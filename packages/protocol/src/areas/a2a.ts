/**
 * Agent-to-agent channels (contract §2.11, §3.5, §4.13, §6.1; design §8.5): schemas, route rows and frames.
 */
import { Type, type Static } from '@sinclair/typebox';
import { defineRoute } from '../contract.js';
import { Base64, Ciphertext, IdParams, lit, MessageType, Nullable, PageQueryFields, Priority, Timestamp, Uuid } from '../common.js';
import { HUB_ADDRESS_PATTERN } from './hub.js';
import { Page } from '../paging.js';

/** Status of an A2A channel (contract §2.11). */
export const CHANNEL_STATUSES = ['pending', 'approved', 'active', 'rejected', 'revoked'] as const;
/** Status of an A2A channel (contract §2.11). */
export type A2aChannelStatus = (typeof CHANNEL_STATUSES)[number];

/** What both tenants' policies made of a sent message (the stricter wins). */
export const A2A_OUTCOMES = ['delivered', 'notified', 'held', 'blocked'] as const;
export type A2aOutcome = (typeof A2A_OUTCOMES)[number];

/**
 * An A2A channel. contract §2.11 names its fields in camelCase (channelId, initiatorHubAddress,
 * responderHubAddress, conversationId, status), so every field of a channel object is camelCase;
 * the envelopes around it (`channel_id`, `channels`) stay snake_case. `conversationId` is set
 * when the channel becomes active (key exchange complete); `federated` when the agents belong to
 * different tenants.
 */
export const A2aChannel = Type.Object({
  channelId: Uuid,
  initiatorHubAddress: Type.String(),
  responderHubAddress: Type.String(),
  conversationId: Nullable(Uuid),
  status: lit(CHANNEL_STATUSES),
  capability: Nullable(Type.String()),
  federated: Type.Boolean({ description: 'the two agents belong to different tenants (a federation agreement governs the channel)' }),
  agreementId: Nullable(Uuid),
  /** The marketplace rental that authorizes this federated channel (the initiator's tenant rents the responder); null otherwise. */
  rentalId: Type.Optional(Nullable(Uuid)),
  createdAt: Timestamp,
  approvedAt: Nullable(Timestamp),
  activatedAt: Nullable(Timestamp),
});
export type A2aChannel = Static<typeof A2aChannel>;

/** `POST /api/v1/a2a/channels/request` answer (201): the channel, plus `channel_id`. */
export const RequestedA2aChannel = Type.Intersect([Type.Object({ channel_id: Uuid }), A2aChannel]);
export type RequestedA2aChannel = Static<typeof RequestedA2aChannel>;

/**
 * `POST /api/v1/a2a/channels/request` body (contract §4.13, design §8.5): an owner names the
 * initiating agent in `initiator_device_id` (an API key always initiates as its own device);
 * `capability` must be allowed by a federation agreement that lists capabilities.
 */
export const RequestA2aChannelRequest = Type.Object({
  responder_hub_address: Type.String({ pattern: HUB_ADDRESS_PATTERN, description: 'hub address of the responder (any case)' }),
  initiator_device_id: Type.Optional(Uuid),
  capability: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
});
export type RequestA2aChannelRequest = Static<typeof RequestA2aChannelRequest>;

/** `GET /api/v1/a2a/channels` query. */
export const A2aChannelListQuery = Type.Object({ status: Type.Optional(lit(CHANNEL_STATUSES)) });
export type A2aChannelListQuery = Static<typeof A2aChannelListQuery>;

export const A2aChannelList = Type.Object({ channels: Type.Array(A2aChannel) });
export type A2aChannelList = Static<typeof A2aChannelList>;

/** The fields one A2A message carries (REST body of `POST /a2a/channels/{id}/messages` and the `a2a_message` frame). */
export const A2aMessageFields = {
  header_blob: Base64,
  ciphertext: Ciphertext,
  message_type: Type.Optional(MessageType),
  priority: Type.Optional(Priority),
  traceparent: Type.Optional(
    Type.String({ minLength: 1, maxLength: 128, description: 'W3C Trace Context: 00-<32 hex trace-id>-<16 hex parent-id>-<2 hex flags>; generated on federated channels when absent' }),
  ),
};

/** `POST /api/v1/a2a/channels/{id}/messages` body (contract §4.13): base64 envelope; `traceparent` is W3C Trace Context. */
export const A2aMessageInput = Type.Object(A2aMessageFields);
export type A2aMessageInput = Static<typeof A2aMessageInput>;

/** `POST /api/v1/a2a/channels/{id}/messages` answer (201) and the `a2a_message_ack` frame data: what both tenants' policies made of the message. */
export const A2aSendResult = Type.Object({
  message_id: Uuid,
  channel_id: Uuid,
  outcome: lit(A2A_OUTCOMES),
  held_message_id: Type.Optional(Uuid),
  timestamp: Timestamp,
  traceparent: Nullable(Type.String()),
});
export type A2aSendResult = Static<typeof A2aSendResult>;

/** One A2A channel message (history entry, `a2a_message` event); `cursor` is an opaque total-ordered position usable as `since`. */
export const A2aMessage = Type.Object({
  channel_id: Uuid,
  message_id: Uuid,
  sender_device_id: Uuid,
  header_blob: Type.String(),
  ciphertext: Type.String(),
  message_type: Type.String({ description: "a contract §2.4 message type, or 'key_exchange' for a relayed handshake" }),
  priority: Type.String(),
  timestamp: Timestamp,
  traceparent: Nullable(Type.String()),
  cursor: Type.String({ description: 'opaque, total-ordered position; usable as `since`' }),
});
export type A2aMessage = Static<typeof A2aMessage>;

/** `GET /api/v1/a2a/channels/{id}/messages` query: `since` = ISO timestamp or `next_cursor`. */
export const A2aHistoryQuery = Type.Object({ since: PageQueryFields.since, limit: PageQueryFields.limit });
export type A2aHistoryQuery = Static<typeof A2aHistoryQuery>;

/** A page of A2A channel messages, oldest first; `next_cursor` is null on the last page. */
export const A2aMessagePage = Page('messages', A2aMessage);
export type A2aMessagePage = Static<typeof A2aMessagePage>;

// ---------------------------------------------------------------- frames (contract §6.1)

const ClientRef = Type.Optional(Type.String({ maxLength: 200 }));

/** `a2a_key_exchange` client frame: an opaque handshake (e.g. an X3DH initial message or an MLS Welcome), base64 fields. */
export const KeyExchangeFrame = Type.Object({ channel_id: Uuid, header_blob: Base64, ciphertext: Ciphertext, client_ref: ClientRef });
export type KeyExchangeFrame = Static<typeof KeyExchangeFrame>;

/** `a2a_message` client frame (counted against the per-device message limit, contract §8). */
export const A2aMessageFrame = Type.Object({ channel_id: Uuid, ...A2aMessageFields, client_ref: ClientRef });
export type A2aMessageFrame = Static<typeof A2aMessageFrame>;

/** `a2a_key_exchange_ack` data: the channel's state after the handshake (`active` with a conversation once both sides sent one). */
export const A2aKeyExchangeAck = Type.Object({ channel_id: Uuid, status: lit(CHANNEL_STATUSES), conversation_id: Nullable(Uuid) });
export type A2aKeyExchangeAck = Static<typeof A2aKeyExchangeAck>;

/** `a2a_key_exchange` event data: the peer's handshake, relayed. */
export const A2aKeyExchangeEvent = Type.Object({ channel_id: Uuid, message_id: Uuid, sender_device_id: Uuid, header_blob: Type.String(), ciphertext: Type.String(), timestamp: Timestamp });
export type A2aKeyExchangeEvent = Static<typeof A2aKeyExchangeEvent>;

/** `a2a_channel_approved` event data: the device's role and the peer's keys. */
export const A2aChannelApprovedEvent = Type.Object({
  channel_id: Uuid,
  role: lit(['initiator', 'responder'] as const),
  peer_hub_address: Type.String(),
  peer_device_id: Uuid,
  peer_identity_public_key: Nullable(Type.String()),
  peer_ephemeral_public_key: Nullable(Type.String()),
});
export type A2aChannelApprovedEvent = Static<typeof A2aChannelApprovedEvent>;

/** `a2a_channel_activated` event data: both handshakes arrived; the channel's conversation. */
export const A2aChannelActivatedEvent = Type.Object({ channel_id: Uuid, conversation_id: Nullable(Uuid) });
export type A2aChannelActivatedEvent = Static<typeof A2aChannelActivatedEvent>;

/** `a2a_channel_rejected` and `a2a_channel_revoked` event data. */
export const A2aChannelClosedEvent = Type.Object({ channel_id: Uuid });
export type A2aChannelClosedEvent = Static<typeof A2aChannelClosedEvent>;

const tags = ['a2a'];

export const a2aRoutes = {
  requestA2aChannel: defineRoute({
    method: 'POST',
    path: '/api/v1/a2a/channels/request',
    auth: 'any',
    tags,
    summary: 'Request a channel with the agent behind a hub address (pending until its owner approves)',
    description:
      'Requests an agent-to-agent channel from an agent to the agent behind `responder_hub_address`, optionally for one `capability`. The initiator is the calling agent\'s device (API key or agent device JWT), or for an owner the ACTIVE agent device named by `initiator_device_id`. Within the tenant the initiator needs trust tier `certified`; across tenants `enterprise`, an active federation agreement whose trust floor both agents meet and whose capabilities include the one named. Across tenants without an agreement, an active marketplace rental of the responder authorizes the channel instead and approves it at once. The channel is `pending` until the responder\'s owner approves; its owners receive `a2a_channel_requested`. Answers 201. 400 when an owner names no `initiator_device_id`, it is not an agent device, or the agent would open a channel to itself. 403 when the initiator has no hub identity or too low a tier, there is no active agreement (nor rental), a trust score is below the floor, the capability is not allowed, an agent names another device as initiator, or the caller uses an owner device\'s JWT. 404 when the initiator device or the hub address is unknown. 409 when the initiator or responder device is not ACTIVE, the address is bound to no agent device, or an open channel already joins the two agents.',
    body: RequestA2aChannelRequest,
    responses: { 201: RequestedA2aChannel },
    errors: [400, 401, 403, 404, 409],
  }),
  listA2aChannels: defineRoute({
    method: 'GET',
    path: '/api/v1/a2a/channels',
    auth: 'any',
    tags,
    summary: "List channels: an owner sees its tenant's, an agent (API key or agent device JWT) its own device's; newest first",
    description:
      'Channels newest first, optionally of one `status`: an owner sees every channel of its tenant (either side), an agent (API key or agent device JWT) the channels of its own device. An API key that has not registered key material yet gets an empty list. 403 also for an owner device\'s JWT (owners use the owner JWT).',
    query: A2aChannelListQuery,
    responses: { 200: A2aChannelList },
    errors: [400, 401, 403],
  }),
  approveA2aChannel: defineRoute({
    method: 'POST',
    path: '/api/v1/a2a/channels/{id}/approve',
    auth: 'owner',
    tags,
    summary: "Approve a pending channel (the responder's owner)",
    description:
      'The responder tenant\'s owner approves a pending channel (`approved`); both agents receive `a2a_channel_approved` with their role and the peer\'s hub address, device and public keys, then exchange keys (`a2a_key_exchange` frames) to make it `active`. Audited in both tenants\' logs; answers the channel. 403 when the caller is the initiator side\'s owner, or the channel\'s federation agreement has ended. 404 when the channel is not visible to the tenant. 409 when the channel is not pending.',
    params: IdParams,
    responses: { 200: A2aChannel },
    errors: [400, 401, 403, 404, 409],
  }),
  rejectA2aChannel: defineRoute({
    method: 'POST',
    path: '/api/v1/a2a/channels/{id}/reject',
    auth: 'owner',
    tags,
    summary: "Reject a pending channel (the responder's owner; terminal)",
    description:
      'The responder tenant\'s owner declines a pending channel (`rejected`, terminal); the initiating agent receives `a2a_channel_rejected`. Audited in both tenants\' logs; answers the channel. 403 when the caller is the initiator side\'s owner. 404 when the channel is not visible to the tenant. 409 when the channel is not pending.',
    params: IdParams,
    responses: { 200: A2aChannel },
    errors: [400, 401, 403, 404, 409],
  }),
  revokeA2aChannel: defineRoute({
    method: 'POST',
    path: '/api/v1/a2a/channels/{id}/revoke',
    auth: 'any',
    tags,
    summary: 'Revoke a pending, approved or active channel (either party; terminal)',
    description:
      'Either party ends a pending, approved or active channel (`revoked`, terminal): an owner any channel of its tenant, an agent only its own. Both agents receive `a2a_channel_revoked`. Audited in both tenants\' logs; answers the channel. 403 when an agent is not a party, or the caller uses an owner device\'s JWT. 404 when the channel is not visible to the tenant. 409 when the channel is already rejected or revoked.',
    params: IdParams,
    responses: { 200: A2aChannel },
    errors: [400, 401, 403, 404, 409],
  }),
  sendA2aMessage: defineRoute({
    method: 'POST',
    path: '/api/v1/a2a/channels/{id}/messages',
    auth: 'device-or-apikey',
    tags,
    summary: "Send an encrypted message on an active channel (a party agent); both tenants' policies apply",
    description:
      'A party agent sends an end-to-end encrypted message on an active channel (the REST form of the `a2a_message` frame). Both tenants\' policies decide; the stricter outcome wins: `delivered` (the peer and the sender\'s other sockets receive `a2a_message`), `notified` (also a `policy_alert` to the owners whose policy said so), `held` (until an owner approves) or `blocked` (nothing delivered, no ciphertext kept). A cross-tenant message gets a W3C `traceparent` when none is given. Counts against the device\'s 60 messages per minute, shared with the WebSocket. Answers 201 with the stored message and the outcome. 400 when a base64 field or `traceparent` is malformed. 403 when the caller is not a party, the federation agreement or the rental behind the channel has ended, or the API key has not registered key material. 404 when the channel is not visible to the tenant. 409 when the channel is not active. 413 when the decoded ciphertext is larger than `LIMIT_MESSAGE_BYTES`. 429 also when the device exceeds its message budget.',
    params: IdParams,
    body: A2aMessageInput,
    responses: { 201: A2aSendResult },
    errors: [400, 401, 403, 404, 409, 413],
  }),
  a2aChannelPeer: defineRoute({
    method: 'GET',
    path: '/api/v1/a2a/channels/{id}/peer',
    auth: 'device-or-apikey',
    tags,
    summary: "The calling party's role and the peer's keys of an approved or active channel (what a2a_channel_approved carried)",
    description:
      'What `a2a_channel_approved` told the calling party, again, for an agent that missed the event (offline, restarted): its role and the peer\'s hub address, device and public keys. 403 when the caller is not a party, the channel\'s agreement or rental has ended, or the API key has not registered key material. 404 when the channel is not visible to the tenant. 409 while the channel is pending or after it closed, or when the peer device is not ACTIVE.',
    params: IdParams,
    responses: { 200: A2aChannelApprovedEvent },
    errors: [400, 401, 403, 404, 409],
  }),
  a2aHistory: defineRoute({
    method: 'GET',
    path: '/api/v1/a2a/channels/{id}/messages',
    auth: 'device-or-apikey',
    tags,
    summary: 'Channel history for a party agent, oldest first; since = ISO timestamp or next_cursor',
    description:
      'A channel\'s delivered messages for a party agent, oldest first: without `since` the latest `limit`, with `since` (the previous page\'s `next_cursor` or an ISO 8601 timestamp, exclusive) the next `limit` after it. Messages to the caller are marked delivered; a held message joins the history when an owner releases it. 400 when `since` is neither a timestamp nor a cursor. 403 when the caller is not a party, or the API key has not registered key material. 404 when the channel is not visible to the tenant.',
    params: IdParams,
    query: A2aHistoryQuery,
    responses: { 200: A2aMessagePage },
    errors: [400, 401, 403, 404],
  }),
};
