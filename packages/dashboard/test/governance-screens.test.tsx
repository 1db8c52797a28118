/**
 * The Rooms and Decisions screens against a fake REST client (design §8.3, §8.5, §8.19): the
 * accessible names and test ids the end-to-end tests rely on, held-message and decision answers
 * (new status in the row; a 409's detail in place), and a clean axe-core run (structure rules;
 * colour contrast needs a real browser).
 */
import { ParleyApiError, type Decision, type Device, type HeldMessage, type Policy, type Room } from '@parley/sdk';
import { act, cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import axe from 'axe-core';
import { Route, Routes } from 'react-router';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { renderInApp } from './render';

const OWNER = '00000000-0000-4000-8000-000000000001';
const ALPHA = '00000000-0000-4000-8000-00000000000a';
const BETA = '00000000-0000-4000-8000-00000000000b';
const GAMMA = '00000000-0000-4000-8000-00000000000c';
const ROOM = '00000000-0000-4000-8000-0000000000f1';
const H1 = '00000000-0000-4000-8000-0000000000d1';
const H2 = '00000000-0000-4000-8000-0000000000d2';
const D1 = '00000000-0000-4000-8000-0000000000e1';
const D2 = '00000000-0000-4000-8000-0000000000e2';
const NOW = Date.parse('2026-03-01T12:00:00.000Z');
const iso = (offsetMs: number) => new Date(NOW + offsetMs).toISOString();

function device(device_id: string, name: string, kind: 'owner' | 'agent', status: Device['status'] = 'ACTIVE'): Device {
  return { device_id, name, kind, status, platform: null, health: 'green', last_seen: null, fingerprint: 'f', identity_public_key: 'k', ephemeral_public_key: 'e', enrolled_at: iso(-1e6), webhook_url: null };
}
const member = (device_id: string, kind: 'owner' | 'agent') => ({ device_id, kind, identity_public_key: 'k', ephemeral_public_key: 'e', fingerprint: 'f' });
const room: Room = {
  room_id: ROOM,
  conversation_id: ROOM,
  name: 'Ops',
  security_level: 'strict',
  workspace_id: null,
  archived: false,
  created_at: iso(-1e6),
  mls_capable: false,
  members: [member(OWNER, 'owner'), member(ALPHA, 'agent'), member(BETA, 'agent')],
  policies: [],
  conversations: [
    { conversation_id: '00000000-0000-4000-8000-0000000000c1', device_ids: [OWNER, ALPHA] },
    { conversation_id: '00000000-0000-4000-8000-0000000000c2', device_ids: [ALPHA, BETA] },
  ],
};
const held = (id: string): HeldMessage => ({
  held_message_id: id,
  room_id: ROOM,
  channel_id: null,
  sender_device_id: ALPHA,
  recipient_device_id: BETA,
  policy_id: null,
  message_type: 'text',
  priority: 'high',
  status: 'held',
  created_at: iso(-60_000),
  expires_at: iso(3_600_000),
  decided_at: null,
});
const policy = (policy_id: string, name: string, room_id: string | null, skill: string | null = null): Policy => ({
  policy_id,
  name,
  scope: { room_id, skill },
  priority: 0,
  conditions: { sender_device_ids: [ALPHA], priorities: ['urgent'] },
  action: 'hold',
  enabled: true,
  created_at: iso(0),
  updated_at: iso(0),
});
const decision = (decision_id: string, title: string, defaultOption: boolean): Decision => ({
  decision_id,
  device_id: ALPHA,
  title,
  description: 'Ship the release?',
  options: [
    { option_id: 'ship', label: 'Ship now', risk_level: 'high', ...(defaultOption ? { is_default: true } : {}) },
    { option_id: 'wait', label: 'Wait a day', risk_level: 'low' },
  ],
  deadline: iso(252_000),
  auto_action: { resolution: 'deny' },
  status: 'pending',
  option_id: null,
  note: null,
  created_by: `device:${ALPHA}`,
  created_at: iso(-10_000),
  resolved_at: null,
  resolved_by: null,
});
const conflict = (detail: string) => new ParleyApiError({ status: 409, detail, method: 'POST', path: '/x' });

const client = {
  listDevices: vi.fn(async () => ({ devices: [device(OWNER, 'My browser', 'owner'), device(ALPHA, 'alpha', 'agent'), device(BETA, 'beta', 'agent'), device(GAMMA, 'gamma', 'agent')] })),
  listRooms: vi.fn(async () => ({ rooms: [room] })),
  getRoom: vi.fn(async () => room),
  roomTimeline: vi.fn(async () => ({
    messages: [{ room_message_id: '00000000-0000-4000-8000-0000000000a1', sender_device_id: ALPHA, message_type: 'text', priority: 'high', timestamp: iso(-60_000), cursor: '1', deliveries: [{ recipient_device_id: BETA, outcome: 'held' }] }],
    next_cursor: '1',
  })),
  listPolicies: vi.fn(async () => ({ policies: [policy('00000000-0000-4000-8000-0000000000b1', 'Hold alpha', ROOM), policy('00000000-0000-4000-8000-0000000000b2', 'Everywhere', null), policy('00000000-0000-4000-8000-0000000000b3', 'Skill only', null, 'pay')] })),
  listHeldMessages: vi.fn(async () => [held(H1), held(H2)]),
  approveHeldMessage: vi.fn(async (id: string) => ({ ...held(id), status: 'approved' as const, decided_at: iso(0) })),
  denyHeldMessage: vi.fn(async (): Promise<HeldMessage> => {
    throw conflict('held message is already approved');
  }),
  addRoomMember: vi.fn(async () => room),
  removeRoomMember: vi.fn(async () => undefined),
  createRoom: vi.fn(async () => room),
  listDecisions: vi.fn(async () => ({ decisions: [decision(D1, 'Deploy v2', false), decision(D2, 'Rotate keys', true)], next_cursor: null })),
  resolveDecision: vi.fn(async (id: string, body: { resolution: string; option_id?: string; note?: string }): Promise<Decision> => {
    if (body.resolution === 'defer') throw conflict('decision is already expired: its deadline passed');
    return { ...decision(id, 'Deploy v2', false), status: 'approved', option_id: body.option_id ?? null, note: body.note ?? null, resolved_at: iso(1_000), resolved_by: 'owner' };
  }),
  listAuditEvents: vi.fn(async () => ({ events: [], next_cursor: null })),
};

vi.mock('../src/app/owner-context', () => ({ useOwner: () => ({ client, deviceId: OWNER }) }));

const { Rooms } = await import('../src/screens/Rooms');
const { Decisions } = await import('../src/screens/Decisions');

function show(path: string) {
  return renderInApp(
    <Routes>
      <Route path="/rooms" element={<Rooms />} />
      <Route path="/rooms/:roomId" element={<Rooms />} />
      <Route path="/decisions" element={<Decisions />} />
    </Routes>,
    path,
  );
}

async function axeViolations(container: HTMLElement): Promise<string[]> {
  const r = await axe.run(container, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] }, rules: { 'color-contrast': { enabled: false }, region: { enabled: false } } });
  return r.violations.map((v) => `${v.id}: ${v.nodes.map((n) => String(n.target)).join(' ')}`);
}

beforeEach(() => {
  vi.useFakeTimers({ shouldAdvanceTime: true });
  vi.setSystemTime(NOW);
  sessionStorage.clear();
  vi.clearAllMocks();
});
afterEach(() => {
  cleanup();
  vi.useRealTimers();
});

describe('Rooms', () => {
  it('shows the room: members by name, sessions as pairs, policies, metadata-only timeline', async () => {
    const { container } = show(`/rooms/${ROOM}`);
    expect(screen.getAllByRole('heading', { level: 1 }).map((h) => h.textContent)).toEqual(['Rooms']);
    await screen.findByRole('heading', { name: 'Room: Ops' });
    const list = await screen.findByTestId(`room-${ROOM}`);
    expect(within(list).getByRole('link', { name: 'Ops' }).getAttribute('href')).toBe(`/rooms/${ROOM}`);
    expect(list.textContent).toContain('strict');
    await waitFor(() => expect(screen.getByTestId(`member-${ALPHA}`).textContent).toContain('alpha'));
    expect(screen.getByTestId('session-00000000-0000-4000-8000-0000000000c2').textContent).toBe('alpha ↔ beta');
    await screen.findByText('Hold alpha');
    expect(screen.getByText('Everywhere').closest('tr')!.textContent).toContain('tenant-wide');
    expect(screen.queryByText('Skill only')).toBeNull();
    const entry = await screen.findByTestId('timeline-00000000-0000-4000-8000-0000000000a1');
    expect(entry.textContent).toContain('encrypted');
    expect(entry.textContent).toContain('beta: held');
    expect(client.roomTimeline).toHaveBeenCalledWith(ROOM, { view: 'owner', limit: 50 });
    // Add: only ACTIVE devices not yet members.
    const add = screen.getByLabelText('Add a member') as HTMLSelectElement;
    expect([...add.options].map((o) => o.textContent)).toEqual(['Choose a device…', 'gamma (agent)']);
    fireEvent.change(add, { target: { value: GAMMA } });
    fireEvent.click(screen.getByRole('button', { name: 'Add member' }));
    await waitFor(() => expect(client.addRoomMember).toHaveBeenCalledWith(ROOM, { device_id: GAMMA }));
    fireEvent.click(screen.getByRole('button', { name: 'Remove beta' }));
    fireEvent.click(screen.getByRole('button', { name: 'Yes, remove beta' }));
    await waitFor(() => expect(client.removeRoomMember).toHaveBeenCalledWith(ROOM, BETA));
    expect(await axeViolations(container)).toEqual([]);
  });

  it('approves a held message (status updates in the row) and shows a 409 in place', async () => {
    const { container } = show(`/rooms/${ROOM}`);
    const row = await screen.findByTestId(`held-${H1}`);
    expect(row.textContent).toContain('alpha → beta');
    expect(within(row).getByRole('timer').textContent).toBe('1 h 0 min left');
    fireEvent.click(within(row).getByRole('button', { name: 'Approve' }));
    await waitFor(() => expect(screen.getByTestId(`held-status-${H1}`).textContent).toBe('approved'));
    expect(client.approveHeldMessage).toHaveBeenCalledWith(H1);
    expect((within(screen.getByTestId(`held-${H1}`)).getByRole('button', { name: 'Approve' }) as HTMLButtonElement).disabled).toBe(true);
    const other = screen.getByTestId(`held-${H2}`);
    fireEvent.click(within(other).getByRole('button', { name: 'Deny' }));
    expect((await within(screen.getByTestId(`held-${H2}`)).findByRole('alert')).textContent).toBe('held message is already approved (409)');
    expect(await axeViolations(container)).toEqual([]);
  });

  it('lists held messages of all rooms and creates a room from active agents', async () => {
    const { container } = show('/rooms');
    const row = await screen.findByTestId(`held-${H1}`);
    expect(within(row).getByRole('link', { name: 'Ops' })).toBeTruthy();
    screen.getByRole('heading', { name: 'Held messages (all rooms)' });
    fireEvent.change(screen.getByLabelText('Room name'), { target: { value: 'War room' } });
    fireEvent.click(screen.getByRole('button', { name: 'Create room' }));
    expect((await screen.findByRole('alert')).textContent).toBe('Pick at least one agent.');
    fireEvent.click(await screen.findByRole('checkbox', { name: 'gamma' }));
    fireEvent.change(screen.getByLabelText('Security level'), { target: { value: 'strict' } });
    fireEvent.click(screen.getByRole('button', { name: 'Create room' }));
    await waitFor(() => expect(client.createRoom).toHaveBeenCalledWith({ name: 'War room', member_device_ids: [GAMMA], security_level: 'strict' }));
    await screen.findByRole('heading', { name: 'Room: Ops' });
    expect(await axeViolations(container)).toEqual([]);
  });
});

describe('Decisions', () => {
  it('shows each decision with its agent, risk levels, auto action and a live countdown', async () => {
    const { container } = show('/decisions');
    expect(screen.getAllByRole('heading', { level: 1 }).map((h) => h.textContent)).toEqual(['Decisions']);
    const card = await screen.findByTestId(`decision-${D1}`);
    expect(card.textContent).toContain('Deploy v2');
    expect(card.textContent).toContain('Ship the release?');
    await waitFor(() => expect(card.textContent).toContain('alpha'));
    expect(card.textContent).toContain('risk: high');
    expect(card.textContent).toContain('risk: low');
    expect(card.textContent).toContain('deny');
    const timer = within(card).getByRole('timer');
    expect(timer.textContent).toBe('4 min 12 s left');
    act(() => vi.advanceTimersByTime(2_000));
    expect(timer.textContent).toBe('4 min 10 s left');
    act(() => vi.advanceTimersByTime(250_000));
    expect(timer.textContent).toBe('expired');
    expect((within(screen.getByTestId(`decision-${D2}`)).getByRole('radio', { name: 'Ship now' }) as HTMLInputElement).checked).toBe(true);
    expect(await axeViolations(container)).toEqual([]);
  });

  it('approves with the chosen option and comment, then lists it as recently answered', async () => {
    show('/decisions');
    const card = await screen.findByTestId(`decision-${D1}`);
    fireEvent.click(within(card).getByRole('button', { name: 'Approve' }));
    expect(within(card).getByRole('alert').textContent).toBe('Choose an option to approve.');
    expect(client.resolveDecision).not.toHaveBeenCalled();
    fireEvent.click(within(card).getByRole('radio', { name: 'Wait a day' }));
    fireEvent.change(within(card).getByLabelText('Comment (optional)'), { target: { value: 'next week' } });
    fireEvent.click(within(card).getByRole('button', { name: 'Approve' }));
    await waitFor(() => expect(client.resolveDecision).toHaveBeenCalledWith(D1, { resolution: 'approve', option_id: 'wait', note: 'next week' }));
    const answered = await screen.findByTestId(`answered-${D1}`);
    expect(answered.textContent).toContain('approved');
    expect(answered.textContent).toContain('Wait a day');
    expect(answered.textContent).toContain('next week');
  });

  it('shows a refusal in place on the card', async () => {
    show('/decisions');
    const card = await screen.findByTestId(`decision-${D2}`);
    fireEvent.click(within(card).getByRole('button', { name: 'Defer' }));
    expect((await within(card).findByRole('alert')).textContent).toBe('decision is already expired: its deadline passed (409)');
    await waitFor(() => expect(client.listDecisions.mock.calls.length).toBeGreaterThan(1));
    expect(within(screen.getByTestId(`decision-${D2}`)).getByRole('alert')).toBeTruthy();
  });
});
