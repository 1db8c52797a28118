/**
 * Conversations, messages and topics (contract §2.4, §4.5, §6.1): schemas, route rows and frames
 * (`message` and `typing` sent by clients; `message`, `message_ack`, `typing`, `topic_created`
 * and `error` sent by the service). Delivery and read receipts (`message_delivered`,
 * `message_read`, …) are in `receipts.ts`.
 */
import { Type, type Static } from '@sinclair/typebox';
import { defineRoute } from '../contract.js';
import { IdParams, MessageFields, MessagePage, PageQueryFields, StoredMessage, Timestamp, Uuid } from '../common.js';

/** A topic of a conversation group (also the data of the `topic_created` event). */
export const Topic = Type.Object({ topic_id: Uuid, group_id: Uuid, name: Type.String(), is_default: Type.Boolean(), archived: Type.Boolean(), created_at: Timestamp });
export type Topic = Static<typeof Topic>;

/** A conversation with its group's topics (`GET /api/v1/conversations`). */
export const Conversation = Type.Object({
  conversation_id: Uuid,
  message_group_id: Uuid,
  agent_device_id: Uuid,
  owner_device_id: Uuid,
  created_at: Timestamp,
  topics: Type.Array(Topic),
});
export type Conversation = Static<typeof Conversation>;

/** `GET /api/v1/conversations`. */
export const ConversationList = Type.Object({ conversations: Type.Array(Conversation) });
export type ConversationList = Static<typeof ConversationList>;

/** `GET /api/v1/conversations` query: only the conversations of this device. */
export const ConversationListQuery = Type.Object({ device_id: Type.Optional(Uuid) });
export type ConversationListQuery = Static<typeof ConversationListQuery>;

/**
 * The fields a sender gives for one message (REST body and WebSocket `message` frame; contract §6.1).
 * `header_blob` and `ciphertext` are base64; the service stores them as opaque bytes.
 * `ciphertext` may be at most 256 KiB decoded (design §8.12; 413 above).
 */
export const MessageInput = Type.Object(MessageFields);
export type MessageInput = Static<typeof MessageInput>;

/**
 * History query (contract §4.5, design §7). `since` is exclusive: an ISO 8601 timestamp or a cursor.
 * Without `since`: the latest `limit` messages. `limit`: 1–200, default 50.
 */
export const HistoryQuery = Type.Object(PageQueryFields);
export type HistoryQuery = Static<typeof HistoryQuery>;

/** `GET /api/v1/conversations/{id}/keys`: the counterparty's public keys (the agent side, or with X-Device-Id the other side). */
export const ConversationKeys = Type.Object({
  conversation_id: Uuid,
  device_id: Uuid,
  identity_public_key: Type.String(),
  ephemeral_public_key: Type.String(),
  fingerprint: Type.String(),
  kind: Type.String(),
  status: Type.String(),
});
export type ConversationKeys = Static<typeof ConversationKeys>;

/** `GET /api/v1/topics` answer. */
export const TopicList = Type.Object({ topics: Type.Array(Topic) });
export type TopicList = Static<typeof TopicList>;

/** `GET /api/v1/topics` query: a group's topics (all of the tenant's without it). */
export const TopicListQuery = Type.Object({ group_id: Type.Optional(Uuid) });
export type TopicListQuery = Static<typeof TopicListQuery>;

const TopicName = Type.String({ minLength: 1, maxLength: 100 });

/** `POST /api/v1/topics` body; `name`: 1–100 characters. */
export const CreateTopicRequest = Type.Object({ group_id: Uuid, name: TopicName });
export type CreateTopicRequest = Static<typeof CreateTopicRequest>;

/** `PATCH /api/v1/topics/{id}` body; `name`: 1–100 characters. */
export const RenameTopicRequest = Type.Object({ name: TopicName });
export type RenameTopicRequest = Static<typeof RenameTopicRequest>;

/** `X-Device-Id`: the owner's acting device (owner callers). */
export const ActingDeviceHeader = Type.Object({ 'x-device-id': Type.Optional(Type.String({ description: "the owner's acting device" })) });

const tags = ['conversations'];

/** Route rows of this area. */
export const conversationsRoutes = {
  listConversations: defineRoute({
    method: 'GET',
    path: '/api/v1/conversations',
    auth: 'owner',
    tags,
    summary: 'List conversations with topic metadata',
    description:
      'Every conversation of the tenant (one per agent device and owner device pair), or only those of `device_id`, each with its message group and the group\'s topics. An owner device reads it to learn which conversations to key.',
    query: ConversationListQuery,
    responses: { 200: ConversationList },
    errors: [400, 401, 403],
  }),
  sendMessage: defineRoute({
    method: 'POST',
    path: '/api/v1/conversations/{id}/messages',
    auth: 'owner',
    tags,
    summary: 'Store an encrypted message sent by the owner device named in X-Device-Id',
    description:
      'The owner device named by `X-Device-Id` sends one end-to-end encrypted message: the service stores the opaque `header_blob` and `ciphertext` (it cannot read them), relays them to the agent\'s sockets and to the sender\'s other sockets (a device with a webhook also gets a metadata-only notification), and answers 201 with the stored message. Agents send over the WebSocket `message` frame instead. Counts against the sending device\'s budget of 60 messages per minute, shared with the WebSocket. 400 when `X-Device-Id` is missing, a base64 field is malformed, or `message_group_id` or `topic_id` is not this conversation\'s group\'s. 403 when the `X-Device-Id` device is not the caller\'s owner device, is revoked, or is not a side of this conversation. 404 when the conversation (or the `X-Device-Id` device) is unknown in the tenant. 413 when the decoded ciphertext is larger than `LIMIT_MESSAGE_BYTES` (256 KiB by default). 429 also when the device exceeds its message budget.',
    params: IdParams,
    headers: ActingDeviceHeader,
    body: MessageInput,
    responses: { 201: StoredMessage },
    errors: [400, 401, 403, 404, 413],
  }),
  conversationMessages: defineRoute({
    method: 'GET',
    path: '/api/v1/conversations/{id}/messages',
    auth: 'owner',
    tags,
    summary: "History, oldest first, with each message's delivered_at / read_at; since = ISO timestamp or next_cursor; with X-Device-Id naming a side, the page's messages to that owner device are delivered",
    description:
      'One conversation\'s messages, oldest first, with each message\'s `delivered_at` and `read_at`, paged by `since` (an ISO 8601 timestamp or the previous page\'s `next_cursor`, exclusive) and `limit` (at most 200), optionally one topic. Owners read every conversation of their tenant; when `X-Device-Id` names the owner device that is a side of it, the page\'s messages to that device are marked delivered (their senders get delivered receipts). 400 when `since` is neither a timestamp nor a cursor, or `X-Device-Id` is not a UUID. 403 when `X-Device-Id` is not the caller\'s owner device or is revoked. 404 when the conversation (or the `X-Device-Id` device) is unknown in the tenant.',
    params: IdParams,
    headers: ActingDeviceHeader,
    query: HistoryQuery,
    responses: { 200: MessagePage },
    errors: [400, 401, 403, 404],
  }),
  conversationKeys: defineRoute({
    method: 'GET',
    path: '/api/v1/conversations/{id}/keys',
    auth: 'owner-or-device',
    tags,
    summary: 'Counterparty public keys for key agreement',
    description:
      'The public identity and X25519 keys, fingerprint, kind and status of the other side of a conversation, for key agreement. A device gets the side that is not itself; an owner gets the side other than the owner device named by `X-Device-Id`, or the agent side without it. 400 when `X-Device-Id` is not a UUID. 403 when the calling device is not a side of the conversation, or `X-Device-Id` is not the caller\'s owner device. 404 when the conversation, or its other device, is unknown in the tenant.',
    params: IdParams,
    headers: ActingDeviceHeader,
    responses: { 200: ConversationKeys },
    errors: [400, 401, 403, 404],
  }),
  listTopics: defineRoute({
    method: 'GET',
    path: '/api/v1/topics',
    auth: 'owner',
    tags: ['topics'],
    summary: "List topics (a group's, or all)",
    description: 'Topics of one conversation group (`group_id`), or of every group of the tenant, with their name, default flag and archived state.',
    query: TopicListQuery,
    responses: { 200: TopicList },
    errors: [400, 401, 403],
  }),
  createTopic: defineRoute({
    method: 'POST',
    path: '/api/v1/topics',
    auth: 'owner',
    tags: ['topics'],
    summary: 'Create a topic in a conversation group',
    description:
      'Creates a topic in a conversation group (name 1 to 100 characters); the group\'s agent and owner devices receive `topic_created`. Answers 201 with the topic. 404 when the group is unknown in the tenant.',
    body: CreateTopicRequest,
    responses: { 201: Topic },
    errors: [400, 401, 403, 404],
  }),
  renameTopic: defineRoute({
    method: 'PATCH',
    path: '/api/v1/topics/{id}',
    auth: 'owner',
    tags: ['topics'],
    summary: 'Rename a topic',
    description: 'Renames a topic (1 to 100 characters); answers the topic. 404 when the topic is unknown in the tenant.',
    params: IdParams,
    body: RenameTopicRequest,
    responses: { 200: Topic },
    errors: [400, 401, 403, 404],
  }),
  archiveTopic: defineRoute({
    method: 'POST',
    path: '/api/v1/topics/{id}/archive',
    auth: 'owner',
    tags: ['topics'],
    summary: 'Archive a topic (409 for the default topic)',
    description:
      'Archives a topic: it stays listed with `archived` true and its messages stay readable. Answers the topic. 404 when the topic is unknown in the tenant. 409 for the group\'s default topic, which cannot be archived.',
    params: IdParams,
    responses: { 200: Topic },
    errors: [400, 401, 403, 404, 409],
  }),
};

// ---------------------------------------------------------------- WebSocket frames (contract §6.1; design §7)

/** The optional `client_ref` of a client frame; the ack or error frame echoes it. */
const ClientRefField = Type.Optional(Type.String({ maxLength: 200, description: 'correlates the ack / error frame (at most 200 characters)' }));

/** `message` send frame: the contract §6.1 message fields plus the conversation and an optional `client_ref`. */
export const OutgoingMessage = Type.Object({ conversation_id: Uuid, ...MessageFields, client_ref: ClientRefField });
export type OutgoingMessage = Static<typeof OutgoingMessage>;

/** `typing` send frame (contract §6.1): relayed to the counterpart, no ack. */
export const TypingFrame = Type.Object({ conversation_id: Uuid });
export type TypingFrame = Static<typeof TypingFrame>;

/** `typing` event (contract §6.1): `device_id` is the typing device, filled in by the service. */
export const TypingEvent = Type.Object({ conversation_id: Uuid, device_id: Uuid });
export type TypingEvent = Static<typeof TypingEvent>;

/** `message_ack` (design §7): sent by the service after the message is committed; `client_ref` echoes the frame's. */
export const MessageAck = Type.Object({ message_id: Uuid, timestamp: Timestamp, cursor: Type.String(), client_ref: ClientRefField });
export type MessageAck = Static<typeof MessageAck>;

/** `message` event: a stored message, to the recipient device and the sender's other sockets. */
export const MessageEvent = StoredMessage;
export type MessageEvent = StoredMessage;

/** `topic_created` event, to every device of the group: the new topic. */
export const TopicCreatedEvent = Topic;
export type TopicCreatedEvent = Topic;

/**
 * `error` event (design §7): a refused frame; the socket stays open. `client_ref` echoes the
 * frame's (not for `typing`); `retry_after_ms` accompanies a 429.
 */
export const ErrorFrame = Type.Object({
  detail: Type.String(),
  status: Type.Integer({ description: 'HTTP-like status (400, 403, 404, 413, 429, 500, …)' }),
  client_ref: Type.Optional(Type.String()),
  retry_after_ms: Type.Optional(Type.Integer({ minimum: 0 })),
});
export type ErrorFrame = Static<typeof ErrorFrame>;
