/**
 * Audit log helpers (contract §4.14; design §8.10, §8.22, §8.33): the filter form as a query, and the
 * chain and transparency-log verdicts in words.
 */
import type { AuditChainVerdict, AuditEventQuery } from '@parley/protocol';
import { localToIso, words } from './format';
import type { LogVerdict } from './transparency';

/** The audit filter form: what the owner typed or picked. */
export interface AuditFilters {
  type: string;
  actor: string;
  subject: string;
  /** `datetime-local` values, the owner's local time. */
  since: string;
  until: string;
}

/** No filter: every event, newest first. */
export const NO_AUDIT_FILTERS: AuditFilters = Object.freeze({ type: '', actor: '', subject: '', since: '', until: '' });

/** The `GET /audit/events` query of the filters (design §8.22): empty fields omitted, times as ISO 8601 UTC. */
export function auditQuery(f: AuditFilters): AuditEventQuery {
  const q: AuditEventQuery = {};
  if (f.type) q.type = f.type as AuditEventQuery['type'];
  if (f.actor.trim()) q.actor = f.actor.trim();
  if (f.subject.trim()) q.subject = f.subject.trim();
  const since = localToIso(f.since);
  const until = localToIso(f.until);
  if (since) q.since = since;
  if (until) q.until = until;
  return q;
}

/** The verdict of `GET /audit/verify` in words (design §8.10): intact with the count, or the first broken link. */
export function describeVerdict(v: AuditChainVerdict): string {
  const checked = `${v.checked} event${v.checked === 1 ? '' : 's'} checked`;
  if (v.valid) return `Chain intact: ${checked}.`;
  const b = v.first_broken;
  if (!b) return `Chain broken: ${checked}.`;
  return `Chain broken at sequence ${b.seq}, event ${b.event_id} (${words(b.reason)}); ${checked}.`;
}

/** The transparency-log check in words (design §8.33): what was verified against what, or why not. */
export function describeLogVerdict(v: LogVerdict): string {
  if (!v.verified) return `The log could not be verified: ${v.reason}.`;
  const head = `Checkpoint of ${v.treeSize} event${v.treeSize === 1 ? '' : 's'}${v.timestamp ? `, signed ${new Date(v.timestamp).toLocaleString()}` : ''}`;
  if (v.extends === null) return `${head}. The key was pinned in this browser now: compare it with the audit-log key your operator publishes.`;
  return `${head}, extends the checkpoint of ${v.extends} event${v.extends === 1 ? '' : 's'} this browser verified before.`;
}
