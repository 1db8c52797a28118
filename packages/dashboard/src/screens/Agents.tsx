/**
 * Agents and devices (contract §2.3, §3.2, §4.3; design §7, §8.2): pending
 * enrollments with the fingerprint to compare against what the agent shows, Approve / Reject;
 * agents with health, last seen, rename, webhook and revoke (confirmed); owner devices; invites.
 * Updates live from `device_*` socket events.
 */
import type { Device, WebhookResponse } from '@parley/sdk';
import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { useOwner } from '../app/owner-context';
import { groupDevices } from '../lib/devices';
import { useRootMutation } from '../lib/mutate';
import { toneOf } from '../lib/tones';
import { useDeviceList } from '../lib/use-devices';
import { useDraft } from '../lib/drafts';
import { ago, Badge, ConfirmButton, Empty, ErrorNote, Head, Health, Loading, Section, Time } from '../components/ui';
import { Invites } from './Invites';

function useDeviceAction<T>(fn: (id: string) => Promise<T>) {
  return useRootMutation('devices', fn);
}

function Pending({ devices }: { devices: Device[] }) {
  const { client } = useOwner();
  const approve = useDeviceAction((id) => client.approveDevice(id));
  const reject = useDeviceAction((id) => client.rejectDevice(id));
  if (devices.length === 0) return null;
  return (
    <Section title="Waiting for your approval">
      <p>
        Compare each fingerprint with the one the agent prints when it enrolls. Approve only when they match exactly: a different fingerprint means someone
        else holds the invite.
      </p>
      <ErrorNote error={approve.error ?? reject.error} />
      <ul className="stack" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
        {devices.map((d) => (
          <li key={d.device_id} className="card" data-testid={`pending-${d.device_id}`}>
            <div className="row">
              <strong>{d.name}</strong>
              <span className="muted">{d.platform ?? 'unknown platform'}</span>
              <span className="muted">
                enrolled <Time iso={d.enrolled_at} />
              </span>
            </div>
            <div>
              Fingerprint: <span className="fingerprint" data-testid="pending-fingerprint">{d.fingerprint}</span>
            </div>
            <div className="row">
              <button type="button" className="primary" aria-label={`Approve ${d.name}`} onClick={() => approve.mutate(d.device_id)} disabled={approve.isPending}>
                Approve
              </button>
              <ConfirmButton label="Reject" confirmLabel={`Yes, reject ${d.name}`} onConfirm={() => reject.mutate(d.device_id)} />
            </div>
          </li>
        ))}
      </ul>
    </Section>
  );
}

function Rename({ device }: { device: Device }) {
  const { client } = useOwner();
  const [name, setName, clear] = useDraft(`rename.${device.device_id}`);
  const rename = useDeviceAction((id) => client.renameDevice(id, { name: name.trim() }));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    rename.mutate(device.device_id, { onSuccess: clear });
  };
  return (
    <form className="inline" onSubmit={submit}>
      <label htmlFor={`name-${device.device_id}`}>New name</label>
      <input id={`name-${device.device_id}`} value={name} placeholder={device.name} maxLength={100} required onChange={(e) => setName(e.target.value)} />
      <button type="submit" disabled={rename.isPending}>
        Rename
      </button>
      <ErrorNote error={rename.error} />
    </form>
  );
}

function Webhook({ device }: { device: Device }) {
  const { client } = useOwner();
  const [url, setUrl, clear] = useDraft(`webhook.${device.device_id}`);
  const [answer, setAnswer] = useState<WebhookResponse>();
  const save = useDeviceAction((id) => client.setDeviceWebhook(id, { url: url.trim() === '' ? null : url.trim() }));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate(device.device_id, {
      onSuccess: (a) => {
        setAnswer(a);
        clear();
      },
    });
  };
  return (
    <form className="inline" onSubmit={submit}>
      <label htmlFor={`hook-${device.device_id}`}>Webhook URL</label>
      <input id={`hook-${device.device_id}`} type="url" value={url} placeholder={device.webhook_url ?? 'https://…  (empty removes it)'} onChange={(e) => setUrl(e.target.value)} />
      <button type="submit" disabled={save.isPending}>
        Save webhook
      </button>
      <ErrorNote error={save.error} />
      {answer?.secret && (
        <p role="status">
          Signing secret (shown once): <code>{answer.secret}</code>
        </p>
      )}
    </form>
  );
}

function AgentRow({ device }: { device: Device }) {
  const { client } = useOwner();
  const revoke = useDeviceAction((id) => client.revokeDevice(id));
  return (
    <tr data-testid={`agent-${device.device_id}`}>
      <td>
        <strong>{device.name}</strong>
        <div className="muted">{device.platform ?? ''}</div>
        <div>
          <span className="fingerprint">{device.fingerprint}</span>
        </div>
      </td>
      <td>
        <Badge tone={toneOf(device.status)}>
          <span data-testid={`agent-status-${device.device_id}`}>{device.status}</span>
        </Badge>
      </td>
      <td>
        <Health health={device.health} />
      </td>
      <td>
        <span title={device.last_seen ?? ''}>{ago(device.last_seen)}</span>
      </td>
      <td>
        <div className="stack">
          {device.status === 'ACTIVE' && (
            <div className="row">
              <Link to={`/trust/${device.device_id}`}>Trust</Link>
              <Link to="/conversations">Chat</Link>
            </div>
          )}
          <details>
            <summary>Rename, webhook</summary>
            <Rename device={device} />
            <Webhook device={device} />
          </details>
          {device.status !== 'REVOKED' && <ConfirmButton label="Revoke" confirmLabel={`Yes, revoke ${device.name}`} onConfirm={() => revoke.mutate(device.device_id)} />}
          <ErrorNote error={revoke.error} />
        </div>
      </td>
    </tr>
  );
}

function DeviceTable({ devices, empty, children }: { devices: Device[]; empty: string; children: (d: Device) => React.ReactNode }) {
  if (devices.length === 0) return <Empty>{empty}</Empty>;
  return (
    <table>
      <Head columns={['Name', 'Status', 'Health', 'Last seen', 'Actions']} />
      <tbody>{devices.map(children)}</tbody>
    </table>
  );
}

function OwnerRow({ device, self }: { device: Device; self: boolean }) {
  return (
    <tr>
      <td>
        <strong>{device.name}</strong> {self && <Badge tone="info">this browser</Badge>}
        <div>
          <span className="fingerprint">{device.fingerprint}</span>
        </div>
      </td>
      <td>
        <Badge tone={toneOf(device.status)}>{device.status}</Badge>
      </td>
      <td>
        <Health health={device.health} />
      </td>
      <td>{ago(device.last_seen)}</td>
      <td>
        <Link to="/settings">Manage</Link>
      </td>
    </tr>
  );
}

/** The Agents & devices screen. */
export function Agents() {
  const owner = useOwner();
  const devices = useDeviceList();
  // Until the list has loaded there is nothing to say about it: no "No agents yet" before it arrives.
  const groups = devices.data ? groupDevices(devices.data) : undefined;
  return (
    <>
      <h1>Agents &amp; devices</h1>
      <ErrorNote error={devices.error} />
      {groups && <Pending devices={groups.pending} />}
      <Section title="Agents">
        {devices.isPending && <Loading what="Loading agents" />}
        {groups && (
          <DeviceTable devices={groups.agents} empty="No agents yet: create an invite below and start an agent with its token.">
            {(d) => <AgentRow key={d.device_id} device={d} />}
          </DeviceTable>
        )}
      </Section>
      <Section title="Owner devices">
        {devices.isPending && <Loading what="Loading owner devices" />}
        {groups && (
          <DeviceTable devices={groups.owners} empty="No owner devices.">
            {(d) => <OwnerRow key={d.device_id} device={d} self={d.device_id === owner.deviceId} />}
          </DeviceTable>
        )}
      </Section>
      <Invites />
    </>
  );
}
