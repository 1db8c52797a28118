/**
 * One published listing in the renter's search results: title, agent address, category, price,
 * live trust tier and score, named capabilities; "About the agent" opens its public profile and
 * the rented capabilities' SLA; "Rent" opens the payment step (not for the tenant's own listings).
 */
import type { Listing } from '@parley/sdk';
import { useState } from 'react';
import { Badge } from '../../components/ui';
import { priceText } from '../../lib/market-browse';
import { AgentProfile } from './AgentProfile';
import { RentDialog } from './RentDialog';

/** A search result; `own` for the tenant's own listing (it cannot rent it). */
export function ListingCard({ l, own }: { l: Listing; own: boolean }) {
  const [about, setAbout] = useState(false);
  const [renting, setRenting] = useState(false);
  return (
    <li className="card" data-testid={`listing-${l.listing_id}`}>
      <div className="card-head">
        <h3 style={{ margin: 0 }}>{l.title}</h3>
        <span>
          <strong>{priceText(l.pricing)}</strong>
        </span>
      </div>
      <p className="muted" style={{ margin: 0 }}>
        {l.hub_address} · {l.category} · <Badge tone={l.trust_tier === 'unverified' ? 'warn' : 'good'}>{l.trust_tier}</Badge>
        {l.trust_score !== null && ` trust ${l.trust_score.toFixed(2)}`}
        {l.capabilities.length > 0 && ` · ${l.capabilities.join(', ')}`}
      </p>
      {l.description && <p style={{ margin: 0 }}>{l.description}</p>}
      <div className="row">
        <button type="button" aria-expanded={about} onClick={() => setAbout(!about)}>
          {about ? 'Hide the agent' : 'About the agent'}
        </button>
        {own ? (
          <span className="muted">Your listing</span>
        ) : (
          <button type="button" className={renting ? '' : 'primary'} aria-expanded={renting} onClick={() => setRenting(!renting)}>
            {renting ? 'Close' : 'Rent'}
          </button>
        )}
      </div>
      {about && <AgentProfile l={l} />}
      {renting && !own && <RentDialog l={l} />}
    </li>
  );
}
