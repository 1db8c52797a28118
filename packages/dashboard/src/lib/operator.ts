/**
 * The platform operator's forms (docs/decisions.md "Platform operators and operator tier grants",
 * "Marketplace"): a tier grant after a certification review (`POST /hub/identities/{id}/tier
 * {tier, reason, expires_at?}`) and a dispute resolution (`POST /marketplace/disputes/{id}/resolve
 * {outcome, amount_cents?, note}`), read from what the operator typed into API bodies or a
 * sentence saying what to fix; and the words the screens show for evidence references.
 */
import { TIER_GRANT_REASON_MAX, type EvidenceRef, type GrantTierRequest, type ResolveDisputeRequest, type TrustTier } from '@parley/sdk';
import { localToIso, parseDollars, type FormResult } from './format';

/** Longest resolution note the service accepts. */
export const RESOLUTION_NOTE_MAX = 2000;

/** The tier grant form: `expires` is a `datetime-local` value (the operator's local time), empty for no end. */
export interface GrantForm {
  tier: TrustTier;
  reason: string;
  expires: string;
}

/** A fresh grant form: certify, no reason yet, no end. */
export const EMPTY_GRANT_FORM: GrantForm = Object.freeze({ tier: 'certified', reason: '', expires: '' });

/**
 * The grant body of `f`: the reason trimmed (1–500 characters), the expiry as ISO 8601 UTC and in
 * the future (`now`, epoch milliseconds), or what to fix.
 */
export function grantBody(f: GrantForm, now = Date.now()): FormResult<GrantTierRequest> {
  const reason = f.reason.trim();
  if (!reason) return { ok: false, error: 'Write the reason for this tier: what the review found. It is recorded in the audit log of the identity’s tenant.' };
  if (reason.length > TIER_GRANT_REASON_MAX) return { ok: false, error: `The reason is ${reason.length} characters; at most ${TIER_GRANT_REASON_MAX}.` };
  if (f.expires.trim() === '') return { ok: true, body: { tier: f.tier, reason } };
  const expires = localToIso(f.expires);
  if (!expires) return { ok: false, error: 'The expiry is not a date and time.' };
  if (Date.parse(expires) <= now) return { ok: false, error: 'The expiry must be in the future (or empty for a grant without an end).' };
  return { ok: true, body: { tier: f.tier, reason, expires_at: expires } };
}

/** Dispute outcomes as the operator picks them. */
export type Outcome = ResolveDisputeRequest['outcome'];

/** The resolution form: `amount` is typed in dollars, used with `partial` only. */
export interface ResolveForm {
  outcome: Outcome;
  amount: string;
  note: string;
}

/** A fresh resolution form: no refund, no note yet. */
export const EMPTY_RESOLVE_FORM: ResolveForm = Object.freeze({ outcome: 'none', amount: '', note: '' });

/** What each outcome does to the renter's charge, for the form's choices. */
export const OUTCOME_LABELS: Record<Outcome, string> = {
  refund: 'Refund: give back what is left of the charge',
  partial: 'Partial refund: give back an amount',
  none: 'No refund: the charge stands',
};

/**
 * The resolve body of `f`: the note trimmed (1–2000 characters); with `partial` the amount as
 * integer cents (at least one cent); other outcomes carry no amount. Or what to fix.
 */
export function resolveBody(f: ResolveForm): FormResult<ResolveDisputeRequest> {
  const note = f.note.trim();
  if (!note) return { ok: false, error: 'Write a note: the parties and the audit log see why the dispute was resolved this way.' };
  if (note.length > RESOLUTION_NOTE_MAX) return { ok: false, error: `The note is ${note.length} characters; at most ${RESOLUTION_NOTE_MAX}.` };
  if (f.outcome !== 'partial') return { ok: true, body: { outcome: f.outcome, note } };
  const cents = parseDollars(f.amount);
  if (cents === undefined || cents < 1) return { ok: false, error: 'Give the amount to refund in dollars, e.g. 12.50 (at least $0.01).' };
  return { ok: true, body: { outcome: 'partial', amount_cents: cents, note } };
}

/** An evidence reference in words: "trace 4bf92f35…" or "audit event 3f2a9c1b-…" (the full id, to look up). */
export function evidenceLabel(ref: EvidenceRef): string {
  return `${ref.type === 'trace' ? 'trace' : 'audit event'} ${ref.id}`;
}
