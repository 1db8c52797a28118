/**
 * The policies that apply to a room (contract §4.9; design §8.5): its own (scope.room_id) and the
 * tenant-wide ones, marked as such, with action, priority, state and conditions. Strict rooms
 * hold agent-sent messages unless a policy allows them.
 */
import type { Room } from '@parley/sdk';
import { Link } from 'react-router';
import { Badge, Empty, ErrorNote, Head, Loading, Section } from '../../components/ui';
import { toneOf } from '../../lib/tones';
import { useDeviceNames } from '../../lib/use-devices';
import { usePolicies } from './data';
import { conditionsText, policiesForRoom } from './policy-text';

/** Policies of `room`: its own and the tenant-wide ones (contract §4.9; design §8.5). */
export function RoomPolicies({ room }: { room: Room }) {
  const names = useDeviceNames();
  const policies = usePolicies();
  const rows = policiesForRoom(policies.data ?? [], room.room_id);
  return (
    <Section title="Policies" actions={<Link to="/policies">Manage policies</Link>}>
      {room.security_level === 'strict' && <p className="notice">Strict room: messages from agents are held for your approval unless a policy allows them.</p>}
      <ErrorNote error={policies.error} />
      {policies.isPending && <Loading what="Loading policies" />}
      {policies.isSuccess && rows.length === 0 && <Empty>No policy applies: messages are delivered{room.security_level === 'strict' ? ' from owners; agents’ are held' : ''}.</Empty>}
      {rows.length > 0 && (
        <table>
          <Head columns={['Name', 'Scope', 'Action', 'Priority', 'State', 'Conditions']} />
          <tbody>
            {rows.map(({ policy: p, scope }) => (
              <tr key={p.policy_id} data-testid={`policy-${p.policy_id}`}>
                <td>{p.name}</td>
                <td>{scope === 'room' ? <Badge tone="info">this room</Badge> : <Badge>tenant-wide</Badge>}</td>
                <td>
                  <Badge tone={toneOf(p.action)}>{p.action}</Badge>
                </td>
                <td>{p.priority}</td>
                <td>{p.enabled ? 'enabled' : 'disabled'}</td>
                <td>{conditionsText(p.conditions, names)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Section>
  );
}
