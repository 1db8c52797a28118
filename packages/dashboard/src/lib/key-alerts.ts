/**
 * Key-transparency alerts and refusals in the web app (design §8.39): what the owner is shown when
 * a device of the tenant refused a key whose proof failed, or found a key in its own name that it
 * did not publish (`key_directory_alert` socket events, `key_directory.alert` audit events, and this
 * browser's own messenger `key_transparency` errors), and the refusals of this browser's messenger
 * per conversation (no session with the peer: nothing was sent). Plain data and words; the React
 * parts are `components/KeyAlerts.tsx` and `app/KeyAlertBanner.tsx`.
 */
import type { AuditEvent, KeyDirectoryAlertEvent, KeyDirectoryReportReason } from '@parley/sdk';
import { useCallback, useSyncExternalStore } from 'react';
import { shortId, type NameMap } from './names';

/** One alert as the `key_directory_alert` socket event carries it: `{label, reason, detail, device_id, reported_at}`. */
export type KeyAlert = KeyDirectoryAlertEvent;

/** A conversation whose peer keys this browser's messenger refused (design §8.39): no session, nothing sent. */
export interface KeyRefusal {
  conversation_id: string;
  /** The messenger's message (`key transparency: …; no session with <device id>`). */
  detail: string;
  /** When it was refused (ISO 8601, this browser's clock). */
  at: string;
}

/** What each report reason says the reporting device did. */
const REASON_TEXT: Record<KeyDirectoryReportReason, string> = {
  verification_failed: 'refused a key whose proof failed',
  unpublished_key: 'found a key it did not publish',
};

/** The words of a report reason ("refused a key whose proof failed" / "found a key it did not publish"). */
export function keyAlertReasonText(reason: string): string {
  return REASON_TEXT[reason as KeyDirectoryReportReason] ?? `reported a key (${reason})`;
}

const DEVICE_LABEL = /^device\/([0-9a-f-]{36})(?:\/(.+))?$/;
const PARTS: [RegExp, string][] = [
  [/^signed-prekey$/, 'signed prekey'],
  [/^pq-prekey$/, 'post-quantum prekey'],
  [/^one-time-prekey\//, 'one-time prekey'],
  [/^pq-one-time-prekey\//, 'post-quantum one-time prekey'],
];

/**
 * What a key directory label names, in the owner's words (design §8.39 labels): `device/<id>` is
 * the device's name (its short id when unknown) with "identity keys"; `device/<id>/signed-prekey`
 * and the other prekey labels name the prekey; any other label (`did/…`) is shown as it is.
 * @returns `{who, what}`: the device (or the label) and which of its keys.
 */
export function keyLabelText(label: string, names: NameMap): { who: string; what: string } {
  const m = DEVICE_LABEL.exec(label);
  if (!m) return { who: label, what: 'key' };
  const name = names.get(m[1]!)?.trim();
  const who = name ? name : `device ${shortId(m[1]!)}`;
  const sub = m[2];
  if (sub === undefined) return { who, what: 'identity keys' };
  return { who, what: PARTS.find(([re]) => re.test(sub))?.[1] ?? sub };
}

/** The reporting device's name ("an owner session" when the report named no device). */
export function reporterText(deviceId: string | null, names: NameMap): string {
  if (!deviceId) return 'an owner session';
  const name = names.get(deviceId)?.trim();
  return name ? name : `device ${shortId(deviceId)}`;
}

/** The alerts of `key_directory.alert` audit events (subject = label; data `{reason, detail, device_id}`); other events are skipped. */
export function alertsFromAudit(events: readonly AuditEvent[]): KeyAlert[] {
  const out: KeyAlert[] = [];
  for (const e of events) {
    const d = (e.data ?? {}) as { reason?: string; detail?: string; device_id?: string | null };
    if (e.type !== 'key_directory.alert' || !e.subject || (d.reason !== 'verification_failed' && d.reason !== 'unpublished_key')) continue;
    out.push({ label: e.subject, reason: d.reason, detail: d.detail ?? '', device_id: d.device_id ?? null, reported_at: e.created_at });
  }
  return out;
}

/**
 * One alert per label, reason and reporting device (the newest), newest first: the same problem
 * seen live, in the audit log and by this browser's own check is shown once.
 */
export function mergeKeyAlerts(...lists: readonly (readonly KeyAlert[])[]): KeyAlert[] {
  const newest = new Map<string, KeyAlert>();
  for (const a of lists.flat()) {
    const key = `${a.label}|${a.reason}|${a.device_id ?? ''}`;
    const had = newest.get(key);
    if (!had || Date.parse(a.reported_at) > Date.parse(had.reported_at)) newest.set(key, a);
  }
  return [...newest.values()].sort((a, b) => Date.parse(b.reported_at) - Date.parse(a.reported_at));
}

/** A messenger error of code `key_transparency` (duck-typed: `SecureMessengerError` crosses bundles), else undefined. */
export function keyTransparencyError(err: unknown): (Error & { code: string; conversationId?: string }) | undefined {
  if (!(err instanceof Error) || err.name !== 'SecureMessengerError') return undefined;
  const e = err as Error & { code?: unknown; conversationId?: string };
  return e.code === 'key_transparency' ? (e as Error & { code: string; conversationId?: string }) : undefined;
}

const LABEL_IN_TEXT = /device\/[0-9a-f-]{36}(?:\/(?:pq-)?(?:signed-prekey|prekey|one-time-prekey\/[^\s;,)]+))?/;

/**
 * The alert of this device's own check (a `key_transparency` error without a conversation, design
 * §8.39 monitoring): the label named in its message (this device's `device/<id>` otherwise), and
 * `unpublished_key` when the directory holds another value or none (`key_mismatch`,
 * `not_in_directory`), as the SDK reports it.
 */
export function ownKeyAlert(err: Error, deviceId: string, now = new Date()): KeyAlert {
  const code = (err.cause as { code?: unknown } | undefined)?.code;
  const foreign = code === 'key_mismatch' || code === 'not_in_directory';
  return {
    label: LABEL_IN_TEXT.exec(err.message)?.[0] ?? `device/${deviceId}`,
    reason: foreign ? 'unpublished_key' : 'verification_failed',
    detail: err.message,
    device_id: deviceId,
    reported_at: now.toISOString(),
  };
}

/**
 * The key-transparency state of one signed-in browser: alerts seen live (socket events, this
 * device's own check) and the messenger's refusals per conversation. Observable for React
 * (`subscribe`, and a snapshot that changes identity on every change).
 */
export class KeyAlerts {
  private alerts: readonly KeyAlert[] = [];
  private refusals: ReadonlyMap<string, KeyRefusal> = new Map();
  private readonly listeners = new Set<() => void>();

  /** The alerts seen so far (one per label, reason and reporter; newest first). */
  list(): readonly KeyAlert[] {
    return this.alerts;
  }

  /** The refusal of the conversation, if its peer's keys were refused in this page. */
  refusal(conversationId: string): KeyRefusal | undefined {
    return this.refusals.get(conversationId);
  }

  /** Add an alert (a `key_directory_alert` event's data, or this device's own finding). */
  add(alert: KeyAlert): void {
    this.alerts = mergeKeyAlerts(this.alerts, [alert]);
    this.changed();
  }

  /** Record that the peer keys of a conversation were refused. */
  refuse(refusal: KeyRefusal): void {
    this.refusals = new Map(this.refusals).set(refusal.conversation_id, refusal);
    this.changed();
  }

  /** Forget a conversation's refusal (a later send went through). */
  clearRefusal(conversationId: string): void {
    if (!this.refusals.has(conversationId)) return;
    const next = new Map(this.refusals);
    next.delete(conversationId);
    this.refusals = next;
    this.changed();
  }

  /**
   * Take a messenger error: a `key_transparency` one with a conversation is a refusal, without
   * one it is this device's own check (`ownKeyAlert`).
   * @returns whether it was a key-transparency error (else the caller shows it as a warning).
   */
  fromError(err: unknown, ownDeviceId: string): boolean {
    const kt = keyTransparencyError(err);
    if (!kt) return false;
    if (kt.conversationId) this.refuse({ conversation_id: kt.conversationId, detail: kt.message, at: new Date().toISOString() });
    else this.add(ownKeyAlert(kt, ownDeviceId));
    return true;
  }

  /** Call `fn` on every change; answers the unsubscribe. */
  subscribe(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => void this.listeners.delete(fn);
  }

  /** A value that changes identity on every change (for `useSyncExternalStore`). */
  snapshot(): { alerts: readonly KeyAlert[]; refusals: ReadonlyMap<string, KeyRefusal> } {
    return (this.last ??= { alerts: this.alerts, refusals: this.refusals });
  }
  private last: { alerts: readonly KeyAlert[]; refusals: ReadonlyMap<string, KeyRefusal> } | undefined;

  private changed(): void {
    this.last = undefined;
    for (const fn of this.listeners) fn();
  }
}

const EMPTY = { alerts: [] as readonly KeyAlert[], refusals: new Map<string, KeyRefusal>() as ReadonlyMap<string, KeyRefusal> };

/** The live state of `store` in a component (empty when there is none, as in tests of other screens). */
export function useKeyAlerts(store: KeyAlerts | undefined): { alerts: readonly KeyAlert[]; refusals: ReadonlyMap<string, KeyRefusal> } {
  const subscribe = useCallback((fn: () => void) => (store ? store.subscribe(fn) : () => undefined), [store]);
  return useSyncExternalStore(subscribe, () => store?.snapshot() ?? EMPTY);
}
