/**
 * Spend cap routes (docs/decisions.md "Spend caps"), all owner: an agent's caps
 * (`GET/PUT /agents/{hub_id}/spend-cap`), its spend against them (`GET /agents/{hub_id}/spend`) and
 * the fleet's (`GET /spend`). `{hub_id}` is the agent's device id or hub address (design §8.18).
 */
import { ROUTES } from '@parley/protocol';
import type { FastifyPluginAsync } from 'fastify';
import { ownerOf } from '../../http/auth.js';
import { serve } from '../../http/contract.js';
import type { SpendService } from './service.js';

export const spendRoutes: FastifyPluginAsync<{ spend: SpendService }> = async (app, { spend }) => {
  serve(app, ROUTES.getAgentSpendCap, async (req) => spend.getCap(ownerOf(req).tenantId, req.params.hub_id));
  serve(app, ROUTES.setAgentSpendCap, async (req) => {
    const o = ownerOf(req);
    return spend.setCap(o.tenantId, o.sub, req.params.hub_id, req.body);
  });
  serve(app, ROUTES.getAgentSpend, async (req) => spend.agentSpend(ownerOf(req).tenantId, req.params.hub_id));
  serve(app, ROUTES.getFleetSpend, async (req) => spend.fleetSpend(ownerOf(req).tenantId));
};
