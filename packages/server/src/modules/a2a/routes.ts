/**
 * A2A channel routes (SPEC §4.13, §3.5; DESIGN §8.5; docs/decisions.md "A2A channels"). Thin:
 * the rules live in A2aService. Channel objects use SPEC §2.11's camelCase field names.
 */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { agentDeviceOf, ownerOf, unregisteredKeyOnOpenRoute } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import { IdParams, Nullable, PageQuery, Timestamp, Uuid } from '../../http/schemas.js';
import { HUB_ADDRESS_PATTERN } from '../hub/service.js';
import { A2aMessageFields } from './frames.js';
import { CHANNEL_STATUSES } from './repo.js';
import { auditActor } from '../audit/parties.js';
import type { A2aActor, A2aService } from './service.js';

const Status = Type.Union(CHANNEL_STATUSES.map((s) => Type.Literal(s)));
const Channel = Type.Object({
  channelId: Uuid,
  initiatorHubAddress: Type.String(),
  responderHubAddress: Type.String(),
  conversationId: Nullable(Uuid),
  status: Status,
  capability: Nullable(Type.String()),
  federated: Type.Boolean({ description: 'the two agents belong to different tenants (a federation agreement governs the channel)' }),
  agreementId: Nullable(Uuid),
  createdAt: Timestamp,
  approvedAt: Nullable(Timestamp),
  activatedAt: Nullable(Timestamp),
});
const Requested = Type.Intersect([Type.Object({ channel_id: Uuid }), Channel]);
const Outcome = Type.Union(['delivered', 'notified', 'held', 'blocked'].map((o) => Type.Literal(o)));
const SendResult = Type.Object({
  message_id: Uuid,
  channel_id: Uuid,
  outcome: Outcome,
  held_message_id: Type.Optional(Uuid),
  timestamp: Timestamp,
  traceparent: Nullable(Type.String()),
});
const A2aMessage = Type.Object({
  channel_id: Uuid,
  message_id: Uuid,
  sender_device_id: Uuid,
  header_blob: Type.String(),
  ciphertext: Type.String(),
  message_type: Type.String({ description: "a SPEC §2.4 message type, or 'key_exchange' for a relayed handshake" }),
  priority: Type.String(),
  timestamp: Timestamp,
  traceparent: Nullable(Type.String()),
  cursor: Type.String({ description: 'opaque, total-ordered position; usable as `since`' }),
});

const tags = ['a2a'];
const ownerOrKey = { auth: 'owner-or-apikey' as const };
const ownerOrKeySecurity: Record<string, string[]>[] = [{ ownerJwt: [] }, { apiKey: [] }];
const agent = { auth: 'device-or-apikey' as const };
const agentSecurity: Record<string, string[]>[] = [{ deviceJwt: [] }, { apiKey: [] }];
const owner = { auth: 'owner' as const };
const ownerSecurity = [{ ownerJwt: [] }];

/** The caller of an owner-or-API-key route: the owner's tenant, or the API key's bound device. */
function actorOf(req: FastifyRequest): A2aActor {
  if (req.principal?.kind === 'owner') {
    const o = ownerOf(req);
    return { kind: 'owner', tenantId: o.tenantId, actor: o.sub };
  }
  const { tenantId, deviceId } = agentDeviceOf(req);
  return { kind: 'agent', tenantId, deviceId, actor: auditActor(req.principal!) };
}

export const a2aRoutes: FastifyPluginAsyncTypebox<{ a2a: A2aService }> = async (app, { a2a }) => {
  app.post(
    '/a2a/channels/request',
    {
      config: ownerOrKey,
      schema: {
        tags,
        security: ownerOrKeySecurity,
        summary: 'Request a channel with the agent behind a hub address (pending until its owner approves)',
        description:
          'The initiator is the API key\'s device, or for an owner the agent device named by initiator_device_id. Needs a hub identity of trust tier certified (enterprise across tenants, with an active federation agreement).',
        body: Type.Object({
          responder_hub_address: Type.String({ pattern: HUB_ADDRESS_PATTERN, description: 'hub address of the responder (any case)' }),
          initiator_device_id: Type.Optional(Uuid),
          capability: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
        }),
        response: { 201: Requested, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (req, reply) => reply.status(201).send(await a2a.request(actorOf(req), req.body)),
  );

  app.get(
    '/a2a/channels',
    {
      config: { ...ownerOrKey, allowUnregisteredKey: true },
      schema: {
        tags,
        security: ownerOrKeySecurity,
        summary: "List channels: an owner sees its tenant's, an API key its own device's; newest first",
        querystring: Type.Object({ status: Type.Optional(Status) }),
        response: { 200: Type.Object({ channels: Type.Array(Channel) }), ...errorResponses(400, 401, 403) },
      },
    },
    async (req) => ({ channels: unregisteredKeyOnOpenRoute(req) ? [] : await a2a.list(actorOf(req), req.query.status) }),
  );

  app.post(
    '/a2a/channels/:id/approve',
    {
      config: owner,
      schema: { tags, security: ownerSecurity, summary: "Approve a pending channel (the responder's owner)", params: IdParams, response: { 200: Channel, ...errorResponses(400, 401, 403, 404, 409) } },
    },
    async (req) => a2a.approve(ownerOf(req).tenantId, req.params.id, ownerOf(req).sub),
  );

  app.post(
    '/a2a/channels/:id/reject',
    {
      config: owner,
      schema: { tags, security: ownerSecurity, summary: "Reject a pending channel (the responder's owner; terminal)", params: IdParams, response: { 200: Channel, ...errorResponses(400, 401, 403, 404, 409) } },
    },
    async (req) => a2a.reject(ownerOf(req).tenantId, req.params.id, ownerOf(req).sub),
  );

  app.post(
    '/a2a/channels/:id/revoke',
    {
      config: ownerOrKey,
      schema: {
        tags,
        security: ownerOrKeySecurity,
        summary: 'Revoke a pending, approved or active channel (either party; terminal)',
        params: IdParams,
        response: { 200: Channel, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (req) => a2a.revoke(actorOf(req), req.params.id),
  );

  app.post(
    '/a2a/channels/:id/messages',
    {
      config: agent,
      schema: {
        tags,
        security: agentSecurity,
        summary: "Send an encrypted message on an active channel (a party agent); both tenants' policies apply",
        params: IdParams,
        body: Type.Object(A2aMessageFields),
        response: { 201: SendResult, ...errorResponses(400, 401, 403, 404, 409, 413) },
      },
    },
    async (req, reply) => reply.status(201).send(await a2a.send(agentDeviceOf(req), req.params.id, req.body)),
  );

  app.get(
    '/a2a/channels/:id/messages',
    {
      config: agent,
      schema: {
        tags,
        security: agentSecurity,
        summary: 'Channel history for a party agent, oldest first; since = ISO timestamp or next_cursor',
        params: IdParams,
        querystring: Type.Object({ since: PageQuery.since, limit: PageQuery.limit }),
        response: { 200: Type.Object({ messages: Type.Array(A2aMessage), next_cursor: Nullable(Type.String()) }), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => a2a.history(agentDeviceOf(req), req.params.id, req.query),
  );
};
