/**
 * `GET /verify/{hub_address}` (SPEC §4.11, §8): public, 30/min per IP, 300/min per API key.
 * A malformed address is 400 (it can name no agent); a well-formed unknown one answers 200 with
 * `status: not_found`.
 */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { RateLimitConfig } from '../../config.js';
import { errorResponses } from '../../http/errors.js';
import { routeLimits } from '../../http/rate-limit.js';
import { Nullable, Timestamp } from '../../http/schemas.js';
import { HUB_ADDRESS_PATTERN } from '../hub/service.js';
import { TRUST_DIMENSIONS, TRUST_WINDOWS, VERIFY_STATUSES, type VerificationService } from './service.js';
import { PUBLIC_SECURITY } from '../../http/openapi.js';

/** No credential needed, or any of the three (auth mode `public`). */
const Score = Type.Number({ minimum: 0, maximum: 1 });

const AgentVerificationOut = Type.Object({
  did: Type.String({ description: 'did:hub:<hub_address>' }),
  status: Type.Union(VERIFY_STATUSES.map((s) => Type.Literal(s))),
  trust_tier: Nullable(Type.String({ description: 'unverified | certified | enterprise; null when not_found' })),
  trust_scores: Nullable(
    Type.Object({ composite: Score, ...Object.fromEntries(TRUST_DIMENSIONS.map((d) => [d, Score])) }, { description: "SPEC §2.9 composite and dimensions of the window, the same values GET /trust-scores/{agent_id} answers: the agent's latest snapshot of the window; SPEC §3.9 warm-up values (all 0.5) before the trust engine has scored it" }),
  ),
  window: Type.Union(TRUST_WINDOWS.map((w) => Type.Literal(w))),
  active_grants: Type.Integer({ minimum: 0, description: 'active Skill Permission Tokens of the bound device' }),
  enrolled_at: Nullable(Timestamp),
  last_seen: Nullable(Timestamp),
  last_attestation: Nullable(Timestamp),
});

export const verificationRoutes: FastifyPluginAsyncTypebox<{ verification: VerificationService; rateLimits: RateLimitConfig }> = async (app, { verification, rateLimits }) => {
  app.get(
    '/verify/:hub_address',
    {
      config: { auth: 'public', rateLimit: routeLimits(rateLimits).verify },
      schema: {
        tags: ['credentials'],
        security: PUBLIC_SECURITY,
        summary: 'Verify an agent by hub address (status, tier, trust scores)',
        params: Type.Object({ hub_address: Type.String({ pattern: HUB_ADDRESS_PATTERN, description: 'hub address (DESIGN §8.13), any case' }) }),
        querystring: Type.Object({ window: Type.Optional(Type.Union(TRUST_WINDOWS.map((w) => Type.Literal(w)), { default: '7d' })) }),
        response: { 200: AgentVerificationOut, ...errorResponses(400, 401, 429) },
      },
    },
    async (req) => verification.verifyAgent(req.params.hub_address, req.query.window ?? '7d'),
  );
};
