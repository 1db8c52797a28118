/**
 * Skill Permission Tokens and the skill policy pipeline (design §8.6, §8.7; contract §3.3, §4.11,
 * §4.19): issue an SPT (the agent for itself, or the owner on its behalf), list and revoke grants,
 * validate a token (public), the SPT verification keys (JWKS) and the skill policy check.
 */
import { Type, type Static } from '@sinclair/typebox';
import { defineRoute } from '../contract.js';
import { lit, Nullable, Timestamp, Uuid } from '../common.js';
import { TrustTier } from './trust.js';
import { CursorPaging, Page } from '../paging.js';

/** The checks of SPT validation (`POST /grants/validate`, design §8.7), in order. */
export const GRANT_CHECKS = ['signature', 'expiration', 'revocation', 'skill', 'audience'] as const;
/** The checks of SPT validation (design §8.7). */
export type GrantCheck = (typeof GRANT_CHECKS)[number];

/** The stages of the skill policy pipeline (design §8.6), in evaluation order. */
export const SKILL_PIPELINE_STAGES = ['identity', 'trust_floor', 'grant', 'rate', 'budget', 'rules'] as const;
/** The stages of the skill policy pipeline (design §8.6), in order. */
export type SkillPipelineStage = (typeof SKILL_PIPELINE_STAGES)[number];

const Skill = Type.String({ minLength: 1, maxLength: 100, description: 'skill name (as in a policy scope)' });

/** `POST /api/v1/grants` body (design §8.7): `device_id` is required when an owner issues on the agent's behalf. */
export const IssueGrantRequest = Type.Object({
  skill: Skill,
  device_id: Type.Optional(Type.String({ format: 'uuid', description: 'the agent device; required when an owner issues on its behalf' })),
  audience: Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: 'the `aud` claim; default the service PUBLIC_URL' })),
  ttl_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 86_400, description: 'shortens the lifetime (SPT_TTL_SECONDS, default 900); longer values are capped' })),
});
export type IssueGrantRequest = Static<typeof IssueGrantRequest>;

/** `POST /api/v1/grants` answer (201, design §8.7): the SPT (compact EdDSA JWS) is returned once and never stored. */
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

/** A stored grant (`GET /grants`, `POST /grants/{jti}/revoke`; design §8.7), never the token. */
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

/** `GET /api/v1/grants` query (design §8.7): `active` true = not revoked nor expired; `limit` 1-200; `cursor` = the previous `next_cursor`. */
export const GrantListQuery = Type.Object({
  device_id: Type.Optional(Uuid),
  active: Type.Optional(Type.Boolean({ description: 'true: not revoked and not expired; false: revoked or expired' })),
  ...CursorPaging({ maxLength: 64, description: 'the previous answer’s next_cursor' }),
});
export type GrantListQuery = Static<typeof GrantListQuery>;

/** A page of grants, newest first (design §8.7); `next_cursor` is null on the last page. */
export const GrantPage = Page('grants', Grant);
export type GrantPage = Static<typeof GrantPage>;

/** `POST /api/v1/grants/{jti}/revoke` body: optional (a request without one revokes with the default reason). */
export const RevokeGrantRequest = Type.Object({ reason: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })) }, { description: 'optional; may be omitted' });
export type RevokeGrantRequest = Static<typeof RevokeGrantRequest>;

/** `{jti}` path parameter. */
export const GrantJtiParams = Type.Object({ jti: Uuid });
export type GrantJtiParams = Static<typeof GrantJtiParams>;

/** `POST /api/v1/grants/validate` body (design §8.7): `audience` names the validator and must equal the token's `aud` (RFC 7519 §4.1.3). */
export const ValidateGrantRequest = Type.Object({
  token: Type.String({ description: 'the SPT to validate' }),
  skill: Type.Optional(Skill),
  audience: Type.String({ minLength: 1, maxLength: 512, description: 'who validates: must equal the token’s `aud` (required, RFC 7519 §4.1.3)' }),
});
export type ValidateGrantRequest = Static<typeof ValidateGrantRequest>;

/** The claims of a valid-signature SPT (design §8.7); `iat`/`exp` are NumericDates (seconds). */
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

/** `POST /api/v1/grants/validate` answer (design §8.7): a failing token answers `valid: false` (HTTP 200); `claims` is absent when the signature does not verify. */
export const GrantValidation = Type.Object({
  valid: Type.Boolean(),
  checks: Type.Array(Type.Object({ check: lit(GRANT_CHECKS), passed: Type.Boolean() })),
  claims: Type.Optional(GrantClaims),
});
export type GrantValidation = Static<typeof GrantValidation>;

/** `GET /api/v1/grants/jwks` (design §8.7): the SPT verification key(s) as a JWK Set (RFC 7517). */
export const GrantJwks = Type.Object({
  keys: Type.Array(
    Type.Object({ kty: Type.Literal('OKP'), crv: Type.Literal('Ed25519'), x: Type.String(), kid: Type.String(), alg: Type.Literal('EdDSA'), use: Type.Literal('sig') }),
  ),
});
export type GrantJwks = Static<typeof GrantJwks>;

/**
 * `POST /api/v1/skills/check` body (design §8.6): `device_id` is required when an owner checks on
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
 * `POST /api/v1/skills/check` answer (design §8.6), HTTP 200 whether allowed or not: `decided_by`
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
 * `POST /api/v1/skills/delegate` body (contract §4.19 `svc_delegate_skill`; design §8.6): the
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
    description:
      'Issues a Skill Permission Token (an EdDSA-signed JWT) allowing an agent to invoke `skill` for `audience` (default this service\'s URL) until it expires (`ttl_seconds`, at most `SPT_TTL_SECONDS`, 900 by default). The agent is the caller itself (device JWT or API key), or for an owner the agent device named in `device_id`. The policy pipeline runs first (identity, trust floor, rules); an agent issuing for itself needs tier `certified` or higher, while an owner\'s issue is the manual approval any tier may get. Recorded with `grant.issued` (never the token); answers 201 with the token, once. 400 when an owner names no `device_id`, or it is not an agent device. 403 when the pipeline refuses (the detail names the stage and reason), an agent below `certified` issues for itself, or an agent names another device, the caller uses an owner device\'s JWT, or the API key has not registered key material. 404 when the device is not in the tenant.',
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
    description:
      'The tenant\'s issued grants, newest first, optionally of one agent (`device_id`) or only active (`active=true`) or ended ones, paged by `cursor` and `limit`: jti, subject, skill, tier, audience, issuer, issue and expiry times and revocation. Tokens themselves are never listed. 400 when `cursor` is malformed.',
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
    description:
      'Validates a Skill Permission Token for a relying party that knows no tenant: signature (against the keys of `GET /grants/jwks`), expiration, revocation (also in effect once the agent\'s device is no longer ACTIVE or its hub identity is suspended), the `skill` asked about and the `audience`, which the caller must name. A token that fails a check answers 200 with `valid: false` and each check\'s result. 400 when `token` is not a string or `audience` is missing. 413 when the body is larger than 16 KiB. 429 also beyond 30 requests per minute per IP, or 300 per minute with an API key (configurable).',
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
    description:
      'The JSON Web Key Set (RFC 7517) of the Ed25519 keys that sign Skill Permission Tokens (the active key and those not yet retired), so relying parties can verify tokens offline.',
    responses: { 200: GrantJwks },
    errors: [],
  }),
  revokeGrant: defineRoute({
    method: 'POST',
    path: '/api/v1/grants/{jti}/revoke',
    auth: 'owner',
    tags,
    summary: 'Revoke a grant (it then fails the revocation check)',
    description:
      'Puts a grant on the revocation list with an optional `reason` (a missing body revokes with the default reason): validation then fails its revocation check. Audited as `grant.revoked`; answers the grant. 404 when no grant of the tenant has this `jti`. 409 when it is already revoked.',
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
    description:
      'Runs the skill policy pipeline for an invocation without performing it: identity, trust floor, grant, rate, budget (spend caps) and rules, and answers 200 whether allowed or not, with the stage that decided and why. The agent is the caller itself (device JWT or API key), or for an owner the agent device named in `device_id`. With `target` (a hub address or `did:hub:`), delegation mode: identity and trust floor are the target\'s. 400 when an owner names no `device_id`, or it is not an agent device, `target` is malformed or names the caller. 403 when an agent names another device, the caller uses an owner device\'s JWT, or the API key has not registered key material. 404 when the device is not in the tenant.',
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
    description:
      'Delegates a skill invocation to the agent behind `target`: the pipeline of `POST /skills/check` in delegation mode, then `skill.delegated` or `skill.delegation_refused` is recorded in the caller\'s audit chain in the same transaction. Answers 200 either way with a new `delegation_id`, the audit event id and the target\'s public hub facts. The agent is the caller itself (device JWT or API key), or for an owner the agent device named in `device_id`. 400 when an owner names no `device_id`, or it is not an agent device, `target` is malformed or names the caller, or `trace_id` is all zeros. 403 when an agent names another device, the caller uses an owner device\'s JWT, or the API key has not registered key material. 404 when no hub identity has the target address, or the device is not in the tenant.',
    body: DelegateSkillRequest,
    responses: { 200: DelegationResult },
    errors: [400, 401, 403, 404],
  }),
};
