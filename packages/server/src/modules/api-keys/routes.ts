/**
 * API key routes (contract §4.8; design §8.17: `POST /api-keys {name, env}`, env default dev) and
 * agent self-registration (`POST /hub/agents`, contract §4.19 `svc_register_agent`: owner or API key).
 */
import { ROUTES } from '@parley/protocol';
import type { FastifyPluginAsync } from 'fastify';
import { apiKeyOf, ownerOf } from '../../http/auth.js';
import { serve } from '../../http/contract.js';
import type { AgentRegistrar } from './agent-registration.js';
import type { ApiKeyService } from './service.js';

export const apiKeyRoutes: FastifyPluginAsync<{ apiKeys: ApiKeyService }> = async (app, { apiKeys }) => {
  serve(app, ROUTES.createApiKey, async (req, reply) => {
    const o = ownerOf(req);
    return reply.status(201).send(await apiKeys.create(o.tenantId, o.sub, req.body.name, req.body.env));
  });

  serve(app, ROUTES.listApiKeys, async (req) => ({ api_keys: await apiKeys.list(ownerOf(req).tenantId) }));

  serve(app, ROUTES.revokeApiKey, async (req) => {
    const o = ownerOf(req);
    return apiKeys.revoke(o.tenantId, req.params.id, o.sub);
  });

  serve(app, ROUTES.rotateApiKey, async (req) => {
    const o = ownerOf(req);
    return apiKeys.rotate(o.tenantId, o.sub, req.params.id);
  });

  serve(app, ROUTES.deleteApiKey, async (req, reply) => {
    const o = ownerOf(req);
    await apiKeys.delete(o.tenantId, req.params.id, o.sub);
    return reply.status(204).send(null);
  });

  serve(app, ROUTES.registerAgent, async (req, reply) => {
    let caller: AgentRegistrar;
    if (req.principal?.kind === 'owner') {
      const o = ownerOf(req);
      caller = { tenantId: o.tenantId, actor: o.sub, apiKeyId: null };
    } else {
      const k = apiKeyOf(req);
      caller = { tenantId: k.tenantId, actor: `api_key:${k.apiKeyId}`, apiKeyId: k.apiKeyId };
    }
    return reply.status(201).send(await apiKeys.registerAgent(caller, req.body));
  });
};
