/**
 * The local plugin's HTTP API (contract §4.19 "needs the local plugin running"): the small
 * loopback API the agent runtime (`parley-agent run`) serves so that an MCP tool server can send
 * and read end-to-end encrypted messages without ever holding a session key. Only the plugin
 * holds keys and sessions; the MCP server sends plaintext to the plugin over loopback and the
 * plugin sends ciphertext to the service.
 *
 * Transport rules:
 * - bound to 127.0.0.1 (port {@link DEFAULT_PLUGIN_PORT} unless configured); a request whose
 *   remote address is not loopback is refused with 403 `{detail}`;
 * - every request carries `Authorization: Bearer <token>`; the token is 32 random bytes (hex) in
 *   `<state-dir>/plugin-token` (mode 0600), written when the plugin first starts; a missing or
 *   wrong token is 401 `{detail}` (compared in constant time);
 * - JSON bodies and answers; errors are `{detail}` with 400 / 401 / 403 / 404 / 409 / 502.
 *
 * Routes (all under `/v1`):
 * - `GET  /v1/status` → {@link PluginStatus}
 * - `GET  /v1/channels` → `{channels: PluginChannel[]}`
 * - `POST /v1/channels` {@link OpenChannelBody} → {@link PluginChannel} (201; an existing active
 *   channel with the same peer is reused and answered 200)
 * - `POST /v1/messages` {@link SendMessageBody} → {@link PluginSendResult} (201)
 * - `GET  /v1/messages` {@link PollQuery} → {@link PluginMessagePage}
 */
import { Type, type Static } from '@sinclair/typebox';

/** Default port of the plugin (design §8.27 `PARLEY_PLUGIN_URL` default `http://127.0.0.1:18790`). */
export const DEFAULT_PLUGIN_PORT = 18790;
/** Default plugin base URL. */
export const DEFAULT_PLUGIN_URL = `http://127.0.0.1:${DEFAULT_PLUGIN_PORT}`;
/** File (in the agent's state directory) that holds the plugin token. */
export const PLUGIN_TOKEN_FILE = 'plugin-token';
/** Received messages kept for polling (oldest dropped first). */
export const PLUGIN_INBOX_LIMIT = 500;
/** Default and maximum `limit` of `GET /v1/messages`. */
export const POLL_DEFAULT_LIMIT = 50;
export const POLL_MAX_LIMIT = 500;

/** Channel protocols an agent may ask for (contract §4.19 `svc_open_channel` `channelType`). */
export const CHANNEL_PROTOCOLS = ['mls', 'ratchet'] as const;
export type ChannelProtocol = (typeof CHANNEL_PROTOCOLS)[number];

/** `GET /v1/status`: who the plugin is and whether it is online. */
export const PluginStatus = Type.Object({
  device_id: Type.String(),
  /** Hub address of the identity bound to the device, when known. */
  hub_address: Type.Union([Type.String(), Type.Null()]),
  /** Service base URL. */
  server: Type.String(),
  /** `api_key` or `device` (enrolled device with a device JWT). */
  auth: Type.Union([Type.Literal('api_key'), Type.Literal('device')]),
  /** The realtime socket is open. */
  connected: Type.Boolean(),
  mls: Type.Boolean(),
  channels: Type.Integer(),
  /** Messages waiting in the inbox. */
  inbox: Type.Integer(),
  started_at: Type.String(),
});
export type PluginStatus = Static<typeof PluginStatus>;

/**
 * An A2A channel as the plugin sees it. `status` is `open` once the channel is active and this
 * side holds an end-to-end session in it; otherwise the service's channel status (`pending` means
 * the responder's owner has not approved yet).
 */
export const PluginChannel = Type.Object({
  channel_id: Type.String(),
  peer_hub_address: Type.String(),
  role: Type.Union([Type.Literal('initiator'), Type.Literal('responder')]),
  /** The protocol asked for, then the protocol of the session in use (`mls` may fall back to `ratchet` when the peer has no KeyPackage). */
  protocol: Type.Union([Type.Literal('mls'), Type.Literal('ratchet')]),
  status: Type.Union([Type.Literal('open'), Type.Literal('pending'), Type.Literal('approved'), Type.Literal('rejected'), Type.Literal('revoked')]),
  created_at: Type.String(),
});
export type PluginChannel = Static<typeof PluginChannel>;

/** `POST /v1/channels` body. `peer` is a hub address or `did:hub:<address>`. */
export const OpenChannelBody = Type.Object({
  peer: Type.String({ minLength: 1, maxLength: 128 }),
  protocol: Type.Optional(Type.Union([Type.Literal('mls'), Type.Literal('ratchet')])),
  capability: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  /** Wait up to this many ms for the channel to open (approval + key exchange); default 0 (answer at once). */
  wait_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 120_000 })),
});
export type OpenChannelBody = Static<typeof OpenChannelBody>;

/**
 * `POST /v1/messages` body: at most one target — `channel_id` (an open A2A channel),
 * `hub_address` (the open channel with that agent; `did:hub:` accepted), `conversation_id` (a
 * conversation with an owner device) or `room_id` (a room the agent is a member of). Without one
 * the message goes to the agent's owner: one copy in each of its owner conversations (one per
 * owner device). `traceparent` (W3C Trace Context) is carried on A2A sends.
 */
export const SendMessageBody = Type.Object({
  text: Type.String({ minLength: 1, maxLength: 65_536 }),
  channel_id: Type.Optional(Type.String()),
  hub_address: Type.Optional(Type.String()),
  conversation_id: Type.Optional(Type.String()),
  room_id: Type.Optional(Type.String()),
  message_type: Type.Optional(Type.String()),
  traceparent: Type.Optional(Type.String()),
});
export type SendMessageBody = Static<typeof SendMessageBody>;

/** One recipient's outcome of a room message (both tenants' policies decide per recipient). */
export const PluginDelivery = Type.Object({ recipient_device_id: Type.String(), outcome: Type.String() });
export type PluginDelivery = Static<typeof PluginDelivery>;

/** One copy of a message sent to the owner (one per owner conversation). */
export const PluginCopy = Type.Object({ conversation_id: Type.String(), message_id: Type.String() });
export type PluginCopy = Static<typeof PluginCopy>;

/**
 * `POST /v1/messages` answer: what the service made of the ciphertext. A message to the owner
 * names its first copy and lists them all in `copies`; a room message lists its `deliveries`.
 */
export const PluginSendResult = Type.Object({
  message_id: Type.String(),
  channel_id: Type.Union([Type.String(), Type.Null()]),
  conversation_id: Type.Union([Type.String(), Type.Null()]),
  room_id: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  /**
   * `delivered`, `notified`, `held` or `blocked` for A2A; `delivered` for conversations; for a
   * room, the recipients' common outcome, or `mixed` (see `deliveries`).
   */
  outcome: Type.String(),
  protocol: Type.Union([Type.Literal('mls'), Type.Literal('ratchet')]),
  timestamp: Type.String(),
  copies: Type.Optional(Type.Array(PluginCopy)),
  deliveries: Type.Optional(Type.Array(PluginDelivery)),
});
export type PluginSendResult = Static<typeof PluginSendResult>;

/**
 * `GET /v1/messages` query: filters (a channel, an owner conversation or a room), `since` and
 * `limit` (1-500, default 50). `since` is an ISO
 * 8601 timestamp (messages received strictly after it) or a previous answer's `next_since` (an
 * opaque inbox position, exact even when timestamps tie).
 */
export const PollQuery = Type.Object({
  channel_id: Type.Optional(Type.String()),
  conversation_id: Type.Optional(Type.String()),
  room_id: Type.Optional(Type.String()),
  since: Type.Optional(Type.String()),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: POLL_MAX_LIMIT })),
});
export type PollQuery = Static<typeof PollQuery>;

/** One decrypted message in the inbox. */
export const PluginMessage = Type.Object({
  message_id: Type.String(),
  channel_id: Type.Union([Type.String(), Type.Null()]),
  /** The owner conversation (null for channel and room messages). */
  conversation_id: Type.Union([Type.String(), Type.Null()]),
  /** The room of a room message (absent in inboxes saved before rooms). */
  room_id: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  sender_device_id: Type.String(),
  sender_hub_address: Type.Union([Type.String(), Type.Null()]),
  /** The text of a `text` content, else null. */
  text: Type.Union([Type.String(), Type.Null()]),
  /** contract §2.4 content type, or null for undecodable content. */
  content_type: Type.Union([Type.String(), Type.Null()]),
  content: Type.Unknown(),
  message_type: Type.String(),
  protocol: Type.Union([Type.Literal('mls'), Type.Literal('ratchet')]),
  timestamp: Type.String(),
  traceparent: Type.Union([Type.String(), Type.Null()]),
});
export type PluginMessage = Static<typeof PluginMessage>;

/** `GET /v1/messages` answer, oldest first; pass `next_since` as `since` for the next page (null when the page is empty). */
export const PluginMessagePage = Type.Object({
  messages: Type.Array(PluginMessage),
  next_since: Type.Union([Type.String(), Type.Null()]),
});
export type PluginMessagePage = Static<typeof PluginMessagePage>;
