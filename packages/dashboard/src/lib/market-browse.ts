/**
 * Browsing the marketplace as a renter: the search form of `GET /marketplace/listings` (free text,
 * capability, category, minimum live trust tier, price range in US dollars turned into integer
 * cents) and the words a listing is shown with (price, term, SLA, the processor's test cards).
 */
import type { HubCapability, Listing, ListingSearchQuery, TrustTier } from '@parley/protocol';
import { formatCents, parseDollars, words, type FormResult } from './format';

/** The search form's values as typed. */
export interface BrowseForm {
  text: string;
  capability: string;
  category: string;
  /** Minimum live trust tier of the listed identity; '' for any. */
  tier: '' | TrustTier;
  /** US dollars, e.g. `10` or `12.50`; '' for no bound. */
  minPrice: string;
  maxPrice: string;
}

export const EMPTY_BROWSE: BrowseForm = Object.freeze({ text: '', capability: '', category: '', tier: '', minPrice: '', maxPrice: '' }) as BrowseForm;

/** Results per page of a search. */
export const BROWSE_PAGE = 20;

/** The listing search query of the form (empty fields left out), or what to fix. */
export function browseQuery(f: BrowseForm): FormResult<ListingSearchQuery> {
  const q: ListingSearchQuery = { limit: BROWSE_PAGE };
  const text = f.text.trim();
  if (text) q.query = text;
  if (f.capability.trim()) q.capability = f.capability.trim();
  if (f.category.trim()) q.category = f.category.trim().toLowerCase();
  if (f.tier) q.tier = f.tier;
  for (const [field, label, key] of [
    [f.minPrice, 'lowest', 'min_price_cents'],
    [f.maxPrice, 'highest', 'max_price_cents'],
  ] as const) {
    if (field.trim() === '') continue;
    const cents = parseDollars(field);
    if (cents === undefined) return { ok: false, error: `Give the ${label} price in US dollars, for example 12.50.` };
    q[key] = cents;
  }
  if (q.min_price_cents !== undefined && q.max_price_cents !== undefined && q.min_price_cents > q.max_price_cents) return { ok: false, error: 'The lowest price is above the highest.' };
  return { ok: true, body: q };
}

/** "$25.00 per hour" */
export function priceText(pricing: Listing['pricing']): string {
  return `${formatCents(pricing.price_cents)} ${words(pricing.model)}`;
}

/** "2 h term", or the service's default term of the pricing model when the listing names none. */
export function termText(l: Pick<Listing, 'term_hours' | 'pricing'>): string {
  if (l.term_hours) return `${l.term_hours} h term`;
  return l.pricing.model === 'per_task' ? 'default term (24 h for the task)' : `default term (one ${l.pricing.model === 'monthly' ? 'month' : l.pricing.model.replace('per_', '')})`;
}

/** An SLA in words ("p95 latency 1.5 s · uptime 99.5 %"), or undefined when it promises nothing. */
export function slaText(sla: { latency_p95_ms?: number; uptime_sla?: number } | null | undefined): string | undefined {
  const parts: string[] = [];
  if (sla?.latency_p95_ms !== undefined) parts.push(`p95 latency ${sla.latency_p95_ms >= 1000 ? `${+(sla.latency_p95_ms / 1000).toFixed(2)} s` : `${sla.latency_p95_ms} ms`}`);
  if (sla?.uptime_sla !== undefined) parts.push(`uptime ${+(sla.uptime_sla * 100).toFixed(3)} %`);
  return parts.length ? parts.join(' · ') : undefined;
}

/** A capability as a line: "research 1.0.0 (certified): p95 latency 1.5 s · uptime 99.5 %". */
export function capabilityText(c: Pick<HubCapability, 'name' | 'version' | 'certification_tier' | 'sla'>): string {
  return `${c.name} ${c.version} (${c.certification_tier}): ${slaText(c.sla) ?? 'no SLA promised'}`;
}

/** What each of the local processor's test payment methods does (others are shown by name). */
export const TEST_CARD_TEXT: Record<string, string> = {
  pm_card_visa: 'Test Visa card: succeeds at once',
  pm_card_chargeDeclined: 'Test card that is declined',
  pm_card_async: 'Test card confirmed a moment later (pending first)',
};
