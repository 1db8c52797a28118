/**
 * The trust fleet table (design §8.14, §8.21): each scored agent with its tier, composite score
 * and percentile in the tenant fleet, sortable by score or percentile with buttons in the column
 * headers (`aria-sort` tells the current order), each agent linking to its trust page.
 * Presentational: the data comes in props (tested in `test/trust-screen.test.tsx`).
 */
import type { TrustFleetAgent } from '@parley/sdk';
import { useState } from 'react';
import { Link } from 'react-router';
import { ariaSort, formatScore, nextSort, sortFleet, tierTone, type FleetSort, type FleetSortKey } from '../../lib/trust-view';
import { Badge } from '../../components/ui';

function SortHeader({ label, sortKey, sort, onSort }: { label: string; sortKey: FleetSortKey; sort: FleetSort; onSort: (k: FleetSortKey) => void }) {
  const state = ariaSort(sort, sortKey);
  return (
    <th scope="col" aria-sort={state}>
      <button type="button" onClick={() => onSort(sortKey)}>
        {label}
        <span aria-hidden="true">{state === 'ascending' ? ' ▲' : state === 'descending' ? ' ▼' : ' ↕'}</span>
      </button>
    </th>
  );
}

/** Sortable fleet table; `nameOf` names an agent, `linkTo` builds its link, `selected` marks the agent shown below. */
export function FleetTable({
  agents,
  nameOf,
  linkTo = (id) => `/trust/${id}`,
  selected,
}: {
  agents: readonly TrustFleetAgent[];
  nameOf: (agent: TrustFleetAgent) => string;
  linkTo?: (agentId: string) => string;
  selected?: string;
}) {
  const [sort, setSort] = useState<FleetSort>({ key: 'score', dir: 'desc' });
  const rows = sortFleet(agents, sort);
  const onSort = (k: FleetSortKey) => setSort((s) => nextSort(s, k));
  return (
    <table>
      <caption className="muted" style={{ textAlign: 'left' }}>
        Sorted by {sort.key} ({sort.dir === 'desc' ? 'highest first' : 'lowest first'})
      </caption>
      <thead>
        <tr>
          <th scope="col">Agent</th>
          <th scope="col">Tier</th>
          <SortHeader label="Score" sortKey="score" sort={sort} onSort={onSort} />
          <SortHeader label="Percentile" sortKey="percentile" sort={sort} onSort={onSort} />
        </tr>
      </thead>
      <tbody>
        {rows.map((a) => (
          <tr key={a.agent_id} data-testid={`fleet-${a.agent_id}`}>
            <td>
              <Link to={linkTo(a.agent_id)} aria-current={selected === a.agent_id ? 'page' : undefined}>
                {nameOf(a)}
              </Link>
            </td>
            <td>
              <Badge tone={tierTone(a.tier)}>{a.tier}</Badge>
            </td>
            <td>{formatScore(a.composite_score)}</td>
            <td>{a.percentile}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
