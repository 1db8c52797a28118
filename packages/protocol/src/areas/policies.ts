/**
 * Policies and held messages (contract §2.7, §3.8, §4.9; design §8.3, §8.5): schemas, route rows and
 * the `policy_alert` event. `/policies/held-messages` is a static path; `/policies/{id}` takes
 * UUIDs only.
 */
import { Type, type Static } from '@sinclair/typebox';
import { defineRoute } from '../contract.js';
import { IdParams, lit, Nullable, PRIORITIES, refuseUnknownKeys, Timestamp, Uuid } from '../common.js';

/**
 * Policy actions from least to most restrictive (design §8.5); the most restrictive of all
 * matching policies wins: block > hold > notify > allow.
 */
export const POLICY_ACTIONS = ['allow', 'notify', 'hold', 'block'] as const;
export const PolicyAction = lit(POLICY_ACTIONS);
/** Policy action; the most restrictive of all matching policies wins: block > hold > notify > allow. */
export type PolicyAction = Static<typeof PolicyAction>;

/** Held message states (design §8.3). */
export const HELD_STATUSES = ['held', 'approved', 'denied', 'expired'] as const;
export const HeldMessageStatus = lit(HELD_STATUSES);
/** Held message status (design §8.3). */
export type HeldMessageStatus = Static<typeof HeldMessageStatus>;

const Kind = lit(['owner', 'agent'] as const);
const List = <T extends Parameters<typeof Type.Array>[0]>(t: T) => Type.Array(t, { minItems: 1, maxItems: 100 });
const HourUtc = Type.Integer({ minimum: 0, maximum: 23 });

/**
 * Policy conditions (design §8.5): metadata only, every key optional, keys AND-ed, a list means
 * any of. Unknown keys are refused (400). `hours_utc {from, to}` matches UTC hours `from` <= h <
 * `to`, wrapping midnight when `from` > `to`.
 */
export const PolicyConditions = Type.Object(
  {
    message_types: Type.Optional(List(Type.String({ minLength: 1, maxLength: 64 }))),
    priorities: Type.Optional(List(lit(PRIORITIES))),
    sender_kinds: Type.Optional(List(Kind)),
    recipient_kinds: Type.Optional(List(Kind)),
    sender_device_ids: Type.Optional(List(Uuid)),
    recipient_device_ids: Type.Optional(List(Uuid)),
    sender_hub_addresses: Type.Optional(List(Type.String({ minLength: 3, maxLength: 32 }))),
    sender_tier_below: Type.Optional(lit(['certified', 'enterprise'] as const)),
    trust_score_below: Type.Optional(
      Type.Number({ minimum: 0, maximum: 1, description: 'matches a sender whose trust score (the latest 7-day composite, 0.0-1.0; none yet = 0.5, contract §3.9) is below this (design §8.6)' }),
    ),
    hours_utc: Type.Optional(Type.Object({ from: HourUtc, to: HourUtc }, { additionalProperties: false })),
    rate_per_minute_over: Type.Optional(Type.Integer({ minimum: 0, maximum: 100000 })),
    cross_tenant: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type PolicyConditions = Static<typeof PolicyConditions>;

/** Policy scope as answered: one room, or one skill; both null = tenant-wide. */
export const PolicyScope = Type.Object({ room_id: Nullable(Uuid), skill: Nullable(Type.String()) });
export type PolicyScope = Static<typeof PolicyScope>;

/** Policy scope as given: a room or a skill (not both); absent, null or `{}` = tenant-wide. Unknown keys are refused (400). */
export const PolicyScopeInput = refuseUnknownKeys(
  Type.Object(
    { room_id: Type.Optional(Uuid), skill: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })) },
    { additionalProperties: false, description: 'a room or a skill; absent, null or {} = tenant-wide' },
  ),
);
export type PolicyScopeInput = Static<typeof PolicyScopeInput>;

const PolicyFields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  scope: Type.Optional(Nullable(PolicyScopeInput)),
  priority: Type.Optional(Type.Integer({ minimum: -1_000_000, maximum: 1_000_000, description: 'higher first; decides the reported winner among equally restrictive matches' })),
  conditions: refuseUnknownKeys(PolicyConditions),
  action: PolicyAction,
  enabled: Type.Optional(Type.Boolean()),
};

/**
 * `POST /api/v1/policies` body. `scope` names a room (of the tenant, 404 otherwise) or a skill;
 * `priority` (default 0) orders policies, higher first: it only decides which of several equally
 * restrictive matching policies is reported as the winner. Unknown condition keys are refused (400).
 */
export const CreatePolicyRequest = Type.Object(PolicyFields);
export type CreatePolicyRequest = Static<typeof CreatePolicyRequest>;

/** `PATCH /api/v1/policies/{id}` body: the fields to change (at least one). */
export const UpdatePolicyRequest = Type.Partial(Type.Object(PolicyFields), { minProperties: 1 });
export type UpdatePolicyRequest = Static<typeof UpdatePolicyRequest>;

/** A policy (timestamps ISO 8601). */
export const Policy = Type.Object({
  policy_id: Uuid,
  name: Type.String(),
  scope: PolicyScope,
  priority: Type.Integer(),
  conditions: PolicyConditions,
  action: PolicyAction,
  enabled: Type.Boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type Policy = Static<typeof Policy>;

/** `GET /api/v1/policies`. */
export const PolicyList = Type.Object({ policies: Type.Array(Policy) });
export type PolicyList = Static<typeof PolicyList>;

/**
 * A held message (of a room, or of an A2A channel: `channel_id` set and `room_id` null), listed
 * without ciphertext (design §8.5); `decided_at` is set once approved, denied or expired.
 */
export const HeldMessage = Type.Object({
  held_message_id: Uuid,
  room_id: Nullable(Uuid),
  channel_id: Nullable(Uuid),
  rental_id: Type.Optional(Nullable(Uuid)),
  sender_device_id: Uuid,
  recipient_device_id: Nullable(Uuid),
  policy_id: Nullable(Uuid),
  message_type: Type.String(),
  priority: Type.String(),
  status: HeldMessageStatus,
  created_at: Timestamp,
  expires_at: Timestamp,
  decided_at: Nullable(Timestamp),
});
export type HeldMessage = Static<typeof HeldMessage>;

/** `GET /api/v1/policies/held-messages` query (default: status `held`). */
export const HeldMessageQuery = Type.Object({ status: Type.Optional(HeldMessageStatus) });
export type HeldMessageQuery = Static<typeof HeldMessageQuery>;

/** `GET /api/v1/policies/held-messages`. */
export const HeldMessageList = Type.Object({ held_messages: Type.Array(HeldMessage) });
export type HeldMessageList = Static<typeof HeldMessageList>;

const tags = ['policies'];

export const policiesRoutes = {
  createPolicy: defineRoute({
    method: 'POST',
    path: '/api/v1/policies',
    auth: 'owner',
    tags,
    summary: 'Create a policy (design §8.5)',
    description:
      'Creates a policy of the tenant: a name, optional scope (a room or a skill, not both), priority, conditions (message types, priorities, sender and recipient kinds or devices, sender hub addresses, trust tier or score below a bound, UTC hours, rate per minute, cross-tenant) and the action (`allow`, `notify`, `hold`, `block`) applied to room, A2A and rental messages that match, per recipient. Audited; answers 201 with the policy. 400 when the scope names both a room and a skill. 404 when the scope\'s room is unknown in the tenant.',
    body: CreatePolicyRequest,
    responses: { 201: Policy },
    errors: [400, 401, 403, 404],
  }),
  listPolicies: defineRoute({
    method: 'GET',
    path: '/api/v1/policies',
    auth: 'owner',
    tags,
    summary: 'List the tenant policies',
    description: 'Every policy of the tenant with its scope, priority, conditions, action, enabled flag and timestamps.',
    responses: { 200: PolicyList },
    errors: [401, 403],
  }),
  updatePolicy: defineRoute({
    method: 'PATCH',
    path: '/api/v1/policies/{id}',
    auth: 'owner',
    tags,
    summary: 'Update a policy (any subset of its fields)',
    description:
      'Changes any subset of a policy\'s fields; takes effect for the next message evaluated on every instance. Audited; answers the policy. 400 when the scope names both a room and a skill. 404 when the policy or the scope\'s room is unknown in the tenant.',
    params: IdParams,
    body: UpdatePolicyRequest,
    responses: { 200: Policy },
    errors: [400, 401, 403, 404],
  }),
  deletePolicy: defineRoute({
    method: 'DELETE',
    path: '/api/v1/policies/{id}',
    auth: 'owner',
    tags,
    summary: 'Delete a policy',
    description:
      'Deletes a policy; messages it already held stay held until an owner decides or they expire. Audited; answers 204. 404 when the policy is unknown in the tenant.',
    params: IdParams,
    responses: { 204: null },
    errors: [400, 401, 403, 404],
  }),
  listHeldMessages: defineRoute({
    method: 'GET',
    path: '/api/v1/policies/held-messages',
    auth: 'owner',
    tags,
    summary: 'List held messages (default: those awaiting approval), without ciphertext',
    description:
      'Messages a `hold` policy stopped, with sender, recipient, room or channel, the policy and the hold\'s expiry, by status (`held` by default; `approved`, `denied`, `expired`). Ciphertext is never listed.',
    query: HeldMessageQuery,
    responses: { 200: HeldMessageList },
    errors: [400, 401, 403],
  }),
  approveHeldMessage: defineRoute({
    method: 'POST',
    path: '/api/v1/policies/held-messages/{id}/approve',
    auth: 'owner',
    tags,
    summary: 'Approve a held message; fan-out proceeds',
    description:
      'Approves a held message: it is released to its recipient (a room envelope at a fresh release position, an A2A or rental message) after the approval commits. Audited; answers the held message. 404 when it is unknown in the tenant. 409 when it is no longer `held` (already approved, denied or expired).',
    params: IdParams,
    responses: { 200: HeldMessage },
    errors: [400, 401, 403, 404, 409],
  }),
  denyHeldMessage: defineRoute({
    method: 'POST',
    path: '/api/v1/policies/held-messages/{id}/deny',
    auth: 'owner',
    tags,
    summary: 'Deny a held message; its ciphertext is dropped',
    description:
      'Denies a held message: its ciphertext is dropped and the recipient never receives it (its outcome becomes `blocked`). Audited; answers the held message. 404 when it is unknown in the tenant. 409 when it is no longer `held`.',
    params: IdParams,
    responses: { 200: HeldMessage },
    errors: [400, 401, 403, 404, 409],
  }),
};

/**
 * `policy_alert` event data (design §8.5, §8.7; owner sockets and webhooks): a `notify` policy
 * matched a message, or a skill invocation. Room messages carry `room_id`, A2A messages
 * `channel_id` (and `room_id: null`); skill alerts carry `skill` and `operation` (`room_id` and
 * `recipient_device_id` null, `message_type` `skill_invocation`).
 */
export const PolicyAlertEvent = Type.Object({
  room_id: Type.Optional(Nullable(Uuid)),
  channel_id: Type.Optional(Nullable(Uuid)),
  policy_id: Nullable(Uuid),
  sender_device_id: Uuid,
  recipient_device_id: Nullable(Uuid),
  message_type: Type.String(),
  skill: Type.Optional(Type.String()),
  operation: Type.Optional(lit(['check', 'grant'] as const)),
});
export type PolicyAlertEvent = Static<typeof PolicyAlertEvent>;
