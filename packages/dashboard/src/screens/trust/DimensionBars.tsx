/**
 * The 12 trust dimensions of an agent (contract §2.9) as horizontal bars, each with a line at the
 * fleet median (design §8.14) and both values written out, plus where each score came from
 * (contract §3.9: telemetry, fleet median fallback, warm-up). Presentational.
 */
import type { DimensionRow } from '../../lib/trust-view';
import { barPercent, formatScore } from '../../lib/trust-view';
import { Meter } from '../parts/Meter';
import { Head } from '../../components/ui';

const SOURCE: Record<string, string> = { telemetry: 'telemetry', fleet_median: 'fleet median (partial data)', warmup: 'warm-up (neutral 0.5)' };

/** Table of dimension bars with the fleet median marked on each bar and written next to it. */
export function DimensionBars({ rows }: { rows: readonly DimensionRow[] }) {
  return (
    <table>
      <caption className="muted" style={{ textAlign: 'left' }}>
        Scores 0–1; the dark line on each bar marks the fleet median.
      </caption>
      <Head columns={['Dimension', 'Score', 'Fleet median', 'Source']} />
      <tbody>
        {rows.map((r) => (
          <tr key={r.dimension} data-testid={`dimension-${r.dimension}`}>
            <th scope="row">{r.label}</th>
            <td>
              <div className="row" style={{ flexWrap: 'nowrap' }}>
                <div style={{ flex: 1 }}>
                  <Meter percent={barPercent(r.value)} marker={r.median === null ? null : barPercent(r.median)} />
                </div>
                <span>{formatScore(r.value)}</span>
              </div>
            </td>
            <td>{formatScore(r.median)}</td>
            <td className="muted">{SOURCE[r.source] ?? r.source}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
