/** Connection routes (SPEC §4.10), owner only. Thin: rules live in service.ts. */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ownerOf } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import { Nullable, Timestamp, Uuid } from '../../http/schemas.js';
import { DeviceOut } from '../devices/routes.js';
import { CONNECTION_TYPES, type ConnectionService } from './service.js';

const ConnectionType = Type.Union(CONNECTION_TYPES.map((t) => Type.Literal(t)));
const Fields = {
  connection_id: Uuid,
  type: ConnectionType,
  status: Type.String({ description: 'devices: PENDING | APPROVED | ACTIVE | REVOKED; A2A channels: SPEC §2.11; agreements: pending | active | revoked | expired' }),
  label: Type.String(),
  peer: Type.Optional(Type.String({ description: "A2A: the other side's hub address; federation: the other tenant's id" })),
  created_at: Timestamp,
  last_seen: Type.Optional(Nullable(Timestamp)),
};
const Connection = Type.Object(Fields);
const A2aChannel = Type.Object({
  channel_id: Uuid,
  direction: Type.Union([Type.Literal('outbound'), Type.Literal('inbound'), Type.Literal('internal')]),
  initiator_hub_address: Type.String(),
  responder_hub_address: Type.String(),
  initiator_device_id: Nullable(Uuid),
  responder_device_id: Nullable(Uuid),
  conversation_id: Nullable(Uuid),
  capability: Nullable(Type.String()),
  agreement_id: Nullable(Uuid),
  approved_at: Nullable(Timestamp),
  activated_at: Nullable(Timestamp),
  closed_at: Nullable(Timestamp),
  closed_reason: Nullable(Type.String()),
});
const Federation = Type.Object({
  agreement_id: Uuid,
  direction: Type.Union([Type.Literal('proposed'), Type.Literal('received')]),
  proposer_tenant_id: Uuid,
  partner_tenant_id: Uuid,
  peer_tenant_name: Nullable(Type.String()),
  trust_floor: Type.Number(),
  allowed_capabilities: Type.Array(Type.String()),
  audit_sharing: Type.Boolean(),
  expires_at: Timestamp,
  accepted_at: Nullable(Timestamp),
  revoked_at: Nullable(Timestamp),
});
const ConnectionDetail = Type.Object({
  ...Fields,
  device: Type.Optional(DeviceOut),
  a2a_channel: Type.Optional(A2aChannel),
  federation: Type.Optional(Federation),
});
const OwnerConnection = Type.Intersect([DeviceOut, Type.Object({ online: Type.Boolean() })]);

const tags = ['connections'];
const security = [{ ownerJwt: [] }];
const owner = { auth: 'owner' as const };

export const connectionRoutes: FastifyPluginAsyncTypebox<{ connections: ConnectionService }> = async (app, { connections }) => {
  app.get(
    '/connections',
    {
      config: owner,
      schema: {
        tags,
        security,
        summary: 'All connections of the tenant: agent devices, A2A channels, federation agreements',
        querystring: Type.Object({ type: Type.Optional(ConnectionType) }),
        response: { 200: Type.Object({ connections: Type.Array(Connection) }), ...errorResponses(400, 401, 403) },
      },
    },
    async (req) => ({ connections: await connections.list(ownerOf(req).tenantId, req.query.type) }),
  );

  app.get(
    '/connections/:connection_id',
    {
      config: owner,
      schema: {
        tags,
        security,
        summary: 'One connection with the details of its type',
        params: Type.Object({ connection_id: Uuid }),
        response: { 200: ConnectionDetail, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => connections.get(ownerOf(req).tenantId, req.params.connection_id),
  );

  app.get(
    '/owner-connections',
    {
      config: owner,
      schema: {
        tags,
        security,
        summary: "The caller's owner devices with health, last_seen and presence",
        response: { 200: Type.Object({ owner_connections: Type.Array(OwnerConnection) }), ...errorResponses(401, 403) },
      },
    },
    async (req) => ({ owner_connections: await connections.ownerConnections(ownerOf(req)) }),
  );
};
