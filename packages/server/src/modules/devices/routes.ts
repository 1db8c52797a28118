/** Enrollment and device routes (SPEC §4.3, §4.4; DESIGN §5, §7). Thin: rules live in service.ts. */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { RateLimitConfig } from '../../config.js';
import { actingDevice, deviceOf, ownerOf } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import { routeLimits } from '../../http/rate-limit.js';
import { DeviceStatus, IdParams, KeyHex, MessageList, Nullable, PageQuery, SignatureHex, Timestamp, Uuid } from '../../http/schemas.js';
import { forbidden } from '../../lib/errors.js';
import type { MessageService } from '../conversations/messages.js';
import { MAX_WEBHOOK_URL_LENGTH } from '../webhooks/target.js';
import type { DeviceService } from './service.js';

/** A device list entry (DESIGN §7), shared with `/owner-connections` and `/connections/{id}`. */
export const DeviceOut = Type.Object({
  device_id: Uuid,
  name: Type.String(),
  platform: Nullable(Type.String()),
  status: DeviceStatus,
  kind: Type.Union([Type.Literal('owner'), Type.Literal('agent')]),
  health: Type.Union([Type.Literal('green'), Type.Literal('yellow'), Type.Literal('red')]),
  last_seen: Nullable(Timestamp),
  fingerprint: Type.String(),
  identity_public_key: Type.String(),
  ephemeral_public_key: Type.String(),
  enrolled_at: Timestamp,
  webhook_url: Nullable(Type.String()),
});
const Keys = Type.Object({ device_id: Uuid, identity_public_key: Type.String(), ephemeral_public_key: Type.String(), fingerprint: Type.String() });
const Link = Type.Object({ conversation_id: Uuid, message_group_id: Uuid, agent_device_id: Uuid, owner_device_id: Uuid });
/** Further rules (https unless allowed, no userinfo, no non-public IP literal) are the service's (webhooks/target.ts). */
const WebhookBody = Type.Object({
  url: Nullable(
    Type.String({
      format: 'uri',
      pattern: '^https?://',
      maxLength: MAX_WEBHOOK_URL_LENGTH,
      description: 'https URL (http only where the deployment allows it), without user:pass@; null clears',
    }),
  ),
});
const WebhookOut = Type.Object({ device_id: Uuid, webhook_url: Nullable(Type.String()), secret: Type.Optional(Type.String()) });
const TokenOut = Type.Object({ device_id: Uuid, device_jwt: Type.String(), expires_at: Timestamp });

const tags = ['devices'];
const ownerSec = [{ ownerJwt: [] }];
const deviceSec = [{ deviceJwt: [] }];
const owner = { auth: 'owner' as const };

export const deviceRoutes: FastifyPluginAsyncTypebox<{ devices: DeviceService; messages: MessageService; rateLimits: RateLimitConfig }> = async (
  app,
  { devices, messages, rateLimits },
) => {
  const limits = routeLimits(rateLimits);
  const selfOnly = (principalDevice: string, id: string) => {
    if (principalDevice !== id) throw forbidden('a device token may only act on its own device');
  };

  app.post(
    '/enroll',
    {
      config: { rateLimit: limits.enroll },
      schema: {
        tags: ['enrollment'],
        summary: 'Enroll an agent device with an invite token and proof of possession',
        body: Type.Object({
          invite_token: Type.String({ minLength: 1, maxLength: 256 }),
          identity_public_key: KeyHex,
          ephemeral_public_key: KeyHex,
          proof_of_possession: SignatureHex,
          platform: Type.Optional(Type.String({ maxLength: 100 })),
          name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
        }),
        response: { 201: Type.Object({ device_id: Uuid, fingerprint: Type.String(), status: DeviceStatus }), ...errorResponses(400, 401, 429) },
      },
    },
    async (req, reply) => reply.status(201).send(await devices.enroll(req.body)),
  );

  app.get(
    '/devices',
    { config: owner, schema: { tags, security: ownerSec, summary: 'List tenant devices with health', response: { 200: Type.Object({ devices: Type.Array(DeviceOut) }), ...errorResponses(401, 403) } } },
    async (req) => ({ devices: await devices.list(ownerOf(req).tenantId) }),
  );

  app.get(
    '/devices/:id/status',
    {
      config: { rateLimit: limits.deviceStatus },
      schema: { tags, summary: 'Enrollment status polling (1 request per 5 s per device)', params: IdParams, response: { 200: Type.Object({ device_id: Uuid, status: DeviceStatus }), ...errorResponses(400, 404, 429) } },
    },
    async (req) => devices.status(req.params.id),
  );

  app.post(
    '/devices/:id/activate',
    {
      schema: {
        tags,
        summary: 'Activate an APPROVED device (signature over "activate:<device_id>")',
        params: IdParams,
        body: Type.Object({ signature: SignatureHex }),
        response: {
          200: Type.Object({
            device_id: Uuid,
            device_jwt: Type.String(),
            expires_at: Timestamp,
            conversation_id: Nullable(Uuid),
            message_group_id: Uuid,
            default_topic_id: Uuid,
            conversations: Type.Array(Link),
            owner_public_keys: Type.Array(Keys),
          }),
          ...errorResponses(400, 401, 403, 404, 409, 429),
        },
      },
    },
    async (req) => devices.activate(req.params.id, req.body.signature),
  );

  app.post(
    '/devices/:id/token/challenge',
    {
      schema: { tags, summary: 'Get a short-lived, single-use challenge for device-token renewal (same answer for any device id)', params: IdParams, response: { 201: Type.Object({ device_id: Uuid, challenge: Type.String(), expires_at: Timestamp }), ...errorResponses(400, 429) } },
    },
    async (req, reply) => reply.status(201).send(devices.tokenChallenge(req.params.id)),
  );

  app.post(
    '/devices/:id/token',
    {
      schema: {
        tags,
        summary: 'Renew the device JWT: Ed25519 signature by the identity key over the UTF-8 challenge',
        params: IdParams,
        body: Type.Object({ challenge: Type.String({ minLength: 1, maxLength: 256 }), signature: SignatureHex }),
        response: { 200: TokenOut, ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (req) => devices.renewToken(req.params.id, req.body.challenge, req.body.signature),
  );

  app.get(
    '/devices/:id/presence',
    { config: owner, schema: { tags, security: ownerSec, summary: 'Is the device online', params: IdParams, response: { 200: Type.Object({ device_id: Uuid, online: Type.Boolean(), last_seen: Nullable(Timestamp), health: Type.String() }), ...errorResponses(400, 401, 403, 404) } } },
    async (req) => devices.presence(ownerOf(req).tenantId, req.params.id),
  );

  app.get(
    '/devices/:id/keys',
    { config: owner, schema: { tags, security: ownerSec, summary: 'Device public keys', params: IdParams, response: { 200: Keys, ...errorResponses(400, 401, 403, 404) } } },
    async (req) => devices.keys(ownerOf(req).tenantId, req.params.id),
  );

  app.get(
    '/devices/:id/messages',
    {
      config: { auth: 'device' },
      schema: {
        tags,
        security: deviceSec,
        summary: "Message history of the device's conversations (marks messages to it delivered)",
        params: IdParams,
        querystring: Type.Object({ ...PageQuery, conversation_id: Type.Optional(Uuid) }),
        response: { 200: MessageList, ...errorResponses(400, 401, 403) },
      },
    },
    async (req) => {
      const d = deviceOf(req);
      selfOnly(d.deviceId, req.params.id);
      return messages.historyForDevice(d.tenantId, d.deviceId, req.query);
    },
  );

  app.get(
    '/devices/:id/pending',
    { config: { auth: 'device' }, schema: { tags, security: deviceSec, summary: 'Count of undelivered messages', params: IdParams, response: { 200: Type.Object({ device_id: Uuid, pending: Type.Integer() }), ...errorResponses(400, 401, 403) } } },
    async (req) => {
      const d = deviceOf(req);
      selfOnly(d.deviceId, req.params.id);
      return devices.pending(d.tenantId, d.deviceId);
    },
  );

  for (const [action, summary] of [
    ['approve', 'Approve a PENDING device'],
    ['reject', 'Reject a PENDING device (becomes REVOKED)'],
    ['revoke', 'Revoke a device; its sockets close with 4001 and later calls answer 403'],
  ] as const) {
    app.patch(
      `/devices/:id/${action}`,
      { config: owner, schema: { tags, security: ownerSec, summary, params: IdParams, response: { 200: DeviceOut, ...errorResponses(400, 401, 403, 404, 409) } } },
      async (req) => devices[action](ownerOf(req).tenantId, req.params.id, ownerOf(req).sub),
    );
  }

  app.patch(
    '/devices/self/webhook',
    { config: { auth: 'device' }, schema: { tags, security: deviceSec, summary: "Register or clear the calling device's webhook URL", body: WebhookBody, response: { 200: WebhookOut, ...errorResponses(400, 401, 403) } } },
    async (req) => {
      const d = deviceOf(req);
      return devices.setWebhook(d.tenantId, d.deviceId, req.body.url, `device:${d.deviceId}`);
    },
  );

  app.patch(
    '/devices/:id/webhook',
    { config: owner, schema: { tags, security: ownerSec, summary: "Register or clear a device's webhook URL", params: IdParams, body: WebhookBody, response: { 200: WebhookOut, ...errorResponses(400, 401, 403, 404) } } },
    async (req) => devices.setWebhook(ownerOf(req).tenantId, req.params.id, req.body.url, ownerOf(req).sub),
  );

  app.patch(
    '/devices/:id',
    { config: owner, schema: { tags, security: ownerSec, summary: 'Rename a device', params: IdParams, body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 100 }) }), response: { 200: DeviceOut, ...errorResponses(400, 401, 403, 404) } } },
    async (req) => devices.rename(ownerOf(req).tenantId, req.params.id, req.body.name, ownerOf(req).sub),
  );

  app.delete(
    '/devices/:id',
    { config: owner, schema: { tags, security: ownerSec, summary: 'Delete a REVOKED device (history kept)', params: IdParams, response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404, 409) } } },
    async (req, reply) => {
      await devices.delete(ownerOf(req).tenantId, req.params.id, ownerOf(req).sub);
      return reply.status(204).send(null);
    },
  );

  app.delete(
    '/devices/:id/remove',
    {
      config: owner,
      schema: {
        tags,
        security: ownerSec,
        summary: 'Remove an owner device; X-Device-Id names the acting owner device',
        params: IdParams,
        headers: Type.Object({ 'x-device-id': Type.Optional(Type.String()) }),
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req, reply) => {
      await devices.removeOwnerDevice(ownerOf(req), req.params.id, actingDevice(req, true));
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/devices/register',
    {
      config: owner,
      schema: {
        tags,
        security: ownerSec,
        summary: "Register the owner's device with its keys (ACTIVE at once)",
        body: Type.Object({
          identity_public_key: KeyHex,
          ephemeral_public_key: KeyHex,
          name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
          platform: Type.Optional(Type.String({ maxLength: 100 })),
        }),
        response: {
          201: Type.Object({ device_id: Uuid, fingerprint: Type.String(), status: Type.Literal('ACTIVE'), conversations: Type.Array(Link) }),
          ...errorResponses(400, 401, 403),
        },
      },
    },
    async (req, reply) => reply.status(201).send(await devices.registerOwnerDevice(ownerOf(req), req.body)),
  );

  app.post(
    '/devices/:id/relink',
    { config: owner, schema: { tags, security: ownerSec, summary: 'Idempotent: ensure an owner device has conversations with all agents', params: IdParams, response: { 200: Type.Object({ device_id: Uuid, conversations: Type.Array(Link) }), ...errorResponses(400, 401, 403, 404, 409) } } },
    async (req) => devices.relink(ownerOf(req).tenantId, req.params.id),
  );
};
