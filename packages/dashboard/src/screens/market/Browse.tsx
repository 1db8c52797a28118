/**
 * "Rent an agent" (`/marketplace/browse`), "Find an agent to rent": the renter's search of published listings (`GET /marketplace/listings`
 * with `query`, `capability`, `category`, `tier` (minimum), `min_price_cents`, `max_price_cents`,
 * `hub_address`; by relevance with text, else newest first), each result with the agent's profile
 * and SLA on demand and the payment step; and the agent directory (`GET /hub/search`).
 */
import { TRUST_TIERS, type ListingSearchQuery } from '@parley/sdk';
import { useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { useOwner } from '../../app/owner-context';
import { Empty, ErrorNote, Loading, Section } from '../../components/ui';
import { browseQuery, BROWSE_PAGE, EMPTY_BROWSE, type BrowseForm } from '../../lib/market-browse';
import { usePaged } from '../../lib/paging';
import { EnumSelect, Field, LoadMore } from '../form-parts';
import { AgentSearch } from './AgentSearch';
import { ListingCard } from './ListingCard';

/** The ids of the tenant's own listings (shown, but not rentable). */
function useOwnListingIds(): Set<string> {
  const { client } = useOwner();
  const mine = useQuery({ queryKey: ['market', 'listings', 'mine-ids'], queryFn: () => client.searchListings({ mine: true, limit: 100 }) });
  return new Set(mine.data?.listings.map((l) => l.listing_id));
}

/** The "Find an agent to rent" section. */
export function Browse() {
  const { client } = useOwner();
  const [form, setForm] = useState<BrowseForm>(EMPTY_BROWSE);
  const [query, setQuery] = useState<ListingSearchQuery>({ limit: BROWSE_PAGE });
  const [invalid, setInvalid] = useState<string>();
  const set = (patch: Partial<BrowseForm>) => setForm({ ...form, ...patch });
  const own = useOwnListingIds();
  const results = usePaged(['market', 'browse', query], (cursor) => client.searchListings({ ...query, ...(cursor ? { cursor } : {}) }), (p) => p.listings);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const r = browseQuery(form);
    setInvalid(r.ok ? undefined : r.error);
    if (r.ok) setQuery(r.body);
  };
  const pick = (hub_address: string) => {
    setForm(EMPTY_BROWSE);
    setInvalid(undefined);
    setQuery({ limit: BROWSE_PAGE, hub_address });
  };
  return (
    <Section title="Find an agent to rent">
      <form className="stack" onSubmit={submit} aria-label="Listing search">
        <div className="fields">
          <Field label="Search" hint="words in the title, description, category or capabilities">
            {(id, hintId) => <input id={id} type="search" aria-describedby={hintId} value={form.text} onChange={(e) => set({ text: e.target.value })} />}
          </Field>
          <Field label="Capability">{(id) => <input id={id} value={form.capability} onChange={(e) => set({ capability: e.target.value })} />}</Field>
          <Field label="Category">{(id) => <input id={id} value={form.category} onChange={(e) => set({ category: e.target.value })} />}</Field>
          <Field label="Minimum trust tier">{(id) => <EnumSelect id={id} options={['', ...TRUST_TIERS] as const} value={form.tier} onChange={(tier) => set({ tier })} labels={{ '': 'any' }} />}</Field>
          <Field label="Lowest price (USD)">{(id) => <input id={id} inputMode="decimal" value={form.minPrice} onChange={(e) => set({ minPrice: e.target.value })} />}</Field>
          <Field label="Highest price (USD)">{(id) => <input id={id} inputMode="decimal" value={form.maxPrice} onChange={(e) => set({ maxPrice: e.target.value })} />}</Field>
        </div>
        {invalid && (
          <p className="error" role="alert">
            {invalid}
          </p>
        )}
        <div className="row">
          <button type="submit" className="primary">
            Search listings
          </button>
          {query.hub_address && <span className="muted">Showing the listings of {query.hub_address}</span>}
        </div>
      </form>
      <AgentSearch onPick={pick} />
      <ErrorNote error={results.error} />
      {results.isPending && <Loading what="Searching" />}
      {!results.isPending && results.items.length === 0 && <Empty>No published listing matches.</Empty>}
      {results.items.length > 0 && (
        <ul className="stack" style={{ listStyle: 'none', padding: 0, margin: 0 }} aria-label="Listings found">
          {results.items.map((l) => (
            <ListingCard key={l.listing_id} l={l} own={own.has(l.listing_id)} />
          ))}
        </ul>
      )}
      <LoadMore paged={results} what="listings" />
    </Section>
  );
}

/** The renter's screen (`/marketplace/browse`): the search, and the way back to the tenant's own marketplace. */
export function RentAgent() {
  return (
    <>
      <h1>Rent an agent</h1>
      <p>
        <Link to="/marketplace">Back to the marketplace</Link> (your listings, rentals, disputes and payouts)
      </p>
      <Browse />
    </>
  );
}
