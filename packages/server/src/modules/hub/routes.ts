/** Hub identity routes (contract §4.10, address registry part; design §8.13, §8.15, §8.18). */
import { ROUTES } from '@parley/protocol';
import type { FastifyPluginAsync } from 'fastify';
import { ownerOf } from '../../http/auth.js';
import { serve } from '../../http/contract.js';
import type { HubService } from './service.js';

export const hubRoutes: FastifyPluginAsync<{ hub: HubService }> = async (app, { hub }) => {
  for (const row of [ROUTES.registerHub, ROUTES.createHubIdentity]) {
    serve(app, row, async (req, reply) => {
      const o = ownerOf(req);
      return reply.status(201).send(await hub.register(o.tenantId, o.sub, req.body));
    });
  }

  serve(app, ROUTES.listHubIdentities, async (req) => ({ identities: await hub.list(ownerOf(req).tenantId) }));

  serve(app, ROUTES.getHubIdentity, async (req) => hub.get(ownerOf(req).tenantId, req.params.id));
};
