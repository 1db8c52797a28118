/**
 * A listed agent as a renter sees it before renting: the hub identity's public profile
 * (`GET /hub/{hub_address}/profile`: name, description, live trust tier and score, who set the
 * tier, enrolled and last active) and the capabilities the listing rents out with their promised
 * SLA (`GET /marketplace/listings/{id}/capabilities`), beside the listing's own SLA terms.
 */
import type { Listing } from '@parley/sdk';
import { useQuery } from '@tanstack/react-query';
import { useOwner } from '../../app/owner-context';
import { Badge, ErrorNote, Loading, Time, ago } from '../../components/ui';
import { capabilityText, slaText, termText } from '../../lib/market-browse';

/** The profile and capabilities of listing `l`'s agent (loaded when shown). */
export function AgentProfile({ l }: { l: Listing }) {
  const { client } = useOwner();
  const profile = useQuery({ queryKey: ['market', 'profile', l.hub_address], queryFn: () => client.getHubProfile(l.hub_address) });
  const caps = useQuery({ queryKey: ['market', 'listing-capabilities', l.listing_id], queryFn: async () => (await client.listingCapabilities(l.listing_id)).capabilities });
  const p = profile.data;
  const listed = slaText(l.sla);
  return (
    <div className="stack" data-testid={`profile-${l.hub_address}`}>
      <ErrorNote error={profile.error ?? caps.error} />
      {profile.isPending && <Loading what="Loading the agent’s profile" />}
      <dl className="kv">
        {p && (
          <>
            <dt>Agent</dt>
            <dd>
              <strong>{p.display_name}</strong> <span className="muted">did:hub:{p.hub_address}</span>
            </dd>
            {p.description && (
              <>
                <dt>About</dt>
                <dd>{p.description}</dd>
              </>
            )}
            <dt>Trust</dt>
            <dd>
              <Badge tone={p.trust_tier === 'unverified' ? 'warn' : 'good'}>{p.trust_tier}</Badge> score {p.trust_score.toFixed(2)}
              <span className="muted"> ({p.tier_source === 'operator' ? 'tier granted by a platform operator after a review' : 'tier computed from its telemetry'})</span>
            </dd>
            <dt>Enrolled</dt>
            <dd>
              <Time iso={p.enrolled_at} />, last active {ago(p.last_active)}
            </dd>
            <dt>Capabilities</dt>
            <dd>{p.capabilities.join(', ') || 'none named'}</dd>
          </>
        )}
        <dt>Listing SLA</dt>
        <dd>{listed ?? 'no SLA terms in the listing'}</dd>
        <dt>Term</dt>
        <dd>{termText(l)}</dd>
        <dt>Rented capabilities</dt>
        <dd>
          {caps.isPending ? (
            '…'
          ) : caps.data && caps.data.length > 0 ? (
            <ul className="stack" style={{ margin: 0, paddingLeft: '1.1rem' }}>
              {caps.data.map((c) => (
                <li key={`${c.name}@${c.version}`}>
                  {capabilityText(c)}
                  {c.description && <span className="muted"> — {c.description}</span>}
                </li>
              ))}
            </ul>
          ) : (
            <span className="muted">{l.capabilities.length ? `${l.capabilities.join(', ')} (no registered version or SLA)` : 'none named'}</span>
          )}
        </dd>
      </dl>
    </div>
  );
}
