/**
 * Trust screen (contract §2.9, §3.3, §3.9, §4.12; design §8.14, §8.21): the fleet's scores, tiers
 * and percentiles (sortable), a Recompute button, and for one agent (`/trust/:agentId`) its
 * composite score, 12 dimensions against the fleet median, history, tier changes, drift and the
 * compliance report (trust/TrustAgent.tsx). One window (7/30/90 days, `?window=`) applies to all.
 * Updates live from `trust_*`, `tier_*`, `shadow_*` and `device_*` socket events.
 */
import type { TrustFleetAgent, TrustWindow } from '@parley/sdk';
import { useQuery } from '@tanstack/react-query';
import { useNavigate, useParams, useSearchParams } from 'react-router';
import { useOwner } from '../app/owner-context';
import { AgentSelect } from './parts/AgentSelect';
import { FleetTable } from './trust/FleetTable';
import { Empty, ErrorNote, Loading, Section, Time } from '../components/ui';
import { agentLabel, useAgents } from '../lib/agents';
import { plural } from '../lib/format';
import { useRootMutation } from '../lib/mutate';
import { parseWindow, WINDOWS, windowDays } from '../lib/trust-view';
import { TrustAgent } from './trust/TrustAgent';

/** The fleet overview query (design §8.14), shared with the agent panel for the medians. */
function useTrustFleet(window: TrustWindow) {
  const { client } = useOwner();
  return useQuery({ queryKey: ['trust', 'fleet', window], queryFn: () => client.getTrustFleet({ window }) });
}

function WindowPicker({ value, onChange }: { value: TrustWindow; onChange: (w: TrustWindow) => void }) {
  return (
    <fieldset className="row" style={{ border: 'none', padding: 0, margin: 0 }}>
      <legend style={{ fontWeight: 600, float: 'left', marginRight: '0.5rem' }}>Window</legend>
      {WINDOWS.map((w) => (
        <span key={w} className="row" style={{ gap: '0.25rem' }}>
          <input type="radio" id={`trust-window-${w}`} name="trust-window" value={w} checked={value === w} onChange={() => onChange(w)} />
          <label htmlFor={`trust-window-${w}`} style={{ fontWeight: 400 }}>
            {windowDays(w)} days
          </label>
        </span>
      ))}
    </fieldset>
  );
}

/** `POST /trust/recompute` as a mutation: its button sits in the Fleet header, its outcome in the section body. */
function useRecompute() {
  const { client } = useOwner();
  return useRootMutation('trust', () => client.recomputeTrust());
}

type RecomputeRun = ReturnType<typeof useRecompute>;

function RecomputeButton({ run }: { run: RecomputeRun }) {
  return (
    <button type="button" onClick={() => run.mutate(undefined)} disabled={run.isPending}>
      {run.isPending ? 'Recomputing…' : 'Recompute'}
    </button>
  );
}

function RecomputeOutcome({ run }: { run: RecomputeRun }) {
  return (
    <>
      {run.data && (
        <p role="status" className="muted" style={{ margin: 0 }}>
          Scored {plural(run.data.agents, 'agent')} in {Math.round(run.data.duration_ms)} ms; {plural(run.data.tier_changes, 'tier change')}.
        </p>
      )}
      <ErrorNote error={run.error} />
    </>
  );
}

/** The Trust screen (contract §4.12; design §8.14, §8.21). */
export function Trust() {
  const { agentId } = useParams();
  const [params, setParams] = useSearchParams();
  const navigate = useNavigate();
  const win = parseWindow(params.get('window'));
  const fleet = useTrustFleet(win);
  const recompute = useRecompute();
  const { agents, error: agentsError } = useAgents();
  const query = params.toString() ? `?${params.toString()}` : '';
  const nameOf = (a: TrustFleetAgent) => agentLabel(agents, a.agent_id, a.hub_address);
  const setWindow = (w: TrustWindow) =>
    setParams((p) => {
      p.set('window', w);
      return p;
    });

  return (
    <>
      <h1>Trust</h1>
      <WindowPicker value={win} onChange={setWindow} />
      <Section title="Fleet" actions={<RecomputeButton run={recompute} />}>
        <RecomputeOutcome run={recompute} />
        <ErrorNote error={fleet.error} />
        {fleet.isPending && <Loading what="Loading the fleet" />}
        {fleet.data && (
          <>
            <p className="muted" style={{ margin: 0 }}>
              {fleet.data.count} scored {fleet.data.count === 1 ? 'agent' : 'agents'}
              {fleet.data.computed_at && (
                <>
                  ; last computed <Time iso={fleet.data.computed_at} />
                </>
              )}
              . Scores are recomputed every 6 hours.
            </p>
            {fleet.data.agents.length === 0 ? (
              <Empty>No agent has a trust score yet. Scores come from agents&apos; telemetry; press Recompute to score them now.</Empty>
            ) : (
              <FleetTable agents={fleet.data.agents} nameOf={nameOf} linkTo={(id) => `/trust/${id}${query}`} selected={agentId} />
            )}
          </>
        )}
      </Section>
      <ErrorNote error={agentsError} />
      {agents && agents.length > 0 && (
        <AgentSelect agents={agents} value={agentId ?? ''} label="Show agent" onChange={(id) => void navigate(id ? `/trust/${id}${query}` : `/trust${query}`)} />
      )}
      {agentId ? (
        <TrustAgent key={agentId} agentId={agentId} name={agentLabel(agents, agentId)} window={win} fleet={fleet.data} />
      ) : (
        <Empty>Choose an agent in the table or the list to see its dimensions, history, drift and compliance report.</Empty>
      )}
    </>
  );
}
