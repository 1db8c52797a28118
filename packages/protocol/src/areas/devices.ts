/**
 * Enrollment and devices (contract §2.3, §3.1, §4.3, §4.4; design §5): schemas, route rows and frames
 * (the `device_pending`, `device_approved`, `device_linked` and `owner_device_linked` events).
 */
import { Type, type Static } from '@sinclair/typebox';
import { defineRoute } from '../contract.js';
import { DeviceStatus, IdParams, KeyHex, lit, MessagePage, Nullable, PageQueryFields, refuseUnknownKeys, SignatureHex, Timestamp, Uuid } from '../common.js';
import { KeyBinding } from './key-binding.js';

/** Who a device belongs to: the owner's own device, or an agent. */
export const DEVICE_KINDS = ['owner', 'agent'] as const;
export const DeviceKind = lit(DEVICE_KINDS);
export type DeviceKind = Static<typeof DeviceKind>;

/** Device health computed from last_seen (design §8.2: green < 2 min, yellow < 15 min, else red). */
export const DEVICE_HEALTHS = ['green', 'yellow', 'red'] as const;
export const DeviceHealth = lit(DEVICE_HEALTHS);
export type DeviceHealth = Static<typeof DeviceHealth>;

/** Longest webhook URL accepted (characters). */
export const MAX_WEBHOOK_URL_LENGTH = 2048;

// ---------------------------------------------------------------- enrollment (contract §4.3)

/**
 * `POST /api/v1/enroll` body (contract §4.3, design §7). `proof_of_possession` is the Ed25519
 * signature (hex) by the identity private key over the raw 32 bytes of `identity_public_key`.
 */
export const EnrollRequest = Type.Object({
  invite_token: Type.String({ minLength: 1, maxLength: 256 }),
  identity_public_key: KeyHex,
  ephemeral_public_key: KeyHex,
  proof_of_possession: SignatureHex,
  platform: Type.Optional(Type.String({ maxLength: 100 })),
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
});
export type EnrollRequest = Static<typeof EnrollRequest>;

/** `POST /api/v1/enroll` answer (201); `status` is `PENDING`. */
export const EnrollResponse = Type.Object({ device_id: Uuid, fingerprint: Type.String(), status: DeviceStatus });
export type EnrollResponse = Static<typeof EnrollResponse>;

// ---------------------------------------------------------------- devices (contract §4.4)

/** A device as listed to owners (design §7); also an entry of `/owner-connections` and `/connections/{id}`. */
export const Device = Type.Object({
  device_id: Uuid,
  name: Type.String(),
  platform: Nullable(Type.String()),
  status: DeviceStatus,
  kind: DeviceKind,
  health: DeviceHealth,
  last_seen: Nullable(Timestamp),
  fingerprint: Type.String(),
  identity_public_key: Type.String(),
  ephemeral_public_key: Type.String(),
  enrolled_at: Timestamp,
  webhook_url: Nullable(Type.String()),
});
export type Device = Static<typeof Device>;

/** `GET /api/v1/devices`. */
export const DeviceList = Type.Object({ devices: Type.Array(Device) });
export type DeviceList = Static<typeof DeviceList>;

/** `GET /api/v1/devices/{id}/status` (public, 1 request per 5 s per device; contract §8). */
export const DeviceStatusResponse = Type.Object({ device_id: Uuid, status: DeviceStatus });
export type DeviceStatusResponse = Static<typeof DeviceStatusResponse>;

/** Public keys of a device (hex) and its fingerprint (design §7). */
export const DeviceKeys = Type.Object({ device_id: Uuid, identity_public_key: Type.String(), ephemeral_public_key: Type.String(), fingerprint: Type.String() });
export type DeviceKeys = Static<typeof DeviceKeys>;

/** One pairwise conversation between an agent device and an owner device (design §7). */
export const ConversationLink = Type.Object({ conversation_id: Uuid, message_group_id: Uuid, agent_device_id: Uuid, owner_device_id: Uuid });
export type ConversationLink = Static<typeof ConversationLink>;

/**
 * `POST /api/v1/devices/{id}/activate` body: Ed25519 signature (hex) over UTF-8
 * `activate:<device_id>`, and optionally a {@link KeyBinding} (purpose `device_activate`), verified
 * when present and required when the server sets `KEY_BINDING_REQUIRED`.
 */
export const ActivateRequest = Type.Object({ signature: SignatureHex, key_binding: Type.Optional(KeyBinding) });
export type ActivateRequest = Static<typeof ActivateRequest>;

/**
 * `POST /api/v1/devices/{id}/activate` answer (design §7). `conversation_id` is the conversation
 * with the oldest ACTIVE owner device (null when the tenant has no owner device yet);
 * `conversations` lists them all; `owner_public_keys` lists every ACTIVE owner device.
 */
export const ActivateResponse = Type.Object({
  device_id: Uuid,
  device_jwt: Type.String(),
  expires_at: Timestamp,
  conversation_id: Nullable(Uuid),
  message_group_id: Uuid,
  default_topic_id: Uuid,
  conversations: Type.Array(ConversationLink),
  owner_public_keys: Type.Array(DeviceKeys),
});
export type ActivateResponse = Static<typeof ActivateResponse>;

/** `POST /api/v1/devices/{id}/token/challenge` answer (201): single-use, valid 5 minutes. */
export const TokenChallenge = Type.Object({ device_id: Uuid, challenge: Type.String(), expires_at: Timestamp });
export type TokenChallenge = Static<typeof TokenChallenge>;

/**
 * `POST /api/v1/devices/{id}/token` body: Ed25519 signature (hex) over `tokenRenewalMessage(challenge)`
 * (signed-messages.ts: the `parley/v2/token-renewal` domain, 0x00, the UTF-8 challenge); the
 * server also accepts the older signature over the bare UTF-8 challenge.
 */
export const RenewTokenRequest = Type.Object({ challenge: Type.String({ minLength: 1, maxLength: 256 }), signature: SignatureHex });
export type RenewTokenRequest = Static<typeof RenewTokenRequest>;

/** A freshly issued device JWT (design §5: 24 h by default). */
export const DeviceToken = Type.Object({ device_id: Uuid, device_jwt: Type.String(), expires_at: Timestamp });
export type DeviceToken = Static<typeof DeviceToken>;

/** `GET /api/v1/devices/{id}/presence`. `online` reflects the answering instance's sockets. */
export const DevicePresence = Type.Object({ device_id: Uuid, online: Type.Boolean(), last_seen: Nullable(Timestamp), health: Type.String() });
export type DevicePresence = Static<typeof DevicePresence>;

/** `GET /api/v1/devices/{id}/pending`: count of messages not yet delivered to the device. */
export const DevicePending = Type.Object({ device_id: Uuid, pending: Type.Integer() });
export type DevicePending = Static<typeof DevicePending>;

/** `GET /api/v1/devices/{id}/messages` query: history plus an optional conversation filter. */
export const DeviceHistoryQuery = Type.Object({ ...PageQueryFields, conversation_id: Type.Optional(Uuid) });
export type DeviceHistoryQuery = Static<typeof DeviceHistoryQuery>;

/**
 * `PATCH /api/v1/devices/{id}/webhook` and `/devices/self/webhook` body; `null` clears. Further
 * rules (https unless allowed, no userinfo, no non-public IP literal) are the server's.
 */
export const WebhookRequest = Type.Object({
  url: Nullable(
    Type.String({
      format: 'uri',
      pattern: '^https?://',
      maxLength: MAX_WEBHOOK_URL_LENGTH,
      description: 'https URL (http only where the deployment allows it), without user:pass@; null clears',
    }),
  ),
});
export type WebhookRequest = Static<typeof WebhookRequest>;

/**
 * A device's own settings (`GET`/`PATCH /devices/{id}/settings`, `/devices/self/settings`;
 * docs/decisions.md "Delivery and read receipts"). `read_receipts_enabled` is the device's
 * choice (default true); `read_receipts_effective` is false when it or the tenant's
 * `read_receipts_enabled` setting is off: the device's reads are then neither stored nor
 * forwarded. Delivered receipts are always sent. `require_post_quantum` is the tenant's setting of
 * that name, read-only here: this is where a device learns it (its messenger then refuses classical
 * X3DH and non-hybrid MLS sessions; it can also require post-quantum on its own, client-side).
 */
export const DeviceSettings = Type.Object({
  device_id: Uuid,
  read_receipts_enabled: Type.Boolean({ description: "the device's choice (default true)" }),
  read_receipts_effective: Type.Boolean({ description: 'false when the device or the tenant turned read receipts off' }),
  require_post_quantum: Type.Boolean({ description: "the tenant's require_post_quantum setting (change it with PATCH /settings): refuse classical end-to-end sessions" }),
});
export type DeviceSettings = Static<typeof DeviceSettings>;

/** `PATCH /devices/{id}/settings` and `/devices/self/settings` body: the keys to change (unknown keys 400). */
export const DeviceSettingsPatch = refuseUnknownKeys(
  Type.Object({ read_receipts_enabled: Type.Optional(Type.Boolean()) }, { additionalProperties: false, minProperties: 1, description: 'settings to change' }),
);
export type DeviceSettingsPatch = Static<typeof DeviceSettingsPatch>;

/** Webhook registration answer; `secret` (`whsec_…`) appears once, when a URL is registered. */
export const WebhookResponse = Type.Object({ device_id: Uuid, webhook_url: Nullable(Type.String()), secret: Type.Optional(Type.String()) });
export type WebhookResponse = Static<typeof WebhookResponse>;

/** `PATCH /api/v1/devices/{id}` body (rename); 1–100 characters. */
export const RenameDeviceRequest = Type.Object({ name: Type.String({ minLength: 1, maxLength: 100 }) });
export type RenameDeviceRequest = Static<typeof RenameDeviceRequest>;

/**
 * `POST /api/v1/devices/register` body (owner device; keys as 64 hex characters). `key_binding`
 * (purpose `owner_device_register`) proves a fresh hold of the identity key; without it the
 * server refuses a key another device holds, or every registration under `KEY_BINDING_REQUIRED`.
 */
export const RegisterOwnerDeviceRequest = Type.Object({
  identity_public_key: KeyHex,
  ephemeral_public_key: KeyHex,
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  platform: Type.Optional(Type.String({ maxLength: 100 })),
  key_binding: Type.Optional(KeyBinding),
});
export type RegisterOwnerDeviceRequest = Static<typeof RegisterOwnerDeviceRequest>;

/** `POST /api/v1/devices/register` answer (201): ACTIVE at once, linked to every ACTIVE agent. */
export const RegisterOwnerDeviceResponse = Type.Object({ device_id: Uuid, fingerprint: Type.String(), status: Type.Literal('ACTIVE'), conversations: Type.Array(ConversationLink) });
export type RegisterOwnerDeviceResponse = Static<typeof RegisterOwnerDeviceResponse>;

/** `POST /api/v1/devices/{id}/relink` answer. */
export const RelinkResponse = Type.Object({ device_id: Uuid, conversations: Type.Array(ConversationLink) });
export type RelinkResponse = Static<typeof RelinkResponse>;

/** `X-Device-Id` of `DELETE /devices/{id}/remove`: the acting owner device. */
const RemoveDeviceHeader = Type.Object({ 'x-device-id': Type.Optional(Type.String()) });

const tags = ['devices'];

/** Route rows of this area. */
export const devicesRoutes = {
  enroll: defineRoute({
    method: 'POST',
    path: '/api/v1/enroll',
    auth: 'none',
    tags: ['enrollment'],
    summary: 'Enroll an agent device with an invite token and proof of possession',
    description:
      'An agent enrolls itself with an invite token: it sends its Ed25519 identity key, X25519 key, a proof of possession (the identity key\'s signature over its own public key) and optionally a name and platform. Creates a PENDING agent device (named by `name`, else the invite\'s label), consumes the invite and tells the tenant\'s owner devices with `device_pending`; answers 201 with the device id, fingerprint and status. The agent then polls `GET /devices/{id}/status` until an owner approves it. 400 when the proof of possession does not verify or a key is not a usable point (non-canonical or small-order Ed25519, low-order X25519); the invite stays unused then. 401 when the invite token is unknown, used, revoked or expired. 429 also after 5 enrollments from one IP within 10 minutes (configurable).',
    body: EnrollRequest,
    responses: { 201: EnrollResponse },
    errors: [400, 401, 429],
  }),
  listDevices: defineRoute({
    method: 'GET',
    path: '/api/v1/devices',
    auth: 'owner',
    tags,
    summary: 'List tenant devices with health',
    description:
      'Every device of the tenant that is not deleted (agents and owner devices) with status, kind, health (from last seen), fingerprint, public keys, enrollment time and webhook URL.',
    responses: { 200: DeviceList },
    errors: [401, 403],
  }),
  deviceStatus: defineRoute({
    method: 'GET',
    path: '/api/v1/devices/{id}/status',
    auth: 'none',
    tags,
    summary: 'Enrollment status polling (1 request per 5 s per device)',
    description:
      'The enrolling agent polls its device\'s status (`PENDING`, `APPROVED`, `ACTIVE`, `REVOKED`) by device id alone, which is its only credential at that stage; once `APPROVED` it activates. 404 when no device has this id. 429 also beyond one request per 5 seconds per device id (configurable).',
    params: IdParams,
    responses: { 200: DeviceStatusResponse },
    errors: [400, 404, 429],
  }),
  activateDevice: defineRoute({
    method: 'POST',
    path: '/api/v1/devices/{id}/activate',
    auth: 'none',
    tags,
    summary: 'Activate an APPROVED device (signature over "activate:<device_id>")',
    description:
      'An APPROVED agent device becomes ACTIVE by signing `activate:<device_id>` (UTF-8) with its identity key, optionally with a fresh `key_binding` (purpose `device_activate`). Creates its conversation group, default topic and one conversation per ACTIVE owner device, issues its device JWT and tells owner devices with `device_linked`; answers the JWT, its expiry, the conversations and the owners\' public keys. 400 when the `key_binding` does not verify or its nonce is spent, when none is sent while `KEY_BINDING_REQUIRED` is set, or when the stored identity key is not a usable Ed25519 point. 401 when the activation signature does not verify. 403 when the device is revoked. 404 when no device has this id. 409 when the device is not APPROVED (still PENDING, or already ACTIVE).',
    params: IdParams,
    body: ActivateRequest,
    responses: { 200: ActivateResponse },
    errors: [400, 401, 403, 404, 409, 429],
  }),
  tokenChallenge: defineRoute({
    method: 'POST',
    path: '/api/v1/devices/{id}/token/challenge',
    auth: 'none',
    tags,
    summary: 'Get a short-lived, single-use challenge for device-token renewal (same answer for any device id)',
    description:
      'Issues a stateless, single-use challenge bound to the device id for renewing the device JWT; it expires after 5 minutes. Answers 201 with the same shape for every well-formed id, whether or not a device has it: nothing is read or written, so the route reveals nothing about devices.',
    params: IdParams,
    responses: { 201: TokenChallenge },
    errors: [400, 429],
  }),
  renewToken: defineRoute({
    method: 'POST',
    path: '/api/v1/devices/{id}/token',
    auth: 'none',
    tags,
    summary: 'Renew the device JWT: Ed25519 signature by the identity key over the token-renewal domain tag and the UTF-8 challenge',
    description:
      'An ACTIVE device renews its device JWT without the old one: it signs, with its identity key, the token-renewal domain tag, a zero byte and the UTF-8 challenge from `POST /devices/{id}/token/challenge` (a signature over the bare challenge is also accepted). Each challenge renews once. 400 when the stored identity key is not a usable Ed25519 point. 401 when the signature does not verify or the challenge is not one issued for this device, expired or already spent. 403 when the device is revoked. 404 when no device has this id. 409 when the device is not ACTIVE.',
    params: IdParams,
    body: RenewTokenRequest,
    responses: { 200: DeviceToken },
    errors: [400, 401, 403, 404, 409, 429],
  }),
  devicePresence: defineRoute({
    method: 'GET',
    path: '/api/v1/devices/{id}/presence',
    auth: 'owner',
    tags,
    summary: 'Is the device online',
    description:
      'Whether the device has an open WebSocket on any instance of the service right now, with its last-seen time and health. 404 when no device of the tenant has this id.',
    params: IdParams,
    responses: { 200: DevicePresence },
    errors: [400, 401, 403, 404],
  }),
  deviceKeys: defineRoute({
    method: 'GET',
    path: '/api/v1/devices/{id}/keys',
    auth: 'owner',
    tags,
    summary: 'Device public keys',
    description:
      'The device\'s public identity (Ed25519) and X25519 keys and its fingerprint, for verifying it out of band or starting an encrypted session. 404 when no device of the tenant has this id.',
    params: IdParams,
    responses: { 200: DeviceKeys },
    errors: [400, 401, 403, 404],
  }),
  deviceMessages: defineRoute({
    method: 'GET',
    path: '/api/v1/devices/{id}/messages',
    auth: 'device-or-apikey',
    tags,
    summary: "Message history of the device's conversations (marks messages to it delivered)",
    description:
      'Catch-up after a restart: the messages the calling device sent or received, oldest first, paged by `since` (an ISO 8601 timestamp or the previous page\'s `next_cursor`, exclusive) and `limit` (at most 200), optionally one conversation or topic. Messages to the device that were not delivered yet are marked delivered now, and their senders get delivered receipts. 400 when `since` is neither a timestamp nor a cursor. 403 when `{id}` is not the calling device, or the API key has not registered key material yet (`client_key_register`).',
    params: IdParams,
    query: DeviceHistoryQuery,
    responses: { 200: MessagePage },
    errors: [400, 401, 403],
  }),
  devicePending: defineRoute({
    method: 'GET',
    path: '/api/v1/devices/{id}/pending',
    auth: 'device',
    tags,
    summary: 'Count of undelivered messages',
    description: 'How many messages addressed to the calling device are not delivered yet (stored while it was offline). 403 when `{id}` is not the calling device.',
    params: IdParams,
    responses: { 200: DevicePending },
    errors: [400, 401, 403],
  }),
  approveDevice: defineRoute({
    method: 'PATCH',
    path: '/api/v1/devices/{id}/approve',
    auth: 'owner',
    tags,
    summary: 'Approve a PENDING device',
    description:
      'An owner approves a PENDING agent device (after checking its fingerprint); it becomes APPROVED, the event is audited and the agent receives `device_approved`, after which it activates itself. Answers the device. 404 when no device of the tenant has this id. 409 when the device is not PENDING.',
    params: IdParams,
    responses: { 200: Device },
    errors: [400, 401, 403, 404, 409],
  }),
  rejectDevice: defineRoute({
    method: 'PATCH',
    path: '/api/v1/devices/{id}/reject',
    auth: 'owner',
    tags,
    summary: 'Reject a PENDING device (becomes REVOKED)',
    description:
      'An owner rejects a PENDING agent device: it becomes REVOKED, its published key packages are deleted and the rejection is audited. Answers the device. 404 when no device of the tenant has this id. 409 when the device is not PENDING.',
    params: IdParams,
    responses: { 200: Device },
    errors: [400, 401, 403, 404, 409],
  }),
  revokeDevice: defineRoute({
    method: 'PATCH',
    path: '/api/v1/devices/{id}/revoke',
    auth: 'owner',
    tags,
    summary: 'Revoke a device; its sockets close with 4001 and later calls answer 403',
    description:
      'Revokes a PENDING, APPROVED or ACTIVE device: it becomes REVOKED; its sockets close with 4001 on every instance; its key packages are deleted; its active Skill Permission Tokens are revoked and its hub identities fall to `unverified`, in one transaction. Every later call with its credential answers 403. Answers the device. 404 when no device of the tenant has this id. 409 when the device is already REVOKED.',
    params: IdParams,
    responses: { 200: Device },
    errors: [400, 401, 403, 404, 409],
  }),
  setSelfWebhook: defineRoute({
    method: 'PATCH',
    path: '/api/v1/devices/self/webhook',
    auth: 'device',
    tags,
    summary: "Register or clear the calling device's webhook URL",
    description:
      'The calling device registers (`url`) or clears (`null`) the URL its events are also POSTed to while it is offline (Standard Webhooks signatures). A registration answers a fresh `whsec_…` signing secret once; it is stored sealed. The audit log records the URL\'s host only. 400 when the URL is refused: not https (http only when `WEBHOOK_ALLOW_HTTP` is set), with user info, too long, or an IP literal that is not public (unless `WEBHOOK_ALLOW_PRIVATE`).',
    body: WebhookRequest,
    responses: { 200: WebhookResponse },
    errors: [400, 401, 403],
  }),
  setDeviceWebhook: defineRoute({
    method: 'PATCH',
    path: '/api/v1/devices/{id}/webhook',
    auth: 'owner',
    tags,
    summary: "Register or clear a device's webhook URL",
    description:
      'An owner registers (`url`) or clears (`null`) a device\'s webhook URL, as the device itself can with `PATCH /devices/self/webhook`; a registration answers a fresh `whsec_…` signing secret once. 400 when the URL is refused: not https (http only when `WEBHOOK_ALLOW_HTTP` is set), with user info, too long, or an IP literal that is not public (unless `WEBHOOK_ALLOW_PRIVATE`). 403 when the device is revoked. 404 when no device of the tenant has this id.',
    params: IdParams,
    body: WebhookRequest,
    responses: { 200: WebhookResponse },
    errors: [400, 401, 403, 404],
  }),
  getSelfDeviceSettings: defineRoute({
    method: 'GET',
    path: '/api/v1/devices/self/settings',
    auth: 'device-or-apikey',
    tags,
    summary: "The calling device's settings (read receipts)",
    description:
      'The calling device\'s settings: its `read_receipts_enabled` choice, whether read receipts are in effect for it (the tenant setting can turn them off) and the tenant\'s `require_post_quantum`. 403 when the API key has not registered key material yet (`client_key_register`).',
    responses: { 200: DeviceSettings },
    errors: [401, 403],
  }),
  updateSelfDeviceSettings: defineRoute({
    method: 'PATCH',
    path: '/api/v1/devices/self/settings',
    auth: 'device-or-apikey',
    tags,
    summary: "Change the calling device's settings (read_receipts_enabled)",
    description:
      'The calling device changes its own settings (`read_receipts_enabled`: false stops its read receipts from being stored or sent; delivered receipts stay). Audited as `device.settings_updated`; answers the settings. 403 when the API key has not registered key material yet (`client_key_register`).',
    body: DeviceSettingsPatch,
    responses: { 200: DeviceSettings },
    errors: [400, 401, 403],
  }),
  getDeviceSettings: defineRoute({
    method: 'GET',
    path: '/api/v1/devices/{id}/settings',
    auth: 'owner',
    tags,
    summary: "A device's settings (read receipts)",
    description:
      'An owner reads a device\'s settings: its `read_receipts_enabled` choice, whether read receipts are in effect (the tenant setting can turn them off) and the tenant\'s `require_post_quantum`. 404 when no device of the tenant has this id.',
    params: IdParams,
    responses: { 200: DeviceSettings },
    errors: [400, 401, 403, 404],
  }),
  updateDeviceSettings: defineRoute({
    method: 'PATCH',
    path: '/api/v1/devices/{id}/settings',
    auth: 'owner',
    tags,
    summary: "Change a device's settings (read_receipts_enabled)",
    description:
      'An owner changes a device\'s settings (`read_receipts_enabled`). Audited as `device.settings_updated`; answers the settings. 403 when the device is revoked. 404 when no device of the tenant has this id.',
    params: IdParams,
    body: DeviceSettingsPatch,
    responses: { 200: DeviceSettings },
    errors: [400, 401, 403, 404],
  }),
  renameDevice: defineRoute({
    method: 'PATCH',
    path: '/api/v1/devices/{id}',
    auth: 'owner',
    tags,
    summary: 'Rename a device',
    description: 'Renames a device (1 to 100 characters); the old and new names are audited. Answers the device. 404 when no device of the tenant has this id.',
    params: IdParams,
    body: RenameDeviceRequest,
    responses: { 200: Device },
    errors: [400, 401, 403, 404],
  }),
  deleteDevice: defineRoute({
    method: 'DELETE',
    path: '/api/v1/devices/{id}',
    auth: 'owner',
    tags,
    summary: 'Delete a REVOKED device (history kept)',
    description:
      'Deletes a REVOKED device: it leaves the device list, its conversation history stays, and any Skill Permission Token left is revoked. Answers 204. 404 when no device of the tenant has this id. 409 when the device is not REVOKED (revoke it first).',
    params: IdParams,
    responses: { 204: null },
    errors: [400, 401, 403, 404, 409],
  }),
  removeOwnerDevice: defineRoute({
    method: 'DELETE',
    path: '/api/v1/devices/{id}/remove',
    auth: 'owner',
    tags,
    summary: 'Remove an owner device; X-Device-Id names the acting owner device',
    description:
      'One of the caller\'s owner devices (named by `X-Device-Id`) removes an owner device of the tenant (e.g. a lost phone): it is revoked and deleted at once, its key packages deleted and its sockets closed with 4001; conversation history stays. Answers 204. 400 when `X-Device-Id` is missing or not a UUID, or `{id}` is an agent device (revoke agents instead). 403 when `X-Device-Id` is not an owner device registered by the caller, or it is revoked. 404 when `{id}` or the `X-Device-Id` device is unknown in the tenant.',
    params: IdParams,
    headers: RemoveDeviceHeader,
    responses: { 204: null },
    errors: [400, 401, 403, 404],
  }),
  registerOwnerDevice: defineRoute({
    method: 'POST',
    path: '/api/v1/devices/register',
    auth: 'owner',
    tags,
    summary: "Register the owner's device with its keys (ACTIVE at once)",
    description:
      'Registers the signed-in owner\'s device (a browser or app) with its Ed25519 identity and X25519 keys, optionally with a `key_binding` (purpose `owner_device_register`). The device is ACTIVE at once and gets a conversation with every ACTIVE agent, each of which receives `owner_device_linked` with its keys. Answers 201 with the device id, fingerprint and conversations. 400 when a key is not a usable point, the `key_binding` does not verify or its nonce is spent, or none is sent while `KEY_BINDING_REQUIRED` is set or another device already holds the identity key.',
    body: RegisterOwnerDeviceRequest,
    responses: { 201: RegisterOwnerDeviceResponse },
    errors: [400, 401, 403],
  }),
  relinkDevice: defineRoute({
    method: 'POST',
    path: '/api/v1/devices/{id}/relink',
    auth: 'owner',
    tags,
    summary: 'Idempotent: ensure an owner device has conversations with all agents',
    description:
      'Idempotent repair: makes sure an ACTIVE owner device has a conversation with every ACTIVE agent, creating the missing ones (their agents receive `owner_device_linked`); answers all its conversations. 400 when the device is an agent device. 404 when no device of the tenant has this id. 409 when the device is not ACTIVE.',
    params: IdParams,
    responses: { 200: RelinkResponse },
    errors: [400, 401, 403, 404, 409],
  }),
};

// ---------------------------------------------------------------- WebSocket events (contract §6.1)

/** `device_pending` (owner sockets): an agent enrolled and awaits approval. */
export const DevicePendingEvent = Type.Object({ device_id: Uuid, fingerprint: Type.String(), platform: Nullable(Type.String()), name: Type.String(), enrolled_at: Timestamp });
export type DevicePendingEvent = Static<typeof DevicePendingEvent>;

/** `device_approved` (the agent's sockets): an owner approved the device; it may activate now. */
export const DeviceApprovedEvent = Type.Object({ device_id: Uuid });
export type DeviceApprovedEvent = Static<typeof DeviceApprovedEvent>;

/** `device_linked` (owner sockets): an agent became ACTIVE; `conversation_id` is its first conversation (null when none). */
export const DeviceLinkedEvent = Type.Object({ device_id: Uuid, conversation_id: Nullable(Uuid) });
export type DeviceLinkedEvent = Static<typeof DeviceLinkedEvent>;

/**
 * `owner_device_linked` (the agent's sockets, enrolled and API-key agents): an owner device
 * registered (or relinked) after the agent became ACTIVE got a conversation with it. The agent
 * registers `conversation_id` with the owner device's keys, so the new device can talk to it at
 * once. Live only, like every socket event (`client_key_accepted` also lists every conversation).
 */
export const OwnerDeviceLinkedEvent = Type.Object({
  conversation_id: Uuid,
  message_group_id: Uuid,
  owner_device_id: Uuid,
  identity_public_key: Type.String(),
  ephemeral_public_key: Type.String(),
  fingerprint: Type.String(),
});
export type OwnerDeviceLinkedEvent = Static<typeof OwnerDeviceLinkedEvent>;
