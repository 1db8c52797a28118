/**
 * Credential routes (contract §2.10, §4.11; design §8.16): issuance of TrustTierCredentials to
 * certified identities, their revocation by the issuing tenant, public verification of any
 * credential, and the service's JSON-LD trust context ({@link trustContextRoutes}, at the root).
 */
import { ROUTES, VERIFY_BODY_LIMIT } from '@parley/protocol';
import type { FastifyPluginAsync } from 'fastify';
import type { RateLimitConfig } from '../../config.js';
import { ownerOf } from '../../http/auth.js';
import { serve } from '../../http/contract.js';
import { routeLimits } from '../../http/rate-limit.js';
import { trustContext } from './contexts.js';
import type { CredentialService } from './service.js';
import type { CredentialVerifier } from './verifier.js';

export interface CredentialRouteOptions {
  credentials: CredentialService;
  verifier: CredentialVerifier;
  rateLimits: RateLimitConfig;
}

/** Issuance, revocation and verification; mounted under `/api/v1`. */
export const credentialRoutes: FastifyPluginAsync<CredentialRouteOptions> = async (app, { credentials, verifier, rateLimits }) => {
  serve(app, ROUTES.issueCredential, async (req, reply) => {
    const o = ownerOf(req);
    return reply.status(201).send(await credentials.issue(o.tenantId, req.params.id, o.sub));
  });

  serve(app, ROUTES.revokeCredential, async (req) => {
    const o = ownerOf(req);
    return credentials.revoke(o.tenantId, req.params.id, o.sub);
  });

  serve(app, ROUTES.verifyCredential, async (req) => verifier.verify(req.body.credential), {
    bodyLimit: VERIFY_BODY_LIMIT,
    config: { rateLimit: routeLimits(rateLimits).verify },
  });
};

/** `GET /contexts/trust/v1`: the service vocabulary context (public); mounted at the root. */
export const trustContextRoutes: FastifyPluginAsync<{ trustContextUrl: string }> = async (app, { trustContextUrl }) => {
  const document = trustContext(trustContextUrl);
  serve(app, ROUTES.trustContext, async (_req, reply) => reply.header('content-type', 'application/ld+json').header('cache-control', 'public, max-age=86400').send(document));
};
