/**
 * Skill Permission Token and skill policy routes (design §8.6, §8.7): `POST /grants` (agent for
 * itself, or owner on its behalf), `GET /grants` and `POST /grants/{jti}/revoke` (owner),
 * `POST /grants/validate` (public, rate limited like verify), `GET /grants/jwks` (no auth) and
 * `POST /skills/check` and `POST /skills/delegate` (owner, device JWT or API key).
 */
import { ROUTES } from '@parley/protocol';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { RateLimitConfig } from '../../config.js';
import { agentDeviceOf, ownerOf } from '../../http/auth.js';
import { serve } from '../../http/contract.js';
import { routeLimits } from '../../http/rate-limit.js';
import { badRequest } from '../../lib/errors.js';
import type { GrantCaller, GrantService } from './service.js';

/** Largest validate body: a token is well under 8 KiB. */
const VALIDATE_BODY_LIMIT = 16 * 1024;

/** The caller of an `any` route: the owner, or the agent device (device JWT or API key). */
function callerOf(req: FastifyRequest): { tenantId: string; caller: GrantCaller } {
  const p = req.principal;
  if (p?.kind === 'owner') {
    const o = ownerOf(req);
    return { tenantId: o.tenantId, caller: { kind: 'owner', sub: o.sub } };
  }
  const a = agentDeviceOf(req);
  const actor = p?.kind === 'apikey' ? `api_key:${p.apiKeyId}` : `device:${a.deviceId}`;
  return { tenantId: a.tenantId, caller: { kind: 'agent', deviceId: a.deviceId, deviceKind: a.kind, actor } };
}

export const grantRoutes: FastifyPluginAsync<{ grants: GrantService; rateLimits: RateLimitConfig }> = async (app, { grants, rateLimits }) => {
  serve(app, ROUTES.issueGrant, async (req, reply) => {
    const { tenantId, caller } = callerOf(req);
    return reply.status(201).send(await grants.issue(tenantId, caller, req.body));
  });

  serve(app, ROUTES.listGrants, async (req) => grants.list(ownerOf(req).tenantId, req.query));

  serve(app, ROUTES.validateGrant, async (req) => grants.validate(req.body), {
    bodyLimit: VALIDATE_BODY_LIMIT,
    config: { rateLimit: routeLimits(rateLimits).grantValidate },
    // Before the validator, which would coerce a number or null into a string.
    preValidation: async (req) => {
      if (typeof (req.body as { token?: unknown } | undefined)?.token !== 'string') throw badRequest('token must be a string (the SPT)');
    },
  });

  serve(app, ROUTES.getGrantKeys, async () => grants.jwks());

  serve(
    app,
    ROUTES.revokeGrant,
    async (req) => {
      const o = ownerOf(req);
      return grants.revoke(o.tenantId, o.sub, req.params.jti, req.body.reason);
    },
    {
      // The body is optional: a request without one revokes with the default reason.
      preValidation: async (req) => {
        req.body ??= {};
      },
    },
  );

  serve(app, ROUTES.checkSkillPolicy, async (req) => {
    const { tenantId, caller } = callerOf(req);
    return grants.check(tenantId, caller, req.body);
  });

  serve(app, ROUTES.delegateSkill, async (req) => {
    const { tenantId, caller } = callerOf(req);
    return grants.delegate(tenantId, caller, req.body);
  });
};
