/**
 * First-hour fixes on the owner's screens, against a fake REST client: Agents & devices says
 * nothing about empty lists ("No agents yet", "No owner devices") until the device list has
 * loaded; the audit log shows the names of agents, devices, hub identities, API keys and the
 * owner next to the raw ids; the Trust screen's Recompute button sits in the Fleet header next to
 * its title, with the outcome in the section below.
 */
import type { Device } from '@parley/sdk';
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { renderInApp } from './render';

const AT = '2026-03-01T12:00:00.000Z';
const ME = '00000000-0000-4000-8000-000000000001';
const BOT = '00000000-0000-4000-8000-000000000002';
const HUB = '00000000-0000-4000-8000-000000000003';
const KEY = '00000000-0000-4000-8000-000000000004';

const device = (device_id: string, name: string, kind: Device['kind']): Device => ({
  device_id,
  name,
  kind,
  status: 'ACTIVE',
  platform: 'web',
  health: 'green',
  last_seen: AT,
  fingerprint: 'abcd 0123 abcd 0123 abcd 0123 abcd 0123',
  identity_public_key: 'k',
  ephemeral_public_key: 'e',
  enrolled_at: AT,
  webhook_url: null,
});

/** The device list's answer, released by the test (`release`) to observe the screen while it loads. */
let release: () => void = () => undefined;
const event = (n: number, actor: string, subject: string | null) => ({ event_id: `00000000-0000-4000-8000-00000000010${n}`, type: 'device.approved', actor, subject, data: {}, created_at: AT, prev_hash: '0'.repeat(64), hash: `${n}`.repeat(64) });

const client = {
  listDevices: vi.fn(
    () =>
      new Promise<{ devices: Device[] }>((resolve) => {
        release = () => resolve({ devices: [device(ME, 'Chromium (web app)', 'owner'), device(BOT, 'research-bot', 'agent')] });
      }),
  ),
  listInvites: vi.fn(async () => ({ invites: [] })),
  createInvite: vi.fn(),
  listHubIdentities: vi.fn(async () => ({ identities: [{ id: HUB, hub_address: 'research', display_name: 'Research', device_id: BOT }] })),
  listApiKeys: vi.fn(async () => ({ api_keys: [{ id: KEY, name: 'ci' }] })),
  listAuditEvents: vi.fn(async () => ({ events: [event(1, 'ada@example.com', BOT), event(2, `api_key:${KEY}`, HUB), event(3, `device:${BOT}`, '00000000-0000-4000-8000-0000000000ff')], next_cursor: null })),
  verifyAudit: vi.fn(),
  getAuditLogKey: vi.fn(async () => {
    throw new Error('no log key in this test');
  }),
  getTrustFleet: vi.fn(async () => ({ window: '7d', count: 0, computed_at: null, agents: [] })),
  recomputeTrust: vi.fn(async () => ({ agents: 1, tier_changes: 0, duration_ms: 12 })),
};

vi.mock('../src/app/owner-context', () => ({
  useOwner: () => ({ client, deviceId: ME, fingerprint: 'f', operator: false, session: { sub: 'ada@example.com', email: 'ada@example.com' } }),
}));

const { Agents } = await import('../src/screens/Agents');
const { Audit } = await import('../src/screens/Audit');
const { Trust } = await import('../src/screens/Trust');

beforeEach(() => {
  sessionStorage.clear();
  localStorage.clear();
  vi.clearAllMocks();
});
afterEach(cleanup);

describe('Agents & devices while the device list loads', () => {
  it('shows loading, never "No agents yet" or "No owner devices", then the devices', async () => {
    renderInApp(<Agents />);
    await waitFor(() => expect(client.listDevices).toHaveBeenCalled());
    expect(screen.getByText('Loading agents…')).toBeTruthy();
    expect(screen.getByText('Loading owner devices…')).toBeTruthy();
    expect(screen.queryByText(/No agents yet/)).toBeNull();
    expect(screen.queryByText(/No owner devices/)).toBeNull();
    release();
    await screen.findByText('research-bot');
    expect(screen.getByText('this browser')).toBeTruthy();
    expect(screen.queryByText(/Loading agents/)).toBeNull();
    expect(screen.queryByText(/No owner devices/)).toBeNull();
  });
});

describe('audit log names', () => {
  it('shows who and what each id is next to the raw id', async () => {
    renderInApp(<Audit />);
    release();
    await waitFor(() => expect(screen.getAllByTestId('audit-name').length).toBeGreaterThanOrEqual(5));
    const rows = screen.getAllByRole('row').slice(1);
    const [first, second, third] = rows.map((r) => within(r).getAllByRole('cell'));
    // Columns: Time, Type, Actor, Subject, …
    expect(first![2]!.textContent).toBe('youada@example.com');
    expect(first![3]!.textContent).toBe(`agent research-bot${BOT}`);
    expect(second![2]!.textContent).toBe(`API key ciapi_key:${KEY}`);
    expect(second![3]!.textContent).toBe(`Research (research)${HUB}`);
    expect(third![2]!.textContent).toBe(`agent research-botdevice:${BOT}`);
    // An id nobody knows stays as it is, without a name.
    expect(within(third![3]!).queryByTestId('audit-name')).toBeNull();
    expect(third![3]!.textContent).toBe('00000000-0000-4000-8000-0000000000ff');
  });
});

describe('Trust screen', () => {
  it('puts Recompute in the Fleet header row with the title, and its outcome below', async () => {
    renderInApp(<Trust />, '/trust');
    release();
    const title = await screen.findByRole('heading', { level: 2, name: 'Fleet' });
    const button = screen.getByRole('button', { name: 'Recompute' });
    expect(button.parentElement).toBe(title.parentElement);
    expect(title.parentElement!.className).toBe('card-head');
    fireEvent.click(button);
    const outcome = await screen.findByText(/Scored 1 agent in 12 ms/);
    expect(title.parentElement!.contains(outcome)).toBe(false);
    expect(title.closest('section')!.contains(outcome)).toBe(true);
  });
});
