/**
 * Create a room (contract §4.6 `POST /rooms`; design §8.5): a name, members picked from the tenant's
 * ACTIVE agent devices, and the security level. This browser's owner device joins as a member
 * (the client sends it as `X-Device-Id`). The new room opens on success.
 */
import { ROOM_SECURITY_LEVELS, type RoomSecurityLevel } from '@parley/sdk';
import { useId, useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { useOwner } from '../../app/owner-context';
import { Empty, ErrorNote, Section } from '../../components/ui';
import { useDraft } from '../../lib/drafts';
import { useAction } from '../../lib/use-action';
import { useDeviceList } from '../../lib/use-devices';

/** The create-room form (contract §4.6 `POST /rooms`; design §8.5). */
export function CreateRoom() {
  const { client } = useOwner();
  const navigate = useNavigate();
  const id = useId();
  const devices = useDeviceList();
  const agents = (devices.data ?? []).filter((d) => d.kind === 'agent' && d.status === 'ACTIVE');
  const [name, setName, clearName] = useDraft('rooms.create.name');
  const [members, setMembers] = useState<ReadonlySet<string>>(new Set());
  const [level, setLevel] = useState<RoomSecurityLevel>('standard');
  const [invalid, setInvalid] = useState<string>();
  const create = useAction(() => client.createRoom({ name: name.trim(), member_device_ids: [...members], security_level: level }), ['rooms']);

  const toggle = (deviceId: string, on: boolean) =>
    setMembers((s) => {
      const next = new Set(s);
      if (on) next.add(deviceId);
      else next.delete(deviceId);
      return next;
    });

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const picked = agents.filter((a) => members.has(a.device_id));
    if (picked.length === 0) return setInvalid('Pick at least one agent.');
    setInvalid(undefined);
    create.mutate(undefined, {
      onSuccess: (room) => {
        clearName();
        setMembers(new Set());
        navigate(`/rooms/${room.room_id}`);
      },
    });
  };

  return (
    <Section title="Create a room">
      <form className="stack" onSubmit={submit} aria-describedby={`${id}-help`}>
        <p id={`${id}-help`} className="muted">
          You join every room you create from this browser. Each pair of members gets its own end-to-end encrypted session.
        </p>
        <label htmlFor={`${id}-name`}>Room name</label>
        <input id={`${id}-name`} value={name} required maxLength={100} onChange={(e) => setName(e.target.value)} />
        <fieldset>
          <legend>Agents (active)</legend>
          {devices.isPending && <Empty>Loading agents…</Empty>}
          <ErrorNote error={devices.error} />
          {devices.data && agents.length === 0 && <Empty>No active agents to add yet.</Empty>}
          {agents.map((a) => (
            <div key={a.device_id}>
              <input
                type="checkbox"
                id={`${id}-m-${a.device_id}`}
                checked={members.has(a.device_id)}
                onChange={(e) => toggle(a.device_id, e.target.checked)}
              />{' '}
              <label htmlFor={`${id}-m-${a.device_id}`}>{a.name}</label>
            </div>
          ))}
        </fieldset>
        <label htmlFor={`${id}-level`}>Security level</label>
        <select id={`${id}-level`} value={level} onChange={(e) => setLevel(e.target.value as RoomSecurityLevel)}>
          {ROOM_SECURITY_LEVELS.map((l) => (
            <option key={l} value={l}>
              {l === 'strict' ? 'strict (hold agent messages unless a policy allows them)' : 'standard'}
            </option>
          ))}
        </select>
        <ErrorNote error={invalid} />
        <ErrorNote error={create.error} />
        <div className="row">
          <button type="submit" className="primary" disabled={create.isPending}>
            Create room
          </button>
        </div>
      </form>
    </Section>
  );
}
