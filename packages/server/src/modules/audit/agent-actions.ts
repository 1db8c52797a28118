/**
 * An agent's own audit events (contract §4.19 `svc_submit_audit`, §4.14; design §8.10;
 * docs/decisions.md "Agent audit events"): `POST /audit/events` appends one `agent.action` event to
 * the calling agent's tenant chain (AuditService.submit), in the same transaction that reads the
 * agent's hub address; this module validates and shapes the event data.
 *
 * Event: `actor` = the caller as other agent-caused events name it (`device:<id>` for a device
 * JWT, `api_key:<key id>` for an API key, parties.ts `auditActor`); `subject` = the agent device id (as
 * the `skill.*` events, so filtering by subject gives an agent's whole history); `data` =
 * `{action, details, trace_id, parent_span_id, hub_address}` (absent fields are null; ids
 * lowercase; `hub_address` of the identity bound to the device, or null).
 */
import { AGENT_AUDIT_DETAILS_MAX_BYTES, type SubmitAuditEventRequest } from '@parley/protocol';
import { AppError, badRequest, ErrorCode } from '../../lib/errors.js';

/** The calling agent: its tenant, its device and its audit actor string. */
export interface CallingAgent {
  tenantId: string;
  deviceId: string;
  actor: string;
}

const ALL_ZEROS = /^0+$/;
/** A NUL character or a lone UTF-16 surrogate: PostgreSQL `jsonb` refuses both (`\u0000`, unpaired surrogate escapes). */
const NOT_STORABLE = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** True when some string (key or value) inside `v` cannot be stored in `jsonb`. */
function hasUnstorableText(v: unknown): boolean {
  if (typeof v === 'string') return NOT_STORABLE.test(v);
  if (Array.isArray(v)) return v.some(hasUnstorableText);
  if (v !== null && typeof v === 'object') return Object.entries(v).some(([k, x]) => NOT_STORABLE.test(k) || hasUnstorableText(x));
  return false;
}

/** A W3C Trace Context id in stored form (lowercase), or null when absent. @throws 400 all zeros (invalid per W3C Trace Context). */
function traceId(name: string, v: string | undefined): string | null {
  if (v === undefined) return null;
  if (ALL_ZEROS.test(v)) throw badRequest(`${name} must not be all zeros (W3C Trace Context)`);
  return v.toLowerCase();
}

/**
 * The `data` of an `agent.action` event for `input` and the agent's `hubAddress` (see the module
 * comment). `details` is normalised through JSON (what is stored and hashed is what JSON carries).
 * @throws 413 `details` above {@link AGENT_AUDIT_DETAILS_MAX_BYTES} bytes of JSON; 400 an all-zero
 *   `trace_id` / `parent_span_id`, or text `jsonb` cannot store (NUL, unpaired surrogates).
 */
export function agentActionData(input: SubmitAuditEventRequest): (hubAddress: string | null) => Record<string, unknown> {
  let details: Record<string, unknown> | null = null;
  if (input.details !== undefined) {
    const json = JSON.stringify(input.details);
    const bytes = Buffer.byteLength(json, 'utf8');
    if (bytes > AGENT_AUDIT_DETAILS_MAX_BYTES) {
      throw new AppError(ErrorCode.PayloadTooLarge, `details is ${bytes} bytes of JSON; at most ${AGENT_AUDIT_DETAILS_MAX_BYTES} are accepted`);
    }
    details = JSON.parse(json) as Record<string, unknown>;
  }
  if (hasUnstorableText(input.action) || hasUnstorableText(details)) throw badRequest('action and details must be valid Unicode text without NUL characters');
  const trace = traceId('trace_id', input.trace_id);
  const parent = traceId('parent_span_id', input.parent_span_id);
  return (hubAddress) => ({ action: input.action, details, trace_id: trace, parent_span_id: parent, hub_address: hubAddress });
}
