/**
 * A table of telemetry spans (contract §2.15; design §8.18), newest first: start time, optionally the
 * agent, span name, status (a badge with its word) and duration, and the trace id. Shared by the
 * Telemetry screen's agent spans and the tenant's recent activity.
 */
import type { TelemetrySpan } from '@parley/sdk';
import { formatDuration, spanTone } from '../../lib/telemetry-view';
import { Badge, Empty, Time } from '../../components/ui';

/** Span rows; `agentName` adds an Agent column. */
export function SpanTable({ spans, caption, agentName }: { spans: readonly TelemetrySpan[]; caption: string; agentName?: (deviceId: string) => string }) {
  if (spans.length === 0) return <Empty>No spans.</Empty>;
  return (
    <table>
        <caption className="muted" style={{ textAlign: 'left' }}>
          {caption}
        </caption>
        <thead>
          <tr>
            <th scope="col">Started</th>
            {agentName && <th scope="col">Agent</th>}
            <th scope="col">Name</th>
            <th scope="col">Status</th>
            <th scope="col">Duration</th>
            <th scope="col">Trace</th>
          </tr>
        </thead>
        <tbody>
          {spans.map((s) => (
            <tr key={s.id}>
              <td>
                <Time iso={s.start_time} />
              </td>
              {agentName && <td>{agentName(s.device_id)}</td>}
              <td>
                <code>{s.name}</code>
              </td>
              <td>
                <Badge tone={spanTone(s.status)}>{s.status}</Badge>
                {s.status_message && <div className="muted">{s.status_message}</div>}
              </td>
              <td>{formatDuration(s.duration_us)}</td>
              <td>
                <code title={s.trace_id}>{s.trace_id.slice(0, 8)}…</code>
              </td>
            </tr>
          ))}
        </tbody>
    </table>
  );
}
