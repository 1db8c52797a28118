/**
 * Agent self-registration (`POST /api/v1/hub/agents`; contract §4.19 `svc_register_agent`; design
 * §8.13, §8.15, §8.18; docs/decisions.md "Agent self-registration"): one transaction creates an
 * API key and a hub identity (409 leaves no key behind), the key's first `client_key_register`
 * binds the identity to the new device (and, without a registered owner key, makes the device key
 * the `#owner-key`), rotation of a still-unbound key carries the binding over, audit events and
 * chain validity, input and auth errors, and tenant isolation.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { activeAgent, newOwner, type Owner } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { hubOwnerKey, newDeviceKeys, type DeviceKeys } from '../../testing/keys.js';
import { wsAddress, WsPool } from '../../testing/ws-client.js';

const AGENTS = '/api/v1/hub/agents';
let seq = 0;
const addr = () => `hag-${Date.now().toString(36)}-${++seq}`;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('agent self-registration', () => {
  let t: TestApp;
  let a: Owner;
  let b: Owner;
  const pool = new WsPool();

  const register = (headers: Record<string, string> | undefined, payload: Record<string, unknown>) => t.request({ method: 'POST', url: AGENTS, ...(headers ? { headers } : {}), payload });
  const identity = async (owner: Owner, id: string) => t.request({ method: 'GET', url: `/api/v1/hub/identities/${id}`, headers: owner.auth });
  const apiKeys = async (owner: Owner) => (await t.request({ method: 'GET', url: '/api/v1/api-keys', headers: owner.auth })).body.api_keys as any[];
  const events = async (owner: Owner, query: string) => (await t.request({ method: 'GET', url: `/api/v1/audit/events?${query}`, headers: owner.auth })).body.events as any[];
  const verified = async (owner: Owner) => (await t.request({ method: 'GET', url: '/api/v1/audit/verify', headers: owner.auth })).body;
  const didDocument = async (address: string) => (await t.request({ method: 'GET', url: `/api/v1/hub/${address}/did` })).body;

  /** Connect with the raw key and register key material (trust on first use). */
  async function registerKeyMaterial(key: string, keys: DeviceKeys = newDeviceKeys()): Promise<string> {
    const ws = await pool.open(wsAddress(t.wsUrl, { token: key }));
    ws.send('client_key_register', { identity_public_key: keys.identityPublicKey, ephemeral_public_key: keys.ephemeralPublicKey, signature: keys.proof() });
    return (await ws.next('client_key_accepted')).data.device_id as string;
  }

  beforeAll(async () => {
    t = await startApp({ listen: true, env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000' } });
    a = await newOwner(t, 'Agents A');
    b = await newOwner(t, 'Agents B');
  });
  afterEach(() => pool.closeAll());
  afterAll(() => t.close());

  it('an owner registers an agent: identity and API key in one go; the first client_key_register binds the device and its key becomes the owner key', async () => {
    const name = addr();
    const res = await register(a.auth, { name: name.toUpperCase(), skills: ['translate', 'summarize', 'translate'], description: 'Translates text' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      identity_id: expect.stringMatching(UUID),
      did: `did:hub:${name}`,
      hub_name: name,
      hub_address: name,
      api_key: expect.stringMatching(/^svc_agent_sk_dev_[0-9a-f]{64}$/),
      api_key_id: expect.stringMatching(UUID),
      trust_score: 0,
      trust_tier: 'unverified',
    });
    const before = await identity(a, res.body.identity_id);
    expect(before.body).toMatchObject({ hub_address: name, display_name: name, description: 'Translates text', capabilities: ['translate', 'summarize'], public_key: null, device_id: null, trust_tier: 'unverified' });
    expect((await didDocument(name)).verificationMethod ?? []).toEqual([]);
    const key = (await apiKeys(a)).find((k) => k.id === res.body.api_key_id);
    expect(key).toMatchObject({ name, env: 'dev', status: 'active', device_id: null });
    expect(JSON.stringify(await apiKeys(a))).not.toContain(res.body.api_key);

    // The raw key works at once (the public search sees the new agent's skills too).
    const search = await t.request({ method: 'GET', url: `/api/v1/hub/search?capability=summarize&query=${name}`, headers: { 'x-api-key': res.body.api_key } });
    expect(search.status).toBe(200);
    expect(search.body.results.map((r: any) => r.hub_address)).toContain(name);

    const keys = newDeviceKeys();
    const deviceId = await registerKeyMaterial(res.body.api_key, keys);
    const after = await identity(a, res.body.identity_id);
    expect(after.body).toMatchObject({ device_id: deviceId, public_key: Buffer.from(keys.identityPublicKey, 'hex').toString('base64') });
    const doc = await didDocument(name);
    expect(doc.verificationMethod.map((m: any) => m.id)).toEqual([`did:hub:${name}#owner-key`]);

    const [registered] = await events(a, `type=hub.registered&subject=${res.body.identity_id}`);
    expect(registered).toMatchObject({ actor: a.sub, data: { hub_address: name, device_id: null, owner_key: false, api_key_id: res.body.api_key_id } });
    const [created] = await events(a, `type=api_key.created&subject=${res.body.api_key_id}`);
    expect(created).toMatchObject({ actor: a.sub, data: { name, env: 'dev' } });
    const [bound] = await events(a, `type=hub.agent_bound&subject=${res.body.identity_id}`);
    expect(bound).toMatchObject({ actor: `api_key:${res.body.api_key_id}`, data: { hub_address: name, device_id: deviceId, api_key_id: res.body.api_key_id, owner_key_from_device: true } });
    expect(JSON.stringify(await events(a, 'limit=200'))).not.toContain(res.body.api_key);
    expect(await verified(a)).toMatchObject({ valid: true, first_broken: null });

    // The bound agent acts as itself: a second registration of the same material is idempotent and binds nothing new.
    expect(await registerKeyMaterial(res.body.api_key, keys)).toBe(deviceId);
    expect(await events(a, `type=hub.agent_bound&subject=${res.body.identity_id}`)).toHaveLength(1);
  });

  it('an API key registers another agent: env defaults to the calling key’s, a given owner key is kept, display_name is used', async () => {
    const callerKey = await t.request({ method: 'POST', url: '/api/v1/api-keys', headers: a.auth, payload: { name: 'orchestrator', env: 'staging' } });
    const name = addr();
    const ownerKey = hubOwnerKey();
    const res = await register({ 'x-api-key': callerKey.body.key }, { name, display_name: 'Worker', public_key: ownerKey });
    expect(res.status).toBe(201);
    expect(res.body.api_key).toMatch(/^svc_agent_sk_staging_/);
    const prod = await register({ 'x-api-key': callerKey.body.key }, { name: addr(), env: 'prod' });
    expect(prod.body.api_key).toMatch(/^svc_agent_sk_prod_/);

    const deviceId = await registerKeyMaterial(res.body.api_key);
    expect((await identity(a, res.body.identity_id)).body).toMatchObject({ display_name: 'Worker', public_key: ownerKey, device_id: deviceId, capabilities: [] });
    const [registered] = await events(a, `type=hub.registered&subject=${res.body.identity_id}`);
    expect(registered).toMatchObject({ actor: `api_key:${callerKey.body.id}`, data: { owner_key: true } });
    const [bound] = await events(a, `type=hub.agent_bound&subject=${res.body.identity_id}`);
    expect(bound.data.owner_key_from_device).toBe(false);
    expect(await verified(a)).toMatchObject({ valid: true });
  });

  it('409 for a taken or reserved address leaves no API key and no event behind', async () => {
    const name = addr();
    expect((await register(a.auth, { name })).status).toBe(201);
    const keysBefore = (await apiKeys(a)).length;
    const lastBefore = (await events(a, 'limit=1'))[0].event_id;

    const again = await register(a.auth, { name: name.toUpperCase() });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ detail: expect.stringMatching(/already registered/) });
    // Taken by another tenant's identity: same answer, same nothing.
    const elsewhere = addr();
    const agentB = await activeAgent(t, b);
    expect((await t.request({ method: 'POST', url: '/api/v1/hub/register', headers: b.auth, payload: { hub_address: elsewhere, display_name: 'B', device_id: agentB.deviceId, public_key: hubOwnerKey() } })).status).toBe(201);
    expect((await register(a.auth, { name: elsewhere })).status).toBe(409);
    expect((await register(a.auth, { name: 'identities' })).status).toBe(409);

    expect((await apiKeys(a)).length).toBe(keysBefore);
    expect((await events(a, 'limit=1'))[0].event_id).toBe(lastBefore);
    expect(await verified(a)).toMatchObject({ valid: true });
  });

  it('rotating a key before its first registration carries the pending binding to the new key', async () => {
    const res = await register(a.auth, { name: addr() });
    const rotated = await t.request({ method: 'POST', url: `/api/v1/api-keys/${res.body.api_key_id}/rotate`, headers: a.auth });
    expect(rotated.status).toBe(200);
    const deviceId = await registerKeyMaterial(rotated.body.key);
    expect((await identity(a, res.body.identity_id)).body.device_id).toBe(deviceId);
    const [bound] = await events(a, `type=hub.agent_bound&subject=${res.body.identity_id}`);
    expect(bound.data.api_key_id).toBe(rotated.body.id);
  });

  it('400 bad input, 401 without credentials, 403 for a device JWT; another tenant cannot see the identity or its events', async () => {
    const bad: Record<string, unknown>[] = [
      {},
      { name: 'ab' },
      { name: '-abc' },
      { name: 'abc_def' },
      { name: 'x'.repeat(33) },
      { name: addr(), skills: Array.from({ length: 51 }, (_, i) => `s${i}`) },
      { name: addr(), skills: [''] },
      { name: addr(), skills: ['x'.repeat(101)] },
      { name: addr(), description: 'x'.repeat(1001) },
      { name: addr(), display_name: '' },
      { name: addr(), env: 'test' },
      { name: addr(), public_key: 'not-a-key' },
      { name: addr(), public_key: Buffer.alloc(32).toString('base64') },
    ];
    const keysBefore = (await apiKeys(a)).length;
    for (const payload of bad) {
      const res = await register(a.auth, payload);
      expect(res.status, JSON.stringify(payload)).toBe(400);
      expect(res.body).toEqual({ detail: expect.any(String) });
    }
    expect((await apiKeys(a)).length).toBe(keysBefore);
    expect((await register(undefined, { name: addr() })).status).toBe(401);
    expect((await register({ 'x-api-key': `svc_agent_sk_dev_${'0'.repeat(64)}` }, { name: addr() })).status).toBe(401);
    const agent = await activeAgent(t, a);
    expect((await register(agent.auth, { name: addr() })).status).toBe(403);

    const res = await register(a.auth, { name: addr() });
    expect((await identity(b, res.body.identity_id)).status).toBe(404);
    expect(await events(b, `subject=${res.body.identity_id}`)).toHaveLength(0);
    expect((await apiKeys(b)).some((k) => k.id === res.body.api_key_id)).toBe(false);
    expect(await verified(b)).toMatchObject({ valid: true });
  });
});
