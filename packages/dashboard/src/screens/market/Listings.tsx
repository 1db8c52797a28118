/**
 * My listings (design §8.23, §8.35): the tenant's own listings in every status
 * (`GET /marketplace/listings?mine=true`), a new draft for one of its hub identities, and the
 * transitions draft -> published -> paused -> published, delist (terminal, confirmed).
 */
import { LISTING_TIERS, PRICING_MODELS, type Listing } from '@parley/sdk';
import { useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useOwner } from '../../app/owner-context';
import { Badge, ConfirmButton, Empty, ErrorNote, Head, Loading, Section } from '../../components/ui';
import { readDraft } from '../../lib/drafts';
import { formatCents, joinList, words } from '../../lib/format';
import { useFormDraft } from '../../lib/json-draft';
import { EMPTY_LISTING_FORM, listingBody } from '../../lib/listing-form';
import { useRootMutation } from '../../lib/mutate';
import { usePaged } from '../../lib/paging';
import { EnumSelect, Field, LoadMore } from '../form-parts';

const STATUS_TONE = { draft: 'neutral', published: 'good', paused: 'warn', delisted: 'bad' } as const;

function NewListing({ onDone }: { onDone: () => void }) {
  const { client } = useOwner();
  const identities = useQuery({ queryKey: ['market', 'identities'], queryFn: async () => (await client.listHubIdentities()).identities });
  const [v, set, clear] = useFormDraft('listing.new', EMPTY_LISTING_FORM);
  const [invalid, setInvalid] = useState<string>();
  const create = useRootMutation('market', (body: Parameters<typeof client.createListing>[0]) => client.createListing(body));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const r = listingBody(v);
    setInvalid(r.ok ? undefined : r.error);
    if (r.ok)
      create.mutate(r.body, {
        onSuccess: () => {
          clear();
          onDone();
        },
      });
  };
  if (identities.data?.length === 0) return <Empty>A listing rents out a hub identity: register one for your agent under Hub identities above first.</Empty>;
  return (
    <form className="stack" onSubmit={submit} aria-label="New listing">
      <ErrorNote error={identities.error} />
      <div className="fields">
        <Field label="Hub identity">
          {(id) => (
            <select id={id} value={v.hubAddress} required onChange={(e) => set({ hubAddress: e.target.value, capabilities: v.capabilities || joinList(identities.data?.find((i) => i.hub_address === e.target.value)?.capabilities) })}>
              <option value="">Choose…</option>
              {identities.data?.map((i) => (
                <option key={i.id} value={i.hub_address}>
                  {i.display_name} ({i.hub_address}, {i.trust_tier})
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Title">{(id) => <input id={id} value={v.title} required maxLength={200} onChange={(e) => set({ title: e.target.value })} />}</Field>
        <Field label="Category" hint="lowercase slug, e.g. research">
          {(id, hintId) => <input id={id} aria-describedby={hintId} value={v.category} required maxLength={64} onChange={(e) => set({ category: e.target.value })} />}
        </Field>
        <Field label="Capabilities" hint="comma-separated skill names">
          {(id, hintId) => <input id={id} aria-describedby={hintId} value={v.capabilities} onChange={(e) => set({ capabilities: e.target.value })} />}
        </Field>
        <Field label="Pricing">{(id) => <EnumSelect id={id} options={PRICING_MODELS} value={v.model} onChange={(model) => set({ model })} />}</Field>
        <Field label="Price (USD)" hint="at least 0.50">
          {(id, hintId) => <input id={id} aria-describedby={hintId} inputMode="decimal" value={v.price} required onChange={(e) => set({ price: e.target.value })} />}
        </Field>
        <Field label="Term (hours, optional)">{(id) => <input id={id} type="number" min={1} max={8760} step={1} value={v.termHours} onChange={(e) => set({ termHours: e.target.value })} />}</Field>
        <Field label="Agent's minimum tier">{(id) => <EnumSelect id={id} options={LISTING_TIERS} value={v.minTier} onChange={(minTier) => set({ minTier })} />}</Field>
      </div>
      <Field label="Description">{(id) => <textarea id={id} rows={3} maxLength={5000} value={v.description} onChange={(e) => set({ description: e.target.value })} />}</Field>
      {invalid && (
        <p className="error" role="alert">
          {invalid}
        </p>
      )}
      <ErrorNote error={create.error} />
      <div className="row">
        <button type="submit" className="primary" disabled={create.isPending}>
          Create draft
        </button>
      </div>
    </form>
  );
}

function ListingRow({ l }: { l: Listing }) {
  const { client } = useOwner();
  const id = l.listing_id;
  const steps = { publish: () => client.publishListing(id), pause: () => client.pauseListing(id), resume: () => client.resumeListing(id), delist: () => client.delistListing(id) };
  const act = useRootMutation('market', (s: keyof typeof steps) => steps[s]());
  const step = (s: 'publish' | 'pause' | 'resume', label: string) => (
    <button type="button" onClick={() => act.mutate(s)} disabled={act.isPending}>
      {label}
    </button>
  );
  return (
    <tr>
      <td>
        <strong>{l.title}</strong>
        <div className="muted">
          {l.hub_address} · {l.category}
        </div>
      </td>
      <td>
        {formatCents(l.pricing.price_cents)} {words(l.pricing.model)}
      </td>
      <td>
        <Badge tone={STATUS_TONE[l.status]}>{l.status}</Badge>
      </td>
      <td>
        {l.trust_tier}
        {l.trust_score !== null && <span className="muted"> ({l.trust_score.toFixed(2)})</span>}
      </td>
      <td>
        <div className="row">
          {l.status === 'draft' && step('publish', 'Publish')}
          {l.status === 'published' && step('pause', 'Pause')}
          {l.status === 'paused' && step('resume', 'Resume')}
          {l.status !== 'delisted' && <ConfirmButton label="Delist" confirmLabel={`Yes, delist ${l.title}`} onConfirm={() => act.mutate('delist')} />}
        </div>
        <ErrorNote error={act.error} />
      </td>
    </tr>
  );
}

/** The "My listings" section (design §8.23, §8.35). */
export function MyListings() {
  const { client } = useOwner();
  const listings = usePaged(['market', 'listings', 'mine'], (cursor) => client.searchListings({ mine: true, limit: 50, ...(cursor ? { cursor } : {}) }), (p) => p.listings);
  const [creating, setCreating] = useState(() => readDraft('listing.new') !== '');
  return (
    <Section
      title="My listings"
      actions={
        <button type="button" aria-expanded={creating} onClick={() => setCreating(!creating)}>
          {creating ? 'Close' : 'New listing'}
        </button>
      }
    >
      {creating && <NewListing onDone={() => setCreating(false)} />}
      <ErrorNote error={listings.error} />
      {listings.isPending && <Loading />}
      {!listings.isPending && listings.items.length === 0 && <Empty>You have no listings.</Empty>}
      {listings.items.length > 0 && (
        <table>
          <Head columns={['Listing', 'Price', 'Status', 'Trust', 'Actions']} />
          <tbody>
            {listings.items.map((l) => (
              <ListingRow key={l.listing_id} l={l} />
            ))}
          </tbody>
        </table>
      )}
      <LoadMore paged={listings} what="listings" />
    </Section>
  );
}
