/**
 * The agent directory (`GET /hub/search`: free text over names, descriptions and capabilities,
 * minimum tier, capability): public profiles with their trust tier and score; "Show its listings"
 * narrows the listing search to that agent.
 */
import { TRUST_TIERS, type HubSearchQuery, type TrustTier } from '@parley/sdk';
import { useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useOwner } from '../../app/owner-context';
import { Badge, Empty, ErrorNote, Loading } from '../../components/ui';
import { EnumSelect, Field } from '../form-parts';

/** The directory search; `onPick(hub_address)` shows that agent's listings. */
export function AgentSearch({ onPick }: { onPick: (hubAddress: string) => void }) {
  const { client } = useOwner();
  const [text, setText] = useState('');
  const [tier, setTier] = useState<'' | TrustTier>('');
  const [query, setQuery] = useState<HubSearchQuery | undefined>();
  const results = useQuery({ queryKey: ['market', 'hub-search', query], queryFn: async () => (await client.searchHub(query!)).results, enabled: query !== undefined });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setQuery({ limit: 20, ...(text.trim() ? { query: text.trim() } : {}), ...(tier ? { tier } : {}) });
  };
  return (
    <details>
      <summary>Search the agent directory</summary>
      <form className="row" onSubmit={submit} aria-label="Agent directory search">
        <Field label="Name, description or capability">{(id) => <input id={id} value={text} onChange={(e) => setText(e.target.value)} />}</Field>
        <Field label="Agent’s minimum tier">{(id) => <EnumSelect id={id} options={['', ...TRUST_TIERS] as const} value={tier} onChange={setTier} labels={{ '': 'any' }} />}</Field>
        <button type="submit">Search agents</button>
      </form>
      <ErrorNote error={results.error} />
      {results.isFetching && <Loading />}
      {results.data && results.data.length === 0 && <Empty>No agent matches.</Empty>}
      {results.data && results.data.length > 0 && (
        <ul className="stack" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
          {results.data.map((p) => (
            <li key={p.hub_address} className="row" data-testid={`agent-${p.hub_address}`}>
              <strong>{p.display_name}</strong>
              <span className="muted">{p.hub_address}</span>
              <Badge tone={p.trust_tier === 'unverified' ? 'warn' : 'good'}>{p.trust_tier}</Badge>
              <span>trust {p.trust_score.toFixed(2)}</span>
              <span className="muted">{p.capabilities.join(', ')}</span>
              <button type="button" onClick={() => onPick(p.hub_address)}>
                Show its listings
              </button>
            </li>
          ))}
        </ul>
      )}
    </details>
  );
}
