/**
 * The key-transparency alerts above every screen (design §8.39): the `key_directory_alert` events
 * this page received and this browser's own-key findings (`OwnerRuntime.keyAlerts`), with the
 * `key_directory.alert` audit events of the last 7 days (reports made while the app was closed;
 * refetched on every socket event, `lib/live.ts`), one per label, reason and reporting device.
 * "Dismiss" hides what is shown on this browser until a newer alert comes.
 */
import { useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { KeyAlertList } from '../components/KeyAlerts';
import { alertsFromAudit, mergeKeyAlerts, useKeyAlerts, type KeyAlert } from '../lib/key-alerts';
import { useDeviceNames } from '../lib/use-devices';
import { useOwner } from './owner-context';

/** How far back the audit log is read for alerts (ms). */
export const KEY_ALERT_WINDOW_MS = 7 * 24 * 3600 * 1000;

const dismissedKey = (deviceId: string) => `parley.key-alerts.dismissed.${deviceId}`;

function loadDismissed(deviceId: string): string | undefined {
  try {
    return localStorage.getItem(dismissedKey(deviceId)) ?? undefined;
  } catch {
    return undefined;
  }
}

/** The alerts with device names (the device list is read only when there is something to show). */
function Named({ alerts, onDismiss }: { alerts: readonly KeyAlert[]; onDismiss: () => void }) {
  const names = useDeviceNames();
  return <KeyAlertList alerts={alerts} names={names} onDismiss={onDismiss} />;
}

/** The banner: nothing when there is no alert to show. */
export function KeyAlertBanner() {
  const owner = useOwner();
  const live = useKeyAlerts(owner.keyAlerts).alerts;
  const [since] = useState(() => new Date(Date.now() - KEY_ALERT_WINDOW_MS).toISOString());
  const [dismissed, setDismissed] = useState(() => loadDismissed(owner.deviceId));
  const audit = useQuery({
    queryKey: ['audit', 'key-alerts', since],
    queryFn: () => owner.client.listAuditEvents({ type: 'key_directory.alert', since, limit: 20 }),
    enabled: typeof owner.client.listAuditEvents === 'function',
  });
  const alerts = useMemo(() => {
    const after = dismissed ? Date.parse(dismissed) : 0;
    return mergeKeyAlerts(alertsFromAudit(audit.data?.events ?? []), live).filter((a) => Date.parse(a.reported_at) > after);
  }, [audit.data, live, dismissed]);
  if (alerts.length === 0) return null;
  const dismiss = () => {
    const now = new Date().toISOString();
    try {
      localStorage.setItem(dismissedKey(owner.deviceId), now);
    } catch {
      // Private mode: dismissed for this page only.
    }
    setDismissed(now);
  };
  return <Named alerts={alerts} onDismiss={dismiss} />;
}
