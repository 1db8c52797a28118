/**
 * Registering a hub identity for one of the tenant's agents (docs/decisions.md "Hub-address
 * registry"): the owner picks an ACTIVE agent with no identity yet, its hub address (suggested
 * from the agent's name), display name, description and capabilities. The owner key is the
 * agent's own identity key from its device record, never typed; the identity is bound to the
 * agent (`device_id`). `POST /hub/register`, then `POST /hub/{hub_address}/capabilities` per
 * capability record (lib/hub-form.ts).
 */
import type { HubIdentity } from '@parley/sdk';
import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { useOwner } from '../../app/owner-context';
import { describeError, Empty, ErrorNote, Loading } from '../../components/ui';
import { bindableAgents, EMPTY_CAPABILITY_FORM, EMPTY_HUB_FORM, registrationBody, suggestHubAddress, type CapabilityFormValues, type Registration } from '../../lib/hub-form';
import { useFormDraft } from '../../lib/json-draft';
import { useAction } from '../../lib/use-action';
import { useDeviceList } from '../../lib/use-devices';
import { Field } from '../form-parts';
import { CapabilityFields } from './CapabilityFields';

/** What a registration did: the identity, and the capabilities the service refused (name: reason). */
export interface Registered {
  identity: HubIdentity;
  refused: string[];
}

/** The registration form; `onDone` gets what was registered. */
export function RegisterIdentity({ identities, onDone }: { identities: readonly HubIdentity[]; onDone: (r: Registered) => void }) {
  const { client } = useOwner();
  const devices = useDeviceList();
  const agents = bindableAgents(devices.data ?? [], identities);
  const [v, set, clear] = useFormDraft('hub.new', EMPTY_HUB_FORM);
  const [invalid, setInvalid] = useState<string>();
  const register = useAction(
    async (r: Registration): Promise<Registered> => {
      const identity = await client.registerHub(r.body);
      const refused: string[] = [];
      for (const c of r.capabilities) {
        try {
          await client.registerHubCapability(identity.hub_address, c);
        } catch (err) {
          refused.push(`${c.name}: ${describeError(err)}`);
        }
      }
      return { identity, refused };
    },
    ['market', 'devices'],
  );
  const agent = agents.find((d) => d.device_id === v.deviceId);
  const setCapability = (i: number, patch: Partial<CapabilityFormValues>) => set({ capabilities: v.capabilities.map((c, j) => (j === i ? { ...c, ...patch } : c)) });
  const pick = (deviceId: string) => {
    const name = agents.find((d) => d.device_id === deviceId)?.name ?? '';
    set({ deviceId, hubAddress: v.hubAddress || suggestHubAddress(name), displayName: v.displayName || name });
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const r = registrationBody(v, agent);
    setInvalid(r.ok ? undefined : r.error);
    if (r.ok)
      register.mutate(r.body, {
        onSuccess: (done) => {
          clear();
          onDone(done);
        },
      });
  };

  if (devices.isPending) return <Loading what="Loading your agents" />;
  if (agents.length === 0 && !devices.error)
    return (
      <Empty>
        Every active agent already has a hub identity, or none is enrolled yet: enroll an agent on <Link to="/agents">Agents &amp; devices</Link> first.
      </Empty>
    );
  return (
    <form className="stack" onSubmit={submit} aria-label="Register a hub identity">
      <ErrorNote error={devices.error} />
      <div className="fields">
        <Field label="Agent" hint="an active agent without a hub identity">
          {(id, hintId) => (
            <select id={id} aria-describedby={hintId} value={v.deviceId} required onChange={(e) => pick(e.target.value)}>
              <option value="">Choose…</option>
              {agents.map((d) => (
                <option key={d.device_id} value={d.device_id}>
                  {d.name}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Hub address" hint="3-32 of a-z, 0-9, -; public and permanent">
          {(id, hintId) => <input id={id} aria-describedby={hintId} value={v.hubAddress} required maxLength={32} autoCapitalize="none" spellCheck={false} onChange={(e) => set({ hubAddress: e.target.value })} />}
        </Field>
        <Field label="Display name">{(id) => <input id={id} value={v.displayName} required maxLength={100} onChange={(e) => set({ displayName: e.target.value })} />}</Field>
      </div>
      {agent && (
        <p className="muted" data-testid="owner-key-note">
          Owner key: {agent.name}&apos;s own identity key, fingerprint <code>{agent.fingerprint}</code>. The agent holds its private half.
        </p>
      )}
      <Field label="Description">{(id) => <textarea id={id} rows={2} maxLength={1000} value={v.description} onChange={(e) => set({ description: e.target.value })} />}</Field>
      {v.capabilities.map((c, i) => (
        <CapabilityFields
          key={i}
          legend={`Capability ${i + 1}`}
          value={c}
          onChange={(patch) => setCapability(i, patch)}
          actions={
            <div className="row">
              <button type="button" onClick={() => set({ capabilities: v.capabilities.filter((_, j) => j !== i) })}>
                Remove capability {i + 1}
              </button>
            </div>
          }
        />
      ))}
      <div className="row">
        <button type="button" onClick={() => set({ capabilities: [...v.capabilities, EMPTY_CAPABILITY_FORM] })}>
          Add another capability
        </button>
      </div>
      {invalid && (
        <p className="error" role="alert">
          {invalid}
        </p>
      )}
      <ErrorNote error={register.error} />
      <div className="row">
        <button type="submit" className="primary" disabled={register.isPending}>
          Register identity
        </button>
      </div>
    </form>
  );
}
