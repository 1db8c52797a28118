/**
 * Every instance equal (design §6, §8.32): two instances on one PostgreSQL
 * database, one DATA_DIR and Redis, with a device's sockets on either. Presence, typing, room and
 * A2A events cross instances; the per-device message limit is one budget for the device whatever
 * instance its frames reach; decision deadlines fire once and each webhook is delivered once while
 * both instances run the jobs; and a tenant's history cursors have no gaps while both instances
 * commit for it at once. (Delivery and revocation across instances: redis-bus.test.ts and
 * cluster.test.ts; faults: cluster-faults.test.ts.)
 * Runs on PostgreSQL with TEST_REDIS_URL (PGlite cannot be shared between processes).
 */
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { activeAgent, newOwner, registerOwnerDevice, type Agent, type Owner, type OwnerDevice } from '../../testing/flows.js';
import { backend, startInstances, type TestApp, type TestCluster } from '../../testing/harness.js';
import { activeChannel, keyAgent } from '../../testing/key-agents.js';
import { holdNextMessageSeq } from '../../testing/seq-hostage.js';
import { Receiver, waitFor } from '../../testing/webhook-receiver.js';
import { WsPool, wsAddress, type WsClient } from '../../testing/ws-client.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const WS_LIMIT = 20;

describe.skipIf(backend !== 'postgres' || !process.env.TEST_REDIS_URL)('every instance equal', () => {
  let cluster: TestCluster;
  let a: TestApp;
  let b: TestApp;
  const pool = new WsPool();
  const rx = new Receiver();

  beforeAll(async () => {
    await rx.start();
    cluster = await startInstances(2, {
      RATE_LIMIT_ENROLL_PER_10MIN: '1000',
      RATE_LIMIT_WS_MESSAGES_PER_MIN: String(WS_LIMIT),
      DECISION_DEADLINE_INTERVAL_MS: '100',
      WEBHOOK_POLL_MS: '20',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_ALLOW_HTTP: 'true',
    });
    [a, b] = cluster.apps as [TestApp, TestApp];
  });
  afterEach(() => pool.closeAll());
  afterAll(async () => {
    await cluster?.close();
    await rx.close();
  });

  /** An owner with an owner device and an active agent, made through instance `t`. */
  async function tenant(t: TestApp = a): Promise<{ owner: Owner; od: OwnerDevice; agent: Agent }> {
    const owner = await newOwner(t);
    const od = await registerOwnerDevice(t, owner);
    const agent = await activeAgent(t, owner);
    return { owner, od, agent };
  }
  const agentSocket = (t: TestApp, agent: Agent) => pool.connect(wsAddress(t.wsUrl, { token: agent.jwt }));
  const ownerSocket = (t: TestApp, owner: Owner, od: OwnerDevice) => pool.connect(wsAddress(t.wsUrl, { token: owner.token, device_id: od.deviceId }));

  it('presence: a socket on one instance reads online on the other, and offline once it closes', async () => {
    const { owner, od, agent } = await tenant();
    const presence = async (t: TestApp) => {
      const res = await t.request({ method: 'GET', url: `/api/v1/devices/${agent.deviceId}/presence`, headers: owner.auth });
      expect(res.status).toBe(200);
      return res.body.online as boolean;
    };
    const ownerOnline = async (t: TestApp) => {
      const res = await t.request({ method: 'GET', url: '/api/v1/owner-connections', headers: owner.auth });
      expect(res.status).toBe(200);
      return (res.body.owner_connections as { device_id: string; online: boolean }[]).find((d) => d.device_id === od.deviceId)?.online;
    };
    expect(await presence(b)).toBe(false);
    expect(await ownerOnline(b)).toBe(false);

    const ws = await agentSocket(a, agent);
    const ows = await ownerSocket(a, owner, od);
    await waitFor(() => presence(b), 'the agent online on instance 2');
    await waitFor(() => ownerOnline(b), 'the owner device online on instance 2');
    expect(await presence(a)).toBe(true);

    // A second socket of the same device on the other instance: closing the first keeps it online.
    const ws2 = await agentSocket(b, agent);
    await ws.close();
    expect(await presence(a)).toBe(true);
    await ws2.close();
    await waitFor(async () => !(await presence(a)) && !(await presence(b)), 'the agent offline on both instances');
    await ows.close();
    await waitFor(async () => (await ownerOnline(b)) === false, 'the owner device offline on instance 2');
  });

  it('typing from an owner device on one instance reaches the agent on the other', async () => {
    const { owner, od, agent } = await tenant();
    const agentWs = await agentSocket(a, agent);
    const ownerWs = await ownerSocket(b, owner, od);
    ownerWs.send('typing', { conversation_id: agent.conversationId });
    const got = await agentWs.next('typing', 5_000);
    expect(got.data).toMatchObject({ conversation_id: agent.conversationId, device_id: od.deviceId });
  });

  it('room messages cross instances', async () => {
    const { owner } = await tenant();
    const a1 = await activeAgent(a, owner);
    const a2 = await activeAgent(b, owner);
    const room = await b.request({ method: 'POST', url: '/api/v1/rooms', headers: owner.auth, payload: { name: 'ops', member_device_ids: [a1.deviceId, a2.deviceId] } });
    expect(room.status).toBe(201);
    const ws1 = await agentSocket(a, a1);
    const ws2 = await agentSocket(b, a2);
    ws1.send('room_message', { room_id: room.body.room_id, envelopes: [{ recipient_device_id: a2.deviceId, header_blob: b64('h'), ciphertext: b64('across') }], client_ref: 'r1' });
    const ack = await ws1.next('room_message_ack');
    const got = await ws2.next('room_message', 5_000);
    expect(got.data).toMatchObject({ room_id: room.body.room_id, room_message_id: ack.data.room_message_id, sender_device_id: a1.deviceId, ciphertext: b64('across') });
  });

  it('A2A: request on one instance, approval on the other, messages between sockets on both', async () => {
    const { owner } = await tenant();
    const x = await keyAgent(a, pool, owner);
    const y = await keyAgent(b, pool, owner);
    const channel = await activeChannel(a, x, y, undefined, b);
    x.ws.send('a2a_message', { channel_id: channel, header_blob: b64('h'), ciphertext: b64('x to y'), client_ref: 'm1' });
    const ack = await x.ws.next('a2a_message_ack');
    const got = await y.ws.next((f) => f.event === 'a2a_message' && f.data.sender_device_id === x.deviceId, 5_000);
    expect(got.data).toMatchObject({ channel_id: channel, message_id: ack.data.message_id, ciphertext: b64('x to y') });
    y.ws.send('a2a_message', { channel_id: channel, header_blob: b64('h'), ciphertext: b64('y to x') });
    expect((await x.ws.next((f) => f.event === 'a2a_message' && f.data.sender_device_id === y.deviceId, 5_000)).data.ciphertext).toBe(b64('y to x'));
  });

  it('the per-device message limit is one budget across instances', async () => {
    const { agent } = await tenant();
    const sockets = [await agentSocket(a, agent), await agentSocket(b, agent)];
    const perSocket = 15; // 30 frames in all, against a limit of WS_LIMIT (20) per minute
    for (const [i, ws] of sockets.entries()) {
      for (let n = 0; n < perSocket; n++) {
        ws.send('message', { conversation_id: agent.conversationId, header_blob: b64('h'), ciphertext: b64(`m${i}-${n}`), client_ref: `s${i}-${n}` });
      }
    }
    const outcome = async (ws: WsClient, i: number) => {
      let acked = 0;
      let limited = 0;
      for (let n = 0; n < perSocket; n++) {
        const f = await ws.next((x) => (x.event === 'message_ack' || x.event === 'error') && x.data.client_ref === `s${i}-${n}`, 10_000);
        if (f.event === 'message_ack') acked++;
        else if (f.data.status === 429) limited++;
      }
      return { acked, limited };
    };
    const [one, two] = await Promise.all(sockets.map((ws, i) => outcome(ws, i)));
    expect(one!.acked + two!.acked).toBe(WS_LIMIT);
    expect(one!.limited + two!.limited).toBe(2 * perSocket - WS_LIMIT);
  });

  it('decision deadlines fire once while both instances run the job', async () => {
    const { agent } = await tenant();
    const sockets = [await agentSocket(a, agent), await agentSocket(b, agent)];
    const deadline = new Date(Date.now() + 1_000).toISOString();
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await (i % 2 ? b : a).request({
        method: 'POST',
        url: '/api/v1/decisions',
        headers: agent.auth,
        payload: { title: `d${i}`, options: [{ option_id: 'go', label: 'Go', risk_level: 'low', is_default: true }], deadline },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      ids.push(res.body.decision_id as string);
    }
    const responses = (ws: WsClient, id: string) => ws.buffered((f) => f.event === 'decision_response' && f.data.decision_id === id);
    await waitFor(() => sockets.every((ws) => ids.every((id) => responses(ws, id).length > 0)), 'every decision expired on both sockets', 15_000);
    // Let both instances sweep a few more times after the last expiry: nothing fires again.
    const runs = (t: TestApp) => t.app.parley.metrics.jobRuns.get().then((m) => m.values.filter((v) => v.labels.job === 'decision_deadlines').reduce((s, v) => s + v.value, 0));
    const before = await Promise.all([runs(a), runs(b)]);
    await waitFor(async () => (await runs(a)) >= before[0]! + 3 && (await runs(b)) >= before[1]! + 3, 'three more sweeps on each instance');
    for (const ws of sockets) for (const id of ids) expect(responses(ws, id).map((f) => f.data.resolution)).toEqual(['expired']);
  });

  it('each webhook is delivered once while both instances run the worker', async () => {
    const { owner, od, agent } = await tenant();
    const hook = await a.request({ method: 'PATCH', url: `/api/v1/devices/${agent.deviceId}/webhook`, headers: owner.auth, payload: { url: `${rx.base}/agent-${agent.deviceId}` } });
    expect(hook.status).toBe(200);
    const n = 16;
    for (let i = 0; i < n; i++) {
      const res = await (i % 2 ? b : a).request({
        method: 'POST',
        url: `/api/v1/conversations/${agent.conversationId}/messages`,
        headers: { ...owner.auth, 'x-device-id': od.deviceId },
        payload: { header_blob: b64('h'), ciphertext: b64(`w${i}`) },
      });
      expect(res.status).toBe(201);
    }
    const path = `/agent-${agent.deviceId}`;
    await waitFor(() => rx.to(path).length >= n, `${n} webhook deliveries`, 15_000);
    const pending = async () => {
      const c = new pg.Client({ connectionString: cluster.databaseUrl });
      await c.connect();
      try {
        const { rows } = await c.query(`select count(*)::int as n from webhook_deliveries where device_id = $1 and status <> 'delivered'`, [agent.deviceId]);
        return rows[0].n as number;
      } finally {
        await c.end();
      }
    };
    await waitFor(async () => (await pending()) === 0, 'every delivery row delivered');
    const got = rx.to(path);
    expect(got).toHaveLength(n);
    expect(new Set(got.map((r) => r.headers['webhook-id'])).size).toBe(n);
  });

  it('history cursors have no gaps while both instances commit for one tenant at once', async () => {
    const { owner, od, agent } = await tenant();
    const conv = agent.conversationId!;
    const send = (t: TestApp, text: string) =>
      t.request({ method: 'POST', url: `/api/v1/conversations/${conv}/messages`, headers: { ...owner.auth, 'x-device-id': od.deviceId }, payload: { header_blob: b64('h'), ciphertext: b64(text) } });
    const page = (since: string) => a.request({ method: 'GET', url: `/api/v1/conversations/${conv}/messages?since=${since}&limit=200`, headers: owner.auth });
    expect((await send(a, 'm0')).status).toBe(201);
    const start = (await page('0')).body.next_cursor as string;

    // Hold the next sequence value hostage (unique index on seq): instance 1's flush that draws it
    // waits until this transaction ends, after taking the tenant's sequence lock.
    const blocker = new pg.Client({ connectionString: cluster.databaseUrl });
    const watcher = new pg.Client({ connectionString: cluster.databaseUrl });
    await Promise.all([blocker.connect(), watcher.connect()]);
    const waiting = async () => (await watcher.query(`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`)).rows[0].n as number;
    try {
      await holdNextMessageSeq(blocker, owner.tenantId, od, agent);
      const slow = send(a, 'slow'); // instance 1: draws the hostage value and waits
      await waitFor(async () => (await waiting()) >= 1, 'instance 1 waiting on the hostage row');
      const fast = send(b, 'fast'); // instance 2: must not commit a later seq before 'slow'
      let fastDone = false;
      void fast.then(() => (fastDone = true));
      await waitFor(async () => fastDone || (await waiting()) >= 2, 'instance 2 committed or queued');
      // A reader following next_cursor now ...
      const seen: string[] = [];
      let cursor = start;
      const readAll = async () => {
        for (let i = 0; i < 10; i++) {
          const res = await page(cursor);
          expect(res.status).toBe(200);
          if (res.body.messages.length === 0) return;
          seen.push(...(res.body.messages as { message_id: string }[]).map((m) => m.message_id));
          cursor = res.body.next_cursor;
        }
      };
      await readAll();
      await blocker.query('rollback');
      const [s, f] = await Promise.all([slow, fast]);
      expect(s.status).toBe(201);
      expect(f.status).toBe(201);
      // ... and again after both committed, from where it stopped: each message once, none skipped.
      await readAll();
      expect(seen, "instance 2's message committed before instance 1's earlier seq (cursor gap)").toContain(s.body.message_id);
      expect(seen).toContain(f.body.message_id);
      expect(new Set(seen).size).toBe(seen.length);
    } finally {
      await blocker.query('rollback').catch(() => undefined);
      await Promise.all([blocker.end(), watcher.end()]);
    }
  });
});
