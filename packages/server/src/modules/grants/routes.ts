/**
 * Skill Permission Token and skill policy routes (DESIGN §8.6, §8.7): `POST /grants` (agent for
 * itself, or owner on its behalf), `GET /grants` and `POST /grants/{jti}/revoke` (owner),
 * `POST /grants/validate` (public, rate limited like verify), `GET /grants/jwks` (no auth) and
 * `POST /skills/check` (owner, device JWT or API key).
 */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { RateLimitConfig } from '../../config.js';
import { agentDeviceOf, ownerOf } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import { badRequest } from '../../lib/errors.js';
import { PUBLIC_SECURITY } from '../../http/openapi.js';
import { routeLimits } from '../../http/rate-limit.js';
import { Nullable, Timestamp, Uuid } from '../../http/schemas.js';
import { TIERS } from '../trust/types.js';
import { PIPELINE_STAGES } from './pipeline.js';
import { GRANT_CHECKS, type GrantCaller, type GrantService } from './service.js';

const lit = <T extends string>(values: readonly T[]) => Type.Union(values.map((v) => Type.Literal(v)));

const Skill = Type.String({ minLength: 1, maxLength: 100, description: 'skill name (as in a policy scope)' });
const Tier = lit(TIERS);
const IssueBody = Type.Object({
  skill: Skill,
  device_id: Type.Optional(Type.String({ format: 'uuid', description: 'the agent device; required when an owner issues on its behalf' })),
  audience: Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: 'the `aud` claim; default the service PUBLIC_URL' })),
  ttl_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 86_400, description: 'shortens the lifetime (SPT_TTL_SECONDS, default 900); longer values are capped' })),
});
const IssuedOut = Type.Object({
  token: Type.String({ description: 'the SPT (compact JWS, EdDSA); returned once, never stored' }),
  jti: Uuid,
  skill: Type.String(),
  tier: Tier,
  audience: Type.String(),
  expires_at: Timestamp,
  subject: Type.String({ description: 'the agent DID (`sub`)' }),
  device_id: Uuid,
});
const GrantOut = Type.Object({
  jti: Uuid,
  device_id: Uuid,
  subject: Type.String(),
  skill: Type.String(),
  tier: Type.String(),
  audience: Type.String(),
  issued_by: Type.String({ description: 'owner subject, device:<id> or api_key:<id>' }),
  issued_at: Timestamp,
  expires_at: Timestamp,
  revoked_at: Nullable(Timestamp),
  revoked_reason: Nullable(Type.String()),
  active: Type.Boolean({ description: 'not revoked and not expired' }),
});
const ClaimsOut = Type.Object({
  iss: Type.String(),
  sub: Type.String(),
  skill: Type.String(),
  tier: Tier,
  aud: Type.String(),
  jti: Uuid,
  iat: Type.Integer({ description: 'NumericDate (seconds)' }),
  exp: Type.Integer({ description: 'NumericDate (seconds)' }),
});
const ValidateBody = Type.Object({
  token: Type.String({ description: 'the SPT to validate' }),
  skill: Type.Optional(Skill),
  audience: Type.String({ minLength: 1, maxLength: 512, description: 'who validates: must equal the token’s `aud` (required, RFC 7519 §4.1.3)' }),
});
const ValidateOut = Type.Object({
  valid: Type.Boolean(),
  checks: Type.Array(Type.Object({ check: lit(GRANT_CHECKS), passed: Type.Boolean() })),
  claims: Type.Optional(ClaimsOut),
});
const Jwks = Type.Object({
  keys: Type.Array(
    Type.Object({ kty: Type.Literal('OKP'), crv: Type.Literal('Ed25519'), x: Type.String(), kid: Type.String(), alg: Type.Literal('EdDSA'), use: Type.Literal('sig') }),
  ),
});
const CheckBody = Type.Object({
  skill: Skill,
  device_id: Type.Optional(Type.String({ format: 'uuid', description: 'the agent device; required when an owner checks on its behalf' })),
  target: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'delegation: another agent, as a hub address or did:hub:<address>' })),
  tool: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  model: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  args: Type.Optional(Type.Unknown({ description: 'the invocation arguments: accepted, never stored nor evaluated (policies see metadata only)' })),
  spt: Type.Optional(Type.String({ minLength: 1, maxLength: 8192, description: 'a presented SPT; else an active issued grant is looked up' })),
});
const Stage = lit(PIPELINE_STAGES);
const CheckOut = Type.Object({
  allowed: Type.Boolean(),
  decided_by: Stage,
  reason: Type.String(),
  stages: Type.Array(Type.Object({ stage: Stage, passed: Type.Boolean(), detail: Type.String() })),
});
const JtiParams = Type.Object({ jti: Uuid });

const tags = ['grants'];
const ownerSecurity = [{ ownerJwt: [] }];
const anySecurity: Record<string, string[]>[] = [{ ownerJwt: [] }, { deviceJwt: [] }, { apiKey: [] }];
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

export const grantRoutes: FastifyPluginAsyncTypebox<{ grants: GrantService; rateLimits: RateLimitConfig }> = async (app, { grants, rateLimits }) => {
  app.post(
    '/grants',
    {
      config: { auth: 'any' },
      schema: {
        tags,
        security: anySecurity,
        summary: 'Issue a Skill Permission Token: the agent for itself (certified tier and up) or the owner on its behalf (any tier)',
        body: IssueBody,
        response: { 201: IssuedOut, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req, reply) => {
      const { tenantId, caller } = callerOf(req);
      return reply.status(201).send(await grants.issue(tenantId, caller, req.body));
    },
  );

  app.get(
    '/grants',
    {
      config: { auth: 'owner' },
      schema: {
        tags,
        security: ownerSecurity,
        summary: 'List the tenant’s issued grants, newest first (never the tokens)',
        querystring: Type.Object({
          device_id: Type.Optional(Uuid),
          active: Type.Optional(Type.Boolean({ description: 'true: not revoked and not expired; false: revoked or expired' })),
          cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'the previous answer’s next_cursor' })),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
        }),
        response: { 200: Type.Object({ grants: Type.Array(GrantOut), next_cursor: Nullable(Type.String()) }), ...errorResponses(400, 401, 403) },
      },
    },
    async (req) => grants.list(ownerOf(req).tenantId, req.query),
  );

  app.post(
    '/grants/validate',
    {
      bodyLimit: VALIDATE_BODY_LIMIT,
      config: { auth: 'public', rateLimit: routeLimits(rateLimits).grantValidate },
      // Before the validator, which would coerce a number or null into a string.
      preValidation: async (req) => {
        if (typeof (req.body as { token?: unknown } | undefined)?.token !== 'string') throw badRequest('token must be a string (the SPT)');
      },
      schema: {
        tags,
        security: PUBLIC_SECURITY,
        summary: 'Validate an SPT (signature, expiration, revocation, skill, audience)',
        description: 'A token that fails a check answers 200 with valid: false; a body whose token is not a string, or without audience, is 400.',
        body: ValidateBody,
        response: { 200: ValidateOut, ...errorResponses(400, 401, 413, 429) },
      },
    },
    async (req) => grants.validate(req.body),
  );

  app.get(
    '/grants/jwks',
    {
      schema: {
        tags,
        summary: 'The SPT verification key as a JSON Web Key Set (RFC 7517)',
        response: { 200: Jwks },
      },
    },
    async () => grants.jwks(),
  );

  app.post(
    '/grants/:jti/revoke',
    {
      config: { auth: 'owner' },
      // The body is optional: a request without one revokes with the default reason.
      preValidation: async (req) => {
        req.body ??= {};
      },
      schema: {
        tags,
        security: ownerSecurity,
        summary: 'Revoke a grant (it then fails the revocation check)',
        params: JtiParams,
        body: Type.Object({ reason: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })) }, { description: 'optional; may be omitted' }),
        response: { 200: GrantOut, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (req) => {
      const o = ownerOf(req);
      return grants.revoke(o.tenantId, o.sub, req.params.jti, req.body.reason);
    },
  );

  app.post(
    '/skills/check',
    {
      config: { auth: 'any' },
      schema: {
        tags,
        security: anySecurity,
        summary: 'Check a skill invocation against the policy pipeline: identity, trust_floor, grant, rate, rules',
        description: 'Answers 200 whether allowed or not; with `target` (delegation) identity and trust floor are the target’s.',
        body: CheckBody,
        response: { 200: CheckOut, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const { tenantId, caller } = callerOf(req);
      return grants.check(tenantId, caller, req.body);
    },
  );
};
