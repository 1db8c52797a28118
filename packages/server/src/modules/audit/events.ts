/**
 * Audit event types and the input of an append (contract §4.14; design §8.10). The documented enum of
 * types (`AUDIT_EVENT_TYPES`) is part of the wire contract (`@parley/protocol`, it is the `type`
 * filter of `GET /audit/events`); docs/decisions.md lists them with their `subject` and `data`.
 * Event data never carries message content, private key material or tokens.
 */
import type { AuditEventType } from '@parley/protocol';

export { AUDIT_EVENT_TYPES, type AuditEventType } from '@parley/protocol';

/** What a caller records: `actor` is the principal (owner `sub`, `device:<id>`, `api_key:<id>`, `system`). */
export interface AuditInput {
  type: AuditEventType;
  actor: string;
  /** The id of the object acted on (invite, device, key, policy …), when there is one. */
  subject?: string | null;
  /** Small, non-secret facts (names, statuses, versions); never content, keys or tokens. */
  data?: Record<string, unknown>;
}
