/**
 * An agent's own audit events (`POST /api/v1/audit/events`; contract §4.19 `svc_submit_audit`, §4.14;
 * design §8.10; docs/decisions.md "Agent audit events"): device JWT and API-key agents append
 * `agent.action` to their tenant's chain (actor, subject, data with the bound hub address), the
 * answer is the stored event, the chain stays valid, input limits (16 KiB details → 413), the
 * auth matrix (unregistered key 403) and tenant isolation.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { activeAgent, newOwner, type Agent, type Owner } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { hubOwnerKey, newDeviceKeys } from '../../testing/keys.js';
import { wsAddress, WsPool } from '../../testing/ws-client.js';

const URL = '/api/v1/audit/events';

describe('agent audit events', () => {
  let t: TestApp;
  let a: Owner;
  let b: Owner;
  let agent: Agent;
  let address: string;
  const pool = new WsPool();

  const submit = (headers: Record<string, string> | undefined, payload: unknown) => t.request({ method: 'POST', url: URL, ...(headers ? { headers } : {}), payload: payload as Record<string, unknown> });
  const list = async (owner: Owner, query: string) => {
    const res = await t.request({ method: 'GET', url: `${URL}?${query}`, headers: owner.auth });
    expect(res.status).toBe(200);
    return res.body.events as any[];
  };
  const verified = async (owner: Owner) => (await t.request({ method: 'GET', url: '/api/v1/audit/verify', headers: owner.auth })).body;

  /** An API key whose socket registered key material (trust on first use). */
  async function registeredKey(owner: Owner): Promise<{ key: string; id: string; deviceId: string }> {
    const created = await t.request({ method: 'POST', url: '/api/v1/api-keys', headers: owner.auth, payload: { name: 'audit agent' } });
    expect(created.status).toBe(201);
    const ws = await pool.open(wsAddress(t.wsUrl, { token: created.body.key }));
    const keys = newDeviceKeys();
    ws.send('client_key_register', { identity_public_key: keys.identityPublicKey, ephemeral_public_key: keys.ephemeralPublicKey, signature: keys.proof() });
    const deviceId = (await ws.next('client_key_accepted')).data.device_id as string;
    return { key: created.body.key, id: created.body.id, deviceId };
  }

  beforeAll(async () => {
    t = await startApp({ listen: true, env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000' } });
    a = await newOwner(t, 'Audit A');
    b = await newOwner(t, 'Audit B');
    agent = await activeAgent(t, a);
    address = `aud-${Date.now().toString(36)}`;
    const res = await t.request({ method: 'POST', url: '/api/v1/hub/identities', headers: a.auth, payload: { hub_address: address, display_name: 'Auditor', device_id: agent.deviceId, public_key: hubOwnerKey() } });
    expect(res.status).toBe(201);
  });
  afterEach(() => pool.closeAll());
  afterAll(() => t.close());

  it('a device JWT agent appends agent.action; the answer is the stored event; the chain stays valid', async () => {
    const details = { tool: 'translate', nested: { n: 1, list: [true, null, 'x'] }, 'ключ': 'значение' };
    const res = await submit(agent.auth, { action: 'invoked translate', details, trace_id: 'A'.repeat(32), parent_span_id: 'b'.repeat(16) });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      type: 'agent.action',
      actor: `device:${agent.deviceId}`,
      subject: agent.deviceId,
      data: { action: 'invoked translate', details, trace_id: 'a'.repeat(32), parent_span_id: 'b'.repeat(16), hub_address: address },
      prev_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      hash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    const [stored] = await list(a, `type=agent.action&subject=${agent.deviceId}`);
    expect(stored).toEqual(res.body);

    const bare = await submit(agent.auth, { action: 'noted' });
    expect(bare.status).toBe(201);
    expect(bare.body.data).toEqual({ action: 'noted', details: null, trace_id: null, parent_span_id: null, hub_address: address });
    expect(bare.body.prev_hash).toBe(res.body.hash);
    expect(await verified(a)).toMatchObject({ valid: true, first_broken: null });
  });

  it('an API key agent acts as its device (actor api_key:<id>, no hub identity: hub_address null); an unregistered key is 403', async () => {
    const k = await registeredKey(a);
    const res = await submit({ 'x-api-key': k.key }, { action: 'started job' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ actor: `api_key:${k.id}`, subject: k.deviceId, data: { action: 'started job', hub_address: null } });

    const unregistered = await t.request({ method: 'POST', url: '/api/v1/api-keys', headers: a.auth, payload: { name: 'fresh' } });
    const refused = await submit({ 'x-api-key': unregistered.body.key }, { action: 'x' });
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toMatch(/no registered key material/);
    expect(await list(a, `actor=api_key:${unregistered.body.id}`)).toHaveLength(0);
  });

  it('input limits: details above 16 KiB of JSON is 413; bad fields 400; owner 403; no credential 401', async () => {
    const before = (await list(a, 'limit=1'))[0].event_id;
    const big = await submit(agent.auth, { action: 'big', details: { blob: 'x'.repeat(16 * 1024) } });
    expect(big.status).toBe(413);
    expect(big.body).toEqual({ detail: expect.stringMatching(/16384/) });
    // Just under the limit is accepted (the JSON of {"blob":"…"} is 11 bytes more than the string).
    expect((await submit(agent.auth, { action: 'fits', details: { blob: 'x'.repeat(16 * 1024 - 11) } })).status).toBe(201);

    const bad: unknown[] = [
      {},
      { action: '' },
      { action: 'x'.repeat(201) },
      { action: 'x', details: 'text' },
      { action: 'x', details: [1, 2] },
      { action: 'x', details: null },
      { action: 'x', trace_id: 'g'.repeat(32) },
      { action: 'x', trace_id: 'a'.repeat(31) },
      { action: 'x', trace_id: '0'.repeat(32) },
      { action: 'x', parent_span_id: 'a'.repeat(17) },
      { action: 'x', parent_span_id: '0'.repeat(16) },
      { action: 'x', details: { text: 'nul\u0000byte' } },
      { action: 'lone \ud800 surrogate' },
    ];
    for (const payload of bad) {
      const res = await submit(agent.auth, payload);
      expect(res.status, JSON.stringify(payload)).toBe(400);
      expect(res.body).toEqual({ detail: expect.any(String) });
    }
    expect((await submit(a.auth, { action: 'x' })).status).toBe(403);
    expect((await submit(undefined, { action: 'x' })).status).toBe(401);
    expect((await submit({ authorization: 'Bearer nope' }, { action: 'x' })).status).toBe(401);
    const latest = await list(a, 'limit=2');
    expect(latest[0].data.action).toBe('fits');
    expect(latest[1].event_id).toBe(before);
    expect(await verified(a)).toMatchObject({ valid: true });
  });

  it('tenant isolation: another tenant sees none of the events; its own agent writes to its own chain', async () => {
    const mine = await submit(agent.auth, { action: 'private to A' });
    expect(mine.status).toBe(201);
    expect(await list(b, 'type=agent.action')).toHaveLength(0);
    expect(await list(b, `subject=${agent.deviceId}`)).toHaveLength(0);
    const other = await activeAgent(t, b);
    const theirs = await submit(other.auth, { action: 'private to B' });
    expect(theirs.status).toBe(201);
    expect((await list(b, 'type=agent.action')).map((e) => e.event_id)).toEqual([theirs.body.event_id]);
    expect((await list(a, 'type=agent.action')).some((e) => e.event_id === theirs.body.event_id)).toBe(false);
    expect(await verified(a)).toMatchObject({ valid: true });
    expect(await verified(b)).toMatchObject({ valid: true });
  });
});
