/**
 * Decision routes (contract §4.15; design §8.19, §8.22): `POST /decisions` (the agent, or the owner
 * on its behalf), `GET /decisions` (owner: awaiting ones, oldest first, paginated),
 * `POST /decisions/{id}/resolve` (owner: approve, deny or defer).
 */
import { ROUTES } from '@parley/protocol';
import type { FastifyPluginAsync } from 'fastify';
import { agentDeviceOf, ownerOf } from '../../http/auth.js';
import { serve } from '../../http/contract.js';
import { auditActor } from '../audit/index.js';
import type { DecisionCreator, DecisionService } from './service.js';

export const decisionRoutes: FastifyPluginAsync<{ decisions: DecisionService }> = async (app, { decisions }) => {
  serve(app, ROUTES.createDecision, async (req, reply) => {
    const p = req.principal;
    let tenantId: string;
    let creator: DecisionCreator;
    if (p?.kind === 'owner') {
      const o = ownerOf(req);
      tenantId = o.tenantId;
      creator = { kind: 'owner', sub: o.sub, deviceId: req.body.device_id };
    } else {
      const a = agentDeviceOf(req);
      tenantId = a.tenantId;
      creator = { kind: 'agent', deviceId: a.deviceId, deviceKind: a.kind, bodyDeviceId: req.body.device_id, actor: auditActor(p!) };
    }
    return reply.status(201).send(await decisions.create(tenantId, creator, req.body));
  });

  serve(app, ROUTES.listDecisions, async (req) => decisions.list(ownerOf(req).tenantId, req.query));

  serve(app, ROUTES.resolveDecision, async (req) => {
    const o = ownerOf(req);
    return decisions.resolve(o.tenantId, o.sub, req.params.id, req.body);
  });
};
