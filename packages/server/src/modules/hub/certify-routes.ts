/**
 * Certification route (SPEC §3.3, §4.10; DESIGN §8.16): `POST /hub/identities/{id}/certify` (owner).
 * An upgrade needs a latest 7d score at most max(24 h, 2 × `TRUST_RECOMPUTE_INTERVAL_HOURS`) old
 * (hub/certify.ts `scoreMaxAgeMs`, from the app's configuration).
 */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ownerOf } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import { IdParams, Uuid } from '../../http/schemas.js';
import { scoreMaxAgeMs, type HubCertifyService } from './certify.js';

const CertifyOut = Type.Object({
  identity_id: Uuid,
  tier: Type.String({ description: 'the tier after the run: unverified | certified | enterprise' }),
  upgraded: Type.Boolean({ description: 'true when this run raised the tier' }),
  checks: Type.Array(
    Type.Object({
      check: Type.String({ description: 'owner_key | bound_device | capabilities | activity | trust_score' }),
      passed: Type.Boolean(),
      detail: Type.String(),
    }),
  ),
});

export const hubCertifyRoutes: FastifyPluginAsyncTypebox<{ certify: HubCertifyService }> = async (app, { certify }) => {
  const maxScoreAgeMs = scoreMaxAgeMs(app.parley.config.trustRecomputeIntervalMs);
  app.post(
    '/hub/identities/:id/certify',
    {
      config: { auth: 'owner' },
      schema: {
        tags: ['hub'],
        security: [{ ownerJwt: [] }],
        summary: 'Run the certification checks and raise the trust tier when they pass (answered either way)',
        params: IdParams,
        response: { 200: CertifyOut, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (req) => {
      const owner = ownerOf(req);
      return certify.certify(owner.tenantId, req.params.id, owner.sub, { maxScoreAgeMs });
    },
  );
};
