/**
 * Drift of one agent on the Trust screen (contract §4.12; design §8.14): per-dimension PSI of the
 * window against the baseline, each in its band (< 0.1 stable, 0.1–0.25 moderate, > 0.25
 * significant; written out, not colour only), the baseline period, and recalibration.
 */
import type { TrustWindow } from '@parley/sdk';
import { useQuery } from '@tanstack/react-query';
import { useOwner } from '../../app/owner-context';
import { Badge, ConfirmButton, Empty, ErrorNote, Head, Loading, Section } from '../../components/ui';
import { useRootMutation } from '../../lib/mutate';
import { driftRows, driftTone, PSI_MODERATE_FROM, PSI_SIGNIFICANT_ABOVE } from '../../lib/trust-view';

/** The drift section of an agent (contract §4.12 PSI bands). */
export function TrustDrift({ agentId, window: win }: { agentId: string; window: TrustWindow }) {
  const { client } = useOwner();
  const drift = useQuery({ queryKey: ['trust', 'drift', agentId, win], queryFn: () => client.getTrustDrift(agentId, { window: win }) });
  const recalibrate = useRootMutation('trust', () => client.recalibrateTrustDrift(agentId));
  const d = drift.data;
  const actions = <ConfirmButton label="Recalibrate baseline" confirmLabel="Yes, use the last 30 days as the baseline" danger={false} onConfirm={() => recalibrate.mutate(undefined)} />;
  return (
    <Section title="Drift" actions={actions}>
      <p className="muted" style={{ margin: 0 }}>
        Population Stability Index per dimension: below {PSI_MODERATE_FROM} stable, {PSI_MODERATE_FROM}–{PSI_SIGNIFICANT_ABOVE} moderate (monitor), above{' '}
        {PSI_SIGNIFICANT_ABOVE} significant (alert).
      </p>
      <ErrorNote error={drift.error ?? recalibrate.error} />
      {recalibrate.isSuccess && <p role="status">Baseline recalibrated.</p>}
      {drift.isPending && <Loading what="Loading drift" />}
      {d?.alert && <p className="warning-banner">Significant drift: at least one dimension moved beyond PSI {PSI_SIGNIFICANT_ABOVE}.</p>}
      {d &&
        (d.baseline === null ? (
          <Empty>No drift baseline yet: it is set from the first 30 days of stable operation.</Empty>
        ) : (
          <>
            <p style={{ margin: 0 }}>
              Baseline {d.baseline.window_start} to {d.baseline.window_end} ({d.baseline.reason}).
            </p>
            <table>
              <Head columns={['Dimension', 'PSI', 'Status', 'Samples']} />
              <tbody>
                {driftRows(d.dimensions).map((r) => (
                  <tr key={r.dimension} data-testid={`drift-${r.dimension}`}>
                    <th scope="row">{r.label}</th>
                    <td>{r.psi === null ? '—' : r.psi.toFixed(3)}</td>
                    <td>{r.band ? <Badge tone={driftTone(r.band)}>{r.band}</Badge> : <span className="muted">no baseline</span>}</td>
                    <td className="muted">{r.samples}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </>
        ))}
    </Section>
  );
}
