/**
 * This browser's owner device and the tenant's owner devices (design §8.1): device id and
 * fingerprint (design §7) of this browser, whether it sends read receipts and whether it is woken
 * by push notifications (design §8.36);
 * the other owner devices can be removed (confirmed). "This browser" says what its local storage
 * protects (lib/sealed-store.ts).
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useOwner } from '../../app/owner-context';
import { ago, Badge, ConfirmButton, Empty, ErrorNote, Head, Health, Loading, Section } from '../../components/ui';
import { useRootMutation } from '../../lib/mutate';
import { useDeviceList } from '../../lib/use-devices';
import { browserPush, disablePush, enablePush, isSubscribed, localPushIds, pushSupported } from '../../lib/web-push';

/** "Notify me on this browser": a Web Push subscription of this owner device (lib/web-push.ts). */
function NotifyMe() {
  const { client, deviceId } = useOwner();
  const qc = useQueryClient();
  const supported = pushSupported();
  const state = useQuery({ queryKey: ['push', deviceId], queryFn: () => isSubscribed(browserPush()), enabled: supported });
  const toggle = useMutation({
    mutationFn: (on: boolean) => (on ? enablePush : disablePush)(browserPush(), client, localPushIds(), deviceId),
    onSettled: () => qc.invalidateQueries({ queryKey: ['push', deviceId] }),
  });
  if (!supported) return <p className="muted">This browser cannot receive push notifications.</p>;
  return (
    <div className="field">
      <label className="check">
        <input type="checkbox" checked={state.data === true} disabled={state.isPending || toggle.isPending} onChange={(e) => toggle.mutate(e.target.checked)} />
        Notify me on this browser
      </label>
      <p className="muted">When the app is closed, this browser shows a notification when a message, decision or approval waits for you. Notifications say what kind of thing waits, never what it says.</p>
      <ErrorNote error={state.error ?? toggle.error} />
    </div>
  );
}

/** This browser's read receipts (`GET`/`PATCH /devices/{id}/settings`): off, agents never see "Read" for what it read. */
function ReadReceipts() {
  const { client, deviceId } = useOwner();
  const settings = useQuery({ queryKey: ['devices', deviceId, 'settings'], queryFn: () => client.getDeviceSettings(deviceId) });
  const save = useRootMutation('devices', (on: boolean) => client.updateDeviceSettings(deviceId, { read_receipts_enabled: on }));
  if (!settings.data) return <ErrorNote error={settings.error} />;
  return (
    <div className="field">
      <label className="check">
        <input type="checkbox" checked={settings.data.read_receipts_enabled} disabled={save.isPending} onChange={(e) => save.mutate(e.target.checked)} />
        Send read receipts from this browser
      </label>
      {settings.data.read_receipts_enabled && !settings.data.read_receipts_effective && <p className="muted">Read receipts are off for the whole tenant (tenant settings).</p>}
      <ErrorNote error={save.error} />
    </div>
  );
}

/** The "This browser" section: its owner device id and fingerprint, and its read receipts. */
export function ThisBrowser() {
  const { deviceId, fingerprint } = useOwner();
  return (
    <Section title="This browser">
      <p className="muted">This browser is one of your owner devices. Agents show this fingerprint when you talk to them; the two must match.</p>
      <p className="muted" data-testid="local-storage-note">
        Its keys, end-to-end sessions and decrypted messages are kept in this browser&apos;s storage, encrypted under a key that scripts on this page can use but not export. That key is stored in the
        same browser profile: anyone who can read the profile&apos;s files (a copy of this computer&apos;s disk or backups, other software running as your user) can decrypt them, so they are as safe as
        this computer account and its disk encryption. An older copy of a single record put back is refused; a whole profile restored from a backup is not detected.
      </p>
      <dl className="kv">
        <dt>Device id</dt>
        <dd>
          <code>{deviceId}</code>
        </dd>
        <dt>Fingerprint</dt>
        <dd>
          <code className="fingerprint">{fingerprint}</code>
        </dd>
      </dl>
      <ReadReceipts />
      <NotifyMe />
    </Section>
  );
}

/** The owner devices section (`GET /devices` of kind owner; `DELETE /devices/{id}/remove`). */
export function OwnerDevices() {
  const { client, deviceId } = useOwner();
  const devices = useDeviceList();
  const remove = useRootMutation('devices', (id: string) => client.removeOwnerDevice(id));
  const owners = devices.data?.filter((d) => d.kind === 'owner');
  return (
    <Section title="Owner devices">
      <ErrorNote error={devices.error ?? remove.error} />
      {devices.isPending && <Loading />}
      {owners?.length === 0 && <Empty>No owner devices.</Empty>}
      {owners && owners.length > 0 && (
        <table>
          <Head columns={['Name', 'Fingerprint', 'Status', 'Health', 'Last seen', 'Actions']} />
          <tbody>
            {owners.map((d) => (
              <tr key={d.device_id}>
                <td>
                  <strong>{d.name}</strong> {d.device_id === deviceId && <Badge tone="info">this browser</Badge>}
                  <div className="muted">{d.platform ?? ''}</div>
                </td>
                <td>
                  <code className="fingerprint">{d.fingerprint}</code>
                </td>
                <td>{d.status}</td>
                <td>
                  <Health health={d.health} />
                </td>
                <td>{ago(d.last_seen)}</td>
                <td>
                  {d.device_id === deviceId ? (
                    <span className="muted">in use</span>
                  ) : (
                    <ConfirmButton label="Remove" confirmLabel={`Yes, remove ${d.name}`} onConfirm={() => remove.mutate(d.device_id)} />
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Section>
  );
}
