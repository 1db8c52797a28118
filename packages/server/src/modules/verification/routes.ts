/**
 * `GET /verify/{hub_address}` (contract §4.11, §8): public, 30/min per IP, 300/min per API key.
 * A malformed address is 400 (it can name no agent); a well-formed unknown one answers 200 with
 * `status: not_found`.
 */
import { ROUTES } from '@parley/protocol';
import type { FastifyPluginAsync } from 'fastify';
import type { RateLimitConfig } from '../../config.js';
import { serve } from '../../http/contract.js';
import { routeLimits } from '../../http/rate-limit.js';
import type { VerificationService } from './service.js';

export const verificationRoutes: FastifyPluginAsync<{ verification: VerificationService; rateLimits: RateLimitConfig }> = async (app, { verification, rateLimits }) => {
  serve(app, ROUTES.verifyAgent, async (req) => verification.verifyAgent(req.params.hub_address, req.query.window ?? '7d'), {
    config: { rateLimit: routeLimits(rateLimits).verify },
  });
};
