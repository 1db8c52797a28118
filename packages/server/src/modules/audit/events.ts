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
] as const;

/** One audit event type. */
export type AuditEventType = (typeof AUDIT_EVENT_TYPES)[number];

/** What a caller records: `actor` is the principal (owner `sub`, `device:<id>`, `api_key:<id>`, `system`). */
export interface AuditInput {
  type: AuditEventType;
  actor: string;
  /** The id of the object acted on (invite, device, key, policy …), when there is one. */
  subject?: string | null;
  /** Small, non-secret facts (names, statuses, versions); never content, keys or tokens. */
  data?: Record<string, unknown>;
}
