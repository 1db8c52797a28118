/**
 * Held messages (contract §2.7, §4.9; design §8.3, §8.5): room messages a policy (or a strict room)
 * held for the owner's approval, listed without content. Each row shows sender → recipient,
 * type, priority, when, a live countdown to its expiry (72 h) and its status, with Approve
 * (fan-out proceeds) and Deny (the ciphertext is dropped). A decided row stays with its new
 * status; a refusal (409 already decided) shows the service's detail in the row.
 */
import type { HeldMessage } from '@parley/sdk';
import { Link } from 'react-router';
import { useOwner } from '../../app/owner-context';
import { Countdown } from '../../components/Countdown';
import { Badge, Empty, ErrorNote, Loading, Section, Time } from '../../components/ui';
import { nameOf, type NameMap } from '../../lib/names';
import { toneOf } from '../../lib/tones';
import { useAction } from '../../lib/use-action';
import { useDeviceNames } from '../../lib/use-devices';
import { keeping, useKept } from '../../lib/use-kept';
import { useHeld, useRooms } from './data';

const heldId = (h: HeldMessage) => h.held_message_id;

function Where({ held, roomNames }: { held: HeldMessage; roomNames: NameMap }) {
  if (held.room_id) return <Link to={`/rooms/${held.room_id}`}>{nameOf(roomNames, held.room_id)}</Link>;
  return <span>{held.channel_id ? 'agent-to-agent channel' : '—'}</span>;
}

function HeldRow({ held, names, roomNames, onKeep }: { held: HeldMessage; names: NameMap; roomNames: NameMap | undefined; onKeep: (h: HeldMessage) => void }) {
  const { client } = useOwner();
  const decide = useAction(
    (how: 'approve' | 'deny') =>
      keeping(() => (how === 'approve' ? client.approveHeldMessage(held.held_message_id) : client.denyHeldMessage(held.held_message_id)), onKeep, held),
    ['held', 'rooms'],
  );
  const open = held.status === 'held' && !decide.isPending;
  return (
    <tr data-testid={`held-${held.held_message_id}`}>
      {roomNames && (
        <td>
          <Where held={held} roomNames={roomNames} />
        </td>
      )}
      <td>
        {nameOf(names, held.sender_device_id)} → {held.recipient_device_id ? nameOf(names, held.recipient_device_id) : 'every member'}
      </td>
      <td>{held.message_type}</td>
      <td>{held.priority}</td>
      <td>
        <Time iso={held.created_at} />
      </td>
      <td>
        {held.status === 'held' ? (
          <Countdown deadline={held.expires_at} />
        ) : (
          <span className="muted">
            decided <Time iso={held.decided_at} />
          </span>
        )}
      </td>
      <td>
        <Badge tone={toneOf(held.status)}>
          <span data-testid={`held-status-${held.held_message_id}`}>{held.status}</span>
        </Badge>
      </td>
      <td>
        <div className="row">
          <button type="button" className="primary" disabled={!open} onClick={() => decide.mutate('approve')}>
            Approve
          </button>
          <button type="button" className="danger" disabled={!open} onClick={() => decide.mutate('deny')}>
            Deny
          </button>
        </div>
        <ErrorNote error={decide.error} />
      </td>
    </tr>
  );
}

/** Held messages (design §8.3, §8.5) of room `roomId`, or of every room and channel when it is undefined. */
export function HeldMessages({ roomId }: { roomId?: string | undefined }) {
  const names = useDeviceNames();
  const held = useHeld();
  const rooms = useRooms();
  const [merge, keep] = useKept(heldId);
  const rows = merge(held.data ?? [])
    .filter((h) => roomId === undefined || h.room_id === roomId)
    .sort((a, b) => a.created_at.localeCompare(b.created_at));
  const roomNames = roomId === undefined ? new Map((rooms.data ?? []).map((r) => [r.room_id, r.name])) : undefined;
  return (
    <Section title={roomId === undefined ? 'Held messages (all rooms)' : 'Held messages'}>
      <ErrorNote error={held.error} />
      {held.isPending && <Loading what="Loading held messages" />}
      {held.isSuccess && rows.length === 0 && <Empty>No messages are waiting for your approval.</Empty>}
      {rows.length > 0 && (
        <table>
          <thead>
            <tr>
              {roomNames && <th scope="col">Room</th>}
              <th scope="col">Sender → recipient</th>
              <th scope="col">Type</th>
              <th scope="col">Priority</th>
              <th scope="col">Created</th>
              <th scope="col">Expires</th>
              <th scope="col">Status</th>
              <th scope="col">Decision</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((h) => (
              <HeldRow key={h.held_message_id} held={h} names={names} roomNames={roomNames} onKeep={keep} />
            ))}
          </tbody>
        </table>
      )}
    </Section>
  );
}
