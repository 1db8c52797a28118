/**
 * Shadow sessions (contract §2.14, §3.4, §4.17; design §8.8, §8.20): an owner evaluates one agent on
 * one skill and decision class by recording, next to each human decision, what the agent
 * recommended; graduation (shadow → supervised → autonomous) needs all three gates; demotion to
 * any lower level at any time. All routes are owner JWT.
 */
import { Type, type Static } from '@sinclair/typebox';
import { defineRoute } from '../contract.js';
import { lit, Nullable, refuseUnknownKeys, Timestamp, Uuid } from '../common.js';
import { CursorPaging, Page } from '../paging.js';

/** Autonomy levels, lowest first (contract §2.14, §3.4). */
export const SHADOW_LEVELS = ['shadow', 'supervised', 'autonomous'] as const;
/** Autonomy levels of a shadow session, lowest first (contract §2.14). */
export const ShadowLevel = lit(SHADOW_LEVELS);
export type ShadowLevel = Static<typeof ShadowLevel>;

/** Session configuration defaults (design §8.8). */
export const SHADOW_DEFAULT_CONFIG = Object.freeze({ min_observations: 50, agreement_threshold: 0.9, critical_miss_window_hours: 168 } as const);

const Name = (description: string) => Type.String({ minLength: 1, maxLength: 200, description });
const Action = Type.String({ minLength: 1, maxLength: 200, description: 'compared with the other side after trimming, case-insensitively' });

/** Shadow session configuration (contract §2.14): a count, a 0..1 ratio and hours. */
export const ShadowConfig = Type.Object({ min_observations: Type.Integer(), agreement_threshold: Type.Number(), critical_miss_window_hours: Type.Number() });
export type ShadowConfig = Static<typeof ShadowConfig>;

/** The `config` of a new session: unset keys take {@link SHADOW_DEFAULT_CONFIG}; an unknown key is a 400. */
export const ShadowConfigInput = refuseUnknownKeys(
  Type.Object(
    {
      min_observations: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, description: `default ${SHADOW_DEFAULT_CONFIG.min_observations}` })),
      agreement_threshold: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: `default ${SHADOW_DEFAULT_CONFIG.agreement_threshold}` })),
      critical_miss_window_hours: Type.Optional(
        Type.Number({ exclusiveMinimum: 0, maximum: 87_600, description: `hours, default ${SHADOW_DEFAULT_CONFIG.critical_miss_window_hours}` }),
      ),
    },
    { additionalProperties: false },
  ),
);
export type ShadowConfigInput = Static<typeof ShadowConfigInput>;

/** Evidence of the current level: observations recorded at it since `level_since` (contract §2.14); `agreement_rate` is 0 without observations. */
export const ShadowStats = Type.Object(
  { observations: Type.Integer(), agreed: Type.Integer(), agreement_rate: Type.Number(), critical_misses: Type.Integer() },
  { description: 'evidence of the current level: observations recorded at it since level_since' },
);
export type ShadowStats = Static<typeof ShadowStats>;

/** A shadow session (contract §2.14, §4.17; design §8.8), as answered by every session route. */
export const ShadowSession = Type.Object({
  session_id: Uuid,
  device_id: Uuid,
  skill_name: Type.String(),
  decision_class: Type.String(),
  config: ShadowConfig,
  level: ShadowLevel,
  level_since: Timestamp,
  created_at: Timestamp,
  stats: ShadowStats,
});
export type ShadowSession = Static<typeof ShadowSession>;

/** `POST /api/v1/shadow/sessions` body (contract §4.17): unset config keys take the service defaults. */
export const CreateShadowSessionRequest = Type.Object({
  device_id: Uuid,
  skill_name: Name('the capability evaluated'),
  decision_class: Name('the type of decision'),
  config: Type.Optional(ShadowConfigInput),
});
export type CreateShadowSessionRequest = Static<typeof CreateShadowSessionRequest>;

/** `GET /api/v1/shadow/sessions` query (contract §4.17): `limit` 1-200; `cursor` = the previous `next_cursor`. */
export const ShadowSessionListQuery = Type.Object({
  device_id: Type.Optional(Uuid),
  level: Type.Optional(ShadowLevel),
  ...CursorPaging({ maxLength: 64, description: 'the previous answer’s next_cursor' }),
});
export type ShadowSessionListQuery = Static<typeof ShadowSessionListQuery>;

/** A page of shadow sessions, oldest first; `next_cursor` is null on the last page. */
export const ShadowSessionPage = Page('sessions', ShadowSession);
export type ShadowSessionPage = Static<typeof ShadowSessionPage>;

/**
 * `POST /api/v1/shadow/sessions/{session_id}/record-human-decision` body (contract §4.17; design §8.8):
 * the actions are compared after trimming, case-insensitively; `critical_miss` marks a
 * disagreement as a critical miss (400 on an agreement).
 */
export const RecordShadowDecisionRequest = Type.Object({
  observation_id: Type.String({ minLength: 1, maxLength: 200, description: 'unique within the session' }),
  agent_recommendation: Type.Object({
    action: Action,
    confidence: Type.Number({ minimum: 0, maximum: 1 }),
    reasoning: Type.Optional(Type.String({ maxLength: 4000 })),
  }),
  human_decision: Type.Object({ action: Action, notes: Type.Optional(Type.String({ maxLength: 4000 })) }),
  critical_miss: Type.Optional(Type.Boolean({ description: 'the reviewer marks a disagreement as a critical miss (design §8.8); 400 on an agreement' })),
});
export type RecordShadowDecisionRequest = Static<typeof RecordShadowDecisionRequest>;

/** `POST …/record-human-decision` answer (201, contract §4.17): the comparison, the level recorded at, and the level's stats afterwards. */
export const ShadowObservation = Type.Object({
  observation_id: Type.String(),
  agreed: Type.Boolean(),
  critical_miss: Type.Boolean(),
  level: ShadowLevel,
  recorded_at: Timestamp,
  stats: ShadowStats,
});
export type ShadowObservation = Static<typeof ShadowObservation>;

/** `GET /api/v1/shadow/sessions/{session_id}/graduation-check` (contract §3.4, §4.17; design §8.8): the three gates against the current level's evidence; `next_level` is null at `autonomous`. */
export const ShadowGraduationCheck = Type.Object({
  eligible: Type.Boolean(),
  current_level: ShadowLevel,
  next_level: Nullable(ShadowLevel),
  gates: Type.Object({
    min_observations: Type.Object({ required: Type.Integer(), actual: Type.Integer(), met: Type.Boolean() }),
    agreement_threshold: Type.Object({ required: Type.Number(), actual: Type.Number(), met: Type.Boolean() }),
    critical_miss_window: Type.Object({ window_hours: Type.Number(), misses: Type.Integer(), met: Type.Boolean() }),
  }),
});
export type ShadowGraduationCheck = Static<typeof ShadowGraduationCheck>;

/** `POST /api/v1/shadow/sessions/{session_id}/demote` body (contract §4.17): a lower level and a reason (1-500 characters). */
export const DemoteShadowSessionRequest = Type.Object({ level: ShadowLevel, reason: Type.String({ minLength: 1, maxLength: 500 }) });
export type DemoteShadowSessionRequest = Static<typeof DemoteShadowSessionRequest>;

/** `{session_id}` path parameter. */
export const ShadowSessionParams = Type.Object({ session_id: Uuid });
export type ShadowSessionParams = Static<typeof ShadowSessionParams>;

const tags = ['shadow'];

/** Route rows of this area. */
export const shadowRoutes = {
  createShadowSession: defineRoute({
    method: 'POST',
    path: '/api/v1/shadow/sessions',
    auth: 'owner',
    tags,
    summary: 'Start a shadow session for one agent, skill and decision class (level shadow)',
    description:
      'Starts evaluating one agent on one skill and decision class at level `shadow`: the owner will record human decisions next to the agent\'s recommendations, and the platform compares them. Optional `config` sets the graduation gates (minimum observations, agreement threshold, critical-miss window). Audited; answers 201 with the session. 400 when the device is not an agent, is revoked, or a name is blank. 404 when the device is unknown in the tenant. 409 when the agent already has a session for this skill and decision class.',
    body: CreateShadowSessionRequest,
    responses: { 201: ShadowSession },
    errors: [400, 401, 403, 404, 409],
  }),
  listShadowSessions: defineRoute({
    method: 'GET',
    path: '/api/v1/shadow/sessions',
    auth: 'owner',
    tags,
    summary: 'List shadow sessions, oldest first',
    description:
      'The tenant\'s shadow sessions, oldest first, optionally of one agent (`device_id`) or `level`, paged by `cursor` and `limit`. 400 when `cursor` is malformed.',
    query: ShadowSessionListQuery,
    responses: { 200: ShadowSessionPage },
    errors: [400, 401, 403],
  }),
  getShadowSession: defineRoute({
    method: 'GET',
    path: '/api/v1/shadow/sessions/{session_id}',
    auth: 'owner',
    tags,
    summary: 'One shadow session with its current-level stats',
    description:
      'One shadow session with its level, configuration and the statistics of the current level (observations, agreements, agreement rate, critical misses). 404 when the session is unknown in the tenant.',
    params: ShadowSessionParams,
    responses: { 200: ShadowSession },
    errors: [400, 401, 403, 404],
  }),
  recordShadowDecision: defineRoute({
    method: 'POST',
    path: '/api/v1/shadow/sessions/{session_id}/record-human-decision',
    auth: 'owner',
    tags,
    summary: 'Record a human decision next to the agent recommendation; the platform compares the actions',
    description:
      'Records one observation: the agent\'s recommendation (action, confidence, reasoning) and the human decision (action, notes) for `observation_id`; the platform compares the actions and stores agree or disagree, with `critical_miss` for a disagreement that matters. Answers 201 with the observation. 400 when `critical_miss` is set on an agreement or a field is blank. 404 when the session is unknown in the tenant. 409 when this `observation_id` is already recorded in the session.',
    params: ShadowSessionParams,
    body: RecordShadowDecisionRequest,
    responses: { 201: ShadowObservation },
    errors: [400, 401, 403, 404, 409],
  }),
  getShadowGraduationCheck: defineRoute({
    method: 'GET',
    path: '/api/v1/shadow/sessions/{session_id}/graduation-check',
    auth: 'owner',
    tags,
    summary: 'The three graduation gates against the evidence of the current level',
    description:
      'Evaluates the three graduation gates against the evidence of the current level: enough observations, an agreement rate at or above the threshold, and no critical miss within the window; answers each gate\'s required and actual values, whether it is met, and the next level. 404 when the session is unknown in the tenant.',
    params: ShadowSessionParams,
    responses: { 200: ShadowGraduationCheck },
    errors: [400, 401, 403, 404],
  }),
  graduateShadowSession: defineRoute({
    method: 'POST',
    path: '/api/v1/shadow/sessions/{session_id}/graduate',
    auth: 'owner',
    tags,
    summary: 'Promote one level when all gates are met (owner only, never automatic)',
    description:
      'Promotes the session one level (`shadow` → `supervised` → `autonomous`) when every gate is met; never automatic. The new level starts with no evidence. Audited; answers the session. 404 when the session is unknown in the tenant. 409 when the session is already `autonomous` or a gate is not met (the detail names the failing gates).',
    params: ShadowSessionParams,
    responses: { 200: ShadowSession },
    errors: [400, 401, 403, 404, 409],
  }),
  demoteShadowSession: defineRoute({
    method: 'POST',
    path: '/api/v1/shadow/sessions/{session_id}/demote',
    auth: 'owner',
    tags,
    summary: 'Demote to a lower level (resets the evidence)',
    description:
      'Demotes the session to a lower `level` at any time (e.g. after an incident); the evidence restarts. Audited; answers the session. 400 when `level` is not below the current level. 404 when the session is unknown in the tenant.',
    params: ShadowSessionParams,
    body: DemoteShadowSessionRequest,
    responses: { 200: ShadowSession },
    errors: [400, 401, 403, 404],
  }),
};
