/**
 * Hub identities on the Marketplace screen, the agent developer's side: the form logic of
 * lib/hub-form.ts (the owner key is the agent's identity key from its device record, capability
 * records and their SLA, profile edits sending only what changed) and the section against a fake
 * REST client (register for an agent, capability records after the identity, the tier an
 * operator granted, profile edit, certification checks), with a clean axe-core run.
 */
import { randomBytes } from 'node:crypto';
import type { Device, HubIdentity, HubProfile } from '@parley/sdk';
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import axe from 'axe-core';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { bindableAgents, capabilityBody, EMPTY_CAPABILITY_FORM, EMPTY_HUB_FORM, ownerKeyFromDevice, profilePatch, registrationBody, suggestHubAddress, tierText } from '../src/lib/hub-form';
import { renderInApp } from './render';

const AT = '2026-03-01T12:00:00.000Z';
const AGENT = '00000000-0000-4000-8000-00000000000a';
const KEY_HEX = randomBytes(32).toString('hex');
const KEY_B64 = Buffer.from(KEY_HEX, 'hex').toString('base64');

const device = (id: string, name: string, over: Partial<Device> = {}): Device => ({
  device_id: id,
  name,
  platform: null,
  status: 'ACTIVE',
  kind: 'agent',
  health: 'green',
  last_seen: AT,
  fingerprint: 'abcd 0123 abcd 0123 abcd 0123 abcd 0123',
  identity_public_key: KEY_HEX,
  ephemeral_public_key: 'ee'.repeat(32),
  enrolled_at: AT,
  webhook_url: null,
  ...over,
});

describe('hub-form logic', () => {
  it('sends the agent identity key as the padded base64 of its 32 bytes, and refuses anything else', () => {
    expect(ownerKeyFromDevice(KEY_HEX)).toBe(KEY_B64);
    expect(ownerKeyFromDevice(KEY_HEX.toUpperCase())).toBe(KEY_B64);
    expect(ownerKeyFromDevice(KEY_B64)).toBeUndefined();
    expect(ownerKeyFromDevice(KEY_HEX.slice(2))).toBeUndefined();
  });

  it('offers only active agents without an identity, by name', () => {
    const devices = [
      device('00000000-0000-4000-8000-000000000001', 'zeta'),
      device('00000000-0000-4000-8000-000000000002', 'alpha'),
      device('00000000-0000-4000-8000-000000000003', 'bound'),
      device('00000000-0000-4000-8000-000000000004', 'waiting', { status: 'PENDING' }),
      device('00000000-0000-4000-8000-000000000005', 'revoked', { status: 'REVOKED' }),
      device('00000000-0000-4000-8000-000000000006', 'browser', { kind: 'owner' }),
    ];
    const names = bindableAgents(devices, [{ device_id: '00000000-0000-4000-8000-000000000003' }, { device_id: null }]).map((d) => d.name);
    expect(names).toEqual(['alpha', 'zeta']);
  });

  it('suggests a hub address from the agent name', () => {
    expect(suggestHubAddress('Research Bot #2')).toBe('research-bot-2');
    expect(suggestHubAddress('  Crème brûlée ')).toBe('creme-brulee');
    expect(suggestHubAddress('x'.repeat(40) + '-y')).toBe('x'.repeat(32));
    expect(suggestHubAddress('--a--')).toBe('');
    expect(suggestHubAddress('日本')).toBe('');
  });

  it('reads a capability: JSON Schema object, semver-like version, SLA both or neither', () => {
    const ok = capabilityBody({ ...EMPTY_CAPABILITY_FORM, name: ' translate ', description: ' fr to en ', latencyMs: '800', uptime: '0.995' });
    expect(ok).toEqual({ ok: true, body: { name: 'translate', version: '1.0.0', description: 'fr to en', input_schema: { type: 'object' }, sla: { latency_p95_ms: 800, uptime_sla: 0.995 } } });
    expect(capabilityBody({ ...EMPTY_CAPABILITY_FORM, name: 'x' })).toEqual({ ok: true, body: { name: 'x', version: '1.0.0', input_schema: { type: 'object' } } });
    const fails: [Partial<typeof EMPTY_CAPABILITY_FORM>, RegExp][] = [
      [{ name: '' }, /name/],
      [{ version: 'v1' }, /version/],
      [{ inputSchema: '{type: object}' }, /not valid JSON/],
      [{ inputSchema: '[]' }, /JSON object/],
      [{ inputSchema: 'null' }, /JSON object/],
      [{ latencyMs: '500' }, /uptime/],
      [{ uptime: '0.9' }, /latency/],
      [{ latencyMs: '-1', uptime: '0.9' }, /latency/],
      [{ latencyMs: '10', uptime: '1.5' }, /uptime/],
    ];
    for (const [patch, error] of fails) {
      const r = capabilityBody({ ...EMPTY_CAPABILITY_FORM, name: 'x', ...patch });
      expect(r.ok, JSON.stringify(patch)).toBe(false);
      if (!r.ok) expect(r.error).toMatch(error);
    }
  });

  it('builds the registration for the chosen agent: its key, bound to it, blank capability entries skipped', () => {
    const agent = device(AGENT, 'scout');
    expect(registrationBody(EMPTY_HUB_FORM, undefined)).toEqual({ ok: false, error: expect.stringMatching(/agent/) });
    expect(registrationBody({ ...EMPTY_HUB_FORM, deviceId: AGENT, hubAddress: 'Scout', displayName: 'Scout' }, { ...agent, identity_public_key: 'k' })).toEqual({ ok: false, error: expect.stringMatching(/identity key/) });
    expect(registrationBody({ ...EMPTY_HUB_FORM, deviceId: AGENT, hubAddress: '-bad', displayName: 'Scout' }, agent).ok).toBe(false);
    expect(registrationBody({ ...EMPTY_HUB_FORM, deviceId: AGENT, hubAddress: 'scout', displayName: ' ' }, agent).ok).toBe(false);
    const minimal = registrationBody({ ...EMPTY_HUB_FORM, deviceId: AGENT, hubAddress: ' Scout-1 ', displayName: ' Scout ' }, agent);
    expect(minimal).toEqual({ ok: true, body: { body: { hub_address: 'scout-1', display_name: 'Scout', public_key: KEY_B64, device_id: AGENT }, capabilities: [] } });
    const cap = { ...EMPTY_CAPABILITY_FORM, name: 'search' };
    const full = registrationBody({ deviceId: AGENT, hubAddress: 'scout', displayName: 'Scout', description: ' Finds things ', capabilities: [cap, EMPTY_CAPABILITY_FORM] }, agent);
    expect(full.ok && full.body.body).toEqual({ hub_address: 'scout', display_name: 'Scout', description: 'Finds things', capabilities: ['search'], public_key: KEY_B64, device_id: AGENT });
    expect(full.ok && full.body.capabilities).toEqual([{ name: 'search', version: '1.0.0', input_schema: { type: 'object' } }]);
    const twice = registrationBody({ ...EMPTY_HUB_FORM, deviceId: AGENT, hubAddress: 'scout', displayName: 'Scout', capabilities: [cap, cap] }, agent);
    expect(twice).toEqual({ ok: false, error: expect.stringMatching(/twice/) });
  });

  it('patches only what changed in the profile; an emptied description clears it', () => {
    const current = { display_name: 'Scout', description: 'Finds things' };
    expect(profilePatch(current, { displayName: 'Scout', description: 'Finds things' })).toEqual({ ok: false, error: 'Nothing changed.' });
    expect(profilePatch(current, { displayName: ' Scout 2 ', description: 'Finds things' })).toEqual({ ok: true, body: { display_name: 'Scout 2' } });
    expect(profilePatch(current, { displayName: 'Scout', description: '  ' })).toEqual({ ok: true, body: { description: null } });
    expect(profilePatch({ display_name: 'Scout', description: null }, { displayName: 'Scout', description: 'New' })).toEqual({ ok: true, body: { description: 'New' } });
    expect(profilePatch(current, { displayName: '', description: '' }).ok).toBe(false);
  });

  it('names an operator-granted tier', () => {
    expect(tierText({ trust_tier: 'certified', tier_source: 'operator' })).toBe('certified (granted by a platform operator)');
    expect(tierText({ trust_tier: 'unverified', tier_source: 'computed' })).toBe('unverified');
  });
});

const identity = (over: Partial<HubIdentity> = {}): HubIdentity => ({
  id: '00000000-0000-4000-8000-0000000000c1',
  hub_address: 'scout',
  did: 'did:hub:scout',
  display_name: 'Scout',
  description: null,
  capabilities: ['search'],
  public_key: KEY_B64,
  device_id: AGENT,
  trust_tier: 'unverified',
  tier_source: 'computed',
  created_at: AT,
  ...over,
});
const profileOf = (i: HubIdentity): HubProfile => ({ hub_address: i.hub_address, display_name: i.display_name, description: i.description, trust_tier: i.trust_tier, tier_source: i.tier_source, trust_score: 0.5, capabilities: i.capabilities, enrolled_at: AT, last_active: null });

const state: { identities: HubIdentity[] } = { identities: [] };
const client = {
  listDevices: vi.fn(async () => ({ devices: [device(AGENT, 'Scout Bot'), device('00000000-0000-4000-8000-0000000000b0', 'browser', { kind: 'owner' })] })),
  listHubIdentities: vi.fn(async () => ({ identities: state.identities })),
  registerHub: vi.fn(async (body: { hub_address: string }) => {
    const made = identity({ hub_address: body.hub_address });
    state.identities = [made];
    return made;
  }),
  registerHubCapability: vi.fn(async (_address: string, body: { name: string }) => {
    if (body.name === 'broken') throw new Error('input_schema is not a valid JSON Schema');
    return { ...body, description: null, sla: null, certification_tier: 'unverified', registered_at: AT };
  }),
  getHubProfile: vi.fn(async (address: string) => profileOf(state.identities.find((i) => i.hub_address === address)!)),
  listHubCapabilities: vi.fn(async () => ({ capabilities: [{ name: 'search', version: '1.0.0', description: 'web search', input_schema: { type: 'object' }, sla: { latency_p95_ms: 800, uptime_sla: 0.99 }, certification_tier: 'certified', registered_at: AT }] })),
  updateHubProfile: vi.fn(async (address: string, body: { display_name?: string }) => ({ ...profileOf(state.identities[0]!), hub_address: address, ...body })),
  certifyHubIdentity: vi.fn(async (id: string) => ({ identity_id: id, tier: 'unverified', upgraded: false, checks: [{ check: 'activity', passed: false, detail: 'not seen for 7 days' }] })),
};

vi.mock('../src/app/owner-context', () => ({ useOwner: () => ({ client, deviceId: 'owner' }) }));

const { HubIdentities } = await import('../src/screens/market/HubIdentities');

async function axeViolations(container: HTMLElement): Promise<string[]> {
  const r = await axe.run(container, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] }, rules: { 'color-contrast': { enabled: false }, region: { enabled: false } } });
  return r.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

describe('Hub identities section', () => {
  beforeEach(() => {
    state.identities = [];
    sessionStorage.clear();
    vi.clearAllMocks();
  });
  afterEach(cleanup);

  it('registers an identity for an agent with its own key, then its capability records; a refused one is named', async () => {
    const { container } = renderInApp(<HubIdentities />);
    await screen.findByText('No hub identities yet.');
    fireEvent.click(screen.getByRole('button', { name: 'Register a hub identity' }));
    const form = await screen.findByRole('form', { name: 'Register a hub identity' });
    const agentSelect = within(form).getByLabelText('Agent');
    expect(within(agentSelect).getAllByRole('option').map((o) => o.textContent)).toEqual(['Choose…', 'Scout Bot']);
    fireEvent.change(agentSelect, { target: { value: AGENT } });
    expect((within(form).getByLabelText('Hub address') as HTMLInputElement).value).toBe('scout-bot');
    expect((within(form).getByLabelText('Display name') as HTMLInputElement).value).toBe('Scout Bot');
    expect(within(form).getByTestId('owner-key-note').textContent).toContain('abcd 0123');
    const first = within(form).getByRole('group', { name: 'Capability 1' });
    fireEvent.change(within(first).getByLabelText('Capability name'), { target: { value: 'search' } });
    fireEvent.change(within(first).getByLabelText('p95 latency (ms)'), { target: { value: '800' } });
    fireEvent.change(within(first).getByLabelText('Uptime (0 to 1)'), { target: { value: '0.99' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Add another capability' }));
    fireEvent.change(within(within(form).getByRole('group', { name: 'Capability 2' })).getByLabelText('Capability name'), { target: { value: 'broken' } });
    expect(await axeViolations(container)).toEqual([]);
    fireEvent.click(within(form).getByRole('button', { name: 'Register identity' }));
    await waitFor(() =>
      expect(client.registerHub).toHaveBeenCalledWith({ hub_address: 'scout-bot', display_name: 'Scout Bot', capabilities: ['search', 'broken'], public_key: KEY_B64, device_id: AGENT }),
    );
    await waitFor(() => expect(client.registerHubCapability).toHaveBeenCalledTimes(2));
    expect(client.registerHubCapability).toHaveBeenCalledWith('scout-bot', { name: 'search', version: '1.0.0', input_schema: { type: 'object' }, sla: { latency_p95_ms: 800, uptime_sla: 0.99 } });
    expect((await screen.findByRole('alert')).textContent).toMatch(/Registered scout-bot\. .*broken: input_schema is not a valid JSON Schema/);
    await screen.findByTestId('hub-identity-scout-bot');
    expect(screen.queryByRole('form', { name: 'Register a hub identity' })).toBeNull();
  });

  it('refuses to register before an agent is chosen, and offers nothing when every agent has an identity', async () => {
    renderInApp(<HubIdentities />);
    fireEvent.click(await screen.findByRole('button', { name: 'Register a hub identity' }));
    const form = await screen.findByRole('form', { name: 'Register a hub identity' });
    fireEvent.submit(form);
    expect((await within(form).findByRole('alert')).textContent).toMatch(/Choose the agent/);
    expect(client.registerHub).not.toHaveBeenCalled();
    cleanup();
    state.identities = [identity()];
    renderInApp(<HubIdentities />);
    fireEvent.click(await screen.findByRole('button', { name: 'Register a hub identity' }));
    expect(await screen.findByText(/Every active agent already has a hub identity/)).toBeTruthy();
  });

  it('shows the public profile with an operator-granted tier, edits it, and runs certification', async () => {
    state.identities = [identity({ trust_tier: 'certified', tier_source: 'operator', description: 'Finds things' })];
    const { container } = renderInApp(<HubIdentities />);
    const card = await screen.findByTestId('hub-identity-scout');
    await within(card).findByLabelText('trust tier certified (granted by a platform operator)');
    expect(card.textContent).toContain('did:hub:scout');
    expect(card.textContent).toContain('Scout Bot');
    expect(within(card).queryByText(/needs a certified identity/)).toBeNull();
    const row = (await within(card).findByText('search', { selector: 'strong' })).closest('tr')!;
    expect(row.textContent).toContain('p95 800 ms · uptime 99.00%');
    fireEvent.click(within(card).getByRole('button', { name: 'Edit profile' }));
    const edit = within(card).getByRole('form', { name: 'Edit the profile of scout' });
    fireEvent.change(within(edit).getByLabelText('Display name'), { target: { value: 'Scout Prime' } });
    fireEvent.click(within(edit).getByRole('button', { name: 'Save profile' }));
    await waitFor(() => expect(client.updateHubProfile).toHaveBeenCalledWith('scout', { display_name: 'Scout Prime' }));
    fireEvent.click(within(card).getByRole('button', { name: 'Run certification' }));
    const checks = await within(card).findByTestId('certify-checks');
    expect(checks.textContent).toMatch(/✗ activity: not seen for 7 days/);
    expect(client.certifyHubIdentity).toHaveBeenCalledWith(state.identities[0]!.id);
    expect(await axeViolations(container)).toEqual([]);
  });

  it('tells the developer what an unverified identity needs before a listing can be published', async () => {
    state.identities = [identity()];
    renderInApp(<HubIdentities />);
    const card = await screen.findByTestId('hub-identity-scout');
    expect((await within(card).findByText(/needs a certified identity/)).textContent).toMatch(/operator/);
    expect(within(card).getByLabelText('trust tier unverified')).toBeTruthy();
  });
});
