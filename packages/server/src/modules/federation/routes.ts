/** Federation agreement routes (contract §2.12, §4.13; renew and revoke: docs/decisions.md). */
import { ROUTES } from '@parley/protocol';
import type { FastifyPluginAsync } from 'fastify';
import { ownerOf } from '../../http/auth.js';
import { serve } from '../../http/contract.js';
import type { FederationService } from './service.js';

export const federationRoutes: FastifyPluginAsync<{ federation: FederationService }> = async (app, { federation }) => {
  serve(app, ROUTES.proposeFederation, async (req, reply) => {
    const o = ownerOf(req);
    return reply.status(201).send(await federation.propose(o.tenantId, o.sub, req.body));
  });

  serve(app, ROUTES.listFederationAgreements, async (req) => ({ agreements: await federation.list(ownerOf(req).tenantId) }));

  serve(app, ROUTES.acceptFederation, async (req) => {
    const o = ownerOf(req);
    return federation.accept(o.tenantId, o.sub, req.params.id);
  });

  serve(app, ROUTES.renewFederation, async (req) => {
    const o = ownerOf(req);
    return federation.renew(o.tenantId, req.params.id, req.body.expires_at, o.sub);
  });

  serve(app, ROUTES.revokeFederation, async (req) => {
    const o = ownerOf(req);
    return federation.revoke(o.tenantId, req.params.id, o.sub);
  });
};
