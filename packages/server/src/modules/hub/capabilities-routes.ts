/** Capability routes (contract §2.8, §4.10): list and register an identity's capabilities (owner). */
import { ROUTES } from '@parley/protocol';
import type { FastifyPluginAsync } from 'fastify';
import { ownerOf } from '../../http/auth.js';
import { serve } from '../../http/contract.js';
import type { HubCapabilityService } from './capabilities.js';

export const hubCapabilityRoutes: FastifyPluginAsync<{ capabilities: HubCapabilityService }> = async (app, { capabilities }) => {
  serve(app, ROUTES.listHubCapabilities, async (req) => ({ capabilities: await capabilities.list(ownerOf(req).tenantId, req.params.hub_address) }));

  serve(app, ROUTES.registerHubCapability, async (req, reply) => {
    const o = ownerOf(req);
    return reply.status(201).send(await capabilities.register(o.tenantId, req.params.hub_address, req.body, o.sub));
  });
};
