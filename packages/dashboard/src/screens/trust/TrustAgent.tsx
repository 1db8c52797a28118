/**
 * One agent on the Trust screen (contract §2.9, §3.3, §3.9, §4.12; design §8.14, §8.21): composite
 * score, tier and percentile; the 12 dimensions next to the fleet median; the 7-day score history
 * as a chart with its tier changes; drift (TrustDrift.tsx); the compliance report download. A
 * warm-up score (contract §3.9) shows its 12 dimensions at 0.5, marked and explained; an agent the
 * fleet overview does not count (not scored yet, or no longer active) says so instead of a
 * computation time and a fleet percentile, so the panel agrees with the fleet's count.
 */
import type { TrustFleet, TrustScore, TrustTierChange, TrustWindow } from '@parley/sdk';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useMemo } from 'react';
import { useOwner } from '../../app/owner-context';
import { DimensionBars } from './DimensionBars';
import { LineChart } from '../../components/LineChart';
import { Badge, Empty, ErrorNote, Head, Loading, Section, Time } from '../../components/ui';
import { downloadText, fileSafe } from '../../lib/download';
import { countedInFleet, dimensionRows, formatScore, historySeries, isWarmup, ordinal, tierTone, windowDays } from '../../lib/trust-view';
import { TrustDrift } from './TrustDrift';

function Composite({ score, counted }: { score: TrustScore; counted: boolean }) {
  const warmup = isWarmup(score);
  return (
    <div data-testid="trust-composite" className="row" style={{ gap: '1rem' }}>
      <span style={{ fontSize: '2rem', fontWeight: 700 }}>{formatScore(score.composite_score)}</span>
      <Badge tone={tierTone(score.tier)} label={`tier ${score.tier}`}>
        {score.tier}
      </Badge>
      {counted && <span>{ordinal(score.percentile)} percentile in your fleet</span>}
      {warmup && <Badge tone="warn">warm-up score</Badge>}
      <span className="muted">
        {counted || !warmup ? (
          <>
            computed <Time iso={score.computed_at} />
          </>
        ) : (
          'not scored yet'
        )}
        {!counted && !warmup && '; not counted in the fleet, which scores active agents only'}
      </span>
    </div>
  );
}

function WarmupNote({ counted }: { counted: boolean }) {
  return (
    <p className="muted" data-testid="trust-warmup-note">
      {counted
        ? 'Every dimension is still the neutral warm-up score 0.5: an agent is scored from its telemetry only after its first 48 hours.'
        : 'This agent has not been scored yet, so every dimension shows the neutral warm-up score 0.5.'}{' '}
      Scores are recomputed every 6 hours, or press Recompute above.
    </p>
  );
}

function TierChanges({ changes }: { changes: readonly TrustTierChange[] }) {
  if (changes.length === 0) return <Empty>No tier changes in this period.</Empty>;
  return (
    <table>
      <Head columns={['When', 'From', 'To', 'Reason']} />
      <tbody>
        {changes.map((c, i) => (
          <tr key={`${c.changed_at}-${i}`}>
            <td>
              <Time iso={c.changed_at} />
            </td>
            <td>
              <Badge tone={tierTone(c.from_tier)}>{c.from_tier}</Badge>
            </td>
            <td>
              <Badge tone={tierTone(c.to_tier)}>{c.to_tier}</Badge>
            </td>
            <td>{c.reason}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function History({ agentId, days }: { agentId: string; days: number }) {
  const { client } = useOwner();
  const history = useQuery({ queryKey: ['trust', 'history', agentId, days], queryFn: () => client.getTrustHistory(agentId, { days }) });
  const [x, y] = useMemo(() => (history.data ? historySeries(history.data) : [[], []]), [history.data]);
  const xRange = useMemo((): [number, number] => {
    const now = (history.dataUpdatedAt || Date.now()) / 1000;
    return [now - days * 86_400, now];
  }, [days, history.dataUpdatedAt]);
  return (
    <Section title={`History (last ${days} days)`}>
      <ErrorNote error={history.error} />
      {history.isPending && <Loading what="Loading the history" />}
      {history.data &&
        (x.length === 0 ? (
          <Empty>No scores in the last {days} days.</Empty>
        ) : (
          <LineChart title={`7-day composite score over the last ${days} days`} x={x} y={y} label="Composite score" xRange={xRange} yRange={[0, 1]} format={formatScore} />
        ))}
      <h3>Tier changes</h3>
      {history.data && <TierChanges changes={history.data.tier_changes} />}
    </Section>
  );
}

function Report({ agentId, name, tier }: { agentId: string; name: string; tier: string }) {
  const { client } = useOwner();
  const json = useMutation({
    mutationFn: () => client.getTrustReport(agentId, { format: 'json' }),
    onSuccess: (r) => downloadText(`trust-report-${fileSafe(name)}-${r.generated_at.slice(0, 10)}.json`, 'application/json', JSON.stringify(r, null, 2)),
  });
  const html = useMutation({
    mutationFn: () => client.getTrustReportHtml(agentId),
    onSuccess: (text) => downloadText(`trust-report-${fileSafe(name)}-${new Date().toISOString().slice(0, 10)}.html`, 'text/html', text),
  });
  const enterprise = tier === 'enterprise';
  return (
    <Section title="Compliance report">
      {!enterprise && <p className="muted">Compliance reports are available to enterprise-tier agents only; this agent&apos;s tier is {tier}.</p>}
      <div className="row">
        <button type="button" onClick={() => json.mutate()} disabled={!enterprise || json.isPending}>
          Download compliance report (JSON)
        </button>
        <button type="button" onClick={() => html.mutate()} disabled={!enterprise || html.isPending}>
          Download compliance report (HTML)
        </button>
      </div>
      <ErrorNote error={json.error ?? html.error} />
    </Section>
  );
}

/** The trust page of one agent (contract §4.12; design §8.14): `agentId` is its device id (or hub address). */
export function TrustAgent({ agentId, name, window: win, fleet }: { agentId: string; name: string; window: TrustWindow; fleet: TrustFleet | undefined }) {
  const { client } = useOwner();
  const days = windowDays(win);
  const score = useQuery({ queryKey: ['trust', 'score', agentId, win], queryFn: () => client.getTrustScore(agentId, { window: win }) });
  const s = score.data;
  const counted = s !== undefined && countedInFleet(s.agent_id, fleet);
  return (
    <>
      <Section title={`${name}: trust score (${days} days)`}>
        <ErrorNote error={score.error} />
        {score.isPending && <Loading what="Loading the score" />}
        {s && <Composite score={s} counted={counted} />}
      </Section>
      {s && (
        <>
          <Section title="Dimensions">
            {isWarmup(s) && <WarmupNote counted={counted} />}
            <DimensionBars rows={dimensionRows(s, fleet)} />
          </Section>
          <History agentId={agentId} days={days} />
          <TrustDrift agentId={agentId} window={win} />
          <Report agentId={agentId} name={name} tier={s.tier} />
        </>
      )}
    </>
  );
}
