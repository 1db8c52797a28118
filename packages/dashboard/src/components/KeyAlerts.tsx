/**
 * Key transparency in the web app's words (design §8.39): the list of key-transparency alerts
 * (which device's key, what the reporting device saw, when) and the refusal shown in a chat whose
 * peer keys this browser refused. Both are `role="alert"`: a refused key may mean the service
 * serves keys that are not the devices' own.
 */
import { useId } from 'react';
import { Link } from 'react-router';
import { keyAlertReasonText, keyLabelText, reporterText, type KeyAlert, type KeyRefusal } from '../lib/key-alerts';
import { shortId, type NameMap } from '../lib/names';
import { Time } from './ui';

/**
 * The alerts, newest first (each `data-testid="key-alert"` with `data-reason` and `data-label`):
 * "<device>'s <keys>: <reporter> <reason> (<time>)." and below it the reporting device's detail
 * and the raw label; `onDismiss` hides them (a button "Dismiss key transparency alerts").
 */
export function KeyAlertList({ alerts, names, onDismiss }: { alerts: readonly KeyAlert[]; names: NameMap; onDismiss?: () => void }) {
  const heading = useId();
  if (alerts.length === 0) return null;
  return (
    <div className="key-alerts error" role="alert" aria-labelledby={heading} data-testid="key-alerts">
      <h2 id={heading}>{alerts.length === 1 ? 'Key transparency alert' : `${alerts.length} key transparency alerts`}</h2>
      <ul>
        {alerts.map((a) => {
          const { who, what } = keyLabelText(a.label, names);
          return (
            <li key={`${a.label}|${a.reason}|${a.device_id ?? ''}`} data-testid="key-alert" data-reason={a.reason} data-label={a.label}>
              <strong>
                {who}&apos;s {what}
              </strong>
              : {reporterText(a.device_id, names)} {keyAlertReasonText(a.reason)} (<Time iso={a.reported_at} />
              ).
              <div className="detail">
                {a.detail} <code>{a.label}</code>
              </div>
            </li>
          );
        })}
      </ul>
      <p>
        The service may be serving keys that are not these devices&apos; own: compare their fingerprints on the devices themselves. Every report is in the <Link to="/audit">audit log</Link>.
      </p>
      {onDismiss && (
        <button type="button" onClick={onDismiss}>
          Dismiss key transparency alerts
        </button>
      )}
    </div>
  );
}

/**
 * A chat's key-transparency refusal (`data-testid="key-transparency-refusal"`): key transparency
 * refused the keys the service served for the peer device (named, with its id), so no session was
 * started or accepted and nothing was sent; the messenger's detail and the time below.
 */
export function KeyRefusalNote({ refusal, peerName, peerDeviceId }: { refusal: KeyRefusal; peerName: string; peerDeviceId: string }) {
  return (
    <div className="error" role="alert" data-testid="key-transparency-refusal" data-peer={peerDeviceId}>
      <p>
        <strong>Key transparency refused the keys of {peerName}</strong> (device <code title={peerDeviceId}>{shortId(peerDeviceId)}</code>): the service served keys for it that the key directory
        does not prove. No end-to-end session was started or accepted with it: nothing was sent to it (your message was not sent) and nothing from it is read until its keys check out. Your
        owner devices were alerted.
      </p>
      <p className="detail">
        {refusal.detail} (<Time iso={refusal.at} />)
      </p>
    </div>
  );
}
