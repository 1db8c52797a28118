/**
 * The fleet's spend table: per agent, today and this month (UTC) against its
 * caps, each with a tone badge (within, near ≥ 80 %, over the cap = refused by the budget stage).
 */
import type { AgentSpend, PeriodSpend, SpendUnit } from '@parley/sdk';
import { Link } from 'react-router';
import { Badge, Head } from '../../components/ui';
import { formatPeriod, periodTone, toneWord } from '../../lib/spend-view';

function Cell({ p, unit }: { p: PeriodSpend; unit: SpendUnit }) {
  return (
    <td>
      {formatPeriod(p, unit)} {periodTone(p) !== 'neutral' && <Badge tone={periodTone(p)}>{toneWord(p)}</Badge>}
    </td>
  );
}

/** One row per agent; the name links to `linkTo(agent_id)`. */
export function SpendTable({ agents, nameOf, linkTo }: { agents: readonly AgentSpend[]; nameOf: (a: AgentSpend) => string; linkTo: (id: string) => string }) {
  return (
    <table>
      <Head columns={['Agent', 'Today (UTC)', 'This month (UTC)']} />
      <tbody>
        {agents.map((a) => (
          <tr key={a.agent_id}>
            <th scope="row">
              <Link to={linkTo(a.agent_id)}>{nameOf(a)}</Link>
            </th>
            <Cell p={a.day} unit={a.unit} />
            <Cell p={a.month} unit={a.unit} />
          </tr>
        ))}
      </tbody>
    </table>
  );
}
