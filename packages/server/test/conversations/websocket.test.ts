/**
 * WebSocket gateway over real sockets (contract §4.18, §6.1, §8; design §5, §6, §7): delivery both
 * ways, ack after commit, no echo to the sending socket, typing relay, error frames, refusals
 * (4001 / 4003 / 4401), keepalive, rate limit, reconnect catch-up and service events.
 */
import { PassThrough } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { activeAgent, createInvite, enroll, newOwner, registerOwnerDevice, type Agent, type Owner, type OwnerDevice } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { WsPool, wsAddress, type Frame, type WsClient } from '../../testing/ws-client.js';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Enough enrollments for one app shared by many tests (the contract's 5 per IP per 10 min is tested elsewhere). */
const ENV = { RATE_LIMIT_ENROLL_PER_10MIN: '1000' };

interface Pair {
  owner: Owner;
  od: OwnerDevice;
  agent: Agent;
  conversationId: string;
}

/** An owner with a registered owner device and one ACTIVE agent linked to it. */
async function pair(t: TestApp): Promise<Pair> {
  const owner = await newOwner(t);
  const od = await registerOwnerDevice(t, owner);
  const agent = await activeAgent(t, owner);
  expect(agent.conversationId).toMatch(UUID_RE);
  return { owner, od, agent, conversationId: agent.conversationId! };
}

const ownerUrl = (t: TestApp, owner: Owner, od: OwnerDevice) => wsAddress(t.wsUrl, { token: owner.token, device_id: od.deviceId });
const agentUrl = (t: TestApp, agent: Agent) => wsAddress(t.wsUrl, { token: agent.jwt });

let seq = 0;
/** A `message` send frame's data with distinct opaque bytes. */
function outgoing(conversationId: string, extra: Record<string, unknown> = {}) {
  const n = ++seq;
  return { conversation_id: conversationId, header_blob: b64(`header-${n}`), ciphertext: b64(`ciphertext-${n}-\u0000\u00ff`), ...extra };
}

const isAck = (ref: string) => (f: Frame) => f.event === 'message_ack' && f.data?.client_ref === ref;
const isError = (ref?: string) => (f: Frame) => f.event === 'error' && (ref === undefined || f.data?.client_ref === ref);
const isMessage = (id: string) => (f: Frame) => f.event === 'message' && f.data?.message_id === id;

async function ownerHistory(t: TestApp, p: Pair, query = '') {
  const res = await t.request({ method: 'GET', url: `/api/v1/conversations/${p.conversationId}/messages${query}`, headers: p.owner.auth });
  expect(res.status).toBe(200);
  return res.body as { messages: Array<Record<string, string>>; next_cursor: string | null };
}

async function pendingCount(t: TestApp, agent: Agent): Promise<number> {
  const res = await t.request({ method: 'GET', url: `/api/v1/devices/${agent.deviceId}/pending`, headers: agent.auth });
  expect(res.status).toBe(200);
  return res.body.pending as number;
}

/** Poll `fn` until it returns true or `timeoutMs` passes; returns the last result. */
async function eventually(fn: () => Promise<boolean>, timeoutMs = 3000, everyMs = 50): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await fn()) return true;
    if (Date.now() > end) return false;
    await sleep(everyMs);
  }
}

function expectErrorShape(f: Frame, status: number) {
  expect(f.event).toBe('error');
  expect(f.data.status).toBe(status);
  expect(typeof f.data.detail).toBe('string');
  expect(f.data.detail.length).toBeGreaterThan(0);
}

describe('WebSocket gateway', () => {
  let t: TestApp;
  const pool = new WsPool();
  beforeAll(async () => {
    t = await startApp({ listen: true, env: ENV });
  });
  afterEach(() => pool.closeAll());
  afterAll(() => t?.close());

  it('delivers an owner-device message to the agent with every frame field, acked with client_ref', async () => {
    const p = await pair(t);
    const agentWs = await pool.connect(agentUrl(t, p.agent));
    const ownerWs = await pool.connect(ownerUrl(t, p.owner, p.od));

    const data = outgoing(p.conversationId, {
      message_type: 'decision_request',
      priority: 'high',
      topic_id: p.agent.defaultTopicId,
      message_group_id: p.agent.groupId,
      client_ref: 'owner-1',
    });
    const before = Date.now();
    ownerWs.send('message', data);
    const ack = await ownerWs.next(isAck('owner-1'));
    expect(ack.data.message_id).toMatch(UUID_RE);

    const got = await agentWs.next(isMessage(ack.data.message_id));
    expect(got.data).toMatchObject({
      message_id: ack.data.message_id,
      conversation_id: p.conversationId,
      sender_device_id: p.od.deviceId,
      header_blob: data.header_blob,
      ciphertext: data.ciphertext,
      message_type: 'decision_request',
      priority: 'high',
      topic_id: p.agent.defaultTopicId,
      message_group_id: p.agent.groupId,
    });
    expect(got.data).not.toHaveProperty('client_ref');
    const ts = Date.parse(got.data.timestamp);
    expect(new Date(ts).toISOString()).toBe(got.data.timestamp);
    expect(ts).toBeGreaterThanOrEqual(before - 1000);
    expect(ts).toBeLessThanOrEqual(Date.now() + 1000);

    // The stored copy is the same message.
    const hist = await ownerHistory(t, p);
    const stored = hist.messages.find((m) => m.message_id === ack.data.message_id);
    expect(stored).toMatchObject({ ...got.data });
  });

  it('delivers an agent message to the owner device, with the default type, priority, topic and group', async () => {
    const p = await pair(t);
    const ownerWs = await pool.connect(ownerUrl(t, p.owner, p.od));
    const agentWs = await pool.connect(agentUrl(t, p.agent));

    const data = outgoing(p.conversationId, { client_ref: 'agent-1' });
    agentWs.send('message', data);
    const ack = await agentWs.next(isAck('agent-1'));
    const got = await ownerWs.next(isMessage(ack.data.message_id));
    expect(got.data).toMatchObject({
      message_id: ack.data.message_id,
      conversation_id: p.conversationId,
      sender_device_id: p.agent.deviceId,
      header_blob: data.header_blob,
      ciphertext: data.ciphertext,
      message_type: 'text',
      priority: 'normal',
      topic_id: p.agent.defaultTopicId,
      message_group_id: p.agent.groupId,
    });
    expect(Number.isNaN(Date.parse(got.data.timestamp))).toBe(false);
  });

  it('processes frames sent right after the upgrade, before authentication has finished', async () => {
    const p = await pair(t);
    const ownerWs = await pool.connect(ownerUrl(t, p.owner, p.od));
    const agentWs = await pool.open(agentUrl(t, p.agent)); // no round trip: authentication may still be running
    agentWs.send('message', outgoing(p.conversationId, { client_ref: 'early-1' }));
    agentWs.send('message', outgoing(p.conversationId, { client_ref: 'early-2' }));
    const a1 = await agentWs.next(isAck('early-1'));
    const a2 = await agentWs.next(isAck('early-2'));
    await ownerWs.next(isMessage(a1.data.message_id));
    await ownerWs.next(isMessage(a2.data.message_id));
    expect((await ownerHistory(t, p)).messages.map((m) => m.message_id)).toEqual([a1.data.message_id, a2.data.message_id]);
  });

  it('acknowledges only after commit: at each ack the message is already in the history, in send order', async () => {
    const p = await pair(t);
    const ownerWs = await pool.connect(ownerUrl(t, p.owner, p.od));
    const n = 8;
    const refs = Array.from({ length: n }, (_, i) => `burst-${i}`);
    for (const ref of refs) ownerWs.send('message', outgoing(p.conversationId, { client_ref: ref }));

    const ids: string[] = [];
    for (const ref of refs) {
      const ack = await ownerWs.next(isAck(ref));
      expect(ack.data.message_id).toMatch(UUID_RE);
      // Right after the ack, before anything else: the committed message is visible to a reader.
      const hist = await ownerHistory(t, p);
      expect(hist.messages.map((m) => m.message_id)).toContain(ack.data.message_id);
      ids.push(ack.data.message_id);
    }
    expect(new Set(ids).size).toBe(n);
    // One sender's messages keep their order.
    const hist = await ownerHistory(t, p);
    expect(hist.messages.map((m) => m.message_id)).toEqual(ids);
  });

  it("does not echo a message to the sending socket, but delivers it to the same device's other socket", async () => {
    const p = await pair(t);
    const ownerA = await pool.connect(ownerUrl(t, p.owner, p.od));
    const ownerB = await pool.connect(ownerUrl(t, p.owner, p.od));
    const agentA = await pool.connect(agentUrl(t, p.agent));
    const agentB = await pool.connect(agentUrl(t, p.agent));

    ownerA.send('message', outgoing(p.conversationId, { client_ref: 'echo-o' }));
    const ack = await ownerA.next(isAck('echo-o'));
    const onB = await ownerB.next(isMessage(ack.data.message_id));
    expect(onB.data.sender_device_id).toBe(p.od.deviceId);
    await agentA.next(isMessage(ack.data.message_id));
    await agentB.next(isMessage(ack.data.message_id));

    agentA.send('message', outgoing(p.conversationId, { client_ref: 'echo-a' }));
    const ack2 = await agentA.next(isAck('echo-a'));
    expect((await agentB.next(isMessage(ack2.data.message_id))).data.sender_device_id).toBe(p.agent.deviceId);
    await ownerA.next(isMessage(ack2.data.message_id));
    await ownerB.next(isMessage(ack2.data.message_id));

    // Anything sent to the senders before these round trips would be buffered by now.
    await sleep(100);
    await ownerA.roundTrip();
    await agentA.roundTrip();
    expect(ownerA.buffered(isMessage(ack.data.message_id))).toEqual([]);
    expect(agentA.buffered(isMessage(ack2.data.message_id))).toEqual([]);
    expect(ownerA.received.filter(isMessage(ack.data.message_id))).toEqual([]);
    expect(agentA.received.filter(isMessage(ack2.data.message_id))).toEqual([]);
  });

  it('relays typing to the counterpart with the sender device_id filled in by the service', async () => {
    const p = await pair(t);
    const ownerWs = await pool.connect(ownerUrl(t, p.owner, p.od));
    const agentWs = await pool.connect(agentUrl(t, p.agent));

    // A spoofed device_id is replaced by the authenticated one.
    agentWs.send('typing', { conversation_id: p.conversationId, device_id: p.od.deviceId });
    const typing = await ownerWs.next('typing');
    expect(typing.data).toEqual({ conversation_id: p.conversationId, device_id: p.agent.deviceId });

    ownerWs.send('typing', { conversation_id: p.conversationId });
    const back = await agentWs.next('typing');
    expect(back.data).toEqual({ conversation_id: p.conversationId, device_id: p.od.deviceId });
  });

  it('answers invalid JSON, unknown events and invalid messages with error frames and keeps the socket open', async () => {
    const p = await pair(t);
    const ws = await pool.connect(agentUrl(t, p.agent));

    ws.sendRaw('{not json');
    expectErrorShape(await ws.next(isError()), 400);

    ws.sendRaw(JSON.stringify({ data: { conversation_id: p.conversationId } }));
    expectErrorShape(await ws.next(isError()), 400);

    ws.send('no_such_event', { client_ref: 'unknown-1' });
    const unknown = await ws.next(isError('unknown-1'));
    expectErrorShape(unknown, 400);

    const invalid: Array<[string, Record<string, unknown>]> = [
      ['missing-ciphertext', { conversation_id: p.conversationId, header_blob: b64('h') }],
      ['bad-base64', outgoing(p.conversationId, { ciphertext: 'not base64!' })],
      ['empty-ciphertext', outgoing(p.conversationId, { ciphertext: '' })],
      ['bad-uuid', outgoing('not-a-uuid')],
      ['bad-type', outgoing(p.conversationId, { message_type: 'shout' })],
      ['bad-priority', outgoing(p.conversationId, { priority: 'critical' })],
      ['foreign-topic', outgoing(p.conversationId, { topic_id: '00000000-0000-4000-8000-000000000000' })],
    ];
    for (const [ref, data] of invalid) ws.send('message', { ...data, client_ref: ref });
    for (const [ref] of invalid) {
      const err = await ws.next(isError(ref));
      expectErrorShape(err, 400);
    }

    ws.send('typing', {});
    expectErrorShape(await ws.next(isError()), 400);

    expect(ws.isOpen).toBe(true);
    // Nothing invalid was stored, and the socket still works.
    expect((await ownerHistory(t, p)).messages).toEqual([]);
    ws.send('message', outgoing(p.conversationId, { client_ref: 'valid-after-errors' }));
    await ws.next(isAck('valid-after-errors'));
    expect((await ownerHistory(t, p)).messages).toHaveLength(1);
    expect(ws.received.filter((f) => f.event === 'message_ack')).toHaveLength(1);
  });

  it('refuses a message to a conversation the device is not part of with error 403', async () => {
    const p = await pair(t);
    const other = await activeAgent(t, p.owner); // same tenant, conversation with the same owner device
    const intruder = await pool.connect(agentUrl(t, p.agent));
    const otherWs = await pool.connect(agentUrl(t, other));
    const ownerWs = await pool.connect(ownerUrl(t, p.owner, p.od));

    intruder.send('message', outgoing(other.conversationId!, { client_ref: 'not-mine' }));
    const err = await intruder.next(isError('not-mine'));
    expectErrorShape(err, 403);
    expect(intruder.isOpen).toBe(true);

    // Another tenant's conversation is not reachable either.
    const q = await pair(t);
    intruder.send('message', outgoing(q.conversationId, { client_ref: 'other-tenant' }));
    const err2 = await intruder.next(isError('other-tenant'));
    expect([403, 404]).toContain(err2.data.status);

    // Typing into someone else's conversation is refused too, and not relayed.
    intruder.send('typing', { conversation_id: other.conversationId });
    expectErrorShape(await intruder.next(isError()), 403);

    await intruder.roundTrip();
    await sleep(100);
    expect(ownerWs.received.filter((f) => f.event === 'typing')).toEqual([]);
    expect(otherWs.received.filter((f) => f.event === 'message')).toEqual([]);
    expect(ownerWs.received.filter((f) => f.event === 'message')).toEqual([]);
    const otherPair: Pair = { owner: p.owner, od: p.od, agent: other, conversationId: other.conversationId! };
    expect((await ownerHistory(t, otherPair)).messages).toEqual([]);
    expect((await ownerHistory(t, q)).messages).toEqual([]);
  });

  it('closes every socket of a revoked agent with 4001 within one second and refuses a reconnect with 4001', async () => {
    const p = await pair(t);
    const ws1 = await pool.connect(agentUrl(t, p.agent));
    const ws2 = await pool.connect(agentUrl(t, p.agent));
    const ownerWs = await pool.connect(ownerUrl(t, p.owner, p.od));

    const start = Date.now();
    const closes = Promise.all([ws1.waitClose(1500), ws2.waitClose(1500)]).then((c) => ({ c, at: Date.now() }));
    const res = await t.request({ method: 'PATCH', url: `/api/v1/devices/${p.agent.deviceId}/revoke`, headers: p.owner.auth });
    expect(res.status).toBe(200);
    const { c, at } = await closes;
    expect(c.map((x) => x.code)).toEqual([4001, 4001]);
    expect(at - start).toBeLessThan(1000);
    expect(ownerWs.isOpen).toBe(true);

    const again = await pool.open(agentUrl(t, p.agent));
    expect((await again.waitClose(2000)).code).toBe(4001);
  });

  it('refuses a missing or invalid token with 4401', async () => {
    const p = await pair(t);
    const cases = [
      wsAddress(t.wsUrl, {}),
      wsAddress(t.wsUrl, { token: 'garbage' }),
      // A device JWT with a broken signature.
      wsAddress(t.wsUrl, { token: p.agent.jwt.slice(0, -4) + (p.agent.jwt.endsWith('AAAA') ? 'BBBB' : 'AAAA') }),
      // An owner JWT with a broken signature.
      wsAddress(t.wsUrl, { token: p.owner.token.slice(0, -4) + (p.owner.token.endsWith('AAAA') ? 'BBBB' : 'AAAA'), device_id: p.od.deviceId }),
    ];
    for (const url of cases) {
      const ws = await pool.open(url);
      expect((await ws.waitClose(2000)).code).toBe(4401);
    }
  });

  it("refuses an owner JWT without device_id, or naming another user's or an agent device, with 4003", async () => {
    const p = await pair(t);
    const stranger = await newOwner(t, 'Other');
    const strangerDevice = await registerOwnerDevice(t, stranger);
    const cases = [
      wsAddress(t.wsUrl, { token: p.owner.token }),
      wsAddress(t.wsUrl, { token: p.owner.token, device_id: 'not-a-uuid' }),
      wsAddress(t.wsUrl, { token: p.owner.token, device_id: strangerDevice.deviceId }),
      wsAddress(t.wsUrl, { token: stranger.token, device_id: p.od.deviceId }),
      wsAddress(t.wsUrl, { token: p.owner.token, device_id: p.agent.deviceId }),
    ];
    for (const url of cases) {
      const ws = await pool.open(url);
      expect((await ws.waitClose(2000)).code).toBe(4003);
    }
    // The legitimate combination works.
    const ok = await pool.connect(ownerUrl(t, p.owner, p.od));
    expect(ok.isOpen).toBe(true);
  });

  it('lets a reconnecting agent catch up with since=<cursor of the last message it saw>; pending drops to 0', async () => {
    const p = await pair(t);
    const ownerWs = await pool.connect(ownerUrl(t, p.owner, p.od));
    let agentWs: WsClient = await pool.connect(agentUrl(t, p.agent));

    ownerWs.send('message', outgoing(p.conversationId, { client_ref: 'seen' }));
    const seenAck = await ownerWs.next(isAck('seen'));
    const seen = await agentWs.next(isMessage(seenAck.data.message_id));
    expect(typeof seen.data.cursor).toBe('string');
    // Live delivery over the socket counts as delivered.
    expect(await eventually(async () => (await pendingCount(t, p.agent)) === 0)).toBe(true);

    await agentWs.close();
    expect(await eventually(async () => !t.app.parley.gateway.isOnline(p.agent.deviceId), 2000)).toBe(true);

    const offline: string[] = [];
    for (const ref of ['off-1', 'off-2', 'off-3']) {
      ownerWs.send('message', outgoing(p.conversationId, { client_ref: ref }));
      offline.push((await ownerWs.next(isAck(ref))).data.message_id);
    }
    expect(await pendingCount(t, p.agent)).toBe(3);

    agentWs = await pool.connect(agentUrl(t, p.agent));
    const res = await t.request({
      method: 'GET',
      url: `/api/v1/devices/${p.agent.deviceId}/messages?since=${encodeURIComponent(seen.data.cursor)}`,
      headers: p.agent.auth,
    });
    expect(res.status).toBe(200);
    expect(res.body.messages.map((m: { message_id: string }) => m.message_id)).toEqual(offline);
    expect(res.body.messages.every((m: { sender_device_id: string }) => m.sender_device_id === p.od.deviceId)).toBe(true);
    expect(res.body.next_cursor).toBe(res.body.messages.at(-1).cursor);
    expect(await pendingCount(t, p.agent)).toBe(0);

    // Caught up: nothing after the last cursor.
    const tail = await t.request({ method: 'GET', url: `/api/v1/devices/${p.agent.deviceId}/messages?since=${res.body.next_cursor}`, headers: p.agent.auth });
    expect(tail.body.messages).toEqual([]);
    // Messages sent while offline are not replayed over the new socket (they are fetched instead).
    await agentWs.roundTrip();
    expect(agentWs.received.filter((f) => f.event === 'message')).toEqual([]);
  });

  it('sends device_pending and device_linked to the owner socket when an agent enrolls and activates', async () => {
    const owner = await newOwner(t);
    const od = await registerOwnerDevice(t, owner);
    const ownerWs = await pool.connect(ownerUrl(t, owner, od));
    const stranger = await newOwner(t, 'Elsewhere');
    const strangerWs = await pool.connect(ownerUrl(t, stranger, await registerOwnerDevice(t, stranger)));

    const invite = await createInvite(t, owner);
    const { res, keys } = await enroll(t, invite.token);
    expect(res.status).toBe(201);
    const deviceId = res.body.device_id as string;
    const pending = await ownerWs.next('device_pending');
    expect(pending.data).toMatchObject({ device_id: deviceId, fingerprint: res.body.fingerprint, platform: 'node' });
    expect(typeof pending.data.name).toBe('string');
    expect(Number.isNaN(Date.parse(pending.data.enrolled_at))).toBe(false);

    const approved = await t.request({ method: 'PATCH', url: `/api/v1/devices/${deviceId}/approve`, headers: owner.auth });
    expect(approved.status).toBe(200);
    const act = await t.request({ method: 'POST', url: `/api/v1/devices/${deviceId}/activate`, payload: { signature: keys.sign(`activate:${deviceId}`) } });
    expect(act.status).toBe(200);
    const linked = await ownerWs.next('device_linked');
    expect(linked.data).toEqual({ device_id: deviceId, conversation_id: act.body.conversation_id });

    // Another tenant's owner hears nothing.
    await strangerWs.roundTrip();
    expect(strangerWs.received.filter((f) => f.event === 'device_pending' || f.event === 'device_linked')).toEqual([]);
  });

  it('sends topic_created to the agent (and the owner device); messages then carry the new topic_id', async () => {
    const p = await pair(t);
    const agentWs = await pool.connect(agentUrl(t, p.agent));
    const ownerWs = await pool.connect(ownerUrl(t, p.owner, p.od));

    const res = await t.request({ method: 'POST', url: '/api/v1/topics', headers: p.owner.auth, payload: { group_id: p.agent.groupId, name: 'billing' } });
    expect(res.status).toBe(201);
    const created = await agentWs.next('topic_created');
    expect(created.data).toMatchObject({ topic_id: res.body.topic_id, group_id: p.agent.groupId, name: 'billing', is_default: false, archived: false });
    expect((await ownerWs.next('topic_created')).data.topic_id).toBe(res.body.topic_id);

    ownerWs.send('message', outgoing(p.conversationId, { topic_id: res.body.topic_id, client_ref: 'topical' }));
    const ack = await ownerWs.next(isAck('topical'));
    const got = await agentWs.next(isMessage(ack.data.message_id));
    expect(got.data.topic_id).toBe(res.body.topic_id);
    expect(got.data.message_group_id).toBe(p.agent.groupId);
  });
});

describe('WebSocket keepalive (WS_PING_INTERVAL_MS=100, WS_DEAD_TIMEOUT_MS=400)', () => {
  let t: TestApp;
  const pool = new WsPool();
  beforeAll(async () => {
    t = await startApp({ listen: true, env: { ...ENV, WS_PING_INTERVAL_MS: '100', WS_DEAD_TIMEOUT_MS: '400' } });
  });
  afterEach(() => pool.closeAll());
  afterAll(() => t?.close());

  it('sends ping frames; a client that answers pong stays connected past one second', async () => {
    const p = await pair(t);
    const ws = await pool.connect(agentUrl(t, p.agent), { autoPong: true });
    const first = await ws.next('ping', 1000);
    expect(first).toMatchObject({ event: 'ping' });
    await ws.next('ping', 1000);

    await sleep(1200);
    expect(ws.closed).toBeUndefined();
    expect(ws.isOpen).toBe(true);
    expect(ws.received.filter((f) => f.event === 'ping').length).toBeGreaterThanOrEqual(5);
    await ws.roundTrip();
  });

  it("disconnects a silent client and records the device's last_seen at the disconnect", async () => {
    const p = await pair(t);
    const ws = await pool.connect(agentUrl(t, p.agent)); // no pong answers
    const lastSent = Date.now();
    await ws.next('ping', 1000); // pings arrive, but are never answered
    const closed = await ws.waitClose(2500);
    const closedAt = Date.now();
    expect(closed.code).not.toBe(1000);
    expect(closedAt - lastSent).toBeGreaterThanOrEqual(350);

    // last_seen is written on disconnect, i.e. after the dead timeout, not only at connect time.
    let lastSeen: string | null = null;
    const ok = await eventually(async () => {
      const res = await t.request({ method: 'GET', url: '/api/v1/devices', headers: p.owner.auth });
      lastSeen = res.body.devices.find((d: { device_id: string }) => d.device_id === p.agent.deviceId)?.last_seen ?? null;
      return lastSeen !== null && Date.parse(lastSeen) >= lastSent + 300;
    }, 2000);
    expect(ok, `last_seen ${lastSeen}, last frame sent ${new Date(lastSent).toISOString()}`).toBe(true);
    expect(Date.parse(lastSeen!)).toBeLessThanOrEqual(closedAt + 50);
    expect(t.app.parley.gateway.isOnline(p.agent.deviceId)).toBe(false);
  });
});

describe('WebSocket client faults are answered as client errors, never logged as server errors', () => {
  let t: TestApp;
  let logs = '';
  const pool = new WsPool();
  beforeAll(async () => {
    const stream = new PassThrough();
    stream.on('data', (chunk: Buffer) => (logs += chunk.toString()));
    t = await startApp({ listen: true, env: { ...ENV, LOG_LEVEL: 'debug' }, overrides: { logStream: stream } });
  });
  afterEach(() => pool.closeAll());
  afterAll(() => t?.close());

  /** Log lines at error level or above (pino: 50 error, 60 fatal). */
  const errorLines = () =>
    logs
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { level: number; msg?: string })
      .filter((l) => l.level >= 50);

  it('refuses repeated token or device_id query parameters with 4401', async () => {
    const p = await pair(t);
    const base = `${t.wsUrl}?token=${encodeURIComponent(p.agent.jwt)}`;
    for (const url of [`${base}&token=${encodeURIComponent(p.agent.jwt)}`, `${t.wsUrl}?token=a&token=b`, `${wsAddress(t.wsUrl, { token: p.owner.token, device_id: p.od.deviceId })}&device_id=${p.od.deviceId}`]) {
      const ws = await pool.open(url);
      const closed = await ws.waitClose(2000);
      expect(closed.code, url).toBe(4401);
      expect(closed.reason).toMatch(/must be given once/);
    }
    // The same credential given once is served.
    await pool.connect(base);
    expect(errorLines()).toEqual([]);
  });

  it('closes a frame above the size limit with 1009 and logs it below error level', async () => {
    const p = await pair(t);
    const ws = await pool.connect(agentUrl(t, p.agent));
    ws.sendRaw('x'.repeat(t.config.limits.maxCiphertextBytes * 2 + 1024 * 1024));
    expect((await ws.waitClose(5000)).code).toBe(1009);
    expect(await eventually(async () => logs.includes('websocket closed for a client fault'))).toBe(true);
    expect(errorLines()).toEqual([]);
  });
});

describe('WebSocket rate limit (RATE_LIMIT_WS_MESSAGES_PER_MIN=5)', () => {
  let t: TestApp;
  const pool = new WsPool();
  beforeAll(async () => {
    t = await startApp({ listen: true, env: { ...ENV, RATE_LIMIT_WS_MESSAGES_PER_MIN: '5' } });
  });
  afterEach(() => pool.closeAll());
  afterAll(() => t?.close());

  it('refuses the 6th message with a 429 error frame carrying retry_after_ms and its client_ref; the socket stays open', async () => {
    const p = await pair(t);
    const agentWs = await pool.connect(agentUrl(t, p.agent));
    const ownerWs = await pool.connect(ownerUrl(t, p.owner, p.od));

    for (let i = 1; i <= 6; i++) agentWs.send('message', outgoing(p.conversationId, { client_ref: `rl-${i}` }));
    for (let i = 1; i <= 5; i++) await agentWs.next(isAck(`rl-${i}`));
    const err = await agentWs.next(isError('rl-6'));
    expectErrorShape(err, 429);
    expect(err.data.client_ref).toBe('rl-6');
    expect(typeof err.data.retry_after_ms).toBe('number');
    expect(err.data.retry_after_ms).toBeGreaterThan(0);
    expect(err.data.retry_after_ms).toBeLessThanOrEqual(60_000);
    expect(agentWs.received.filter((f) => f.event === 'message_ack')).toHaveLength(5);

    await agentWs.roundTrip();
    expect(agentWs.isOpen).toBe(true);
    expect((await ownerHistory(t, p)).messages).toHaveLength(5);

    // The budget is per device: the owner device can still send.
    ownerWs.send('message', outgoing(p.conversationId, { client_ref: 'owner-ok' }));
    await ownerWs.next(isAck('owner-ok'));
    // And the limited agent is refused again, still without being disconnected.
    agentWs.send('message', outgoing(p.conversationId, { client_ref: 'rl-7' }));
    expectErrorShape(await agentWs.next(isError('rl-7')), 429);
    expect(agentWs.isOpen).toBe(true);
  });

  it('REST sends (conversation and room messages) spend the same per-device budget as socket frames: 429 with Retry-After', async () => {
    const p = await pair(t);
    const asDevice = { ...p.owner.auth, 'x-device-id': p.od.deviceId };
    const restSend = () => t.request({ method: 'POST', url: `/api/v1/conversations/${p.conversationId}/messages`, headers: asDevice, payload: outgoing(p.conversationId) });
    const room = await t.request({ method: 'POST', url: '/api/v1/rooms', headers: p.owner.auth, payload: { name: 'limits', member_device_ids: [p.od.deviceId, p.agent.deviceId] } });
    expect(room.status).toBe(201);
    const roomSend = () =>
      t.request({ method: 'POST', url: `/api/v1/rooms/${room.body.room_id}/messages`, headers: asDevice, payload: { envelopes: [{ recipient_device_id: p.agent.deviceId, header_blob: b64('h'), ciphertext: b64('c') }] } });

    const ownerWs = await pool.connect(ownerUrl(t, p.owner, p.od));
    for (let i = 1; i <= 2; i++) {
      ownerWs.send('message', outgoing(p.conversationId, { client_ref: `ws-${i}` }));
      await ownerWs.next(isAck(`ws-${i}`));
    }
    expect((await restSend()).status).toBe(201);
    expect((await restSend()).status).toBe(201);
    expect((await roomSend()).status).toBe(201);
    // 5 of 5 spent, over the socket and REST together.
    for (const refused of [await restSend(), await roomSend()]) {
      expect(refused.status).toBe(429);
      expect(refused.body.detail).toMatch(/5 messages per minute/);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
    }
    ownerWs.send('message', outgoing(p.conversationId, { client_ref: 'ws-late' }));
    expectErrorShape(await ownerWs.next(isError('ws-late')), 429);
    expect((await ownerHistory(t, p)).messages).toHaveLength(4);
    // The agent device of the same conversation has its own budget.
    const agentWs = await pool.connect(agentUrl(t, p.agent));
    agentWs.send('message', outgoing(p.conversationId, { client_ref: 'agent-ok' }));
    await agentWs.next(isAck('agent-ok'));
  });
});
