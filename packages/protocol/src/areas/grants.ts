/**
 * Skill Permission Tokens and the skill policy pipeline (DESIGN §8.6, §8.7; SPEC §3.3, §4.11,
 * §4.19): issue an SPT (the agent for itself, or the owner on its behalf), list and revoke grants,
 * validate a token (public), the SPT verification keys (JWKS) and the skill policy check.
 */
import { Type, type Static } from '@sinclair/typebox';
import { defineRoute } from '../contract.js';
import { lit, Nullable, Timestamp, Uuid } from '../common.js';
import { TrustTier } from './trust.js';

/** The checks of SPT validation (`POST /grants/validate`, DESIGN §8.7), in order. */
export const GRANT_CHECKS = ['signature', 'expiration', 'revocation', 'skill', 'audience'] as const;
/** The checks of SPT validation (DESIGN §8.7). */
export type GrantCheck = (typeof GRANT_CHECKS)[number];

/** The stages of the skill policy pipeline (DESIGN §8.6), in evaluation order. */
export const SKILL_PIPELINE_STAGES = ['identity', 'trust_floor', 'grant', 'rate', 'budget', 'rules'] as const;
/** The stages of the skill policy pipeline (DESIGN §8.6), in order. */
export type SkillPipelineStage = (typeof SKILL_PIPELINE_STAGES)[number];

const Skill = Type.String({ minLength: 1, maxLength: 100, description: 'skill name (as in a policy scope)' });

/** `POST /api/v1/grants` body (DESIGN §8.7): `device_id` is required when an owner issues on the agent's behalf. */
export const IssueGrantRequest = Type.Object({
  skill: Skill,
  device_id: Type.Optional(Type.String({ format: 'uuid', description: 'the agent device; required when an owner issues on its behalf' })),
  audience: Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: 'the `aud` claim; default the service PUBLIC_URL' })),
  ttl_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 86_400, description: 'shortens the lifetime (SPT_TTL_SECONDS, default 900); longer values are capped' })),
});
export type IssueGrantRequest = Static<typeof IssueGrantRequest>;

/** `POST /api/v1/grants` answer (201, DESIGN §8.7): the SPT (compact EdDSA JWS) is returned once and never stored. */
export const IssuedGrant = Type.Object({
  token: Type.String({ description: 'the SPT (compact JWS, EdDSA); returned once, never stored' }),
  jti: Uuid,
  skill: Type.String(),
  tier: TrustTier,
  audience: Type.String(),
  expires_at: Timestamp,
  subject: Type.String({ description: 'the agent DID (`sub`)' }),
  device_id: Uuid,
});
export type IssuedGrant = Static<typeof IssuedGrant>;

/** A stored grant (`GET /grants`, `POST /grants/{jti}/revoke`; DESIGN §8.7), never the token. */
export const Grant = Type.Object({
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
export type Grant = Static<typeof Grant>;

/** `GET /api/v1/grants` query (DESIGN §8.7): `active` true = not revoked nor expired; `limit` 1-200; `cursor` = the previous `next_cursor`. */
export const GrantListQuery = Type.Object({
  device_id: Type.Optional(Uuid),
  active: Type.Optional(Type.Boolean({ description: 'true: not revoked and not expired; false: revoked or expired' })),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'the previous answer’s next_cursor' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
});
export type GrantListQuery = Static<typeof GrantListQuery>;

/** A page of grants, newest first (DESIGN §8.7); `next_cursor` is null on the last page. */
export const GrantPage = Type.Object({ grants: Type.Array(Grant), next_cursor: Nullable(Type.String()) });
export type GrantPage = Static<typeof GrantPage>;

/** `POST /api/v1/grants/{jti}/revoke` body: optional (a request without one revokes with the default reason). */
export const RevokeGrantRequest = Type.Object({ reason: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })) }, { description: 'optional; may be omitted' });
export type RevokeGrantRequest = Static<typeof RevokeGrantRequest>;

/** `{jti}` path parameter. */
export const GrantJtiParams = Type.Object({ jti: Uuid });
export type GrantJtiParams = Static<typeof GrantJtiParams>;

/** `POST /api/v1/grants/validate` body (DESIGN §8.7): `audience` names the validator and must equal the token's `aud` (RFC 7519 §4.1.3). */
export const ValidateGrantRequest = Type.Object({
  token: Type.String({ description: 'the SPT to validate' }),
  skill: Type.Optional(Skill),
  audience: Type.String({ minLength: 1, maxLength: 512, description: 'who validates: must equal the token’s `aud` (required, RFC 7519 §4.1.3)' }),
});
export type ValidateGrantRequest = Static<typeof ValidateGrantRequest>;

/** The claims of a valid-signature SPT (DESIGN §8.7); `iat`/`exp` are NumericDates (seconds). */
export const GrantClaims = Type.Object({
  iss: Type.String(),
  sub: Type.String(),
  skill: Type.String(),
  tier: TrustTier,
  aud: Type.String(),
  jti: Uuid,
  iat: Type.Integer({ description: 'NumericDate (seconds)' }),
  exp: Type.Integer({ description: 'NumericDate (seconds)' }),
});
export type GrantClaims = Static<typeof GrantClaims>;

/** `POST /api/v1/grants/validate` answer (DESIGN §8.7): a failing token answers `valid: false` (HTTP 200); `claims` is absent when the signature does not verify. */
export const GrantValidation = Type.Object({
  valid: Type.Boolean(),
  checks: Type.Array(Type.Object({ check: lit(GRANT_CHECKS), passed: Type.Boolean() })),
  claims: Type.Optional(GrantClaims),
});
export type GrantValidation = Static<typeof GrantValidation>;

/** `GET /api/v1/grants/jwks` (DESIGN §8.7): the SPT verification key(s) as a JWK Set (RFC 7517). */
export const GrantJwks = Type.Object({
  keys: Type.Array(
    Type.Object({ kty: Type.Literal('OKP'), crv: Type.Literal('Ed25519'), x: Type.String(), kid: Type.String(), alg: Type.Literal('EdDSA'), use: Type.Literal('sig') }),
  ),
});
export type GrantJwks = Static<typeof GrantJwks>;

/**
 * `POST /api/v1/skills/check` body (DESIGN §8.6): `device_id` is required when an owner checks on
 * the agent's behalf; `target` (hub address or `did:hub:…`) checks a delegation; `args` are never
 * stored nor evaluated; `spt` presents a token, else an active issued grant is looked up.
 */
export const SkillCheckRequest = Type.Object({
  skill: Skill,
  device_id: Type.Optional(Type.String({ format: 'uuid', description: 'the agent device; required when an owner checks on its behalf' })),
  target: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'delegation: another agent, as a hub address or did:hub:<address>' })),
  tool: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  model: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  args: Type.Optional(Type.Unknown({ description: 'the invocation arguments: accepted, never stored nor evaluated (policies see metadata only)' })),
  spt: Type.Optional(Type.String({ minLength: 1, maxLength: 8192, description: 'a presented SPT; else an active issued grant is looked up' })),
});
export type SkillCheckRequest = Static<typeof SkillCheckRequest>;

const Stage = lit(SKILL_PIPELINE_STAGES);

/** One stage's outcome; `detail` says why (human-readable, never secret). */
export const SkillStageOutcome = Type.Object({ stage: Stage, passed: Type.Boolean(), detail: Type.String() });
export type SkillStageOutcome = Static<typeof SkillStageOutcome>;

/**
 * `POST /api/v1/skills/check` answer (DESIGN §8.6), HTTP 200 whether allowed or not: `decided_by`
 * is the first stage that failed, else the last stage run; `reason` is its detail; `stages` lists
 * the stages run.
 */
export const SkillCheckResult = Type.Object({
  allowed: Type.Boolean(),
  decided_by: Stage,
  reason: Type.String(),
  stages: Type.Array(SkillStageOutcome),
});
export type SkillCheckResult = Static<typeof SkillCheckResult>;

/**
 * `POST /api/v1/skills/delegate` body (SPEC §4.19 `svc_delegate_skill`; DESIGN §8.6): the
 * {@link SkillCheckRequest} fields with `target` required, plus an optional W3C `trace_id`
 * (32 hex, any case, stored lowercase) recorded in the audit event.
 */
export const DelegateSkillRequest = Type.Object({
  ...SkillCheckRequest.properties,
  target: Type.String({ minLength: 1, maxLength: 128, description: 'the agent whose skill is invoked: a hub address or did:hub:<address>' }),
  trace_id: Type.Optional(Type.String({ pattern: '^[0-9a-fA-F]{32}$', description: 'W3C trace-id (32 hex), recorded in the audit event' })),
});
export type DelegateSkillRequest = Static<typeof DelegateSkillRequest>;

/** The delegation target as the answer describes it (public hub facts: address, DID, tier, score). */
export const DelegationTarget = Type.Object({
  hub_address: Type.String(),
  did: Type.String(),
  trust_tier: TrustTier,
  trust_score: Nullable(Type.Number({ description: 'the composite trust score 0-1, null before one was computed' })),
});
export type DelegationTarget = Static<typeof DelegationTarget>;

/**
 * `POST /api/v1/skills/delegate` answer (HTTP 200 whether allowed or not): the pipeline answer of
 * {@link SkillCheckResult}, the new `delegation_id`, the `audit_event_id` of the
 * `skill.delegated` / `skill.delegation_refused` event recorded in the caller's chain, and the
 * target.
 */
export const DelegationResult = Type.Object({
  allowed: Type.Boolean(),
  decided_by: Stage,
  reason: Type.String(),
  stages: Type.Array(SkillStageOutcome),
  delegation_id: Uuid,
  audit_event_id: Uuid,
  target: DelegationTarget,
});
export type DelegationResult = Static<typeof DelegationResult>;

const tags = ['grants'];

/** Route rows of this area. */
export const grantsRoutes = {
  issueGrant: defineRoute({
    method: 'POST',
    path: '/api/v1/grants',
    auth: 'any',
    tags,
    summary: 'Issue a Skill Permission Token: the agent for itself (certified tier and up) or the owner on its behalf (any tier)',
    body: IssueGrantRequest,
    responses: { 201: IssuedGrant },
    errors: [400, 401, 403, 404],
  }),
  listGrants: defineRoute({
    method: 'GET',
    path: '/api/v1/grants',
    auth: 'owner',
    tags,
    summary: 'List the tenant’s issued grants, newest first (never the tokens)',
    query: GrantListQuery,
    responses: { 200: GrantPage },
    errors: [400, 401, 403],
  }),
  validateGrant: defineRoute({
    method: 'POST',
    path: '/api/v1/grants/validate',
    auth: 'public',
    tags,
    summary: 'Validate an SPT (signature, expiration, revocation, skill, audience)',
    description: 'A token that fails a check answers 200 with valid: false; a body whose token is not a string, or without audience, is 400.',
    body: ValidateGrantRequest,
    responses: { 200: GrantValidation },
    errors: [400, 401, 413, 429],
  }),
  getGrantKeys: defineRoute({
    method: 'GET',
    path: '/api/v1/grants/jwks',
    auth: 'none',
    tags,
    summary: 'The SPT verification key as a JSON Web Key Set (RFC 7517)',
    responses: { 200: GrantJwks },
    errors: [],
  }),
  revokeGrant: defineRoute({
    method: 'POST',
    path: '/api/v1/grants/{jti}/revoke',
    auth: 'owner',
    tags,
    summary: 'Revoke a grant (it then fails the revocation check)',
    params: GrantJtiParams,
    body: RevokeGrantRequest,
    responses: { 200: Grant },
    errors: [400, 401, 403, 404, 409],
  }),
  checkSkillPolicy: defineRoute({
    method: 'POST',
    path: '/api/v1/skills/check',
    auth: 'any',
    tags,
    summary: 'Check a skill invocation against the policy pipeline: identity, trust_floor, grant, rate, budget, rules',
    description: 'Answers 200 whether allowed or not; with `target` (delegation) identity and trust floor are the target’s.',
    body: SkillCheckRequest,
    responses: { 200: SkillCheckResult },
    errors: [400, 401, 403, 404],
  }),
  delegateSkill: defineRoute({
    method: 'POST',
    path: '/api/v1/skills/delegate',
    auth: 'any',
    tags,
    summary: 'Delegate a skill invocation to another agent: the policy pipeline of /skills/check, audited as skill.delegated or skill.delegation_refused',
    description: 'Answers 200 whether allowed or not (a refusal is recorded in the audit chain too); 404 when no hub identity has the target address.',
    body: DelegateSkillRequest,
    responses: { 200: DelegationResult },
    errors: [400, 401, 403, 404],
  }),
};
