/**
 * Decisions (contract §2.4 decision_request, §4.15, §6.1 decision_response; design §8.4, §8.19,
 * §8.22): the route matrix (agent, owner on its behalf, API key; 400/401/403/404), the awaiting
 * list with cursor pagination, resolution over a real agent socket (approve, deny, defer, 409 on a
 * second resolution), and the deadline job firing each lapsed decision exactly once while several
 * workers race (on PostgreSQL the ticks run on separate pool connections at once).
 */
import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { decisions } from '../../src/db/schema/index.js';
import { crossTenant } from '../../src/db/tenant.js';
import { fireDecisionDeadlines } from '../../src/jobs/decision-deadlines.js';
import { DecisionService } from '../../src/modules/decisions/service.js';
import { Notifier } from '../../src/realtime/notifier.js';
import { activeAgent, newOwner, registerOwnerDevice, type Agent, type Owner, type OwnerDevice } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { newDeviceKeys } from '../../testing/keys.js';
import { wsAddress, WsPool, type WsClient } from '../../testing/ws-client.js';

const OPTIONS = [
  { option_id: 'ship', label: 'Ship it', risk_level: 'medium', is_default: true },
  { option_id: 'wait', label: 'Wait a day', risk_level: 'low' },
];
const future = (ms = 3600_000) => new Date(Date.now() + ms).toISOString();

describe('decisions', () => {
  let t: TestApp;
  let owner: Owner;
  let od: OwnerDevice;
  let agent: Agent;
  let other: Owner;
  let otherAgent: Agent;
  const pool = new WsPool();

  beforeAll(async () => {
    // The app's own deadline job stays out of the way; the tests run ticks themselves.
    t = await startApp({ listen: true, env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000', DECISION_DEADLINE_INTERVAL_MS: '3600000' } });
    owner = await newOwner(t);
    od = await registerOwnerDevice(t, owner);
    agent = await activeAgent(t, owner);
    other = await newOwner(t, 'Other');
    otherAgent = await activeAgent(t, other);
  });
  afterEach(() => pool.closeAll());
  afterAll(() => t.close());

  const create = (headers: Record<string, string> | undefined, payload: Record<string, unknown>) =>
    t.request({ method: 'POST', url: '/api/v1/decisions', ...(headers ? { headers } : {}), payload });
  const askAs = async (a: Agent, extra: Record<string, unknown> = {}) => {
    const res = await create(a.auth, { title: 'Deploy v2?', options: OPTIONS, ...extra });
    expect(res.status).toBe(201);
    return res.body as Record<string, any>;
  };
  const resolve = (id: string, payload: Record<string, unknown>, who: Owner = owner) =>
    t.request({ method: 'POST', url: `/api/v1/decisions/${id}/resolve`, headers: who.auth, payload });
  const list = (query = '', who: Owner = owner) => t.request({ method: 'GET', url: `/api/v1/decisions${query}`, headers: who.auth });
  const agentSocket = (a: Agent = agent) => pool.connect(wsAddress(t.wsUrl, { token: a.jwt }));
  /** A second, independent worker: its own service and notifier on the app's database and bus. */
  const worker = () =>
    new DecisionService({ db: t.app.parley.database.db, notifier: new Notifier(t.app.parley.bus), listDefault: 50, listMax: 200 });
  const responses = (ws: WsClient, id: string) => ws.buffered((f) => f.event === 'decision_response' && f.data.decision_id === id);

  describe('POST /decisions', () => {
    it('an agent creates its own decision (201, pending) and the owner sockets get decision_created', async () => {
      const ownerWs = await pool.connect(wsAddress(t.wsUrl, { token: owner.token, device_id: od.deviceId }));
      const d = await askAs(agent, { description: 'prod', deadline: future(), auto_action: { resolution: 'approve', option_id: 'wait' } });
      expect(d).toMatchObject({
        device_id: agent.deviceId,
        title: 'Deploy v2?',
        description: 'prod',
        options: OPTIONS,
        status: 'pending',
        option_id: null,
        note: null,
        auto_action: { resolution: 'approve', option_id: 'wait' },
        created_by: `device:${agent.deviceId}`,
        resolved_at: null,
        resolved_by: null,
      });
      const ev = await ownerWs.next((f) => f.event === 'decision_created' && f.data.decision_id === d.decision_id);
      expect(ev.data).toEqual(d);
    });

    it('an owner creates one on behalf of its agent (device_id required, an ACTIVE agent of the tenant)', async () => {
      const ok = await create(owner.auth, { device_id: agent.deviceId, title: 'Pay invoice?', options: OPTIONS });
      expect(ok.status).toBe(201);
      expect(ok.body).toMatchObject({ device_id: agent.deviceId, created_by: owner.sub, deadline: null, auto_action: null });
      expect((await create(owner.auth, { title: 'x', options: OPTIONS })).status).toBe(400);
      expect((await create(owner.auth, { device_id: od.deviceId, title: 'x', options: OPTIONS })).status).toBe(400);
      expect((await create(owner.auth, { device_id: otherAgent.deviceId, title: 'x', options: OPTIONS })).status).toBe(404);
      expect((await create(owner.auth, { device_id: '00000000-0000-4000-8000-000000000000', title: 'x', options: OPTIONS })).status).toBe(404);
    });

    it('an agent cannot create one for another device (403)', async () => {
      const res = await create(agent.auth, { device_id: otherAgent.deviceId, title: 'x', options: OPTIONS });
      expect(res.status).toBe(403);
    });

    it('an API key creates one for its bound device; an unbound key is 403', async () => {
      const key = await t.request({ method: 'POST', url: '/api/v1/api-keys', headers: owner.auth, payload: { name: 'bot' } });
      const headers = { 'x-api-key': key.body.key as string };
      expect((await create(headers, { title: 'x', options: OPTIONS })).status).toBe(403);
      const keys = newDeviceKeys();
      const ws = await pool.open(wsAddress(t.wsUrl, { token: key.body.key }));
      ws.send('client_key_register', { identity_public_key: keys.identityPublicKey, ephemeral_public_key: keys.ephemeralPublicKey, signature: keys.proof() });
      const accepted = await ws.next('client_key_accepted');
      const res = await create(headers, { title: 'Rotate secrets?', options: OPTIONS });
      expect(res.status).toBe(201);
      expect(res.body.device_id).toBe(accepted.data.device_id);
    });

    it('answers 400 for invalid requests and 401 without credentials', async () => {
      const bad: Record<string, unknown>[] = [
        { options: OPTIONS },
        { title: '', options: OPTIONS },
        { title: 'x' },
        { title: 'x', options: [] },
        { title: 'x', options: Array.from({ length: 21 }, (_, i) => ({ option_id: `o${i}`, label: 'l', risk_level: 'low' })) },
        { title: 'x', options: [{ option_id: 'a', label: 'A', risk_level: 'extreme' }] },
        { title: 'x', options: [{ option_id: 'a', label: 'A' }] },
        { title: 'x', options: [OPTIONS[0], OPTIONS[0]] },
        { title: 'x', options: [OPTIONS[0], { ...OPTIONS[1], is_default: true }] },
        { title: 'x', options: OPTIONS, deadline: 'tomorrow' },
        { title: 'x', options: OPTIONS, deadline: new Date(Date.now() - 1000).toISOString() },
        { title: 'x', options: OPTIONS, auto_action: { resolution: 'defer' } },
        { title: 'x', options: OPTIONS, auto_action: { resolution: 'approve', option_id: 'nope' } },
        { title: 'x', options: OPTIONS, device_id: 'not-a-uuid' },
      ];
      for (const payload of bad) expect((await create(agent.auth, payload)).status, JSON.stringify(payload)).toBe(400);
      const res = await create(undefined, { title: 'x', options: OPTIONS });
      expect(res.status).toBe(401);
      expect(res.body.detail).toBeTypeOf('string');
    });
  });

  describe('GET /decisions', () => {
    it('lists awaiting decisions (pending and deferred) oldest first, with cursor pagination, per tenant', async () => {
      const mine = [await askAs(agent), await askAs(agent), await askAs(agent)];
      await askAs(otherAgent);
      expect((await resolve(mine[0]!.decision_id, { resolution: 'defer' })).status).toBe(200);
      expect((await resolve(mine[1]!.decision_id, { resolution: 'deny' })).status).toBe(200);
      const all: Record<string, any>[] = [];
      let cursor: string | null = null;
      do {
        const res = await list(`?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        expect(res.status).toBe(200);
        expect(res.body.decisions.length).toBeLessThanOrEqual(2);
        all.push(...res.body.decisions);
        cursor = res.body.next_cursor;
      } while (cursor);
      const ids = all.map((d) => d.decision_id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids).toContain(mine[0]!.decision_id);
      expect(ids).not.toContain(mine[1]!.decision_id);
      expect(ids).toContain(mine[2]!.decision_id);
      expect(all.every((d) => d.status === 'pending' || d.status === 'deferred')).toBe(true);
      expect(all.some((d) => d.device_id === otherAgent.deviceId)).toBe(false);
      const created = all.map((d) => d.created_at as string);
      expect([...created].sort()).toEqual(created);
      const theirs = await list('', other);
      expect(theirs.body.decisions.map((d: { decision_id: string }) => d.decision_id)).not.toContain(mine[2]!.decision_id);
    });

    it('answers 400 for a bad cursor or limit, 401 without a token, 403 for a device', async () => {
      expect((await list('?cursor=garbage')).status).toBe(400);
      expect((await list('?limit=0')).status).toBe(400);
      expect((await list('?limit=201')).status).toBe(400);
      expect((await t.request({ method: 'GET', url: '/api/v1/decisions' })).status).toBe(401);
      expect((await t.request({ method: 'GET', url: '/api/v1/decisions', headers: agent.auth })).status).toBe(403);
    });
  });

  describe('POST /decisions/{id}/resolve', () => {
    it('approve sends decision_response to the agent socket; a second resolution is 409', async () => {
      const ws = await agentSocket();
      const d = await askAs(agent);
      const res = await resolve(d.decision_id, { resolution: 'approve', note: 'go ahead' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: 'approved', option_id: 'ship', note: 'go ahead', resolved_by: owner.sub });
      const ev = await ws.next((f) => f.event === 'decision_response' && f.data.decision_id === d.decision_id);
      expect(ev.data).toEqual({ decision_id: d.decision_id, resolution: 'approve', option_id: 'ship', note: 'go ahead' });
      const again = await resolve(d.decision_id, { resolution: 'deny' });
      expect(again.status).toBe(409);
      await ws.roundTrip();
      expect(responses(ws, d.decision_id)).toHaveLength(0);
    });

    it('deny with an option sends the response; an unknown option is 400', async () => {
      const ws = await agentSocket();
      const d = await askAs(agent);
      expect((await resolve(d.decision_id, { resolution: 'deny', option_id: 'nope' })).status).toBe(400);
      const res = await resolve(d.decision_id, { resolution: 'deny', option_id: 'ship' });
      expect(res.status).toBe(200);
      expect(res.body.status).toBe('denied');
      const ev = await ws.next((f) => f.event === 'decision_response' && f.data.decision_id === d.decision_id);
      expect(ev.data).toEqual({ decision_id: d.decision_id, resolution: 'deny', option_id: 'ship', note: null });
    });

    it('defer keeps it open: responded, listed, not deferrable twice, decidable later', async () => {
      const ws = await agentSocket();
      const d = await askAs(agent);
      const deferred = await resolve(d.decision_id, { resolution: 'defer', note: 'after lunch' });
      expect(deferred.status).toBe(200);
      expect(deferred.body.status).toBe('deferred');
      const ev = await ws.next((f) => f.event === 'decision_response' && f.data.decision_id === d.decision_id);
      expect(ev.data).toEqual({ decision_id: d.decision_id, resolution: 'defer', option_id: null, note: 'after lunch' });
      expect((await resolve(d.decision_id, { resolution: 'defer' })).status).toBe(409);
      const approved = await resolve(d.decision_id, { resolution: 'approve', option_id: 'wait' });
      expect(approved.status).toBe(200);
      expect(approved.body).toMatchObject({ status: 'approved', option_id: 'wait', note: null });
      const ev2 = await ws.next((f) => f.event === 'decision_response' && f.data.decision_id === d.decision_id);
      expect(ev2.data.resolution).toBe('approve');
    });

    it('answers 400, 401, 404 (unknown or another tenant) as it should', async () => {
      const d = await askAs(agent);
      expect((await resolve(d.decision_id, { resolution: 'maybe' })).status).toBe(400);
      expect((await resolve(d.decision_id, {})).status).toBe(400);
      expect((await resolve(d.decision_id, { resolution: 'approve', note: 'x'.repeat(2001) })).status).toBe(400);
      expect((await t.request({ method: 'POST', url: '/api/v1/decisions/not-a-uuid/resolve', headers: owner.auth, payload: { resolution: 'approve' } })).status).toBe(400);
      expect((await t.request({ method: 'POST', url: `/api/v1/decisions/${d.decision_id}/resolve`, payload: { resolution: 'approve' } })).status).toBe(401);
      expect((await t.request({ method: 'POST', url: `/api/v1/decisions/${d.decision_id}/resolve`, headers: agent.auth, payload: { resolution: 'approve' } })).status).toBe(403);
      expect((await resolve(d.decision_id, { resolution: 'approve' }, other)).status).toBe(404);
      expect((await resolve('00000000-0000-4000-8000-000000000000', { resolution: 'approve' })).status).toBe(404);
      // Still pending after all that.
      expect((await resolve(d.decision_id, { resolution: 'approve' })).status).toBe(200);
    });
  });

  describe('deadline job', () => {
    const row = async (id: string) =>
      (await crossTenant(t.app.parley.database.db, 'test: read a decision', (tx) => tx.select().from(decisions).where(eq(decisions.id, id))))[0]!;

    it('fires exactly once with several workers racing; the response carries the auto_action', async () => {
      const ws = await agentSocket();
      const withAuto = await askAs(agent, { deadline: future(2000), auto_action: { resolution: 'deny', option_id: 'wait' } });
      const without = await askAs(agent, { deadline: future(2000) });
      const deferred = await askAs(agent, { deadline: future(2000), auto_action: { resolution: 'approve' } });
      expect((await resolve(deferred.decision_id, { resolution: 'defer' })).status).toBe(200);
      await ws.next((f) => f.event === 'decision_response' && f.data.decision_id === deferred.decision_id);
      const notDue = await askAs(agent, { deadline: future(), auto_action: { resolution: 'approve' } });

      const at = new Date(Date.now() + 5000);
      const workers = [worker(), worker(), worker(), worker()];
      const counts = await Promise.all([...workers.map((w) => fireDecisionDeadlines(w, at)), ...workers.map((w) => fireDecisionDeadlines(w, at))]);
      const ours = [withAuto, without, deferred].map((d) => d.decision_id as string);
      for (const id of ours) await ws.next((f) => f.event === 'decision_response' && f.data.decision_id === id && f.data.resolution === 'expired');
      await ws.roundTrip();
      for (const id of ours) expect(responses(ws, id), id).toHaveLength(0);
      // Other tests' decisions carry no near deadline, so every claim in this run is one of ours.
      expect(counts.reduce((a, b) => a + b, 0)).toBe(3);

      expect(await row(withAuto.decision_id)).toMatchObject({ status: 'expired', optionId: 'wait', resolvedBy: 'system:deadline' });
      expect(await row(without.decision_id)).toMatchObject({ status: 'expired', optionId: null });
      expect(await row(deferred.decision_id)).toMatchObject({ status: 'expired', optionId: null });
      expect((await row(notDue.decision_id)).status).toBe('pending');
      expect((await resolve(withAuto.decision_id, { resolution: 'approve' })).status).toBe(409);
      expect(await fireDecisionDeadlines(worker(), at)).toBe(0);
    });

    it('sends {resolution: "expired", option_id, note: null, auto_action} (auto_action null when none)', async () => {
      const ws = await agentSocket();
      const a = await askAs(agent, { deadline: future(1000), auto_action: { resolution: 'approve', option_id: 'ship' } });
      const b = await askAs(agent, { deadline: future(1000) });
      await fireDecisionDeadlines(worker(), new Date(Date.now() + 3000));
      const ea = await ws.next((f) => f.event === 'decision_response' && f.data.decision_id === a.decision_id);
      expect(ea.data).toEqual({ decision_id: a.decision_id, resolution: 'expired', option_id: 'ship', note: null, auto_action: { resolution: 'approve', option_id: 'ship' } });
      const eb = await ws.next((f) => f.event === 'decision_response' && f.data.decision_id === b.decision_id);
      expect(eb.data).toEqual({ decision_id: b.decision_id, resolution: 'expired', option_id: null, note: null, auto_action: null });
    });

    it('a resolution after the deadline expires the decision itself (409) and the response is sent once', async () => {
      const ws = await agentSocket();
      const d = await askAs(agent, { deadline: future(300), auto_action: { resolution: 'deny' } });
      await new Promise((r) => setTimeout(r, 400));
      const res = await resolve(d.decision_id, { resolution: 'approve' });
      expect(res.status).toBe(409);
      const ev = await ws.next((f) => f.event === 'decision_response' && f.data.decision_id === d.decision_id);
      expect(ev.data).toMatchObject({ resolution: 'expired', auto_action: { resolution: 'deny' } });
      expect(await fireDecisionDeadlines(worker())).toBe(0);
      await ws.roundTrip();
      expect(responses(ws, d.decision_id)).toHaveLength(0);
      const listed = await list('?limit=200');
      expect(listed.body.decisions.map((x: { decision_id: string }) => x.decision_id)).not.toContain(d.decision_id);
    });
  });
});

describe('decision deadline job (scheduled by the app)', () => {
  it('runs on its interval and stops with the app', async () => {
    const t = await startApp({ listen: true, env: { DECISION_DEADLINE_INTERVAL_MS: '100' } });
    const pool = new WsPool();
    try {
      const owner = await newOwner(t);
      await registerOwnerDevice(t, owner);
      const agent = await activeAgent(t, owner);
      const ws = await pool.connect(wsAddress(t.wsUrl, { token: agent.jwt }));
      const res = await t.request({
        method: 'POST',
        url: '/api/v1/decisions',
        headers: agent.auth,
        payload: { title: 'Soon', options: OPTIONS, deadline: future(300), auto_action: { resolution: 'approve' } },
      });
      expect(res.status).toBe(201);
      const ev = await ws.next((f) => f.event === 'decision_response' && f.data.decision_id === res.body.decision_id, 5000);
      expect(ev.data).toMatchObject({ resolution: 'expired', option_id: null, auto_action: { resolution: 'approve' } });
    } finally {
      await pool.closeAll();
      await t.close();
    }
  });
});
