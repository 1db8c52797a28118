/**
 * Audit log (SPEC §4.14; DESIGN §8.10, §8.22): the tenant's hash-chained trail of governance
 * actions, queried newest first, and the recomputation of its chain.
 */
import { Type, type Static } from '@sinclair/typebox';
import { defineRoute } from '../contract.js';
import { lit, Nullable, Timestamp, Uuid } from '../common.js';

/**
 * The documented enum of audit event types (SPEC §4.14; DESIGN §8.10). Every row of
 * `audit_events.type` is one of these; docs/decisions.md lists them with their `subject` and `data`.
 * Event data never carries message content, private key material or tokens.
 */
export const AUDIT_EVENT_TYPES = [
  'invite.created',
  'invite.revoked',
  'device.enrolled',
  'device.approved',
  'device.activated',
  'device.revoked',
  'device.deleted',
  'api_key.created',
  'api_key.revoked',
  'api_key.rotated',
  'api_key.deleted',
  'policy.created',
  'policy.updated',
  'policy.deleted',
  'held_message.approved',
  'held_message.denied',
  'settings.updated',
  'scan_rules.updated',
  'hub.registered',
  'hub.did_updated',
  'hub.tier_changed',
  'credential.issued',
  'credential.revoked',
  'federation.proposed',
  'federation.accepted',
  'federation.revoked',
  'a2a_channel.requested',
  'a2a_channel.approved',
  'a2a_channel.closed',
  'decision.resolved',
  'decision.created',
  'decision.expired',
  'device.registered',
  'device.removed',
  'device.renamed',
  'webhook.registered',
  'webhook.cleared',
  'hub.capability_registered',
  'hub.profile_updated',
  'hub.certified',
  'hub.tier_granted',
  'federation.renewed',
  'a2a_channel.rejected',
  'a2a_channel.revoked',
  'trust.baseline_recalibrated',
  'grant.issued',
  'grant.revoked',
  'skill.check_denied',
  'skill.delegation_rejected',
  'shadow_session.created',
  'shadow_session.observation_recorded',
  'shadow_session.graduated',
  'shadow_session.demoted',
  'listing.created',
  'listing.updated',
  'listing.published',
  'listing.paused',
  'listing.resumed',
  'listing.delisted',
  'rental.created',
  'rental.activated',
  'rental.payment_failed',
  'rental.completed',
  'rental.cancelled',
  'rental.suspended',
  'rental.resumed',
  'dispute.filed',
  'dispute.note_added',
  'dispute.viewed',
  'dispute.resolved',
  'payout.created',
  'payout.completed',
  'payout.failed',
  'marketplace.payment_method_set',
  'marketplace.account_connected',
  'agent.action',
  'skill.delegated',
  'skill.delegation_refused',
  'hub.agent_bound',
] as const;

/** One audit event type. */
export type AuditEventType = (typeof AUDIT_EVENT_TYPES)[number];

const Hash = Type.String({ pattern: '^[0-9a-f]{64}$', description: 'BLAKE2b-256, hex' });

/** One audit event (DESIGN §8.22); `hash = BLAKE2b-256(prev_hash || JCS(event))`, the first `prev_hash` is 64 zeros. */
export const AuditEvent = Type.Object({
  event_id: Uuid,
  /** One of the documented types, e.g. `invite.created`, `device.revoked`, `api_key.rotated`. */
  type: Type.String(),
  actor: Type.String(),
  subject: Nullable(Type.String()),
  data: Type.Unknown(),
  created_at: Timestamp,
  prev_hash: Hash,
  hash: Hash,
});
export type AuditEvent = Static<typeof AuditEvent>;

/** A page of audit events, newest first; `next_cursor` is null on the last page. */
export const AuditEventPage = Type.Object({ events: Type.Array(AuditEvent), next_cursor: Nullable(Type.String()) });
export type AuditEventPage = Static<typeof AuditEventPage>;

/** `GET /api/v1/audit/verify` answer: `first_broken` names the first link that fails (`seq_gap`, `prev_hash_mismatch` or `hash_mismatch`). */
export const AuditChainVerdict = Type.Object({
  valid: Type.Boolean(),
  checked: Type.Integer({ minimum: 0 }),
  first_broken: Nullable(Type.Object({ seq: Type.Integer(), event_id: Uuid, reason: Type.String() })),
});
export type AuditChainVerdict = Static<typeof AuditChainVerdict>;

/** Largest `details` of an agent's own audit event, in bytes of its JSON (413 above). */
export const AGENT_AUDIT_DETAILS_MAX_BYTES = 16 * 1024;

/**
 * `POST /api/v1/audit/events` body (SPEC §4.19 `svc_submit_audit`): an agent records one of its
 * own actions. `action` 1-200 characters; `details` any JSON object whose JSON is at most
 * {@link AGENT_AUDIT_DETAILS_MAX_BYTES} bytes (413 above); `trace_id` / `parent_span_id` W3C
 * Trace Context ids (32 / 16 hex, any case, stored lowercase, not all zeros).
 */
export const SubmitAuditEventRequest = Type.Object({
  action: Type.String({ minLength: 1, maxLength: 200, description: 'what the agent did, e.g. "invoked translate"' }),
  details: Type.Optional(
    Type.Unsafe<Record<string, unknown>>(Type.Object({}, { additionalProperties: true, description: `any JSON object, at most ${AGENT_AUDIT_DETAILS_MAX_BYTES} bytes as JSON (413 above); never put message content or secrets here` })),
  ),
  trace_id: Type.Optional(Type.String({ pattern: '^[0-9a-fA-F]{32}$', description: 'W3C trace-id (32 hex), not all zeros' })),
  parent_span_id: Type.Optional(Type.String({ pattern: '^[0-9a-fA-F]{16}$', description: 'W3C parent-id (16 hex), not all zeros' })),
});
export type SubmitAuditEventRequest = Static<typeof SubmitAuditEventRequest>;

const Filter = Type.String({ minLength: 1, maxLength: 200 });

/** `GET /api/v1/audit/events` query: filters (times ISO 8601, inclusive), `cursor` and `limit` (1-200, default 50). */
export const AuditEventQuery = Type.Object({
  type: Type.Optional(lit(AUDIT_EVENT_TYPES)),
  actor: Type.Optional(Filter),
  subject: Type.Optional(Filter),
  since: Type.Optional(Type.String({ format: 'date-time', description: 'inclusive lower bound on created_at' })),
  until: Type.Optional(Type.String({ format: 'date-time', description: 'inclusive upper bound on created_at' })),
  cursor: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,14}$', description: 'a previous next_cursor' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
});
export type AuditEventQuery = Static<typeof AuditEventQuery>;

const tags = ['audit'];

/** Route rows of this area. */
export const auditRoutes = {
  listAuditEvents: defineRoute({
    method: 'GET',
    path: '/api/v1/audit/events',
    auth: 'owner',
    tags,
    summary: 'Query the hash-chained audit trail, newest first',
    query: AuditEventQuery,
    responses: { 200: AuditEventPage },
    errors: [400, 401, 403],
  }),
  verifyAudit: defineRoute({
    method: 'GET',
    path: '/api/v1/audit/verify',
    auth: 'owner',
    tags,
    summary: "Recompute the tenant's audit hash chain",
    responses: { 200: AuditChainVerdict },
    errors: [401, 403],
  }),
  submitAuditEvent: defineRoute({
    method: 'POST',
    path: '/api/v1/audit/events',
    auth: 'device-or-apikey',
    tags,
    summary: "An agent appends one of its own actions (`agent.action`) to its tenant's audit chain",
    description: 'Answers 201 with the stored event (as listed by GET /audit/events). An API key without registered key material is 403; details above 16 KiB of JSON are 413.',
    body: SubmitAuditEventRequest,
    responses: { 201: AuditEvent },
    errors: [400, 401, 403, 413],
  }),
};
