/** Connection routes (SPEC §4.10), owner only. Thin: rules live in service.ts. */
import { ConnectionA2aChannel, ConnectionFederation, ConnectionFields, ConnectionIdParams, ROUTES } from '@parley/protocol';
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ownerOf } from '../../http/auth.js';
import { serve } from '../../http/contract.js';
import { errorResponses } from '../../http/errors.js';
import { DeviceOut } from '../devices/routes.js';
import type { ConnectionService } from './service.js';

// `GET /connections/{connection_id}` and `GET /owner-connections` answer devices (DeviceOut):
// they move into the contract with the devices area.
const ConnectionDetail = Type.Object({
  ...ConnectionFields,
  device: Type.Optional(DeviceOut),
  a2a_channel: Type.Optional(ConnectionA2aChannel),
  federation: Type.Optional(ConnectionFederation),
});
const OwnerConnection = Type.Intersect([DeviceOut, Type.Object({ online: Type.Boolean() })]);

const tags = ['connections'];
const security = [{ ownerJwt: [] }];
const owner = { auth: 'owner' as const };

export const connectionRoutes: FastifyPluginAsyncTypebox<{ connections: ConnectionService }> = async (app, { connections }) => {
  serve(app, ROUTES.listConnections, async (req) => ({ connections: await connections.list(ownerOf(req).tenantId, req.query.type) }));

  app.get(
    '/connections/:connection_id',
    {
      config: owner,
      schema: {
        tags,
        security,
        summary: 'One connection with the details of its type',
        params: ConnectionIdParams,
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
