/**
 * Certification route (contract §3.3, §4.10; design §8.16): `POST /hub/identities/{id}/certify` (owner).
 * An upgrade needs a latest 7d score at most max(24 h, 2 × `TRUST_RECOMPUTE_INTERVAL_HOURS`) old
 * (certify.ts `scoreMaxAgeMs`, from the app's configuration).
 * Operator tier grant (design §8.25): `POST /hub/identities/{id}/tier` (platform operators only,
 * any tenant; operator-tier.ts) and the operators' review list `GET /hub/review` (hub/review.ts).
 * `operatorTier` defaults to a service on the app's database.
 */
import { ROUTES } from '@parley/protocol';
import type { FastifyPluginAsync } from 'fastify';
import { operatorOf, ownerOf } from '../../http/auth.js';
import { serve } from '../../http/contract.js';
import { scoreMaxAgeMs, type HubCertifyService } from './certify.js';
import { OperatorTierService } from './operator-tier.js';
import { reviewIdentities } from '../hub/index.js';

export const hubCertifyRoutes: FastifyPluginAsync<{ certify: HubCertifyService; operatorTier?: OperatorTierService }> = async (app, opts) => {
  const { certify } = opts;
  const operatorTier = opts.operatorTier ?? new OperatorTierService(app.parley.database.db, app.log);
  const maxScoreAgeMs = scoreMaxAgeMs(app.parley.config.trustRecomputeIntervalMs);
  serve(app, ROUTES.certifyHubIdentity, async (req) => {
    const owner = ownerOf(req);
    return certify.certify(owner.tenantId, req.params.id, owner.sub, { maxScoreAgeMs });
  });

  serve(app, ROUTES.grantHubIdentityTier, async (req) => operatorTier.grant(operatorOf(req).sub, req.params.id, req.body));

  serve(app, ROUTES.listHubReview, async (req) => {
    operatorOf(req);
    return reviewIdentities(app.parley.database.db, req.query, app.parley.config.limits);
  });
};
