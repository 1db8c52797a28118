/**
 * The create / edit form of a policy (design §8.5): name, action, priority, enabled, scope
 * (tenant-wide, a room, a skill) and every condition key. The whole form is one draft
 * (`useFormDraft`); its conversion to the API body is `lib/policy-form.ts`. Server 400s (an
 * unknown key, a bad device id) are shown in place.
 */
import { MESSAGE_TYPES, POLICY_ACTIONS, PRIORITIES, type CreatePolicyRequest, type Policy, type RoomSummary } from '@parley/sdk';
import { useMemo, useState, type FormEvent } from 'react';
import { useOwner } from '../../app/owner-context';
import { ErrorNote } from '../../components/ui';
import { useFormDraft } from '../../lib/json-draft';
import { useRootMutation } from '../../lib/mutate';
import { EMPTY_POLICY_FORM, formToPolicyBody, KINDS, policyToForm, TIERS, type PolicyFormValues, type ScopeKind, type TriState } from '../../lib/policy-form';
import { CheckboxGroup, EnumSelect, Field } from '../form-parts';

const ACTION_WORDS = { allow: 'allow (deliver)', notify: 'notify (deliver and alert owners)', hold: 'hold for approval', block: 'block' } as const;
const SCOPE_WORDS: Record<ScopeKind, string> = { tenant: 'the whole tenant', room: 'one room', skill: 'one skill' };
const CROSS_WORDS: Record<TriState, string> = { any: 'either', yes: 'only messages across tenants', no: 'only messages within this tenant' };

type Update = (patch: Partial<PolicyFormValues>) => void;

function Scope({ v, set, rooms }: { v: PolicyFormValues; set: Update; rooms: RoomSummary[] | undefined }) {
  return (
    <fieldset className="group">
      <legend>Applies to</legend>
      <div className="fields">
        <Field label="Scope">{(id) => <EnumSelect id={id} options={['tenant', 'room', 'skill'] as const} value={v.scopeKind} onChange={(scopeKind) => set({ scopeKind })} labels={SCOPE_WORDS} />}</Field>
        {v.scopeKind === 'room' && (
          <Field label="Room">
            {(id) => (
              <select id={id} value={v.roomId} required onChange={(e) => set({ roomId: e.target.value })}>
                <option value="">Choose a room…</option>
                {rooms?.map((r) => (
                  <option key={r.room_id} value={r.room_id}>
                    {r.name}
                  </option>
                ))}
              </select>
            )}
          </Field>
        )}
        {v.scopeKind === 'skill' && <Field label="Skill">{(id) => <input id={id} value={v.skill} maxLength={100} required onChange={(e) => set({ skill: e.target.value })} />}</Field>}
      </div>
    </fieldset>
  );
}

function Conditions({ v, set }: { v: PolicyFormValues; set: Update }) {
  const text = (label: string, key: 'otherMessageTypes' | 'senderDeviceIds' | 'recipientDeviceIds' | 'senderHubAddresses', hint: string) => (
    <Field label={label} hint={hint}>
      {(id, hintId) => <input id={id} aria-describedby={hintId} value={v[key]} onChange={(e) => set({ [key]: e.target.value })} />}
    </Field>
  );
  return (
    <fieldset className="group">
      <legend>Conditions (all must match; an empty field matches everything)</legend>
      <CheckboxGroup legend="Message types" options={MESSAGE_TYPES} value={v.messageTypes} onChange={(messageTypes) => set({ messageTypes })} />
      <div className="fields">
        <CheckboxGroup legend="Priorities" options={PRIORITIES} value={v.priorities} onChange={(priorities) => set({ priorities })} />
        <CheckboxGroup legend="Sender kinds" options={KINDS} value={v.senderKinds} onChange={(senderKinds) => set({ senderKinds })} />
        <CheckboxGroup legend="Recipient kinds" options={KINDS} value={v.recipientKinds} onChange={(recipientKinds) => set({ recipientKinds })} />
      </div>
      <div className="fields">
        {text('Other message types', 'otherMessageTypes', 'comma-separated names')}
        {text('Sender device ids', 'senderDeviceIds', 'comma-separated UUIDs')}
        {text('Recipient device ids', 'recipientDeviceIds', 'comma-separated UUIDs')}
        {text('Sender hub addresses', 'senderHubAddresses', 'comma-separated, e.g. acme-research')}
        <Field label="Sender tier below">
          {(id) => (
            <select id={id} value={v.senderTierBelow} onChange={(e) => set({ senderTierBelow: e.target.value as PolicyFormValues['senderTierBelow'] })}>
              <option value="">any tier</option>
              {TIERS.map((t) => (
                <option key={t} value={t}>
                  {t}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Sender trust score below" hint="0 to 1">
          {(id, hintId) => <input id={id} aria-describedby={hintId} type="number" min={0} max={1} step={0.01} value={v.trustScoreBelow} onChange={(e) => set({ trustScoreBelow: e.target.value })} />}
        </Field>
        <Field label="From (UTC hour)" hint="with To; may wrap midnight, e.g. 22:00 to 06:00">
          {(id, hintId) => <input id={id} aria-describedby={hintId} type="time" step={3600} value={v.hoursFrom} onChange={(e) => set({ hoursFrom: e.target.value })} />}
        </Field>
        <Field label="To (UTC hour)">{(id) => <input id={id} type="time" step={3600} value={v.hoursTo} onChange={(e) => set({ hoursTo: e.target.value })} />}</Field>
        <Field label="Sender's messages per minute over">
          {(id) => <input id={id} type="number" min={0} step={1} value={v.ratePerMinuteOver} onChange={(e) => set({ ratePerMinuteOver: e.target.value })} />}
        </Field>
        <Field label="Cross-tenant">{(id) => <EnumSelect id={id} options={['any', 'yes', 'no'] as const} value={v.crossTenant} onChange={(crossTenant) => set({ crossTenant })} labels={CROSS_WORDS} />}</Field>
      </div>
    </fieldset>
  );
}

/** Create (no `policy`) or edit a policy (design §8.5); `onDone` after a save or cancel. */
export function PolicyForm({ policy, rooms, onDone }: { policy?: Policy; rooms: RoomSummary[] | undefined; onDone?: () => void }) {
  const { client } = useOwner();
  const initial = useMemo(() => (policy ? policyToForm(policy) : EMPTY_POLICY_FORM), [policy]);
  const [v, set, clear] = useFormDraft(`policy.${policy?.policy_id ?? 'new'}`, initial);
  const [invalid, setInvalid] = useState<string>();
  const save = useRootMutation('policies', (body: CreatePolicyRequest) => (policy ? client.updatePolicy(policy.policy_id, body) : client.createPolicy(body)));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const r = formToPolicyBody(v);
    setInvalid(r.ok ? undefined : r.error);
    if (r.ok)
      save.mutate(r.body, {
        onSuccess: () => {
          clear();
          onDone?.();
        },
      });
  };
  const name = policy ? `Edit ${policy.name}` : 'New policy';
  return (
    <form className="stack" onSubmit={submit} aria-label={name}>
      <div className="fields">
        <Field label="Name">{(id) => <input id={id} value={v.name} maxLength={200} required onChange={(e) => set({ name: e.target.value })} />}</Field>
        <Field label="Action">{(id) => <EnumSelect id={id} options={POLICY_ACTIONS} value={v.action} onChange={(action) => set({ action })} labels={ACTION_WORDS} />}</Field>
        <Field label="Priority" hint="higher first; decides which of equally strict policies is reported">
          {(id, hintId) => <input id={id} aria-describedby={hintId} type="number" step={1} value={v.priority} placeholder="0" onChange={(e) => set({ priority: e.target.value })} />}
        </Field>
        <div className="field">
          <label className="check">
            <input type="checkbox" checked={v.enabled} onChange={(e) => set({ enabled: e.target.checked })} />
            Enabled
          </label>
        </div>
      </div>
      <Scope v={v} set={set} rooms={rooms} />
      <Conditions v={v} set={set} />
      {invalid && (
        <p className="error" role="alert">
          {invalid}
        </p>
      )}
      <ErrorNote error={save.error} />
      <div className="row">
        <button type="submit" className="primary" disabled={save.isPending}>
          {policy ? 'Save changes' : 'Create policy'}
        </button>
        {onDone && (
          <button
            type="button"
            onClick={() => {
              clear();
              onDone();
            }}
          >
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}
