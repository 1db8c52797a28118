/**
 * API keys (contract §2.6, §4.8; design §8.17): the tenant's keys (name, environment, prefix,
 * status, created, last used), create (name + environment), revoke and rotate (confirmed), delete
 * a revoked key; the raw key of create and rotate is shown once.
 */
import { API_KEY_ENVS, type ApiKey, type ApiKeyEnv, type ApiKeyWithSecret } from '@parley/sdk';
import { useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useOwner } from '../app/owner-context';
import { ago, Badge, ConfirmButton, Empty, ErrorNote, Head, Loading, Section, Time } from '../components/ui';
import { useDraft } from '../lib/drafts';
import { useRootMutation } from '../lib/mutate';
import { EnumSelect, Field } from './form-parts';
import { KeyOnce } from './KeyOnce';

function CreateKey({ onCreated }: { onCreated: (k: ApiKeyWithSecret) => void }) {
  const { client } = useOwner();
  const [name, setName, clear] = useDraft('api-key.name');
  const [env, setEnv] = useState<ApiKeyEnv>('dev');
  const create = useRootMutation('api-keys', () => client.createApiKey({ name: name.trim(), env }));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate(undefined, {
      onSuccess: (k) => {
        clear();
        onCreated(k);
      },
    });
  };
  return (
    <Section title="Create an API key">
      <form className="fields" onSubmit={submit}>
        <Field label="Name">{(id) => <input id={id} value={name} maxLength={100} required onChange={(e) => setName(e.target.value)} />}</Field>
        <Field label="Environment">{(id) => <EnumSelect id={id} options={API_KEY_ENVS} value={env} onChange={setEnv} />}</Field>
        <div className="field">
          <button type="submit" className="primary" disabled={create.isPending || name.trim() === ''}>
            Create key
          </button>
        </div>
      </form>
      <ErrorNote error={create.error} />
    </Section>
  );
}

function KeyRow({ k, onRotated }: { k: ApiKey; onRotated: (k: ApiKeyWithSecret) => void }) {
  const { client } = useOwner();
  const revoke = useRootMutation('api-keys', () => client.revokeApiKey(k.id));
  const rotate = useRootMutation('api-keys', () => client.rotateApiKey(k.id));
  const remove = useRootMutation('api-keys', () => client.deleteApiKey(k.id));
  const active = k.status === 'active';
  return (
    <tr>
      <td>
        <strong>{k.name}</strong>
        {k.rotated_from && <div className="muted">replaces a rotated key</div>}
      </td>
      <td>{k.env}</td>
      <td>
        <code>{k.prefix}…</code>
      </td>
      <td>
        <Badge tone={active ? 'good' : 'bad'}>{k.status}</Badge>
        {k.revoked_at && (
          <div className="muted">
            <Time iso={k.revoked_at} />
          </div>
        )}
      </td>
      <td>
        <Time iso={k.created_at} />
      </td>
      <td>{ago(k.last_used_at)}</td>
      <td>
        <div className="row">
          {active && (
            <>
              <ConfirmButton label="Rotate" confirmLabel={`Yes, rotate ${k.name}`} danger={false} onConfirm={() => rotate.mutate(undefined, { onSuccess: onRotated })} />
              <ConfirmButton label="Revoke" confirmLabel={`Yes, revoke ${k.name}`} onConfirm={() => revoke.mutate(undefined)} />
            </>
          )}
          {!active && <ConfirmButton label="Delete" confirmLabel={`Yes, delete ${k.name} and its device`} onConfirm={() => remove.mutate(undefined)} />}
        </div>
        <ErrorNote error={rotate.error ?? revoke.error ?? remove.error} />
      </td>
    </tr>
  );
}

/** The API keys screen (contract §4.8; design §8.17). */
export function ApiKeys() {
  const { client } = useOwner();
  const keys = useQuery({ queryKey: ['api-keys'], queryFn: async () => (await client.listApiKeys()).api_keys });
  const [shown, setShown] = useState<{ title: string; secret: string }>();
  const created = (k: ApiKeyWithSecret) => setShown({ title: `New key "${k.name}" (${k.env})`, secret: k.key });
  const rotated = (k: ApiKeyWithSecret) => setShown({ title: `Rotated key "${k.name}": the old key no longer works`, secret: k.key });
  return (
    <>
      <h1>API keys</h1>
      <p className="muted">An agent connects with an API key instead of an invite. A key binds to the first key material it is used with; rotate it if that agent loses its state.</p>
      {shown && <KeyOnce key={shown.secret} title={shown.title} secret={shown.secret} onDismiss={() => setShown(undefined)} />}
      <CreateKey onCreated={created} />
      <Section title="Your API keys">
        <ErrorNote error={keys.error} />
        {keys.isPending && <Loading />}
        {keys.data?.length === 0 && <Empty>No API keys yet.</Empty>}
        {keys.data && keys.data.length > 0 && (
          <table>
            <Head columns={['Name', 'Environment', 'Key', 'Status', 'Created', 'Last used', 'Actions']} />
            <tbody>
              {keys.data.map((k) => (
                <KeyRow key={k.id} k={k} onRotated={rotated} />
              ))}
            </tbody>
          </table>
        )}
      </Section>
    </>
  );
}
