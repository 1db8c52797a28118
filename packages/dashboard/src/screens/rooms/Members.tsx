/**
 * A room's members and pairwise sessions (contract §4.6; design §8.5): each member's device name and
 * kind, remove (confirmed; history stays), add an ACTIVE device of the tenant; and the room's
 * pairwise conversations, one per member pair, as pairs of names.
 */
import type { Room } from '@parley/sdk';
import { useId, useState, type FormEvent } from 'react';
import { useOwner } from '../../app/owner-context';
import { Badge, ConfirmButton, Empty, ErrorNote, Head, Section } from '../../components/ui';
import { nameOf, pairLabel } from '../../lib/names';
import { useAction } from '../../lib/use-action';
import { useDeviceList, useDeviceNames } from '../../lib/use-devices';

function AddMember({ room }: { room: Room }) {
  const { client } = useOwner();
  const id = useId();
  const devices = useDeviceList();
  const inRoom = new Set(room.members.map((m) => m.device_id));
  const candidates = (devices.data ?? []).filter((d) => d.status === 'ACTIVE' && !inRoom.has(d.device_id));
  const [pick, setPick] = useState('');
  const add = useAction((deviceId: string) => client.addRoomMember(room.room_id, { device_id: deviceId }), ['rooms']);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (pick) add.mutate(pick, { onSuccess: () => setPick('') });
  };
  if (devices.data && candidates.length === 0) return <Empty>Every active device is already a member.</Empty>;
  return (
    <form className="inline" onSubmit={submit}>
      <label htmlFor={`${id}-add`}>Add a member</label>
      <select id={`${id}-add`} value={pick} required onChange={(e) => setPick(e.target.value)}>
        <option value="">Choose a device…</option>
        {candidates.map((d) => (
          <option key={d.device_id} value={d.device_id}>
            {d.name} ({d.kind})
          </option>
        ))}
      </select>
      <button type="submit" disabled={add.isPending || !pick}>
        Add member
      </button>
      <ErrorNote error={add.error ?? devices.error} />
    </form>
  );
}

/** Members of `room` with add and remove (contract §4.6 `/rooms/{id}/members`; design §8.5). */
export function Members({ room }: { room: Room }) {
  const { client, deviceId } = useOwner();
  const names = useDeviceNames();
  const remove = useAction((memberId: string) => client.removeRoomMember(room.room_id, memberId), ['rooms', 'held']);
  return (
    <Section title="Members">
      <table>
        <Head columns={['Device', 'Kind', 'Actions']} />
        <tbody>
          {room.members.map((m) => {
            const name = nameOf(names, m.device_id);
            return (
              <tr key={m.device_id} data-testid={`member-${m.device_id}`}>
                <td>
                  {name} {m.device_id === deviceId && <Badge tone="info">this browser</Badge>}
                </td>
                <td>{m.kind}</td>
                <td>
                  <ConfirmButton label={`Remove ${name}`} confirmLabel={`Yes, remove ${name}`} onConfirm={() => remove.mutate(m.device_id)} disabled={remove.isPending} />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      <ErrorNote error={remove.error} />
      <AddMember room={room} />
    </Section>
  );
}

/** The pairwise sessions of `room` (design §8.5: one conversation per member pair). */
export function Sessions({ room }: { room: Room }) {
  const names = useDeviceNames();
  return (
    <Section title="Pairwise sessions">
      {room.conversations.length === 0 ? (
        <Empty>No sessions: a room needs two members.</Empty>
      ) : (
        <ul>
          {room.conversations.map((c) => (
            <li key={c.conversation_id} data-testid={`session-${c.conversation_id}`}>
              {pairLabel(names, c.device_ids)}
            </li>
          ))}
        </ul>
      )}
    </Section>
  );
}
