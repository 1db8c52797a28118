/**
 * Key transparency in the owner web app (design §8.39): the words of an alert (device name for a
 * `device/<id>` label, reason, reporter, time), alerts from socket events, the audit log and this
 * browser's own check merged and dismissed, the banner above the screens, a chat whose agent keys
 * were refused (the refusal named, the message not shown as sent, the draft kept), and the push
 * worker's `key_alert` notification. axe-core structure rules on what is rendered.
 */
import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import { MemorySessionStore, SecureMessengerError, type AuditEvent } from '@parley/sdk';
import { act, cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import axe from 'axe-core';
import { Route, Routes } from 'react-router';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { KeyAlertList } from '../src/components/KeyAlerts';
import { ChatLog } from '../src/lib/chat-log';
import { alertsFromAudit, KeyAlerts, keyAlertReasonText, keyLabelText, mergeKeyAlerts, ownKeyAlert, type KeyAlert } from '../src/lib/key-alerts';
import { renderInApp } from './render';

const ME = '00000000-0000-4000-8000-000000000001';
const AGENT = '00000000-0000-4000-8000-000000000002';
const STRANGER = '00000000-0000-4000-8000-0000000000ff';
const CONV = '00000000-0000-4000-8000-0000000000c1';
const AT = '2026-03-01T12:00:00.000Z';
const LATER = '2026-03-01T12:05:00.000Z';
const NAMES = new Map([
  [ME, 'Chromium (web app)'],
  [AGENT, 'builder'],
]);

const alert = (over: Partial<KeyAlert> = {}): KeyAlert => ({ label: `device/${AGENT}`, reason: 'verification_failed', detail: 'key transparency: the key served for device/x is not the one the key directory holds', device_id: ME, reported_at: AT, ...over });
const auditEvent = (n: number, a: KeyAlert, type = 'key_directory.alert'): AuditEvent => ({
  event_id: `00000000-0000-4000-8000-00000000010${n}`,
  type,
  actor: `device:${a.device_id}`,
  subject: a.label,
  data: { reason: a.reason, detail: a.detail, device_id: a.device_id },
  created_at: a.reported_at,
  prev_hash: '0'.repeat(64),
  hash: `${n}`.repeat(64),
});

async function axeViolations(container: HTMLElement): Promise<string[]> {
  const r = await axe.run(container, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] }, rules: { 'color-contrast': { enabled: false } } });
  return r.violations.map((v) => `${v.id}: ${v.nodes.map((n) => String(n.target)).join(' ')}`);
}

const chat = new ChatLog(new MemorySessionStore());
const client = {
  listDevices: vi.fn(async () => ({ devices: [{ device_id: ME, name: 'Chromium (web app)', kind: 'owner', status: 'ACTIVE' }, { device_id: AGENT, name: 'builder', kind: 'agent', status: 'ACTIVE' }] })),
  conversationKeys: vi.fn(async () => ({ fingerprint: 'abcd' })),
  listAuditEvents: vi.fn(async (): Promise<{ events: AuditEvent[]; next_cursor: null }> => ({ events: [], next_cursor: null })),
};
const owner = {
  deviceId: ME,
  chat,
  client,
  keyAlerts: new KeyAlerts(),
  messenger: { sessionInfo: () => undefined, protection: () => ({ scheme: 'x3dh', post_quantum: false }) },
  conversations: vi.fn(async () => [{ conversation_id: CONV, message_group_id: 'g', agent_device_id: AGENT, owner_device_id: ME, created_at: AT, topics: [] }]),
  refreshStatuses: vi.fn(async () => undefined),
  markRead: vi.fn(async () => undefined),
  send: vi.fn(async (): Promise<void> => undefined),
};
vi.mock('../src/app/owner-context', () => ({ useOwner: () => owner }));

const { Conversations } = await import('../src/screens/Conversations');
const { KeyAlertBanner } = await import('../src/app/KeyAlertBanner');

beforeEach(() => {
  vi.clearAllMocks();
  localStorage.clear();
  owner.keyAlerts = new KeyAlerts();
});
afterEach(cleanup);

describe('the words of an alert', () => {
  it('names the device of a device/<id> label, which of its keys, and the reason', () => {
    expect(keyLabelText(`device/${AGENT}`, NAMES)).toEqual({ who: 'builder', what: 'identity keys' });
    expect(keyLabelText(`device/${AGENT}/signed-prekey`, NAMES)).toEqual({ who: 'builder', what: 'signed prekey' });
    expect(keyLabelText(`device/${AGENT}/pq-one-time-prekey/abc`, NAMES)).toEqual({ who: 'builder', what: 'post-quantum one-time prekey' });
    expect(keyLabelText(`device/${STRANGER}`, NAMES)).toEqual({ who: 'device 00000000…', what: 'identity keys' });
    expect(keyLabelText('did/did:hub:x', NAMES)).toEqual({ who: 'did/did:hub:x', what: 'key' });
    expect(keyAlertReasonText('verification_failed')).toBe('refused a key whose proof failed');
    expect(keyAlertReasonText('unpublished_key')).toBe('found a key it did not publish');
  });

  it('reads alerts from the audit log, keeps the newest per label, reason and reporter, newest first', () => {
    const old = alert();
    const newer = alert({ reported_at: LATER, detail: 'again' });
    const own = alert({ label: `device/${ME}`, reason: 'unpublished_key', reported_at: '2026-03-01T12:01:00.000Z' });
    const fromAudit = alertsFromAudit([auditEvent(1, old), auditEvent(2, own), auditEvent(3, old, 'device.revoked')]);
    expect(fromAudit).toEqual([old, own]);
    expect(mergeKeyAlerts(fromAudit, [newer])).toEqual([newer, own]);
  });

  it("takes this device's own finding from a messenger error: the label in its message, unpublished when the directory holds another key", () => {
    const cause = Object.assign(new Error('x'), { code: 'key_mismatch' });
    const err = new SecureMessengerError('key_transparency', `key transparency: the key served for device/${ME}/signed-prekey is not the one the key directory holds for it`, { cause });
    expect(ownKeyAlert(err, ME, new Date(AT))).toEqual({ label: `device/${ME}/signed-prekey`, reason: 'unpublished_key', detail: err.message, device_id: ME, reported_at: AT });
    const store = new KeyAlerts();
    expect(store.fromError(new SecureMessengerError('decrypt_failed', 'bad'), ME)).toBe(false);
    expect(store.fromError(err, ME)).toBe(true);
    expect(store.fromError(new SecureMessengerError('key_transparency', 'key transparency: no', { conversationId: CONV }), ME)).toBe(true);
    expect(store.list().map((a) => a.label)).toEqual([`device/${ME}/signed-prekey`]);
    expect(store.refusal(CONV)?.detail).toBe('key transparency: no');
    store.clearRefusal(CONV);
    expect(store.refusal(CONV)).toBeUndefined();
  });
});

describe('alert list and banner', () => {
  it('shows each alert with the device name, reporter, reason and time, and the raw label', async () => {
    const { container } = renderInApp(<KeyAlertList alerts={[alert({ reported_at: LATER }), alert({ label: `device/${ME}`, reason: 'unpublished_key' })]} names={NAMES} onDismiss={() => undefined} />);
    const box = screen.getByRole('alert');
    expect(within(box).getByRole('heading', { name: '2 key transparency alerts' })).toBeTruthy();
    const [first, second] = within(box).getAllByTestId('key-alert');
    expect(first!.textContent).toMatch(/^builder's identity keys: Chromium \(web app\) refused a key whose proof failed \(/);
    expect(first!.querySelector('time')!.getAttribute('datetime')).toBe(LATER);
    expect(first!.querySelector('code')!.textContent).toBe(`device/${AGENT}`);
    expect(second!.dataset.reason).toBe('unpublished_key');
    expect(second!.textContent).toMatch(/^Chromium \(web app\)'s identity keys: Chromium \(web app\) found a key it did not publish/);
    expect(await axeViolations(container)).toEqual([]);
  });

  it('shows live alerts and the audit log ones, once each; Dismiss hides them until a newer one comes', async () => {
    const now = Date.now();
    const recent = alert({ reported_at: new Date(now - 60_000).toISOString() });
    client.listAuditEvents.mockResolvedValue({ events: [auditEvent(1, recent)], next_cursor: null });
    renderInApp(<KeyAlertBanner />);
    await waitFor(() => expect(screen.getAllByTestId('key-alert')).toHaveLength(1));
    expect(client.listAuditEvents).toHaveBeenCalledWith(expect.objectContaining({ type: 'key_directory.alert', limit: 20 }));
    await waitFor(() => expect(screen.getByTestId('key-alert').textContent).toMatch(/^builder's identity keys/));
    // The same report live: still one; another device's own finding: a second.
    act(() => owner.keyAlerts.add({ ...recent, reported_at: new Date(now - 30_000).toISOString() }));
    expect(screen.getAllByTestId('key-alert')).toHaveLength(1);
    act(() => owner.keyAlerts.add(alert({ label: `device/${ME}`, reason: 'unpublished_key', reported_at: new Date(now - 10_000).toISOString() })));
    expect(screen.getAllByTestId('key-alert').map((li) => li.dataset.reason)).toEqual(['unpublished_key', 'verification_failed']);

    fireEvent.click(screen.getByRole('button', { name: 'Dismiss key transparency alerts' }));
    expect(screen.queryByTestId('key-alerts')).toBeNull();
    expect(localStorage.getItem(`parley.key-alerts.dismissed.${ME}`)).not.toBeNull();
    act(() => owner.keyAlerts.add(alert({ reported_at: new Date(Date.now() + 1000).toISOString() })));
    expect(screen.getAllByTestId('key-alert')).toHaveLength(1);
  });

  it('shows nothing without alerts', async () => {
    renderInApp(<KeyAlertBanner />);
    await waitFor(() => expect(client.listAuditEvents).toHaveBeenCalled());
    expect(screen.queryByTestId('key-alerts')).toBeNull();
  });
});

function openChat() {
  return renderInApp(
    <Routes>
      <Route path="/conversations/:conversationId" element={<Conversations />} />
    </Routes>,
    `/conversations/${CONV}`,
  );
}

describe('a chat whose agent keys were refused', () => {
  it('a refused send names key transparency and the agent, shows no sent message and keeps the draft', async () => {
    owner.send.mockRejectedValueOnce(new SecureMessengerError('key_transparency', `key transparency: the key served for device/${AGENT} is not the one the key directory holds for it; no session with ${AGENT}`, { conversationId: CONV }));
    const { container } = openChat();
    await screen.findByRole('list', { name: 'Messages with builder' });
    fireEvent.change(screen.getByLabelText('Your message'), { target: { value: 'to a forged key' } });
    fireEvent.click(screen.getByRole('button', { name: 'Send' }));
    const note = await screen.findByTestId('key-transparency-refusal');
    expect(note.getAttribute('role')).toBe('alert');
    expect(note.dataset.peer).toBe(AGENT);
    expect(note.textContent).toMatch(/^Key transparency refused the keys of builder \(device 00000000…\)/);
    expect(note.textContent).toContain('your message was not sent');
    expect(note.textContent).toContain(`no session with ${AGENT}`);
    expect(owner.send).toHaveBeenCalledWith(CONV, { type: 'text', payload: { text: 'to a forged key' } });
    // Not shown as sent, not a generic error, and the text stays in the composer.
    expect(screen.queryAllByTestId('chat-message')).toHaveLength(0);
    expect(screen.getAllByRole('alert')).toEqual([note]);
    expect((screen.getByLabelText('Your message') as HTMLInputElement).value).toBe('to a forged key');
    expect(await axeViolations(container)).toEqual([]);
  });

  it("shows the messenger's refusal of the conversation (a session it would not accept) without a send", async () => {
    openChat();
    await screen.findByRole('list', { name: 'Messages with builder' });
    expect(screen.queryByTestId('key-transparency-refusal')).toBeNull();
    act(() => void owner.keyAlerts.fromError(new SecureMessengerError('key_transparency', 'key transparency: the proof failed; no session with the agent', { conversationId: CONV }), ME));
    const note = await screen.findByTestId('key-transparency-refusal');
    expect(note.textContent).toContain('key transparency: the proof failed');
    expect(owner.send).not.toHaveBeenCalled();
  });

  it('a send failing otherwise is shown as before', async () => {
    owner.send.mockRejectedValueOnce(new SecureMessengerError('send_failed', 'the service refused it'));
    openChat();
    await screen.findByRole('list', { name: 'Messages with builder' });
    fireEvent.change(screen.getByLabelText('Your message'), { target: { value: 'hi' } });
    fireEvent.click(screen.getByRole('button', { name: 'Send' }));
    expect((await screen.findByRole('alert')).textContent).toBe('the service refused it');
    expect(screen.queryByTestId('key-transparency-refusal')).toBeNull();
  });
});

describe('push worker', () => {
  it('names a key_alert push and opens the audit log', async () => {
    const source = fs.readFileSync(path.join(import.meta.dirname, '../public/push-sw.js'), 'utf8');
    const listeners: Record<string, (e: unknown) => void> = {};
    const shown: { title: string; options: { body: string; tag: string; data: { url: string } } }[] = [];
    const self = {
      addEventListener: (type: string, fn: (e: unknown) => void) => (listeners[type] = fn),
      registration: { showNotification: async (title: string, options: never) => void shown.push({ title, options }) },
      location: { origin: 'https://parley.example' },
    };
    vm.runInNewContext(source, { self, URL });
    let done: Promise<unknown> = Promise.resolve();
    listeners.push!({ data: { json: () => ({ event: 'key_alert', count: 1 }) }, waitUntil: (p: Promise<unknown>) => (done = p) });
    await done;
    expect(shown).toEqual([{ title: 'Key transparency alert', options: { body: 'Open Parley to read it.', tag: 'key_alert', data: { url: '/audit' } } }]);
  });
});
