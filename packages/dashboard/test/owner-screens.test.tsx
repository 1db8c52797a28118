/**
 * The API keys, Policies, Audit log, Settings and Marketplace screens against a fake REST client
 * (contract §4.8, §4.9, §4.14, §4.16; design §8.5, §8.10, §8.17, §8.22–§8.26, §8.35): what each shows,
 * the key shown once, a server 400 in place, "Load more", the chain verdict, and a clean axe-core
 * run (structure rules; colour contrast needs a real browser).
 */
import { ParleyApiError, type ApiKey, type Device, type Policy } from '@parley/sdk';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import axe from 'axe-core';
import type { ReactNode } from 'react';
import { MemoryRouter } from 'react-router';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { consistency, keyAnswer, logKey } from './audit-log-fixture';

const OWNER = '00000000-0000-4000-8000-000000000001';
const OTHER = '00000000-0000-4000-8000-000000000002';
const ROOM = '00000000-0000-4000-8000-0000000000f1';
const K1 = '00000000-0000-4000-8000-0000000000a1';
const P1 = '00000000-0000-4000-8000-0000000000b1';
const L1 = '00000000-0000-4000-8000-0000000000c1';
const R1 = '00000000-0000-4000-8000-0000000000d1';
const T_ME = '00000000-0000-4000-8000-0000000000e1';
const T_DEV = '00000000-0000-4000-8000-0000000000e2';
const AT = '2026-03-01T12:00:00.000Z';
const SECRET = `svc_agent_sk_prod_${'cd'.repeat(32)}`;
const FINGERPRINT = 'abcd 0123 abcd 0123 abcd 0123 abcd 0123';

const apiKey = (over: Partial<ApiKey> = {}): ApiKey => ({
  id: K1,
  name: 'ci',
  env: 'prod',
  prefix: 'svc_agent_sk_prod_cdcd',
  status: 'active',
  device_id: null,
  created_at: AT,
  revoked_at: null,
  last_used_at: null,
  rotated_from: null,
  ...over,
});
const policy: Policy = {
  policy_id: P1,
  name: 'Night hold',
  scope: { room_id: ROOM, skill: null },
  priority: 2,
  conditions: { sender_kinds: ['agent'], hours_utc: { from: 22, to: 6 } },
  action: 'hold',
  enabled: true,
  created_at: AT,
  updated_at: AT,
};
const device = (device_id: string, name: string): Device => ({
  device_id,
  name,
  kind: 'owner',
  status: 'ACTIVE',
  platform: 'web',
  health: 'green',
  last_seen: AT,
  fingerprint: FINGERPRINT,
  identity_public_key: 'k',
  ephemeral_public_key: 'e',
  enrolled_at: AT,
  webhook_url: null,
});
const event = (n: number) => ({ event_id: `00000000-0000-4000-8000-00000000010${n}`, type: 'policy.created', actor: 'owner', subject: P1, data: { name: 'Night hold' }, created_at: AT, prev_hash: '0'.repeat(64), hash: `${n}`.repeat(64) });
const LOG_KEY = logKey();
const badRequest = (detail: string) => new ParleyApiError({ status: 400, detail, method: 'POST', path: '/x' });

const client = {
  listApiKeys: vi.fn(async () => ({ api_keys: [apiKey(), apiKey({ id: '00000000-0000-4000-8000-0000000000a2', name: 'old', status: 'revoked', revoked_at: AT })] })),
  createApiKey: vi.fn(async (body: { name: string; env?: string }) => ({ ...apiKey({ name: body.name, env: body.env ?? 'dev' }), key: SECRET })),
  rotateApiKey: vi.fn(async () => ({ ...apiKey({ rotated_from: K1 }), key: `${SECRET}ff` })),
  revokeApiKey: vi.fn(async () => apiKey({ status: 'revoked' })),
  deleteApiKey: vi.fn(async () => undefined),
  listPolicies: vi.fn(async () => ({ policies: [policy] })),
  listRooms: vi.fn(async () => ({ rooms: [{ room_id: ROOM, name: 'Ops' }] })),
  createPolicy: vi.fn(async (): Promise<Policy> => {
    throw badRequest('conditions has an unknown key: colour');
  }),
  updatePolicy: vi.fn(async () => policy),
  deletePolicy: vi.fn(async () => undefined),
  listAuditEvents: vi.fn(async (q: { cursor?: string }) => (q.cursor ? { events: [event(3)], next_cursor: null } : { events: [event(1), event(2)], next_cursor: '2' })),
  verifyAudit: vi.fn(async () => ({ valid: true, checked: 3, first_broken: null })),
  getAuditLogKey: vi.fn(async () => keyAnswer(LOG_KEY.vkey)),
  getAuditCheckpoint: vi.fn(async () => LOG_KEY.checkpoint(6)),
  getAuditConsistency: vi.fn(async (q: { first: number; second: number }) => consistency(q.first, q.second)),
  getAuditEventProof: vi.fn(async (): Promise<never> => {
    throw badRequest('no checkpoint of tree size 9 was answered');
  }),
  getSettings: vi.fn(async () => ({ held_message_ttl_hours: 72, default_room_security_level: 'standard', scan_rules_enabled: true, read_receipts_enabled: true, require_post_quantum: false })),
  updateSettings: vi.fn(async () => ({ held_message_ttl_hours: 24, default_room_security_level: 'standard', scan_rules_enabled: true, read_receipts_enabled: true })),
  getDeviceSettings: vi.fn(async () => ({ device_id: OWNER, read_receipts_enabled: true, read_receipts_effective: true })),
  updateDeviceSettings: vi.fn(async (_id: string, body: { read_receipts_enabled?: boolean }) => ({ device_id: OWNER, read_receipts_enabled: body.read_receipts_enabled ?? true, read_receipts_effective: body.read_receipts_enabled ?? true })),
  listDevices: vi.fn(async () => ({ devices: [device(OWNER, 'This Chromium'), device(OTHER, 'Phone'), { ...device('00000000-0000-4000-8000-000000000003', 'bot'), kind: 'agent' as const }] })),
  removeOwnerDevice: vi.fn(async () => undefined),
  getScanRules: vi.fn(async () => ({ version: 0, updated_at: null, enabled: true, rules: [{ id: 'aws-key', name: 'AWS key', pattern: 'AKIA[0-9A-Z]{16}', action: 'block', severity: 'high' }] })),
  updateScanRules: vi.fn(async () => ({ version: 1, updated_at: AT, enabled: true, rules: [] })),
  searchListings: vi.fn(async () => ({
    listings: [{ listing_id: L1, hub_address: 'acme', title: 'Research agent', description: '', category: 'research', capabilities: [], pricing: { model: 'per_hour', price_cents: 1250 }, status: 'draft', trust_tier: 'certified', trust_score: 0.91, published_at: null }],
    next_cursor: null,
  })),
  listHubIdentities: vi.fn(async () => ({ identities: [{ id: 'i1', hub_address: 'acme', display_name: 'Acme', trust_tier: 'certified', tier_source: 'computed', capabilities: [], device_id: null }] })),
  getHubProfile: vi.fn(async () => ({ hub_address: 'acme', display_name: 'Acme', description: null, trust_tier: 'certified', tier_source: 'computed', trust_score: 0.91, capabilities: [], enrolled_at: AT, last_active: null })),
  listHubCapabilities: vi.fn(async () => ({ capabilities: [] })),
  createListing: vi.fn(async () => ({})),
  publishListing: vi.fn(async () => ({})),
  pauseListing: vi.fn(async () => ({})),
  resumeListing: vi.fn(async () => ({})),
  delistListing: vi.fn(async () => ({})),
  listRentals: vi.fn(async () => ({
    rentals: [{ rental_id: R1, listing_id: L1, hub_address: 'acme', role: 'renter', status: 'active', room_id: null, renter_tenant_id: T_ME, developer_tenant_id: T_DEV, pricing_model: 'per_hour', amount_cents: 500000, fee_cents: 100000, refunded_cents: 0, currency: 'usd', term_hours: 2, starts_at: AT, ends_at: AT, reason: null, created_at: AT }],
    next_cursor: null,
  })),
  cancelRental: vi.fn(async () => ({})),
  completeRental: vi.fn(async () => ({})),
  fileDispute: vi.fn(async () => ({})),
  listDisputes: vi.fn(async () => ({
    disputes: [{ dispute_id: 'd1', rental_id: R1, renter_tenant_id: T_ME, developer_tenant_id: T_DEV, filed_by_tenant_id: T_ME, status: 'open', reason: 'No answers', evidence_refs: [], notes: [{ author_tenant_id: T_DEV, note: 'We were up', evidence_refs: [], created_at: AT }], outcome: null, amount_cents: null, resolution_note: null, created_at: AT, resolved_at: null }],
    next_cursor: null,
  })),
  addDisputeNote: vi.fn(async () => ({})),
  listPayouts: vi.fn(async () => ({ payouts: [{ payout_id: 'p1', amount_cents: 123456, currency: 'usd', status: 'completed', failure_reason: null, created_at: AT, completed_at: AT }], next_cursor: null })),
  payoutSummary: vi.fn(async () => ({ currency: 'usd', earned_cents: 400000, fees_cents: 100000, paid_cents: 123456, pending_cents: 0, balance_cents: 276544, minimum_payout_cents: 1000, next_payout_at: AT })),
};

vi.mock('../src/app/owner-context', () => ({ useOwner: () => ({ client, deviceId: OWNER, fingerprint: FINGERPRINT }) }));

const { ApiKeys } = await import('../src/screens/ApiKeys');
const { Policies } = await import('../src/screens/Policies');
const { Audit } = await import('../src/screens/Audit');
const { Settings } = await import('../src/screens/Settings');
const { Marketplace } = await import('../src/screens/Marketplace');

function show(node: ReactNode) {
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={qc}>
      <MemoryRouter>{node}</MemoryRouter>
    </QueryClientProvider>,
  );
}

async function axeViolations(container: HTMLElement): Promise<string[]> {
  const r = await axe.run(container, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] }, rules: { 'color-contrast': { enabled: false }, region: { enabled: false } } });
  return r.violations.map((v) => `${v.id}: ${v.nodes.map((n) => String(n.target)).join(' ')}`);
}

function headings(level: number): string[] {
  return screen.queryAllByRole('heading', { level }).map((h) => h.textContent ?? '');
}

beforeEach(() => {
  sessionStorage.clear();
  vi.clearAllMocks();
});
afterEach(cleanup);

describe('API keys', () => {
  it('lists keys, shows a created key once, rotates with a confirmation', async () => {
    const { container } = show(<ApiKeys />);
    expect(headings(1)).toEqual(['API keys']);
    const row = (await screen.findByText('ci')).closest('tr')!;
    expect(row.textContent).toContain('svc_agent_sk_prod_cdcd…');
    expect(row.textContent).toContain('never');
    fireEvent.change(screen.getByLabelText('Name'), { target: { value: 'deploy' } });
    fireEvent.change(screen.getByLabelText('Environment'), { target: { value: 'prod' } });
    fireEvent.click(screen.getByRole('button', { name: 'Create key' }));
    await screen.findByText(SECRET);
    expect(client.createApiKey).toHaveBeenCalledWith({ name: 'deploy', env: 'prod' });
    expect(screen.getByText(/will not be shown again/)).toBeTruthy();
    expect(await axeViolations(container)).toEqual([]);
    fireEvent.click(screen.getByRole('button', { name: 'Done, I have stored it' }));
    expect(screen.queryByText(SECRET)).toBeNull();
    fireEvent.click(within(row).getByRole('button', { name: 'Rotate' }));
    fireEvent.click(within(row).getByRole('button', { name: 'Yes, rotate ci' }));
    await screen.findByText(`${SECRET}ff`);
    expect(client.rotateApiKey).toHaveBeenCalledWith(K1);
  });
});

describe('Policies', () => {
  it('lists policies in words, shows a server 400 in place, and edits with the form filled in', async () => {
    const { container } = show(<Policies />);
    expect(headings(1)).toEqual(['Policies']);
    const row = (await screen.findByText('Night hold')).closest('tr')!;
    await waitFor(() => expect(row.textContent).toContain('Room Ops'));
    expect(row.textContent).toContain('sender is an agent; between 22:00 and 06:00 UTC (overnight)');
    fireEvent.click(screen.getByRole('button', { name: 'New policy' }));
    fireEvent.change(screen.getByLabelText('Name'), { target: { value: 'Block urgent' } });
    fireEvent.click(screen.getByRole('checkbox', { name: 'urgent' }));
    fireEvent.change(screen.getByLabelText('Action'), { target: { value: 'block' } });
    fireEvent.click(screen.getByRole('button', { name: 'Create policy' }));
    expect((await screen.findByRole('alert')).textContent).toBe('conditions has an unknown key: colour (400)');
    expect(client.createPolicy).toHaveBeenCalledWith({ name: 'Block urgent', scope: null, conditions: { priorities: ['urgent'] }, action: 'block', enabled: true });
    expect(await axeViolations(container)).toEqual([]);
    fireEvent.click(within(row).getByRole('button', { name: 'Edit' }));
    const form = screen.getByRole('form', { name: 'Edit Night hold' });
    expect((within(form).getByLabelText('From (UTC hour)') as HTMLInputElement).value).toBe('22:00');
    expect((within(form).getByLabelText('Room') as HTMLSelectElement).value).toBe(ROOM);
    fireEvent.click(within(form).getByRole('button', { name: 'Save changes' }));
    await waitFor(() => expect(client.updatePolicy).toHaveBeenCalledWith(P1, { name: 'Night hold', scope: { room_id: ROOM }, priority: 2, conditions: policy.conditions, action: 'hold', enabled: true }));
  });
});

describe('Audit log', () => {
  it('pages events with Load more and shows the chain verdict', async () => {
    const { container } = show(<Audit />);
    expect(headings(1)).toEqual(['Audit log']);
    await waitFor(() => expect(screen.getAllByText('policy.created', { selector: 'code' })).toHaveLength(2));
    fireEvent.click(screen.getByRole('button', { name: 'Load more events' }));
    await waitFor(() => expect(screen.getAllByText('policy.created', { selector: 'code' })).toHaveLength(3));
    expect(client.listAuditEvents).toHaveBeenLastCalledWith({ cursor: '2' });
    expect(screen.queryByRole('button', { name: 'Load more events' })).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: 'Verify chain' }));
    expect((await screen.findByTestId('audit-verdict')).textContent).toMatch(/Chain intact: 3 events checked/);
    expect(await axeViolations(container)).toEqual([]);
    client.verifyAudit.mockResolvedValueOnce({ valid: false, checked: 3, first_broken: { seq: 2, event_id: 'e-2', reason: 'hash_mismatch' } } as never);
    fireEvent.click(screen.getByRole('button', { name: 'Verify chain' }));
    await waitFor(() => expect(screen.getByTestId('audit-verdict').textContent).toMatch(/broken at sequence 2, event e-2 \(hash mismatch\)/));
    // The transparency log: the checkpoint verified against the key pinned on this first visit.
    expect((await screen.findByTestId('log-verdict')).textContent).toMatch(/✓ verified.*Checkpoint of 6 events.*pinned in this browser now/);
    expect(screen.getByText(LOG_KEY.vkey, { selector: 'code' })).toBeTruthy();
    fireEvent.click(screen.getAllByRole('button', { name: /Verify proof of event/ })[0]!);
    await waitFor(() => expect(screen.getByText(/✗ no checkpoint of tree size 9 was answered/)).toBeTruthy());
    fireEvent.change(screen.getByLabelText('Type'), { target: { value: 'api_key.rotated' } });
    fireEvent.change(screen.getByLabelText('Actor'), { target: { value: 'owner' } });
    fireEvent.click(screen.getByRole('button', { name: 'Apply filters' }));
    await waitFor(() => expect(client.listAuditEvents).toHaveBeenLastCalledWith({ type: 'api_key.rotated', actor: 'owner' }));
  });
});

describe('Settings', () => {
  it('edits tenant settings, shows this browser, removes another owner device, lists scan rules', async () => {
    const { container } = show(<Settings />);
    expect(headings(1)).toEqual(['Settings']);
    const ttl = (await screen.findByLabelText('Held messages expire after (hours)')) as HTMLInputElement;
    expect(ttl.value).toBe('72');
    fireEvent.change(ttl, { target: { value: '24' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save settings' }));
    await waitFor(() => expect(client.updateSettings).toHaveBeenCalledWith({ held_message_ttl_hours: 24 }));
    expect(screen.getByText(OWNER).tagName).toBe('CODE');
    // Read receipts: this browser's own switch, and the tenant's.
    const mine = (await screen.findByRole('checkbox', { name: 'Send read receipts from this browser' })) as HTMLInputElement;
    expect(mine.checked).toBe(true);
    fireEvent.click(mine);
    await waitFor(() => expect(client.updateDeviceSettings).toHaveBeenCalledWith(OWNER, { read_receipts_enabled: false }));
    fireEvent.click(screen.getByRole('checkbox', { name: /Devices send read receipts/ }));
    fireEvent.click(screen.getByRole('button', { name: 'Save settings' }));
    await waitFor(() => expect(client.updateSettings).toHaveBeenLastCalledWith({ read_receipts_enabled: false }));
    // Post-quantum sessions required of the tenant's devices.
    fireEvent.click(await screen.findByRole('checkbox', { name: /Require post-quantum sessions/ }));
    fireEvent.click(screen.getByRole('button', { name: 'Save settings' }));
    await waitFor(() => expect(client.updateSettings).toHaveBeenLastCalledWith({ require_post_quantum: true }));
    expect(screen.getAllByText(FINGERPRINT)[0]!.tagName).toBe('CODE');
    const phone = (await screen.findByText('Phone')).closest('tr')!;
    expect(screen.queryByText('bot')).toBeNull();
    expect(within(screen.getByText('This Chromium').closest('tr')!).queryByRole('button')).toBeNull();
    fireEvent.click(within(phone).getByRole('button', { name: 'Remove' }));
    fireEvent.click(within(phone).getByRole('button', { name: 'Yes, remove Phone' }));
    await waitFor(() => expect(client.removeOwnerDevice).toHaveBeenCalledWith(OTHER));
    await screen.findByText('AWS key');
    expect(await axeViolations(container)).toEqual([]);
  });
});

describe('Marketplace', () => {
  it('shows my listings, rentals, disputes and payouts with amounts in dollars', async () => {
    const { container } = show(<Marketplace />);
    expect(headings(1)).toEqual(['Marketplace']);
    expect(headings(2)).toEqual(['Hub identities', 'My listings', 'My rentals', 'Disputes', 'Payouts']);
    const listing = (await screen.findByText('Research agent')).closest('tr')!;
    expect(listing.textContent).toContain('$12.50 per hour');
    expect(client.searchListings).toHaveBeenCalledWith({ mine: true, limit: 50 });
    fireEvent.click(within(listing).getByRole('button', { name: 'Publish' }));
    await waitFor(() => expect(client.publishListing).toHaveBeenCalledWith(L1));
    const rental = (await screen.findByText('acme', { selector: 'strong' })).closest('tr')!;
    expect(rental.textContent).toContain('$5,000.00');
    expect(within(rental).getByRole('button', { name: 'Complete' })).toBeTruthy();
    expect(await screen.findByText('No answers')).toBeTruthy();
    expect(screen.getByText(/filed by the renter/)).toBeTruthy();
    expect((await screen.findByTestId('payout-summary')).textContent).toContain('$2,765.44');
    expect(screen.getByRole('cell', { name: '$1,234.56' })).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'New listing' }));
    await screen.findByRole('option', { name: 'Acme (acme, certified)' });
    fireEvent.change(screen.getByLabelText('Hub identity'), { target: { value: 'acme' } });
    fireEvent.change(screen.getByLabelText('Title'), { target: { value: 'Translator' } });
    fireEvent.change(screen.getByLabelText('Category'), { target: { value: 'language' } });
    fireEvent.change(screen.getByLabelText('Price (USD)'), { target: { value: '9.99' } });
    fireEvent.click(screen.getByRole('button', { name: 'Create draft' }));
    await waitFor(() =>
      expect(client.createListing).toHaveBeenCalledWith({ hub_address: 'acme', title: 'Translator', category: 'language', pricing: { model: 'per_task', price_cents: 999, currency: 'usd' }, min_tier: 'certified' }),
    );
    fireEvent.click(within(rental).getByText('File a dispute'));
    fireEvent.change(within(rental).getByLabelText('Reason'), { target: { value: 'Too slow' } });
    fireEvent.click(within(rental).getByRole('button', { name: 'File dispute' }));
    await waitFor(() => expect(client.fileDispute).toHaveBeenCalledWith(R1, { reason: 'Too slow' }));
    expect(await axeViolations(container)).toEqual([]);
  });
});
