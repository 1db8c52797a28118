/**
 * Certification route (SPEC §3.3, §4.10; DESIGN §8.16): `POST /hub/identities/{id}/certify` (owner).
 * An upgrade needs a latest 7d score at most max(24 h, 2 × `TRUST_RECOMPUTE_INTERVAL_HOURS`) old
 * (hub/certify.ts `scoreMaxAgeMs`, from the app's configuration).
 */
import { ROUTES } from '@parley/protocol';
import type { FastifyPluginAsync } from 'fastify';
import { ownerOf } from '../../http/auth.js';
import { serve } from '../../http/contract.js';
import { scoreMaxAgeMs, type HubCertifyService } from './certify.js';

export const hubCertifyRoutes: FastifyPluginAsync<{ certify: HubCertifyService }> = async (app, { certify }) => {
  const maxScoreAgeMs = scoreMaxAgeMs(app.parley.config.trustRecomputeIntervalMs);
  serve(app, ROUTES.certifyHubIdentity, async (req) => {
    const owner = ownerOf(req);
    return certify.certify(owner.tenantId, req.params.id, owner.sub, { maxScoreAgeMs });
  });
};
