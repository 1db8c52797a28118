/**
 * Audit log (contract §4.14; design §8.10, §8.22, §8.33): the tenant's hash-chained trail of governance
 * actions, queried newest first, the recomputation of its chain, and the transparency log over the
 * same events: signed checkpoints (C2SP tlog-checkpoint notes), inclusion and consistency proofs
 * (RFC 9162 §2.1) and the platform key that signs them.
 */
import { Type, type Static } from '@sinclair/typebox';
import { defineRoute } from '../contract.js';
import { Base64, lit, Nullable, Timestamp, Uuid } from '../common.js';
import { Page, PageCursor, PageLimit } from '../paging.js';

/**
 * The documented enum of audit event types (contract §4.14; design §8.10). Every row of
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
  'hub.agent_card_published',
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
  'key_directory.alert',
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
  'spend.cap_set',
  'spend.alert',
  'device.settings_updated',
  'push.registration_removed',
] as const;

/** One audit event type. */
export type AuditEventType = (typeof AUDIT_EVENT_TYPES)[number];

const Hash = Type.String({ pattern: '^[0-9a-f]{64}$', description: 'BLAKE2b-256, hex' });

/** One audit event (design §8.22); `hash = BLAKE2b-256(prev_hash || JCS(event))`, the first `prev_hash` is 64 zeros. */
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
export const AuditEventPage = Page('events', AuditEvent);
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
 * `POST /api/v1/audit/events` body (contract §4.19 `svc_submit_audit`): an agent records one of its
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
  cursor: PageCursor({ pattern: '^[1-9][0-9]{0,14}$', description: 'a previous next_cursor' }),
  limit: PageLimit(),
});
export type AuditEventQuery = Static<typeof AuditEventQuery>;

/** One key of the audit log (design §8.33): its C2SP signed-note name, Ed25519 public key and verifier key. */
export const AuditLogKeyInfo = Type.Object({
  /** `<host>/audit-log`, the name on the checkpoints' signature lines. */
  key_name: Type.String(),
  /** Ed25519 public key, 64 hex characters. */
  public_key: Type.String({ pattern: '^[0-9a-f]{64}$' }),
  /** C2SP verifier key: `<key_name>+<hex key id>+<base64(0x01 || public key)>`, what a verifier is given. */
  vkey: Type.String(),
});
export type AuditLogKeyInfo = Static<typeof AuditLogKeyInfo>;

/**
 * `GET /api/v1/audit/log-key` answer: the platform key that signs every tenant's checkpoints, and
 * (`previous`) the keys of before a rotation that still sign beside it until they are retired.
 */
export const AuditLogKey = Type.Object({ ...AuditLogKeyInfo.properties, previous: Type.Array(AuditLogKeyInfo) });
export type AuditLogKey = Static<typeof AuditLogKey>;

/** A tree hash (SHA-256, RFC 9162 §2.1) in standard base64. */
const TreeHash = Type.String({ pattern: '^[A-Za-z0-9+/]{43}=$', description: 'SHA-256, base64' });
const TreeSize = Type.Integer({ minimum: 0 });

/**
 * `GET /api/v1/audit/checkpoint` answer: the signed tree head over every event committed before
 * the request. `checkpoint` is the whole C2SP signed note (origin `<host>/audit/<tenant_id>`, tree
 * size, root hash in base64, a `timestamp <ISO 8601>` extension line, a blank line, the signature
 * lines); verifiers read size, root and time from it, never from the fields beside it.
 */
export const AuditCheckpoint = Type.Object({
  tree_size: TreeSize,
  root_hash: TreeHash,
  /** When the checkpoint was signed (its `timestamp` line). */
  created_at: Timestamp,
  checkpoint: Type.String(),
});
export type AuditCheckpoint = Static<typeof AuditCheckpoint>;

/**
 * `GET /api/v1/audit/events/{event_id}/proof` answer, the bundle an owner downloads: the event, its
 * leaf (index = seq - 1; leaf input = the 32 bytes of its chain `hash`), the audit path from the
 * leaf to the root of the tree of `tree_size` leaves (RFC 9162 §2.1.3.1, deepest sibling first) and
 * the checkpoint of that size.
 */
export const AuditEventProof = Type.Object({
  event_id: Uuid,
  leaf_index: Type.Integer({ minimum: 0 }),
  tree_size: TreeSize,
  leaf_hash: TreeHash,
  audit_path: Type.Array(TreeHash),
  checkpoint: Type.String(),
  /** The event as `GET /audit/events` lists it; with the origin's tenant id and `seq = leaf_index + 1` its chain hash can be recomputed. */
  event: AuditEvent,
});
export type AuditEventProof = Static<typeof AuditEventProof>;

/** `GET /api/v1/audit/events/{event_id}/proof` query: `tree_size` of a kept checkpoint (default: the latest). */
export const AuditEventProofQuery = Type.Object({ tree_size: Type.Optional(Type.Integer({ minimum: 1, description: 'the size of a checkpoint the service answered; default the latest' })) });
export type AuditEventProofQuery = Static<typeof AuditEventProofQuery>;

/** `GET /api/v1/audit/consistency` query: two sizes of kept checkpoints, `1 <= first <= second`. */
export const AuditConsistencyQuery = Type.Object({ first: Type.Integer({ minimum: 0 }), second: Type.Integer({ minimum: 0 }) });
export type AuditConsistencyQuery = Static<typeof AuditConsistencyQuery>;

/** `GET /api/v1/audit/consistency` answer (RFC 9162 §2.1.4.1); `first = second` has an empty proof. */
export const AuditConsistencyProof = Type.Object({ first: TreeSize, second: TreeSize, proof: Type.Array(Base64) });
export type AuditConsistencyProof = Static<typeof AuditConsistencyProof>;

const tags = ['audit'];

/** Route rows of this area. */
export const auditRoutes = {
  listAuditEvents: defineRoute({
    method: 'GET',
    path: '/api/v1/audit/events',
    auth: 'owner',
    tags,
    summary: 'Query the hash-chained audit trail, newest first',
    description:
      'The tenant\'s hash-chained audit events, newest first, filtered by `type`, `actor`, `subject` and a `since`/`until` window, paged by `cursor` (the previous page\'s `next_cursor`) and `limit` (50 by default). Each event carries its sequence number, previous hash and hash, so a reader can check the chain. 400 when `since`/`until` is not an ISO 8601 timestamp or `cursor` is not a `next_cursor` value.',
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
    description:
      'Recomputes the tenant\'s whole audit hash chain and answers whether it verifies, how many events it holds and, when it breaks, the first event whose hash or link does not match.',
    responses: { 200: AuditChainVerdict },
    errors: [401, 403],
  }),
  submitAuditEvent: defineRoute({
    method: 'POST',
    path: '/api/v1/audit/events',
    auth: 'device-or-apikey',
    tags,
    summary: "An agent appends one of its own actions (`agent.action`) to its tenant's audit chain",
    description:
      'The calling agent appends one of its own actions to its tenant\'s audit chain as an `agent.action` event (action, optional details of at most 16 KiB of JSON, optional W3C trace and span ids), with the agent as actor and its device as subject. Answers 201 with the stored event as `GET /audit/events` lists it. 400 when a trace or span id is all zeros, or the text holds NUL characters or invalid Unicode. 403 when the caller is an owner device or an API key without registered key material. 413 when `details` is larger than 16 KiB of JSON or the body larger than 64 KiB.',
    body: SubmitAuditEventRequest,
    responses: { 201: AuditEvent },
    errors: [400, 401, 403, 413],
  }),
  getAuditLogKey: defineRoute({
    method: 'GET',
    path: '/api/v1/audit/log-key',
    auth: 'none',
    tags,
    summary: "The platform key that signs the audit logs' checkpoints (C2SP verifier key)",
    description:
      'The platform\'s Ed25519 key that signs the checkpoints of every tenant\'s audit log, as a C2SP signed-note verifier key (and the keys it replaced), so anyone can verify a checkpoint offline.',
    responses: { 200: AuditLogKey },
    errors: [],
  }),
  getAuditCheckpoint: defineRoute({
    method: 'GET',
    path: '/api/v1/audit/checkpoint',
    auth: 'owner',
    tags,
    summary: "A signed checkpoint of the tenant's audit log covering every event committed before the request",
    description:
      'A signed checkpoint (C2SP signed note: origin, tree size, root hash of the RFC 9162 Merkle tree) of the tenant\'s audit log covering every event committed before the request. Every checkpoint answered is kept, and inclusion and consistency proofs are served for the sizes of kept checkpoints.',
    responses: { 200: AuditCheckpoint },
    errors: [401, 403],
  }),
  getAuditEventProof: defineRoute({
    method: 'GET',
    path: '/api/v1/audit/events/{event_id}/proof',
    auth: 'owner',
    tags,
    summary: 'An audit event with its inclusion proof and the checkpoint it leads to',
    description:
      'An audit event with its RFC 9162 inclusion proof in the tree of `tree_size` (default: the latest checkpoint) and that signed checkpoint, so the event\'s presence can be verified against the log key. 400 when `tree_size` is not the size of a kept checkpoint, or that tree does not contain the event. 404 when no event of the tenant has this id.',
    params: Type.Object({ event_id: Uuid }),
    query: AuditEventProofQuery,
    responses: { 200: AuditEventProof },
    errors: [400, 401, 403, 404],
  }),
  getAuditConsistency: defineRoute({
    method: 'GET',
    path: '/api/v1/audit/consistency',
    auth: 'owner',
    tags,
    summary: "A consistency proof between two checkpoints of the tenant's audit log",
    description:
      'An RFC 9162 consistency proof that the tenant\'s audit log at size `second` extends the log at size `first` (nothing was rewritten), for two sizes of checkpoints the service answered. 400 unless 1 ≤ `first` ≤ `second` and both sizes are kept checkpoints.',
    query: AuditConsistencyQuery,
    responses: { 200: AuditConsistencyProof },
    errors: [400, 401, 403],
  }),
};
