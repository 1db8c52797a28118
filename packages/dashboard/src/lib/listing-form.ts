/**
 * The new-listing form (design §8.23): a draft listing for one of the tenant's hub identities,
 * priced in integer US cents (design §8.24), and its `POST /marketplace/listings` body.
 */
import type { CreateListingRequest, PricingModel } from '@parley/protocol';
import { parseDollars, splitList, type FormResult } from './format';

/** The listing form's values. */
export interface ListingFormValues {
  hubAddress: string;
  title: string;
  category: string;
  description: string;
  /** Capability names, comma-separated. */
  capabilities: string;
  model: PricingModel;
  /** US dollars as typed, e.g. `12.50`. */
  price: string;
  termHours: string;
  minTier: 'certified' | 'enterprise';
}

/** A new listing: per task, the agent's identity required to stay at least certified (design §8.23 default `min_tier`). */
export const EMPTY_LISTING_FORM: ListingFormValues = Object.freeze({
  hubAddress: '',
  title: '',
  category: '',
  description: '',
  capabilities: '',
  model: 'per_task',
  price: '',
  termHours: '',
  minTier: 'certified',
}) as ListingFormValues;

/** The create body of the form; empty optional fields omitted. */
export function listingBody(v: ListingFormValues): FormResult<CreateListingRequest> {
  if (v.hubAddress === '') return { ok: false, error: 'Choose the hub identity to list.' };
  const price = parseDollars(v.price);
  if (price === undefined) return { ok: false, error: 'Give the price in US dollars, for example 12.50.' };
  const term = v.termHours.trim() === '' ? undefined : Number(v.termHours);
  if (term !== undefined && !Number.isInteger(term)) return { ok: false, error: 'The term is a whole number of hours.' };
  const capabilities = splitList(v.capabilities);
  const body: CreateListingRequest = {
    hub_address: v.hubAddress,
    title: v.title.trim(),
    category: v.category.trim(),
    pricing: { model: v.model, price_cents: price, currency: 'usd' },
    min_tier: v.minTier,
  };
  if (v.description.trim()) body.description = v.description.trim();
  if (capabilities.length > 0) body.capabilities = capabilities;
  if (term !== undefined) body.term_hours = term;
  return { ok: true, body };
}
