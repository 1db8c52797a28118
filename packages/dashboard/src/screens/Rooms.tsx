/**
 * Rooms (contract §2.5, §4.6, §4.9; design §8.3, §8.5): the tenant's rooms, creating one, and for the
 * room at `/rooms/:roomId` its members, pairwise sessions, policies, held messages and
 * metadata-only timeline. Without a room, the held messages of every room. Live from `room_*`,
 * `member_*` and `policy_alert` socket events (`lib/live.ts`).
 */
import { Link, useParams } from 'react-router';
import { ErrorNote, Loading, Section, Time } from '../components/ui';
import { CreateRoom } from './rooms/CreateRoom';
import { useRoom } from './rooms/data';
import { HeldMessages } from './rooms/HeldMessages';
import { Members, Sessions } from './rooms/Members';
import { RoomList, SecurityBadge } from './rooms/RoomList';
import { RoomPolicies } from './rooms/RoomPolicies';
import { Timeline } from './rooms/Timeline';

function RoomView({ roomId }: { roomId: string }) {
  const room = useRoom(roomId);
  if (room.isPending) return <Loading what="Loading the room" />;
  if (room.isError) {
    return (
      <Section title="Room">
        <ErrorNote error={room.error} />
        <Link to="/rooms">All rooms</Link>
      </Section>
    );
  }
  const r = room.data;
  return (
    <>
      <Section title={`Room: ${r.name}`} actions={<Link to="/rooms">All rooms</Link>}>
        <dl className="kv">
          <dt>Security level</dt>
          <dd>
            <SecurityBadge level={r.security_level} />
          </dd>
          <dt>Members</dt>
          <dd>{r.members.length}</dd>
          <dt>MLS capable</dt>
          <dd>{r.mls_capable ? 'yes: every member published an MLS KeyPackage' : 'no: pairwise sessions only'}</dd>
          <dt>Created</dt>
          <dd>
            <Time iso={r.created_at} />
          </dd>
        </dl>
      </Section>
      <HeldMessages roomId={r.room_id} />
      <Members room={r} />
      <Sessions room={r} />
      <RoomPolicies room={r} />
      <Timeline roomId={r.room_id} />
    </>
  );
}

/** The Rooms screen (`/rooms`, `/rooms/:roomId`; contract §4.6, §4.9; design §8.3, §8.5). */
export function Rooms() {
  const { roomId } = useParams();
  return (
    <>
      <h1>Rooms</h1>
      <RoomList selected={roomId} />
      {roomId ? <RoomView key={roomId} roomId={roomId} /> : <HeldMessages />}
      <CreateRoom />
    </>
  );
}
