/**
 * Policies (contract §2.7, §4.9; design §8.5): the tenant's policies in evaluation order with scope,
 * action, priority, enabled and their conditions in words; create, edit (every condition key),
 * enable / disable, delete (confirmed). The most restrictive matching policy wins:
 * block > hold > notify > allow.
 */
import type { Policy, RoomSummary } from '@parley/sdk';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useOwner } from '../app/owner-context';
import { Badge, ConfirmButton, Empty, ErrorNote, Head, Loading, Section } from '../components/ui';
import { readDraft } from '../lib/drafts';
import { useRootMutation } from '../lib/mutate';
import { describeConditions, describeScope } from '../lib/policy-words';
import { PolicyForm } from './policies/PolicyForm';

const ACTION_TONE = { allow: 'good', notify: 'info', hold: 'warn', block: 'bad' } as const;

function PolicyRow({ p, rooms }: { p: Policy; rooms: RoomSummary[] | undefined }) {
  const { client } = useOwner();
  const [editing, setEditing] = useState(() => readDraft(`policy.${p.policy_id}`) !== '');
  const toggle = useRootMutation('policies', () => client.updatePolicy(p.policy_id, { enabled: !p.enabled }));
  const remove = useRootMutation('policies', () => client.deletePolicy(p.policy_id));
  const roomName = (id: string) => rooms?.find((r) => r.room_id === id)?.name;
  return (
    <>
      <tr>
        <td>
          <strong>{p.name}</strong>
        </td>
        <td>{describeScope(p.scope, roomName)}</td>
        <td>
          <Badge tone={ACTION_TONE[p.action]}>{p.action}</Badge>
        </td>
        <td>{p.priority}</td>
        <td>
          <Badge tone={p.enabled ? 'good' : 'neutral'}>{p.enabled ? 'enabled' : 'disabled'}</Badge>
        </td>
        <td>{describeConditions(p.conditions)}</td>
        <td>
          <div className="row">
            <button type="button" aria-expanded={editing} onClick={() => setEditing(!editing)}>
              {editing ? 'Close editor' : 'Edit'}
            </button>
            <button type="button" onClick={() => toggle.mutate(undefined)} disabled={toggle.isPending}>
              {p.enabled ? 'Disable' : 'Enable'}
            </button>
            <ConfirmButton label="Delete" confirmLabel={`Yes, delete ${p.name}`} onConfirm={() => remove.mutate(undefined)} />
          </div>
          <ErrorNote error={toggle.error ?? remove.error} />
        </td>
      </tr>
      {editing && (
        <tr>
          <td colSpan={7}>
            <PolicyForm policy={p} rooms={rooms} onDone={() => setEditing(false)} />
          </td>
        </tr>
      )}
    </>
  );
}

/** The policies screen (contract §4.9; design §8.5). */
export function Policies() {
  const { client } = useOwner();
  const policies = useQuery({ queryKey: ['policies'], queryFn: async () => (await client.listPolicies()).policies });
  const rooms = useQuery({ queryKey: ['rooms'], queryFn: async () => (await client.listRooms()).rooms });
  const [creating, setCreating] = useState(() => readDraft('policy.new') !== '');
  const newButton = (
    <button type="button" aria-expanded={creating} onClick={() => setCreating(!creating)}>
      {creating ? 'Close' : 'New policy'}
    </button>
  );
  return (
    <>
      <h1>Policies</h1>
      <p className="muted">
        Policies see message metadata only, never content. Every enabled policy that matches applies, and the most restrictive action wins: block, then hold,
        then notify, then allow.
      </p>
      <ErrorNote error={rooms.error} />
      <Section title="New policy" actions={newButton}>
        {creating ? <PolicyForm rooms={rooms.data} onDone={() => setCreating(false)} /> : <p className="muted">Create a policy to block, hold, or flag messages.</p>}
      </Section>
      <Section title="Your policies">
        <ErrorNote error={policies.error} />
        {policies.isPending && <Loading />}
        {policies.data?.length === 0 && <Empty>No policies yet: every message is allowed (strict rooms still hold agent messages).</Empty>}
        {policies.data && policies.data.length > 0 && (
          <table>
            <Head columns={['Name', 'Scope', 'Action', 'Priority', 'State', 'Matches', 'Actions']} />
            <tbody>
              {policies.data.map((p) => (
                <PolicyRow key={p.policy_id} p={p} rooms={rooms.data} />
              ))}
            </tbody>
          </table>
        )}
      </Section>
    </>
  );
}
