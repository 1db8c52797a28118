/**
 * Decisions (contract §2.4, §4.15; design §8.19, §8.22): an agent (or its owner on its behalf) asks
 * the owner a structured question with options, an optional deadline and an auto action.
 */
import { Type, type Static } from '@sinclair/typebox';
import { defineRoute } from '../contract.js';
import { IdParams, lit, Nullable, Timestamp, Uuid } from '../common.js';
import { CursorPaging, Page } from '../paging.js';

/** Risk level of one option (contract §2.4). */
export const RISK_LEVELS = ['low', 'medium', 'high', 'critical'] as const;
/** Decision states (design §8.19). */
export const DECISION_STATUSES = ['pending', 'approved', 'denied', 'deferred', 'expired'] as const;
/** How an owner resolves a decision. */
export const RESOLUTIONS = ['approve', 'deny', 'defer'] as const;

const OptionId = Type.String({ minLength: 1, maxLength: 64 });
export const DecisionOption = Type.Object(
  {
    option_id: OptionId,
    label: Type.String({ minLength: 1, maxLength: 200 }),
    risk_level: lit(RISK_LEVELS),
    is_default: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type DecisionOption = Static<typeof DecisionOption>;

export const AutoAction = Type.Object(
  { resolution: lit(['approve', 'deny'] as const), option_id: Type.Optional(OptionId) },
  { additionalProperties: false, description: 'fired when the deadline passes while the decision still awaits (design §8.19)' },
);
export type AutoAction = Static<typeof AutoAction>;

/** A decision as answered by every decision route. */
export const Decision = Type.Object({
  decision_id: Uuid,
  device_id: Uuid,
  title: Type.String(),
  description: Nullable(Type.String()),
  options: Type.Array(DecisionOption),
  deadline: Nullable(Timestamp),
  auto_action: Nullable(AutoAction),
  status: lit(DECISION_STATUSES),
  option_id: Nullable(Type.String()),
  note: Nullable(Type.String()),
  created_by: Type.String({ description: 'owner subject, or device:<device_id> when the agent created it' }),
  created_at: Timestamp,
  resolved_at: Nullable(Timestamp),
  resolved_by: Nullable(Type.String({ description: 'owner subject, or system:deadline on expiry' })),
});
export type Decision = Static<typeof Decision>;

export const CreateDecisionRequest = Type.Object({
  device_id: Type.Optional(Type.String({ format: 'uuid', description: 'the agent device; required when an owner creates the decision on its behalf' })),
  title: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.Optional(Type.String({ maxLength: 4000 })),
  options: Type.Array(DecisionOption, { minItems: 1, maxItems: 20 }),
  deadline: Type.Optional(Type.String({ format: 'date-time', description: 'ISO 8601, in the future' })),
  auto_action: Type.Optional(AutoAction),
});
export type CreateDecisionRequest = Static<typeof CreateDecisionRequest>;

export const ResolveDecisionRequest = Type.Object({
  resolution: lit(RESOLUTIONS),
  option_id: Type.Optional(OptionId),
  note: Type.Optional(Type.String({ maxLength: 2000 })),
});
export type ResolveDecisionRequest = Static<typeof ResolveDecisionRequest>;

export const DecisionListQuery = Type.Object({
  ...CursorPaging({ maxLength: 64, description: 'the previous answer’s next_cursor' }),
});
export type DecisionListQuery = Static<typeof DecisionListQuery>;

export const DecisionPage = Page('decisions', Decision);
export type DecisionPage = Static<typeof DecisionPage>;

const tags = ['decisions'];

export const decisionsRoutes = {
  createDecision: defineRoute({
    method: 'POST',
    path: '/api/v1/decisions',
    auth: 'any',
    tags,
    summary: 'Create a decision request: by the agent (device JWT or API key) or by the owner on its behalf (device_id)',
    description:
      'Asks the owner to decide: a title, optional description, 1 or more options (each with a risk level, at most one default), an optional deadline and an `auto_action` taken when the deadline passes. The agent creates it for itself (device JWT or API key), or an owner on its behalf with `device_id`. The tenant\'s owner devices receive `decision_created`; answers 201 with the pending decision. 400 when option ids repeat, more than one option is default, the deadline is not in the future, `auto_action` names no option, an owner names no `device_id`, or the device is not an ACTIVE agent. 403 when an agent names another device, the caller uses an owner device\'s JWT, or the API key has not registered key material. 404 when the device is unknown in the tenant.',
    body: CreateDecisionRequest,
    responses: { 201: Decision },
    errors: [400, 401, 403, 404],
  }),
  listDecisions: defineRoute({
    method: 'GET',
    path: '/api/v1/decisions',
    auth: 'owner',
    tags,
    summary: 'List decisions awaiting the owner (pending and deferred), oldest first',
    description: 'Decisions awaiting the owner (`pending` and `deferred`), oldest first, paged by `cursor` and `limit`. 400 when `cursor` is malformed.',
    query: DecisionListQuery,
    responses: { 200: DecisionPage },
    errors: [400, 401, 403],
  }),
  resolveDecision: defineRoute({
    method: 'POST',
    path: '/api/v1/decisions/{id}/resolve',
    auth: 'owner',
    tags,
    summary: 'Resolve a decision: approve, deny or defer (a deferred one stays open); sends decision_response to the agent',
    description:
      'Resolves a decision: `approve` (with `option_id`, else the default option), `deny`, or `defer` (it stays open), with an optional note; the agent receives `decision_response`. Audited; answers the decision. 400 when `option_id` names no option of the decision. 404 when the decision is unknown in the tenant. 409 when it is already decided, a deferred one is deferred again, or its deadline has passed (it expires then and the agent receives the expiry response).',
    params: IdParams,
    body: ResolveDecisionRequest,
    responses: { 200: Decision },
    errors: [400, 401, 403, 404, 409],
  }),
};

/** Decision status (design §8.4): `pending` and `deferred` still await the owner. */
export type DecisionStatus = (typeof DECISION_STATUSES)[number];
/** Risk level of a decision option (contract §2.4). */
export type RiskLevel = (typeof RISK_LEVELS)[number];

/**
 * `decision_response` event data (contract §6.1; design §8.19), sent to the agent device on every
 * resolution and on expiry (`resolution: "expired"` with the fired `auto_action`, null when none).
 */
export const DecisionResponseEvent = Type.Object({
  decision_id: Uuid,
  resolution: lit(['approve', 'deny', 'defer', 'expired'] as const),
  option_id: Nullable(Type.String()),
  note: Nullable(Type.String()),
  auto_action: Type.Optional(Nullable(AutoAction)),
});
export type DecisionResponseEvent = Static<typeof DecisionResponseEvent>;
