/**
 * A room's timeline (contract §4.6 `GET /rooms/{id}/messages`, owner view; design §8.5): metadata
 * only — sender, type, priority, time and each recipient's delivery outcome with its ticks
 * (delivered / read). The service holds ciphertext only, so the content reads
 * "encrypted".
 */
import { statusOfReceipt, type RoomTimelineEntry } from '@parley/sdk';
import { Ticks } from '../../components/Ticks';
import { Badge, Empty, ErrorNote, Head, Loading, Section, Time } from '../../components/ui';
import { nameOf, type NameMap } from '../../lib/names';
import { toneOf } from '../../lib/tones';
import { useDeviceNames } from '../../lib/use-devices';
import { useTimeline } from './data';

function Deliveries({ entry, names }: { entry: RoomTimelineEntry; names: NameMap }) {
  if (entry.deliveries.length === 0) return <span className="muted">—</span>;
  return (
    <ul className="stack" style={{ listStyle: 'none', margin: 0, padding: 0 }}>
      {entry.deliveries.map((d) => (
        <li key={d.recipient_device_id}>
          {nameOf(names, d.recipient_device_id)}: <Badge tone={toneOf(d.outcome)}>{d.outcome}</Badge>
          {(d.outcome === 'delivered' || d.outcome === 'notified') && <Ticks status={statusOfReceipt(d)} at={d.read_at ?? d.delivered_at ?? undefined} />}
        </li>
      ))}
    </ul>
  );
}

/** The timeline of room `roomId` (contract §4.6; design §8.5), oldest first, with "Show more" for the next page. */
export function Timeline({ roomId }: { roomId: string }) {
  const names = useDeviceNames();
  const timeline = useTimeline(roomId);
  const entries = timeline.data?.pages.flatMap((p) => p.messages) ?? [];
  return (
    <Section title="Timeline">
      <ErrorNote error={timeline.error} />
      {timeline.isPending && <Loading what="Loading the timeline" />}
      {timeline.isSuccess && entries.length === 0 && <Empty>No messages in this room yet.</Empty>}
      {entries.length > 0 && (
        <table>
          <Head columns={['Sent', 'Sender', 'Type', 'Priority', 'Delivery', 'Content']} />
          <tbody>
            {entries.map((m) => (
              <tr key={m.room_message_id} data-testid={`timeline-${m.room_message_id}`}>
                <td>
                  <Time iso={m.timestamp} />
                </td>
                <td>{nameOf(names, m.sender_device_id)}</td>
                <td>{m.message_type}</td>
                <td>{m.priority}</td>
                <td>
                  <Deliveries entry={m} names={names} />
                </td>
                <td className="muted">encrypted</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {timeline.hasNextPage && (
        <div className="row">
          <button type="button" onClick={() => void timeline.fetchNextPage()} disabled={timeline.isFetchingNextPage}>
            Show more
          </button>
        </div>
      )}
    </Section>
  );
}
