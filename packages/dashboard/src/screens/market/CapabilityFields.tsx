/**
 * A hub capability's inputs (name, version, description, input JSON Schema, SLA) as a fieldset,
 * shared by the registration form and "Add capability"; and that form, which registers one
 * capability of an identity (`POST /hub/{hub_address}/capabilities`, lib/hub-form.ts).
 */
import { useState, type FormEvent, type ReactNode } from 'react';
import { useOwner } from '../../app/owner-context';
import { ErrorNote } from '../../components/ui';
import { capabilityBody, EMPTY_CAPABILITY_FORM, type CapabilityFormValues } from '../../lib/hub-form';
import { useFormDraft } from '../../lib/json-draft';
import { useRootMutation } from '../../lib/mutate';
import { Field } from '../form-parts';

/** The inputs of one capability, in a fieldset titled `legend`; `actions` go under them (e.g. Remove). */
export function CapabilityFields({ legend, value: v, onChange, actions }: { legend: string; value: CapabilityFormValues; onChange: (patch: Partial<CapabilityFormValues>) => void; actions?: ReactNode }) {
  return (
    <fieldset className="group">
      <legend>{legend}</legend>
      <div className="fields">
        <Field label="Capability name" hint="e.g. translate">
          {(id, hintId) => <input id={id} aria-describedby={hintId} value={v.name} maxLength={100} onChange={(e) => onChange({ name: e.target.value })} />}
        </Field>
        <Field label="Version" hint="1, 1.2 or 1.2.3">
          {(id, hintId) => <input id={id} aria-describedby={hintId} value={v.version} maxLength={100} onChange={(e) => onChange({ version: e.target.value })} />}
        </Field>
        <Field label="p95 latency (ms)" hint="optional, with uptime">
          {(id, hintId) => <input id={id} aria-describedby={hintId} inputMode="numeric" value={v.latencyMs} onChange={(e) => onChange({ latencyMs: e.target.value })} />}
        </Field>
        <Field label="Uptime (0 to 1)" hint="optional, e.g. 0.99">
          {(id, hintId) => <input id={id} aria-describedby={hintId} inputMode="decimal" value={v.uptime} onChange={(e) => onChange({ uptime: e.target.value })} />}
        </Field>
      </div>
      <Field label="What it does">{(id) => <input id={id} value={v.description} maxLength={1000} onChange={(e) => onChange({ description: e.target.value })} />}</Field>
      <Field label="Input schema (JSON Schema)" hint="the JSON object callers send; checked by the service">
        {(id, hintId) => <textarea id={id} aria-describedby={hintId} rows={4} spellCheck={false} value={v.inputSchema} onChange={(e) => onChange({ inputSchema: e.target.value })} />}
      </Field>
      {actions}
    </fieldset>
  );
}

/** "Add capability" of the identity at `hubAddress`: one more capability record. */
export function AddCapability({ hubAddress }: { hubAddress: string }) {
  const { client } = useOwner();
  const [v, set, clear] = useFormDraft(`hub.capability.${hubAddress}`, EMPTY_CAPABILITY_FORM);
  const [invalid, setInvalid] = useState<string>();
  const add = useRootMutation('market', (body: Parameters<typeof client.registerHubCapability>[1]) => client.registerHubCapability(hubAddress, body));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const r = capabilityBody(v);
    setInvalid(r.ok ? undefined : r.error);
    if (r.ok) add.mutate(r.body, { onSuccess: clear });
  };
  return (
    <form className="stack" onSubmit={submit} aria-label={`Add a capability to ${hubAddress}`}>
      <CapabilityFields legend="New capability" value={v} onChange={set} />
      {invalid && (
        <p className="error" role="alert">
          {invalid}
        </p>
      )}
      <ErrorNote error={add.error} />
      <div className="row">
        <button type="submit" disabled={add.isPending}>
          Add capability
        </button>
      </div>
    </form>
  );
}
