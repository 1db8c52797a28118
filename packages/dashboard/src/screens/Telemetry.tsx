/**
 * Telemetry screen (contract §2.15, §4.14; design §8.18): for a chosen agent (`?agent=` its device
 * id, which the telemetry routes accept as `{hub_id}` beside its hub address) a per-span-name
 * summary over a period (count, errors, error rate, p50/p95 duration) and its recent spans;
 * and the tenant's recent activity across all agents. No socket event announces new spans, so
 * Refresh reloads them.
 */
import { SPAN_STATUSES, type SpanStatus } from '@parley/sdk';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useSearchParams } from 'react-router';
import { useOwner } from '../app/owner-context';
import { AgentSelect } from './parts/AgentSelect';
import { SpanTable } from './telemetry/SpanTable';
import { Empty, ErrorNote, Head, Loading, Section, Time } from '../components/ui';
import { agentLabel, useAgents } from '../lib/agents';
import { usePaged } from '../lib/paging';
import { formatDuration, formatRate, PERIODS, sinceFor, summaryTotals } from '../lib/telemetry-view';
import { LoadMore } from './form-parts';

const PAGE = 50;

function Summary({ agentId, hours }: { agentId: string; hours: number }) {
  const { client } = useOwner();
  const summary = useQuery({
    queryKey: ['telemetry', 'summary', agentId, hours],
    queryFn: () => client.getTelemetrySummary(agentId, { since: sinceFor(hours) }),
  });
  const d = summary.data;
  const totals = d ? summaryTotals(d) : undefined;
  return (
    <Section title="Summary">
      <ErrorNote error={summary.error} />
      {summary.isPending && <Loading what="Loading the summary" />}
      {d && totals && (
        <>
          <dl className="kv">
            <dt>Period</dt>
            <dd>
              <Time iso={d.since} /> to <Time iso={d.until} />
            </dd>
            <dt>Spans</dt>
            <dd data-testid="telemetry-count">{totals.count}</dd>
            <dt>Errors</dt>
            <dd>{totals.errors}</dd>
            <dt>Error rate</dt>
            <dd>{formatRate(totals.errorRate)}</dd>
          </dl>
          {d.spans.length === 0 ? (
            <Empty>No spans in this period.</Empty>
          ) : (
            <table>
              <caption className="muted" style={{ textAlign: 'left' }}>
                Per span name
              </caption>
              <Head columns={['Name', 'Spans', 'Errors', 'Error rate', 'p50 duration', 'p95 duration']} />
              <tbody>
                {d.spans.map((s) => (
                  <tr key={s.name}>
                    <th scope="row">
                      <code>{s.name}</code>
                    </th>
                    <td>{s.count}</td>
                    <td>{s.error_count}</td>
                    <td>{formatRate(s.error_rate)}</td>
                    <td>{formatDuration(s.p50_duration_us)}</td>
                    <td>{formatDuration(s.p95_duration_us)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </>
      )}
    </Section>
  );
}

function AgentSpans({ agentId, status, onStatus }: { agentId: string; status: SpanStatus | ''; onStatus: (s: SpanStatus | '') => void }) {
  const { client } = useOwner();
  const spans = usePaged(
    ['telemetry', 'spans', agentId, status],
    (cursor) => client.listTelemetry(agentId, { limit: PAGE, ...(cursor ? { cursor } : {}), ...(status ? { status } : {}) }),
    (p) => p.spans,
  );
  const filter = (
    <span className="row">
      <label htmlFor="telemetry-status">Status</label>
      <select id="telemetry-status" value={status} onChange={(e) => onStatus(e.target.value as SpanStatus | '')}>
        <option value="">All</option>
        {SPAN_STATUSES.map((s) => (
          <option key={s} value={s}>
            {s}
          </option>
        ))}
      </select>
    </span>
  );
  return (
    <Section title="Recent spans" actions={filter}>
      <ErrorNote error={spans.error} />
      {spans.isPending ? <Loading what="Loading spans" /> : <SpanTable spans={spans.items} caption="This agent's spans, newest first" />}
      <div>
        <LoadMore paged={spans} what="spans" />
      </div>
    </Section>
  );
}

function Activity({ name }: { name: (id: string) => string }) {
  const { client } = useOwner();
  const activity = usePaged(['telemetry', 'activity'], (cursor) => client.getDashboardActivity({ limit: PAGE, ...(cursor ? { cursor } : {}) }), (p) => p.spans);
  return (
    <Section title="Recent activity across your agents">
      <ErrorNote error={activity.error} />
      {activity.isPending ? <Loading what="Loading activity" /> : <SpanTable spans={activity.items} caption="All agents' spans, newest first" agentName={name} />}
      <div>
        <LoadMore paged={activity} what="activity" />
      </div>
    </Section>
  );
}

/** The Telemetry screen (contract §4.14; design §8.18). */
export function Telemetry() {
  const qc = useQueryClient();
  const { agents, error: agentsError } = useAgents();
  const [params, setParams] = useSearchParams();
  const agentId = params.get('agent') ?? '';
  const hours = Number(params.get('hours')) || 24;
  const status = (params.get('status') ?? '') as SpanStatus | '';
  const set = (key: string, value: string) =>
    setParams((p) => {
      if (value) p.set(key, value);
      else p.delete(key);
      return p;
    });
  return (
    <>
      <h1>Telemetry</h1>
      <ErrorNote error={agentsError} />
      <div className="row">
        {agents && <AgentSelect agents={agents} value={agentId} onChange={(id) => set('agent', id)} />}
        <label htmlFor="telemetry-period">Period</label>
        <select id="telemetry-period" value={hours} onChange={(e) => set('hours', e.target.value)}>
          {PERIODS.map((p) => (
            <option key={p.hours} value={p.hours}>
              {p.label}
            </option>
          ))}
        </select>
        <button type="button" onClick={() => void qc.invalidateQueries({ queryKey: ['telemetry'] })}>
          Refresh
        </button>
      </div>
      {agents && agents.length === 0 && <Empty>No agents yet: telemetry appears once an agent exports spans.</Empty>}
      {agentId ? (
        <>
          <Summary agentId={agentId} hours={hours} />
          <AgentSpans agentId={agentId} status={status} onStatus={(s) => set('status', s)} />
        </>
      ) : (
        agents && agents.length > 0 && <Empty>Choose an agent to see its summary and spans.</Empty>
      )}
      <Activity name={(id) => agentLabel(agents, id)} />
    </>
  );
}
