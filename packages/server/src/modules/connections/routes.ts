/** Connection routes (contract §4.10), owner only. Thin: rules live in service.ts. */
import { ROUTES } from '@parley/protocol';
import type { FastifyPluginAsync } from 'fastify';
import { ownerOf } from '../../http/auth.js';
import { serve } from '../../http/contract.js';
import type { ConnectionService } from './service.js';

export const connectionRoutes: FastifyPluginAsync<{ connections: ConnectionService }> = async (app, { connections }) => {
  serve(app, ROUTES.listConnections, async (req) => ({ connections: await connections.list(ownerOf(req).tenantId, req.query.type) }));

  serve(app, ROUTES.getConnection, async (req) => connections.get(ownerOf(req).tenantId, req.params.connection_id));

  serve(app, ROUTES.ownerConnections, async (req) => ({ owner_connections: await connections.ownerConnections(ownerOf(req)) }));
};
