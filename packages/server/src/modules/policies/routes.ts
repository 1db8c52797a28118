/**
 * Policy and held-message routes (contract §4.9; design §8.3, §8.5), all for the owner JWT.
 * `/policies/held-messages` is a static path; `/policies/{id}` takes UUIDs only.
 */
import { ROUTES } from '@parley/protocol';
import type { FastifyPluginAsync } from 'fastify';
import { ownerOf } from '../../http/auth.js';
import { serve } from '../../http/contract.js';
import type { PolicyService } from './service.js';

export const policyRoutes: FastifyPluginAsync<{ policies: PolicyService }> = async (app, { policies }) => {
  serve(app, ROUTES.createPolicy, async (req, reply) => {
    const o = ownerOf(req);
    return reply.status(201).send(await policies.create(o.tenantId, req.body, o.sub));
  });

  serve(app, ROUTES.listPolicies, async (req) => ({ policies: await policies.list(ownerOf(req).tenantId) }));

  serve(app, ROUTES.updatePolicy, async (req) => {
    const o = ownerOf(req);
    return policies.update(o.tenantId, req.params.id, req.body, o.sub);
  });

  serve(app, ROUTES.deletePolicy, async (req, reply) => {
    const o = ownerOf(req);
    await policies.delete(o.tenantId, req.params.id, o.sub);
    return reply.status(204).send(null);
  });

  serve(app, ROUTES.listHeldMessages, async (req) => ({ held_messages: await policies.listHeld(ownerOf(req).tenantId, req.query.status ? { status: req.query.status } : {}) }));

  serve(app, ROUTES.approveHeldMessage, async (req) => {
    const o = ownerOf(req);
    return policies.approve(o.tenantId, o.sub, req.params.id);
  });

  serve(app, ROUTES.denyHeldMessage, async (req) => {
    const o = ownerOf(req);
    return policies.deny(o.tenantId, o.sub, req.params.id);
  });
};
