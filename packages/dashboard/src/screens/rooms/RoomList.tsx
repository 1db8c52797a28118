/**
 * The tenant's active rooms (contract §4.6 `GET /rooms`; design §8.5): name (link to the room),
 * security level and member count.
 */
import type { RoomSummary } from '@parley/sdk';
import { Link } from 'react-router';
import { Badge, Empty, ErrorNote, Head, Loading, Section } from '../../components/ui';
import { toneOf } from '../../lib/tones';
import { useRooms } from './data';

/** A room's security level as a badge with its text (design §8.5: strict rooms hold agent messages). */
export function SecurityBadge({ level }: { level: RoomSummary['security_level'] }) {
  return <Badge tone={toneOf(level)}>{level}</Badge>;
}

/** The room list (contract §4.6 `GET /rooms`); `selected` is the room on screen. */
export function RoomList({ selected }: { selected: string | undefined }) {
  const rooms = useRooms();
  return (
    <Section title="Your rooms">
      <ErrorNote error={rooms.error} />
      {rooms.isPending && <Loading what="Loading rooms" />}
      {rooms.data?.length === 0 && <Empty>No rooms yet: create one below.</Empty>}
      {rooms.data && rooms.data.length > 0 && (
        <table>
          <Head columns={['Name', 'Security level', 'Members']} />
          <tbody>
            {rooms.data.map((r) => (
              <tr key={r.room_id} data-testid={`room-${r.room_id}`}>
                <td>
                  <Link to={`/rooms/${r.room_id}`} {...(r.room_id === selected ? { 'aria-current': 'page' as const } : {})}>
                    {r.name}
                  </Link>
                </td>
                <td>
                  <SecurityBadge level={r.security_level} />
                </td>
                <td>{r.members.length}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Section>
  );
}
