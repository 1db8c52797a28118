/**
 * Attachments and push registration (contract §2.5, §4.7): schemas, route rows and frames.
 * Attachments travel as raw bytes (clients encrypt files themselves): the upload body is
 * `application/octet-stream` (or one multipart `file` part), the download answer the same bytes.
 */
import { Type, type Static } from '@sinclair/typebox';
import { defineRoute } from '../contract.js';
import { lit, Timestamp, Uuid } from '../common.js';

/** The media type of every stored attachment: ciphertext, whatever the plaintext was. */
export const ATTACHMENT_CONTENT_TYPE = 'application/octet-stream';
/** The multipart alternative of an upload: one file part named `file`. */
export const ATTACHMENT_MULTIPART_TYPE = 'multipart/form-data';

/** Answer of an attachment upload (contract §4.7): metadata of the stored encrypted file. */
export const AttachmentInfo = Type.Object({
  blob_id: Uuid,
  size_bytes: Type.Integer(),
  content_type: Type.String({ description: 'always application/octet-stream: the service stores ciphertext' }),
  created_at: Timestamp,
});
export type AttachmentInfo = Static<typeof AttachmentInfo>;

/** The download answer: the raw encrypted bytes as uploaded (`application/octet-stream`), not JSON. */
export const AttachmentBytes = Type.Unsafe<Uint8Array>({
  description: 'the raw encrypted bytes as uploaded',
  content: { [ATTACHMENT_CONTENT_TYPE]: { schema: { type: 'string', format: 'binary' } } },
});

/** Push platforms accepted by `POST /push/register`. */
export const PUSH_PLATFORMS = ['apns', 'fcm', 'web'] as const;
export const PushPlatform = lit(PUSH_PLATFORMS);
export type PushPlatform = Static<typeof PushPlatform>;

/** Body of `POST /push/register` (contract §4.7). */
export const RegisterPushTokenRequest = Type.Object({ device_id: Uuid, platform: PushPlatform, token: Type.String({ minLength: 1, maxLength: 4096 }) });
export type RegisterPushTokenRequest = Static<typeof RegisterPushTokenRequest>;

/** Answer of `POST /push/register`. */
export const PushRegistration = Type.Object({ push_token_id: Uuid, device_id: Uuid, platform: PushPlatform });
export type PushRegistration = Static<typeof PushRegistration>;

/** One push registration as `GET /push/registrations` lists it: never its token. */
export const PushRegistrationInfo = Type.Object({ push_token_id: Uuid, device_id: Uuid, platform: PushPlatform, created_at: Timestamp });
export type PushRegistrationInfo = Static<typeof PushRegistrationInfo>;

/** Answer of `GET /push/registrations`: the tenant's registrations, oldest first. */
export const PushRegistrationList = Type.Object({ registrations: Type.Array(PushRegistrationInfo) });
export type PushRegistrationList = Static<typeof PushRegistrationList>;

/** Answer of `GET /push/vapid-public-key` (RFC 8292 §3.2): the uncompressed P-256 point, base64url without padding. */
export const VapidPublicKey = Type.Object({ public_key: Type.String({ pattern: '^[A-Za-z0-9_-]{87}$', description: 'base64url (no padding) of the 65-byte uncompressed P-256 public key' }) });
export type VapidPublicKey = Static<typeof VapidPublicKey>;

/** Path parameter of `DELETE /push/register/{push_token_id}`. */
const PushTokenParams = Type.Object({ push_token_id: Uuid });

const tags = ['attachments'];

/** Route rows of this area (attachments: device JWT, or owner JWT of the same tenant). */
export const attachmentsRoutes = {
  uploadAttachment: defineRoute({
    method: 'POST',
    path: '/api/v1/attachments/upload',
    auth: 'owner-or-device',
    tags,
    // The server appends its configured size limit to this summary.
    summary: 'Upload an encrypted file as a raw application/octet-stream body or a multipart "file" part',
    description:
      'Uploads a file the client encrypted itself, as a raw `application/octet-stream` body or a `multipart/form-data` body with one `file` part; the service stores the opaque bytes in the tenant\'s blob store and answers 201 with the blob id, size and content type. The blob id then travels inside an encrypted message. 400 when the body is empty, or a multipart body is malformed or has no `file` part. 413 when the file is larger than `LIMIT_ATTACHMENT_BYTES` (25 MiB by default). 415 for another content type (e.g. JSON).',
    contentTypes: [ATTACHMENT_CONTENT_TYPE, ATTACHMENT_MULTIPART_TYPE],
    responses: { 201: AttachmentInfo },
    errors: [400, 401, 403, 413, 415],
  }),
  downloadAttachment: defineRoute({
    method: 'GET',
    path: '/api/v1/attachments/{blob_id}',
    auth: 'owner-or-device',
    tags,
    summary: 'Download an encrypted file: the raw bytes uploaded',
    description:
      'Downloads an attachment of the caller\'s tenant: exactly the encrypted bytes uploaded, as `application/octet-stream`; the client decrypts them with the key from the message that carried the blob id. 404 when no attachment of the tenant has this id, or its bytes are missing from the blob store.',
    params: Type.Object({ blob_id: Uuid }),
    responses: { 200: AttachmentBytes },
    errors: [400, 401, 403, 404],
  }),
  registerPushToken: defineRoute({
    method: 'POST',
    path: '/api/v1/push/register',
    auth: 'owner',
    tags: ['push'],
    summary: "Register a mobile push token for an ACTIVE device of the caller's tenant (idempotent per device and token)",
    description:
      'Registers a push token (`platform` and `token`, at most 4096 characters) for an ACTIVE device of the caller\'s tenant, so the device is woken by a push when something waits for it and it has no open socket. For `web` the token is the browser\'s PushSubscription JSON `{endpoint, keys: {p256dh, auth}}` as a string; its endpoint must pass the webhook URL rules (https, a public address). Idempotent: the same device and token answer the same registration id. Answers 201. 400 when a `web` token is not such a subscription or its endpoint is refused. 404 when the device is unknown in the tenant or not ACTIVE.',
    body: RegisterPushTokenRequest,
    responses: { 201: PushRegistration },
    errors: [400, 401, 403, 404],
  }),
  deletePushRegistration: defineRoute({
    method: 'DELETE',
    path: '/api/v1/push/register/{push_token_id}',
    auth: 'owner',
    tags: ['push'],
    summary: "Remove one push registration of the caller's tenant",
    description:
      'Removes a push registration of the caller\'s tenant, with the pushes still waiting for it; the device is no longer woken through that token. Audited as `push.registration_removed`; answers 204. 404 when no registration of the tenant has this id.',
    params: PushTokenParams,
    responses: { 204: null },
    errors: [400, 401, 403, 404],
  }),
  listPushRegistrations: defineRoute({
    method: 'GET',
    path: '/api/v1/push/registrations',
    auth: 'owner',
    tags: ['push'],
    summary: "List the push registrations of the caller's tenant, without their tokens",
    description:
      'Every push registration of the caller\'s tenant, oldest first: its id, device, platform and creation time. Tokens (device tokens and Web Push subscriptions) are secrets and never answered.',
    responses: { 200: PushRegistrationList },
    errors: [401, 403],
  }),
  vapidPublicKey: defineRoute({
    method: 'GET',
    path: '/api/v1/push/vapid-public-key',
    auth: 'none',
    tags: ['push'],
    summary: "The service's VAPID public key, for a browser's PushManager.subscribe",
    description:
      'The P-256 public key the service signs its Web Push requests with (RFC 8292 VAPID), as base64url of the uncompressed point: a browser passes it as `applicationServerKey` to `PushManager.subscribe`, then registers the resulting PushSubscription JSON with `POST /push/register` (platform `web`). Every instance answers the same key.',
    responses: { 200: VapidPublicKey },
    errors: [],
  }),
};
