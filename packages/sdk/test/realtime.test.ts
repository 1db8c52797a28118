/**
 * RealtimeClient (contract §4.18, §6.1, §8; design §6, §7): against a real server listening on a port
 * (delivery and acks, ping/pong, reconnect with catch-up and no duplicates, offline queue,
 * revocation, scanning), plus deterministic unit tests over a scripted WebSocket.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { WebSocket as WsSocket } from 'ws';
import { startApp, type TestApp, newDeviceKeys, connectWs, wsAddress } from '@parley/server/testing';
import { ParleyClient } from '../src/client/rest.js';
import { enrollAgent } from '../src/client/enrollment.js';
import type { StoredMessage } from '@parley/protocol';
import { RealtimeClient, defaultCompareCursors, type RealtimeClientOptions } from '../src/realtime/client.js';
import { conversationCatchUp, deviceCatchUp } from '../src/realtime/catch-up.js';
import { RealtimeError, type CatchUpSource, type RealtimeState, type StateChangeEvent, type WebSocketLikeConstructor } from '../src/realtime/types.js';
import { nodeWebSocket } from '../src/node/ws.js';
import { nodeWebSocket as reexported } from '../src/node/realtime.js';
import { FakeSocket } from './fake-socket.js';

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor(pred: () => boolean, timeoutMs = 5000, what = 'condition'): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/** `ws`-backed WebSocket that records every socket and every frame the client sends. */
function recordingWs() {
  const Base = nodeWebSocket();
  const sockets: WsSocket[] = [];
  const sent: Array<{ event: string; data: any }> = [];
  const Ctor = class extends Base {
    constructor(url: string) {
      super(url);
      sockets.push(this as unknown as WsSocket);
    }
    override send(data: string): void {
      sent.push(JSON.parse(data));
      super.send(data);
    }
  };
  return { WebSocket: Ctor as WebSocketLikeConstructor, sockets, sent };
}

/** Collects what a client emits. */
function watch(rt: RealtimeClient) {
  const messages: StoredMessage[] = [];
  const states: StateChangeEvent[] = [];
  const errors: RealtimeError[] = [];
  rt.on('message', (m) => void messages.push(m));
  rt.on('stateChange', (s) => void states.push(s));
  rt.on('error', (e) => void errors.push(e));
  return { messages, states, errors, saw: (s: RealtimeState) => states.some((x) => x.state === s) };
}

interface World {
  owner: ParleyClient;
  ownerJwt: string;
  ownerDeviceId: string;
  agent: ParleyClient;
  agentId: string;
  conversationId: string;
}

describe('RealtimeClient against a real server', () => {
  let t: TestApp;
  const clients: RealtimeClient[] = [];
  const track = (rt: RealtimeClient) => (clients.push(rt), rt);

  beforeAll(async () => {
    t = await startApp({
      listen: true,
      env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000', RATE_LIMIT_DEVICE_STATUS_PER_5S: '1000', WS_PING_INTERVAL_MS: '100', WS_DEAD_TIMEOUT_MS: '400' },
    });
  });
  afterEach(() => {
    for (const c of clients.splice(0)) c.close();
  });
  afterAll(() => t?.close());

  let n = 0;
  async function world(): Promise<World> {
    const ownerJwt = await t.ownerToken(`rt-${++n}-${Date.now()}@example.com`);
    const owner = new ParleyClient({ baseUrl: t.baseUrl, ownerToken: ownerJwt });
    await owner.createTenant({ name: `RT ${n}` });
    const ok = newDeviceKeys();
    const od = await owner.registerOwnerDevice({ identity_public_key: ok.identityPublicKey, ephemeral_public_key: ok.ephemeralPublicKey });
    owner.setOwnerDeviceId(od.device_id);
    const invite = await owner.createInvite();
    const agent = new ParleyClient({ baseUrl: t.baseUrl });
    const keys = newDeviceKeys();
    let approve!: (id: string) => void;
    const enrolled = new Promise<string>((r) => (approve = r));
    const flow = enrollAgent(agent, invite.token, { identityPublicKey: keys.identityPublicKey, ephemeralPublicKey: keys.ephemeralPublicKey, sign: (m) => keys.sign(m) }, {
      pollIntervalMs: 20,
      unsafeFastPolling: true,
      onEnrolled: (e) => approve(e.device_id),
    });
    await owner.approveDevice(await enrolled);
    const act = await flow;
    return { owner, ownerJwt, ownerDeviceId: od.device_id, agent, agentId: act.device_id, conversationId: act.conversation_id! };
  }

  const agentRt = (w: World, extra: Partial<RealtimeClientOptions> = {}) =>
    track(new RealtimeClient({ url: t.baseUrl, token: () => w.agent.currentDeviceToken(), WebSocket: nodeWebSocket(), catchUp: deviceCatchUp(w.agent, w.agentId), ...extra }));
  const ownerRt = (w: World, extra: Partial<RealtimeClientOptions> = {}) =>
    track(
      new RealtimeClient({
        url: t.baseUrl,
        token: w.ownerJwt,
        deviceId: w.ownerDeviceId,
        WebSocket: nodeWebSocket(),
        catchUp: conversationCatchUp(w.owner, w.conversationId),
        ...extra,
      }),
    );
  const forceClose = (deviceId: string, code = 1012) => t.app.parley.bus.publish({ type: 'close_device', deviceId, code, reason: 'test restart' });
  const restSend = (w: World, label: string) => w.owner.sendMessage(w.conversationId, { header_blob: b64(`h-${label}`), ciphertext: b64(label) });

  it('delivers both ways with acks after commit, relays typing and other events, rejects bad frames by client_ref', async () => {
    const w = await world();
    const a = agentRt(w);
    const o = ownerRt(w);
    const aw = watch(a);
    const ow = watch(o);
    const typing: unknown[] = [];
    const events: Array<{ event: string }> = [];
    o.on('typing', (e) => void typing.push(e));
    o.on('event', (e) => void events.push(e));
    await Promise.all([a.connect(), o.connect()]);
    expect(a.state).toBe('open');

    const ack = await o.send({ conversation_id: w.conversationId, header_blob: b64('h'), ciphertext: b64('hello agent'), message_type: 'text', client_ref: 'ref-1' });
    expect(ack).toMatchObject({ message_id: expect.any(String), cursor: expect.any(String), timestamp: expect.any(String), client_ref: 'ref-1' });
    await waitFor(() => aw.messages.length === 1, 3000, 'agent message');
    expect(aw.messages[0]).toMatchObject({ message_id: ack.message_id, sender_device_id: w.ownerDeviceId, ciphertext: b64('hello agent'), cursor: ack.cursor });

    const reply = await a.send({ conversation_id: w.conversationId, header_blob: b64('h'), ciphertext: b64('hello owner') });
    expect(reply.client_ref).toEqual(expect.any(String));
    await waitFor(() => ow.messages.length === 1, 3000, 'owner message');
    expect(ow.messages[0]!.message_id).toBe(reply.message_id);
    expect(ow.messages.map((m) => m.message_id)).not.toContain(ack.message_id); // not echoed to the sending socket

    expect(a.sendTyping(w.conversationId)).toBe(true);
    await waitFor(() => typing.length === 1, 3000, 'typing');
    expect(typing[0]).toEqual({ conversation_id: w.conversationId, device_id: w.agentId });

    const bad = a.send({ conversation_id: w.conversationId, header_blob: 'not base64!', ciphertext: b64('x') });
    await expect(bad).rejects.toMatchObject({ name: 'RealtimeError', code: 'server', status: 400 });
    await expect(a.send({ conversation_id: '00000000-0000-4000-8000-000000000000', header_blob: b64('h'), ciphertext: b64('x') })).rejects.toMatchObject({ status: 404 });

    // Service events other than message/typing come through `event` (device_pending on a new enrollment).
    const invite = await w.owner.createInvite();
    const k = newDeviceKeys();
    await new ParleyClient({ baseUrl: t.baseUrl }).enroll({ invite_token: invite.token, identity_public_key: k.identityPublicKey, ephemeral_public_key: k.ephemeralPublicKey, proof_of_possession: k.proof() });
    await waitFor(() => events.some((e) => e.event === 'device_pending'), 3000, 'device_pending');

    expect(a.history().map((m) => m.message_id)).toEqual([ack.message_id]);
    expect(o.history(w.conversationId).map((m) => m.message_id)).toEqual([reply.message_id]);
    expect(a.inflightCount).toBe(0);
    expect(aw.errors).toEqual([]);
  });

  it('answers pings with pongs and survives the dead timeout; a silent socket is cut (control)', async () => {
    const w = await world();
    const rec = recordingWs();
    const a = agentRt(w, { WebSocket: rec.WebSocket });
    const aw = watch(a);
    await a.connect();
    await sleep(1300); // > 3 dead timeouts of 400 ms, ~13 pings
    expect(a.state).toBe('open');
    expect(rec.sockets).toHaveLength(1);
    expect(aw.saw('reconnecting')).toBe(false);
    expect(rec.sent.filter((f) => f.event === 'pong').length).toBeGreaterThanOrEqual(5);
    expect((await w.owner.devicePresence(w.agentId)).online).toBe(true);

    // Control: a raw socket that never answers is terminated by the service within the timeout.
    const silent = await connectWs(wsAddress(t.wsUrl, { token: await w.agent.currentDeviceToken() }), { autoPong: false });
    await silent.waitClose(2000);
  });

  it('reconnects after the server closes the socket and catches up without duplicates, in order', async () => {
    const w = await world();
    const rec = recordingWs();
    // The token function holds the next connection attempt until the test releases it, so the
    // offline window is deterministic.
    let hold: Promise<void> | undefined;
    let release!: () => void;
    const token = async () => {
      if (hold) await hold;
      return w.agent.currentDeviceToken();
    };
    const a = agentRt(w, { token, WebSocket: rec.WebSocket, reconnect: { initialDelayMs: 50, jitter: 0 } });
    const aw = watch(a);
    const m0 = await restSend(w, 'm0'); // history from before the client started is not replayed
    await a.connect();
    const m1 = await restSend(w, 'm1');
    await waitFor(() => aw.messages.length === 1, 3000, 'm1 live');
    expect(aw.messages[0]!.message_id).toBe(m1.message_id);

    hold = new Promise((r) => (release = r));
    await forceClose(w.agentId);
    await waitFor(() => aw.saw('reconnecting'), 3000, 'reconnecting');
    const reconnecting = aw.states.find((s) => s.state === 'reconnecting')!;
    expect(reconnecting).toMatchObject({ code: 1012, delayMs: 50, attempt: 1 });
    const m2 = await restSend(w, 'm2');
    const m3 = await restSend(w, 'm3');
    expect(a.state).not.toBe('open');
    expect(rec.sockets).toHaveLength(1);
    hold = undefined;
    release();

    await waitFor(() => aw.states.filter((s) => s.state === 'open').length === 2, 5000, 'second open');
    const m4 = await restSend(w, 'm4'); // live, possibly while the catch-up runs
    await waitFor(() => aw.messages.length >= 4, 5000, 'four messages');
    await sleep(200);
    expect(aw.messages.map((m) => m.message_id)).toEqual([m1, m2, m3, m4].map((m) => m.message_id));
    expect(rec.sockets).toHaveLength(2);
    expect(a.cursors()).toEqual({ [`device:${w.agentId}`]: m4.cursor });
    expect(aw.messages.map((m) => m.message_id)).not.toContain(m0.message_id);
    expect(aw.errors).toEqual([]);
  });

  it('de-duplicates when the catch-up source replays everything', async () => {
    const w = await world();
    const base = deviceCatchUp(w.agent, w.agentId);
    const replayAll: CatchUpSource = { ...base, fetchPage: (since, limit) => base.fetchPage(since === undefined ? undefined : '1970-01-01T00:00:00Z', limit) };
    const a = agentRt(w, { catchUp: replayAll, reconnect: { initialDelayMs: 100, jitter: 0 } });
    const aw = watch(a);
    await a.connect();
    const m1 = await restSend(w, 'm1');
    await waitFor(() => aw.messages.length === 1, 3000, 'm1');
    await forceClose(w.agentId);
    await waitFor(() => aw.saw('reconnecting'), 3000, 'reconnecting');
    const m2 = await restSend(w, 'm2');
    await waitFor(() => aw.messages.length >= 2, 5000, 'm2');
    await forceClose(w.agentId);
    await waitFor(() => aw.states.filter((s) => s.state === 'open').length === 3, 5000, 'third open');
    await sleep(200);
    expect(aw.messages.map((m) => m.message_id)).toEqual([m1.message_id, m2.message_id]);
  });

  it('resumes from initialCursors on the first connection', async () => {
    const w = await world();
    const m1 = await restSend(w, 'm1');
    const m2 = await restSend(w, 'm2');
    const m3 = await restSend(w, 'm3');
    const o = ownerRt(w, { initialCursors: { [`conversation:${w.conversationId}`]: m1.cursor } });
    const ow = watch(o);
    await o.connect();
    await waitFor(() => ow.messages.length === 2, 3000, 'caught-up messages');
    expect(ow.messages.map((m) => m.message_id)).toEqual([m2.message_id, m3.message_id]);
  });

  it('queues sends while offline and flushes them in order on reconnect; a full queue refuses new messages', async () => {
    const w = await world();
    const a = agentRt(w, { reconnect: { initialDelayMs: 500, jitter: 0 }, outboxSize: 3 });
    const aw = watch(a);
    await a.connect();
    await forceClose(w.agentId);
    await waitFor(() => aw.saw('reconnecting'), 3000, 'reconnecting');
    const sends = ['q1', 'q2', 'q3'].map((label) => a.send({ conversation_id: w.conversationId, header_blob: b64('h'), ciphertext: b64(label) }));
    expect(a.queuedCount).toBe(3);
    await expect(a.send({ conversation_id: w.conversationId, header_blob: b64('h'), ciphertext: b64('q4') })).rejects.toMatchObject({ code: 'queue_full' });
    const acks = await Promise.all(sends);
    expect(a.queuedCount).toBe(0);
    expect(acks.map((x) => BigInt(x.cursor))).toEqual(acks.map((x) => BigInt(x.cursor)).sort((x, y) => (x < y ? -1 : 1)));
    const history = await w.owner.conversationMessages(w.conversationId);
    expect(history.messages.map((m) => Buffer.from(m.ciphertext, 'base64').toString())).toEqual(['q1', 'q2', 'q3']);
  });

  it('a message unacknowledged when the socket dies is stored exactly once', async () => {
    const w = await world();
    const rec = recordingWs();
    const a = agentRt(w, { WebSocket: rec.WebSocket, reconnect: { initialDelayMs: 100, jitter: 0 } });
    await a.connect();
    const p = a.send({ conversation_id: w.conversationId, header_blob: b64('h'), ciphertext: b64('in-flight') });
    rec.sockets[0]!.terminate();
    const ack = await p;
    const history = await w.owner.conversationMessages(w.conversationId);
    expect(history.messages.map((m) => m.message_id)).toEqual([ack.message_id]);
  });

  it('close 4001 on revoke ends reconnection; queued and later sends reject', async () => {
    const w = await world();
    const rec = recordingWs();
    const a = agentRt(w, { WebSocket: rec.WebSocket, reconnect: { initialDelayMs: 50 } });
    const aw = watch(a);
    await a.connect();
    await w.owner.revokeDevice(w.agentId);
    await waitFor(() => a.state === 'revoked', 3000, 'revoked');
    expect(aw.states.at(-1)).toMatchObject({ state: 'revoked', previous: 'open', code: 4001 });
    await sleep(500);
    expect(rec.sockets).toHaveLength(1);
    expect(aw.saw('reconnecting')).toBe(false);
    await expect(a.send({ conversation_id: w.conversationId, header_blob: b64('h'), ciphertext: b64('x') })).rejects.toMatchObject({ code: 'revoked' });
    await expect(a.connect()).rejects.toMatchObject({ code: 'revoked' });

    // A fresh client with the revoked device's token is refused at once with 4001 as well.
    const b = agentRt(w);
    await expect(b.connect()).rejects.toMatchObject({ code: 'revoked' });
    expect(b.state).toBe('revoked');
  });

  it('4401 for a bad token is terminal; a token function that yields a new token recovers once', async () => {
    const w = await world();
    const bad = track(new RealtimeClient({ url: t.baseUrl, token: 'garbage', WebSocket: nodeWebSocket() }));
    await expect(bad.connect()).rejects.toMatchObject({ code: 'unauthorized' });
    expect(bad.state).toBe('unauthorized');

    const tokens = ['garbage', (await w.agent.currentDeviceToken())!];
    const rec = recordingWs();
    const good = track(new RealtimeClient({ url: t.baseUrl, token: () => tokens.shift() ?? 'x', WebSocket: rec.WebSocket }));
    await good.connect();
    expect(good.state).toBe('open');
    expect(rec.sockets).toHaveLength(2);

    // 4003: an owner socket naming a device that is not the caller's owner device.
    const wrong = track(new RealtimeClient({ url: t.baseUrl, token: w.ownerJwt, deviceId: w.agentId, WebSocket: reexported() }));
    await expect(wrong.connect()).rejects.toMatchObject({ code: 'unauthorized' });
  });

  it('the outbound scanner blocks a plaintext before encryption and emits scan_blocked', async () => {
    const w = await world();
    const a = agentRt(w, {
      scanner: (plaintext) => {
        const text = typeof plaintext === 'string' ? plaintext : new TextDecoder().decode(plaintext);
        return /password/i.test(text) ? { blocked: true, reason: 'credential detected' } : { blocked: false };
      },
    });
    const blocked: unknown[] = [];
    a.on('scan_blocked', (e) => void blocked.push(e));
    await a.connect();
    let encrypted = 0;
    const encrypt = (p: Uint8Array | string, meta: { conversation_id: string }) => {
      encrypted++;
      return { conversation_id: meta.conversation_id, header_blob: b64('h'), ciphertext: Buffer.from(p).toString('base64') };
    };
    const meta = { conversation_id: w.conversationId, message_type: 'text' };
    await expect(a.sendPlaintext(new TextEncoder().encode('my Password is hunter2'), meta, encrypt)).rejects.toMatchObject({ code: 'scan_blocked' });
    expect(blocked).toEqual([{ reason: 'credential detected', meta }]);
    expect(encrypted).toBe(0);
    const ok = await a.sendPlaintext('all good', meta, encrypt);
    expect(encrypted).toBe(1);
    expect((await w.owner.conversationMessages(w.conversationId)).messages.map((m) => m.message_id)).toEqual([ok.message_id]);

    const failing = agentRt(w, {
      scanner: () => {
        throw new Error('model unavailable');
      },
    });
    await expect(failing.scanOutbound('x', meta)).rejects.toMatchObject({ code: 'scan_failed' });
  });
});

// ---------------------------------------------------------------------------------------------
// Deterministic unit tests over a scripted WebSocket.

const msg = (id: string, cursor: string, conversation = 'c1'): StoredMessage => ({
  message_id: id,
  conversation_id: conversation,
  sender_device_id: 'peer',
  header_blob: b64('h' + id),
  ciphertext: b64('c' + id),
  timestamp: new Date().toISOString(),
  message_type: 'text',
  priority: 'normal',
  topic_id: 't',
  message_group_id: 'g',
  cursor,
});

describe('RealtimeClient (scripted socket)', () => {
  const fake = (opts: Partial<RealtimeClientOptions> = {}) => {
    FakeSocket.all = [];
    return new RealtimeClient({ url: 'https://parley.test/base/', token: 'tok', WebSocket: FakeSocket, deadTimeoutMs: 0, ...opts });
  };
  const last = () => FakeSocket.all.at(-1)!;

  it('builds the socket address and authenticates with ping/pong', async () => {
    const rt = fake({ deviceId: 'dev-1' });
    const p = rt.connect();
    await waitFor(() => FakeSocket.all.length === 1);
    expect(last().url).toBe('wss://parley.test/base/api/v1/ws?token=tok&device_id=dev-1');
    last().accept();
    expect(last().sent).toEqual([{ event: 'ping', data: {} }]);
    expect(rt.state).toBe('connecting');
    last().frame('pong', {});
    await p;
    expect(rt.state).toBe('open');
    last().frame('ping', {});
    expect(last().sent.at(-1)).toEqual({ event: 'pong', data: {} });
    rt.close();
  });

  it('backs off exponentially (capped) and resets after a successful connection', async () => {
    const rt = fake({ reconnect: { initialDelayMs: 10, factor: 3, maxDelayMs: 50, jitter: 0 } });
    const w = watch(rt);
    const connected = rt.connect().catch(() => 'closed');
    for (let i = 0; i < 4; i++) {
      await waitFor(() => FakeSocket.all.length === i + 1);
      last().drop();
    }
    await waitFor(() => FakeSocket.all.length === 5);
    last().auth();
    expect(await connected).toBeUndefined(); // resolved by the fifth attempt
    last().drop();
    await waitFor(() => FakeSocket.all.length === 6);
    expect(w.states.filter((s) => s.state === 'reconnecting').map((s) => s.delayMs)).toEqual([10, 30, 50, 50, 10]);
    rt.close();
  });

  it('applies jitter within [d/2, d] and gives up after maxAttempts', async () => {
    const rt = fake({ reconnect: { initialDelayMs: 20, factor: 1, jitter: 0.5, maxAttempts: 5 } });
    const w = watch(rt);
    const p = rt.connect();
    for (let i = 0; i < 6; i++) {
      await waitFor(() => FakeSocket.all.length === i + 1);
      last().drop();
    }
    await expect(p).rejects.toMatchObject({ code: 'closed' });
    const delays = w.states.filter((s) => s.state === 'reconnecting').map((s) => s.delayMs!);
    expect(delays).toHaveLength(5);
    for (const d of delays) {
      expect(d).toBeGreaterThanOrEqual(10);
      expect(d).toBeLessThanOrEqual(20);
    }
    expect(rt.state).toBe('closed');
  });

  it('drops a socket that stays silent for deadTimeoutMs', async () => {
    const rt = fake({ deadTimeoutMs: 100, reconnect: { initialDelayMs: 10, jitter: 0 } });
    await Promise.all([rt.connect(), waitFor(() => FakeSocket.all.length === 1).then(() => last().auth())]);
    await waitFor(() => FakeSocket.all.length === 2, 1000, 'reconnect after silence');
    expect(FakeSocket.all[0]!.closedWith).toBe(1000);
    rt.close();
  });

  it('4003 is terminal; close codes other than 4001/4003/4401 reconnect', async () => {
    const rt = fake({ reconnect: { initialDelayMs: 5, jitter: 0 } });
    const p = rt.connect();
    await waitFor(() => FakeSocket.all.length === 1);
    last().accept();
    last().drop(1001, 'server shutting down');
    await waitFor(() => FakeSocket.all.length === 2);
    last().accept();
    last().drop(4003, 'device is not active');
    await expect(p).rejects.toMatchObject({ code: 'unauthorized' });
    await sleep(30);
    expect(FakeSocket.all).toHaveLength(2);
  });

  it('matches acks and error frames by client_ref; other errors are events', async () => {
    const rt = fake({ maxSendAttempts: 1 }); // no retry of the 429 (receipts.test.ts retries)
    const w = watch(rt);
    await Promise.all([rt.connect(), waitFor(() => FakeSocket.all.length === 1).then(() => last().auth())]);
    const p1 = rt.send({ conversation_id: 'c1', header_blob: 'aA==', ciphertext: 'aA==' });
    const p2 = rt.send({ conversation_id: 'c1', header_blob: 'aA==', ciphertext: 'aQ==' });
    const [f1, f2] = last().sent.filter((f) => f.event === 'message');
    last().frame('error', { detail: 'rate limit exceeded', status: 429, client_ref: f2!.data.client_ref, retry_after_ms: 1500 });
    last().frame('message_ack', { message_id: 'm1', timestamp: 'ts', cursor: '7', client_ref: f1!.data.client_ref });
    await expect(p1).resolves.toEqual({ message_id: 'm1', timestamp: 'ts', cursor: '7', client_ref: f1!.data.client_ref });
    const e = await p2.catch((x: unknown) => x);
    expect(e).toBeInstanceOf(RealtimeError);
    expect(e).toMatchObject({ code: 'server', status: 429, retryAfterMs: 1500 });
    last().frame('error', { detail: 'frame is not valid JSON', status: 400 });
    last().onmessage?.({ data: 'not json' });
    expect(w.errors.map((x) => x.code)).toEqual(['server', 'invalid_frame']);
    // A message whose id was acked to us is never delivered as a received message.
    last().frame('message', msg('m1', '7'));
    expect(w.messages).toEqual([]);
    rt.close();
    await expect(rt.send({ conversation_id: 'c1', header_blob: '', ciphertext: '' })).rejects.toMatchObject({ code: 'closed' });
  });

  it('holds live messages during catch-up, merges in cursor order, and serialises async listeners', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const calls: Array<string | undefined> = [];
    const source: CatchUpSource = {
      key: 'src',
      covers: () => true,
      fetchPage: async (since) => {
        calls.push(since);
        await gate;
        return since === '10' ? { messages: [msg('a', '11'), msg('b', '12')], next_cursor: '12' } : { messages: [], next_cursor: null };
      },
    };
    const rt = fake({ catchUp: source, initialCursors: { src: '10' } });
    const order: string[] = [];
    let running = 0;
    rt.on('message', async (m) => {
      expect(running).toBe(0);
      running++;
      await sleep(5);
      order.push(m.message_id);
      running--;
    });
    const connected = rt.connect();
    await waitFor(() => FakeSocket.all.length === 1);
    last().auth();
    last().frame('message', msg('c', '13'));
    last().frame('message', msg('b', '12')); // also in the catch-up page: delivered once
    await sleep(20);
    expect(order).toEqual([]);
    expect(rt.state).toBe('connecting'); // open only once caught up
    release();
    await connected;
    await waitFor(() => order.length === 3);
    await rt.settled();
    expect(order).toEqual(['a', 'b', 'c']);
    expect(calls).toEqual(['10']);
    expect(rt.cursors()).toEqual({ src: '13' });
    expect(rt.history().map((m) => m.message_id)).toEqual(['a', 'b', 'c']);
    rt.close();
  });

  it('addCatchUp reads a source added while open from the beginning, once, and after reconnecting from its cursor', async () => {
    const calls: Array<string | undefined> = [];
    const source: CatchUpSource = {
      key: 'conversation:new',
      covers: (m) => m.conversation_id === 'new',
      fetchPage: async (since) => {
        calls.push(since);
        return since === '1' ? { messages: [], next_cursor: null } : { messages: [{ ...msg('n1', '1'), conversation_id: 'new' }], next_cursor: '1' };
      },
    };
    const rt = fake({ reconnect: { initialDelayMs: 5, jitter: 0 } });
    const got: string[] = [];
    rt.on('message', (m) => void got.push(m.message_id));
    await Promise.all([rt.connect(), waitFor(() => FakeSocket.all.length === 1).then(() => last().auth())]);
    expect(rt.addCatchUp(source)).toBe(true);
    expect(rt.addCatchUp(source)).toBe(false);
    await waitFor(() => got.length === 1);
    expect(got).toEqual(['n1']);
    expect(rt.cursors()).toEqual({ 'conversation:new': '1' });
    last().drop();
    await waitFor(() => FakeSocket.all.length === 2);
    last().auth();
    await waitFor(() => calls.length === 2);
    expect(calls[0]).toMatch(/^1970-01-01/); // from the beginning
    expect(calls[1]).toBe('1');
    expect(got).toEqual(['n1']);
    rt.close();
  });

  it('after close 1012 (the service bus had a gap) catches up from where the last catch-up ended, not from the newest live cursor', async () => {
    const calls: Array<string | undefined> = [];
    // Stored: 11 (missed live: another instance published it while the bus was down), 12, 15.
    const stored = [msg('m11', '11'), msg('m12', '12'), msg('m15', '15')];
    const source: CatchUpSource = {
      key: 'src',
      covers: () => true,
      fetchPage: async (since) => {
        calls.push(since);
        const page = stored.filter((m) => Number(m.cursor) > Number(since));
        return { messages: page, next_cursor: page.at(-1)?.cursor ?? null };
      },
    };
    const rt = fake({ catchUp: source, initialCursors: { src: '10' }, reconnect: { initialDelayMs: 5, jitter: 0 } });
    const got: string[] = [];
    rt.on('message', (m) => void got.push(m.message_id));
    stored.splice(0); // nothing stored yet at the first catch-up
    await Promise.all([rt.connect(), waitFor(() => FakeSocket.all.length === 1).then(() => last().auth())]);
    stored.push(msg('m11', '11'), msg('m12', '12'), msg('m15', '15'));
    last().frame('message', msg('m12', '12'));
    last().frame('message', msg('m15', '15'));
    expect(rt.cursors()).toEqual({ src: '15' });
    last().drop(1012, 'event bus reconnected: reconnect and catch up by cursor');
    await waitFor(() => FakeSocket.all.length === 2);
    last().auth();
    await waitFor(() => got.length === 3);
    await rt.settled();
    expect(calls).toEqual(['10', '10']);
    expect(got).toEqual(['m12', 'm15', 'm11']); // m12 and m15 once each
    expect(rt.cursors()).toEqual({ src: '15' });
    // Any other close resumes from the newest cursor.
    last().drop(1006);
    await waitFor(() => FakeSocket.all.length === 3);
    last().auth();
    await waitFor(() => calls.length === 3);
    expect(calls[2]).toBe('15');
    rt.close();
  });

  it('resumes below live messages received within the reorder window (another instance may deliver an older one late)', async () => {
    const run = async (reorderWindowMs: number) => {
      const calls: Array<string | undefined> = [];
      const source: CatchUpSource = {
        key: 'src',
        covers: () => true,
        fetchPage: async (since) => (calls.push(since), { messages: [], next_cursor: null }),
      };
      const rt = fake({ catchUp: source, initialCursors: { src: '10' }, reconnect: { initialDelayMs: 5, jitter: 0 }, reorderWindowMs });
      await Promise.all([rt.connect(), waitFor(() => FakeSocket.all.length === 1).then(() => last().auth())]);
      last().frame('message', msg('m12', '12')); // 11 is on its way from another instance
      last().drop(1006);
      await waitFor(() => FakeSocket.all.length === 2);
      last().auth();
      await waitFor(() => calls.length === 2);
      rt.close();
      return calls;
    };
    expect(await run(60_000)).toEqual(['10', '10']);
    expect(await run(0)).toEqual(['10', '12']);
  });

  it('keeps a bounded history', async () => {
    const rt = fake({ historySize: 3 });
    await Promise.all([rt.connect(), waitFor(() => FakeSocket.all.length === 1).then(() => last().auth())]);
    for (let i = 1; i <= 5; i++) last().frame('message', msg(`m${i}`, String(i)));
    expect(rt.history().map((m) => m.message_id)).toEqual(['m3', 'm4', 'm5']);
    rt.close();
  });

  it('reconciles an unacknowledged message from history after reconnecting, or resends it', async () => {
    const stored: StoredMessage[] = [];
    const source: CatchUpSource = { key: 'd', covers: () => true, fetchPage: async () => ({ messages: stored, next_cursor: stored.at(-1)?.cursor ?? null }) };
    const rt = fake({ catchUp: source, initialCursors: { d: '1' }, reconnect: { initialDelayMs: 5, jitter: 0 } });
    await Promise.all([rt.connect(), waitFor(() => FakeSocket.all.length === 1).then(() => last().auth())]);
    const pStored = rt.send({ conversation_id: 'c1', header_blob: 'aA==', ciphertext: 'c3RvcmVk' });
    const pLost = rt.send({ conversation_id: 'c1', header_blob: 'aA==', ciphertext: 'bG9zdA==' });
    stored.push({ ...msg('s1', '2'), sender_device_id: 'me', header_blob: 'aA==', ciphertext: 'c3RvcmVk' });
    last().drop();
    await waitFor(() => FakeSocket.all.length === 2);
    last().auth();
    await expect(pStored).resolves.toMatchObject({ message_id: 's1', cursor: '2' });
    await waitFor(() => last().sent.some((f) => f.event === 'message'));
    const resent = last().lastMessage();
    expect(resent.data.ciphertext).toBe('bG9zdA==');
    last().frame('message_ack', { message_id: 'l1', timestamp: 'ts', cursor: '3', client_ref: resent.data.client_ref });
    await expect(pLost).resolves.toMatchObject({ message_id: 'l1' });
    rt.close();
  });

  it('without a catch-up source an unacknowledged message rejects with ack_lost', async () => {
    const rt = fake({ reconnect: { initialDelayMs: 5, jitter: 0 } });
    await Promise.all([rt.connect(), waitFor(() => FakeSocket.all.length === 1).then(() => last().auth())]);
    const p = rt.send({ conversation_id: 'c1', header_blob: 'aA==', ciphertext: 'aA==' });
    last().drop();
    await waitFor(() => FakeSocket.all.length === 2);
    last().auth();
    await expect(p).rejects.toMatchObject({ code: 'ack_lost' });
    rt.close();
  });

  it('times out an ack', async () => {
    const rt = fake({ ackTimeoutMs: 30 });
    await Promise.all([rt.connect(), waitFor(() => FakeSocket.all.length === 1).then(() => last().auth())]);
    await expect(rt.send({ conversation_id: 'c1', header_blob: 'aA==', ciphertext: 'aA==' })).rejects.toMatchObject({ code: 'ack_timeout' });
    rt.close();
  });

  it('compares cursors numerically when they are digits', () => {
    expect(defaultCompareCursors('9', '10')).toBeLessThan(0);
    expect(defaultCompareCursors('010', '10')).toBe(0);
    expect(defaultCompareCursors('b', 'a')).toBeGreaterThan(0);
  });
});
