/**
 * Spend screen (docs/decisions.md "Spend caps"): the fleet's spend today and
 * this month (UTC) in tokens and cents, per agent against its caps (`GET /spend`), and for one
 * agent (`/spend/:agentId`) its spend per model and its cap form. Over a cap, the agent's skill
 * checks and delegations are refused (the pipeline's `budget` stage). Refreshes on `spend_alert`
 * socket events (lib/live.ts).
 */
import type { AgentSpend, PeriodSpend, SpendTotals } from '@parley/sdk';
import { useQuery } from '@tanstack/react-query';
import { useNavigate, useParams } from 'react-router';
import { useOwner } from '../app/owner-context';
import { Empty, ErrorNote, Head, Loading, Section, Time } from '../components/ui';
import { agentLabel, useAgents } from '../lib/agents';
import { formatAmount, formatPeriod, toneWord } from '../lib/spend-view';
import { AgentSelect } from './parts/AgentSelect';
import { CapForm } from './spend/CapForm';
import { SpendTable } from './spend/SpendTable';

function Totals({ day, month }: { day: SpendTotals; month: SpendTotals }) {
  const row = (label: string, s: SpendTotals) => (
    <>
      <dt>{label}</dt>
      <dd>
        {formatAmount(s.tokens, 'tokens')}, {formatAmount(s.cents, 'cents')}
        {s.unpriced_tokens > 0 && ` (${formatAmount(s.unpriced_tokens, 'tokens')} without a price)`}; {s.agents_over} {s.agents_over === 1 ? 'agent' : 'agents'} over a cap
      </dd>
    </>
  );
  return (
    <dl className="kv" aria-label="Fleet totals">
      {row('Today (UTC)', day)}
      {row('This month (UTC)', month)}
    </dl>
  );
}

function Models({ p }: { p: PeriodSpend }) {
  if (p.models.length === 0) return <Empty>No token usage in this period.</Empty>;
  return (
    <table>
      <Head columns={['Model', 'Input tokens', 'Output tokens', 'Cost']} />
      <tbody>
        {p.models.map((m) => (
          <tr key={m.model}>
            <th scope="row">
              <code>{m.model}</code>
            </th>
            <td>{m.input_tokens.toLocaleString('en-US')}</td>
            <td>{m.output_tokens.toLocaleString('en-US')}</td>
            <td>{m.cents === null ? 'no price' : formatAmount(m.cents, 'cents')}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** One agent: spend per period and model, and its cap form. */
function AgentPanel({ agentId, name }: { agentId: string; name: string }) {
  const { client } = useOwner();
  const spend = useQuery({ queryKey: ['spend', 'agent', agentId], queryFn: () => client.getAgentSpend(agentId) });
  const cap = useQuery({ queryKey: ['spend', 'cap', agentId], queryFn: () => client.getAgentSpendCap(agentId) });
  const s: AgentSpend | undefined = spend.data;
  return (
    <Section title={`Spend of ${name}`}>
      <ErrorNote error={spend.error ?? cap.error} />
      {(spend.isPending || cap.isPending) && <Loading what="Loading the spend" />}
      {s && (
        <>
          <dl className="kv">
            <dt>Today (UTC)</dt>
            <dd data-testid="spend-day">
              {formatPeriod(s.day, s.unit)} — {toneWord(s.day)}; resets <Time iso={s.day.resets_at} />
            </dd>
            <dt>This month (UTC)</dt>
            <dd data-testid="spend-month">
              {formatPeriod(s.month, s.unit)} — {toneWord(s.month)}; resets <Time iso={s.month.resets_at} />
            </dd>
          </dl>
          <h3>This month by model</h3>
          <Models p={s.month} />
        </>
      )}
      {cap.data && <CapForm key={`${agentId}:${cap.data.updated_at ?? ''}`} agentId={agentId} current={cap.data} />}
    </Section>
  );
}

/** The Spend screen. */
export function Spend() {
  const { agentId } = useParams();
  const navigate = useNavigate();
  const { client } = useOwner();
  const fleet = useQuery({ queryKey: ['spend', 'fleet'], queryFn: () => client.getFleetSpend() });
  const { agents, error: agentsError } = useAgents();
  return (
    <>
      <h1>Spend</h1>
      <Section title="Fleet">
        <ErrorNote error={fleet.error} />
        {fleet.isPending && <Loading what="Loading the fleet's spend" />}
        {fleet.data && (
          <>
            <Totals day={fleet.data.totals.day} month={fleet.data.totals.month} />
            {fleet.data.agents.length === 0 ? (
              <Empty>No agents yet.</Empty>
            ) : (
              <SpendTable agents={fleet.data.agents} nameOf={(a) => agentLabel(agents, a.agent_id, a.hub_address)} linkTo={(id) => `/spend/${id}`} />
            )}
            <p className="muted" style={{ margin: 0 }}>
              Spend comes from the agents&apos; telemetry (GenAI token usage); cents use the model price table of the tenant settings (model_prices).
            </p>
          </>
        )}
      </Section>
      <ErrorNote error={agentsError} />
      {agents && agents.length > 0 && <AgentSelect agents={agents} value={agentId ?? ''} label="Show agent" onChange={(id) => void navigate(id ? `/spend/${id}` : '/spend')} />}
      {agentId ? <AgentPanel key={agentId} agentId={agentId} name={agentLabel(agents, agentId)} /> : <Empty>Choose an agent to see its spend per model and set its caps.</Empty>}
    </>
  );
}
