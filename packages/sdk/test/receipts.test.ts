/**
 * Message statuses from delivery and read receipts (realtime/status.ts): the
 * tracker's rules (never backwards, a read covers earlier cursors, receipts before the ack, room
 * recipients), the RealtimeClient's outbound queue over a scripted socket (429 retried in queue
 * order, `failed` after its retries, read receipts sent and acknowledged, the latest one waiting
 * while offline), and, against a real server, SecureMessenger statuses `pending -> sent ->
 * delivered -> read` both over the socket and over REST, receipts learnt after a reconnect, and a
 * rate-limited message `failed` after its retries.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '@parley/server/testing';
import { ParleyClient } from '../src/client/rest.js';
import { activate, enroll } from '../src/client/enrollment.js';
import { DeviceIdentity } from '../src/crypto/keys.js';
import { nodeWebSocket } from '../src/node/ws.js';
import { RealtimeClient, type RealtimeClientOptions } from '../src/realtime/client.js';
import { conversationCatchUp, deviceCatchUp } from '../src/realtime/catch-up.js';
import { MessageStatusTracker, type MessageStatus, type MessageStatusInfo } from '../src/realtime/status.js';
import { SecureMessenger } from '../src/secure/messenger.js';
import { ownerPeerResolver, restTransport } from '../src/secure/transport.js';
import type { SecureMessage } from '../src/secure/types.js';
import { MemorySessionStore } from '../src/storage.js';
import { FakeSocket } from './fake-socket.js';
import { waitFor } from './wait.js';

/** Every status a tracker reported for a message (by id or client_ref), in order. */
function history(tracker: MessageStatusTracker) {
  const seen: MessageStatusInfo[] = [];
  tracker.on('status', (i) => void seen.push(i));
  return (idOrRef: string): MessageStatus[] => {
    const out: MessageStatus[] = [];
    for (const i of seen) if ((i.message_id === idOrRef || i.client_ref === idOrRef) && out.at(-1) !== i.status) out.push(i.status);
    return out;
  };
}

describe('MessageStatusTracker', () => {
  const at = '2026-01-01T00:00:00.000Z';

  it('pending -> sent -> delivered -> read; never backwards; a read mark covers earlier cursors', () => {
    const t = new MessageStatusTracker();
    const statuses = history(t);
    t.pending('r1', { conversation_id: 'c' });
    t.sent('r1', { conversation_id: 'c' }, { message_id: 'm1', cursor: '9' });
    t.sent(undefined, { conversation_id: 'c' }, { message_id: 'm2', cursor: '10' });
    t.sent(undefined, { conversation_id: 'c' }, { message_id: 'm3', cursor: '11' });
    t.delivered({ conversation_id: 'c', device_id: 'peer', message_ids: ['m1', 'm2'], delivered_at: at });
    t.read({ conversation_id: 'c', device_id: 'peer', up_to_message_id: 'm2', cursor: '10', read_at: at });
    t.delivered({ conversation_id: 'c', device_id: 'peer', message_ids: ['m1'], delivered_at: at }); // late, again
    expect(statuses('r1')).toEqual(['pending', 'sent', 'delivered', 'read']);
    expect(t.get('m1')).toMatchObject({ client_ref: 'r1', message_id: 'm1', status: 'read', recipients: [{ device_id: 'peer', delivered_at: at, read_at: at }] });
    expect(t.get('m2')!.status).toBe('read'); // covered by the mark
    expect(t.get('m3')!.status).toBe('sent'); // after it
    expect(t.outstanding().map((m) => m.message_id)).toEqual(['m3']);
  });

  it('receipts that arrive before the ack are applied when it comes (a read implies the delivery)', () => {
    const t = new MessageStatusTracker();
    t.pending('r', { conversation_id: 'c' });
    t.delivered({ conversation_id: 'c', device_id: 'peer', message_ids: ['m'], delivered_at: at });
    t.read({ conversation_id: 'c', device_id: 'peer', up_to_message_id: 'later', cursor: '50', read_at: at });
    expect(t.get('r')!.status).toBe('pending');
    t.sent('r', { conversation_id: 'c' }, { message_id: 'm', cursor: '40' });
    expect(t.get('r')).toMatchObject({ status: 'read', recipients: [{ device_id: 'peer', delivered_at: at, read_at: at }] });
  });

  it('rooms: delivered / read once every expected recipient is; blocked ones do not count; history merges with named receipts', () => {
    const t = new MessageStatusTracker();
    t.sent('r', { room_id: 'room' }, { message_id: 'rm', expected: ['a', 'b'] });
    t.delivered({ room_id: 'room', device_id: 'a', room_message_ids: ['rm'], delivered_at: at });
    expect(t.get('rm')!.status).toBe('sent');
    t.delivered({ room_id: 'room', device_id: 'x', room_message_ids: ['rm'], delivered_at: at }); // not a recipient of it
    expect(t.get('rm')!.recipients.map((r) => r.device_id)).toEqual(['a']);
    t.fromTimeline([{ room_message_id: 'rm', deliveries: [{ recipient_device_id: 'b', delivered_at: at, read_at: null }] }]);
    expect(t.get('rm')!.status).toBe('delivered');
    t.read({ room_id: 'room', device_id: 'a', room_message_ids: ['rm'], up_to_room_message_id: 'rm', read_at: at });
    expect(t.get('rm')!.status).toBe('delivered');
    t.read({ room_id: 'room', device_id: 'b', room_message_ids: ['rm'], up_to_room_message_id: 'rm', read_at: at });
    expect(t.get('rm')!.status).toBe('read');

    // Pairwise history does not name the recipient: it is the same one the frames name.
    t.sent(undefined, { conversation_id: 'c' }, { message_id: 'p', cursor: '1' });
    t.fromHistory([{ message_id: 'p', delivered_at: at, read_at: null } as never]);
    t.read({ conversation_id: 'c', device_id: 'peer', up_to_message_id: 'p', cursor: '1', read_at: at });
    expect(t.get('p')).toMatchObject({ status: 'read', recipients: [{ device_id: 'peer', delivered_at: at, read_at: at }] });
  });

  it('failed is terminal for an unstored message; a stored one never fails', () => {
    const t = new MessageStatusTracker({ limit: 2 });
    t.pending('r1', { conversation_id: 'c' });
    t.failed('r1', 'refused');
    t.sent('r1', { conversation_id: 'c' }, { message_id: 'm1' });
    expect(t.get('r1')).toMatchObject({ status: 'failed', error: 'refused' });
    t.sent('r2', { conversation_id: 'c' }, { message_id: 'm2' });
    t.failed('r2', 'late');
    expect(t.get('m2')!.status).toBe('sent');
    t.pending('r3', { conversation_id: 'c' });
    expect(t.get('r1')).toBeUndefined(); // the oldest is forgotten beyond the limit
  });
});

describe('RealtimeClient outbound queue and receipts (scripted socket)', () => {
  const fake = (opts: Partial<RealtimeClientOptions> = {}) => {
    FakeSocket.all = [];
    return new RealtimeClient({ url: 'https://parley.test/', token: 'tok', WebSocket: FakeSocket, deadTimeoutMs: 0, ...opts });
  };
  const last = () => FakeSocket.all.at(-1)!;
  const open = async (rt: RealtimeClient) => {
    const p = rt.connect();
    await waitFor(() => FakeSocket.all.length > 0, 'socket');
    last().auth();
    await p;
  };
  const messages = () => last().sent.filter((f) => f.event === 'message');

  it('a 429 is retried after retry_after_ms, in queue order; the message is sent once stored', async () => {
    const rt = fake({ maxRetryDelayMs: 20 });
    await open(rt);
    const statuses = history(rt.statuses);
    const p1 = rt.send({ conversation_id: 'c', header_blob: 'aA==', ciphertext: 'MQ==' });
    const p2 = rt.send({ conversation_id: 'c', header_blob: 'aA==', ciphertext: 'Mg==' });
    const [f1, f2] = messages();
    last().frame('error', { detail: 'rate limit exceeded', status: 429, client_ref: f1!.data.client_ref, retry_after_ms: 5000 });
    last().frame('error', { detail: 'rate limit exceeded', status: 429, client_ref: f2!.data.client_ref, retry_after_ms: 5000 });
    // Held for maxRetryDelayMs (20 ms, not 5 s), then both again in their order.
    await waitFor(() => messages().length === 4, 'the retries');
    expect(messages().slice(2).map((f) => f.data.client_ref)).toEqual([f1!.data.client_ref, f2!.data.client_ref]);
    last().frame('message_ack', { message_id: 'm1', timestamp: 'ts', cursor: '1', client_ref: f1!.data.client_ref });
    last().frame('message_ack', { message_id: 'm2', timestamp: 'ts', cursor: '2', client_ref: f2!.data.client_ref });
    await expect(p1).resolves.toMatchObject({ message_id: 'm1' });
    await expect(p2).resolves.toMatchObject({ message_id: 'm2' });
    expect(statuses(f1!.data.client_ref)).toEqual(['pending', 'sent']);
    rt.close();
  });

  it('fails after maxSendAttempts refusals; its status becomes failed', async () => {
    const rt = fake({ maxSendAttempts: 2, maxRetryDelayMs: 5 });
    await open(rt);
    const statuses = history(rt.statuses);
    const p = rt.send({ conversation_id: 'c', header_blob: 'aA==', ciphertext: 'MQ==' });
    const ref = messages()[0]!.data.client_ref as string;
    last().frame('error', { detail: 'rate limit exceeded', status: 429, client_ref: ref, retry_after_ms: 1 });
    await waitFor(() => messages().length === 2, 'the retry');
    last().frame('error', { detail: 'rate limit exceeded', status: 429, client_ref: ref, retry_after_ms: 1 });
    await expect(p).rejects.toMatchObject({ code: 'server', status: 429 });
    expect(statuses(ref)).toEqual(['pending', 'failed']);
    expect(rt.statuses.get(ref)!.error).toMatch(/429/);
    // A refusal that retrying cannot fix fails at once.
    const q = rt.send({ conversation_id: 'c', header_blob: 'aA==', ciphertext: 'Mg==' });
    const ref2 = messages().at(-1)!.data.client_ref as string;
    last().frame('error', { detail: 'not a side', status: 403, client_ref: ref2 });
    await expect(q).rejects.toMatchObject({ status: 403 });
    expect(rt.statuses.get(ref2)!.status).toBe('failed');
    rt.close();
  });

  it('receipt frames update statuses and are emitted; reads are sent, acknowledged, and while offline only the latest waits', async () => {
    const rt = fake({ reconnect: { initialDelayMs: 5, jitter: 0 } });
    await open(rt);
    const delivered: unknown[] = [];
    rt.on('message_delivered', (e) => void delivered.push(e));
    const p = rt.send({ conversation_id: 'c', header_blob: 'aA==', ciphertext: 'MQ==' });
    const ref = messages()[0]!.data.client_ref as string;
    last().frame('message_ack', { message_id: 'm1', timestamp: 'ts', cursor: '5', client_ref: ref });
    await p;
    last().frame('message_delivered', { conversation_id: 'c', device_id: 'peer', message_ids: ['m1'], delivered_at: 'd' });
    expect(rt.statuses.get('m1')!.status).toBe('delivered');
    expect(delivered).toHaveLength(1);
    last().frame('message_read', { conversation_id: 'c', device_id: 'peer', up_to_message_id: 'm1', cursor: '5', read_at: 'r' });
    expect(rt.statuses.get(ref)).toMatchObject({ status: 'read', recipients: [{ device_id: 'peer', delivered_at: 'd', read_at: 'r' }] });

    const read = rt.markRead('c', 'in-1');
    const frame = last().sent.find((f) => f.event === 'message_read')!;
    expect(frame.data).toMatchObject({ conversation_id: 'c', up_to_message_id: 'in-1' });
    last().frame('message_read_ack', { conversation_id: 'c', up_to_message_id: 'in-1', recorded: true, read_receipts_enabled: true, read_at: 'r', client_ref: frame.data.client_ref });
    await expect(read).resolves.toMatchObject({ recorded: true });
    const refused = rt.markRoomRead('room', 'x');
    const roomFrame = last().sent.find((f) => f.event === 'room_message_read')!;
    last().frame('error', { detail: 'not received', status: 409, client_ref: roomFrame.data.client_ref });
    await expect(refused).rejects.toMatchObject({ status: 409 });

    // Offline: two reads of one conversation, one frame after the reconnection, both callers answered.
    last().drop(1006);
    const r1 = rt.markRead('c', 'in-2');
    const r2 = rt.markRead('c', 'in-3');
    await waitFor(() => FakeSocket.all.length === 2, 'reconnect');
    last().auth();
    await waitFor(() => last().sent.some((f) => f.event === 'message_read'), 'the read after reconnecting');
    const sent = last().sent.filter((f) => f.event === 'message_read');
    expect(sent.map((f) => f.data.up_to_message_id)).toEqual(['in-3']);
    last().frame('message_read_ack', { conversation_id: 'c', up_to_message_id: 'in-3', recorded: true, read_receipts_enabled: true, read_at: 'r', client_ref: sent[0]!.data.client_ref });
    await expect(Promise.all([r1, r2])).resolves.toHaveLength(2);
    rt.close();
    await expect(rt.markRead('c', 'x')).rejects.toMatchObject({ code: 'closed' });
  });
});

describe('message statuses against a real server', () => {
  let t: TestApp;
  const cleanups: (() => unknown)[] = [];
  beforeAll(async () => {
    t = await startApp({ listen: true, env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000', RATE_LIMIT_DEVICE_STATUS_PER_5S: '1000', RATE_LIMIT_WS_MESSAGES_PER_MIN: '3' } });
  });
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  afterAll(() => t?.close());

  let n = 0;
  /** An owner (messenger over REST, socket for receipts) and an agent (messenger over its socket). */
  async function pair(agentOptions: Partial<RealtimeClientOptions> = {}, ownerAutoRead = false) {
    const ownerJwt = await t.ownerToken(`receipts-${++n}-${Date.now()}@example.com`);
    const owner = new ParleyClient({ baseUrl: t.baseUrl, ownerToken: ownerJwt });
    await owner.createTenant({ name: `Receipts ${n}` });
    const ownerKeys = DeviceIdentity.generate();
    const od = await owner.registerOwnerDevice({ ...ownerKeys.publicKeys, name: 'laptop' });
    owner.setOwnerDeviceId(od.device_id);
    const invite = await owner.createInvite();
    const agentKeys = DeviceIdentity.generate();
    const agent = new ParleyClient({ baseUrl: t.baseUrl });
    const enrolled = await enroll(agent, invite.token, { identityPublicKey: agentKeys.identityPublicKeyHex, ephemeralPublicKey: agentKeys.ephemeralPublicKeyHex, sign: (m) => agentKeys.sign(m) });
    await owner.approveDevice(enrolled.device_id);
    const act = await activate(agent, enrolled.device_id, (m) => agentKeys.sign(m));
    agent.setDeviceToken(act.device_jwt);
    const conversationId = act.conversation_id!;

    const ownerIdentity = ownerKeys.withDeviceId(od.device_id);
    const ownerMessenger = await SecureMessenger.open({
      identity: ownerIdentity,
      store: new MemorySessionStore(),
      client: owner,
      mls: false,
      resolvePeer: ownerPeerResolver(owner, od.device_id),
      transport: restTransport(owner, od.device_id),
      autoRead: ownerAutoRead,
    });
    const ownerSource = conversationCatchUp(owner, conversationId);
    const ownerRt = new RealtimeClient({ url: t.baseUrl, token: ownerJwt, deviceId: od.device_id, WebSocket: nodeWebSocket(), catchUp: ownerSource, reconnect: { initialDelayMs: 10, jitter: 0 } });
    ownerMessenger.attach(ownerRt, { transport: false });
    const agentIdentity = agentKeys.withDeviceId(enrolled.device_id);
    const agentMessenger = await SecureMessenger.open({ identity: agentIdentity, store: new MemorySessionStore(), client: agent, mls: false });
    await agentMessenger.addConversation(conversationId, { device_id: od.device_id, ...ownerKeys.publicKeys });
    const agentSource = deviceCatchUp(agent, enrolled.device_id);
    const agentRt = new RealtimeClient({ url: t.baseUrl, token: () => agent.currentDeviceToken(), WebSocket: nodeWebSocket(), catchUp: agentSource, ...agentOptions });
    agentMessenger.attach(agentRt);
    const inbox: { owner: SecureMessage[]; agent: SecureMessage[] } = { owner: [], agent: [] };
    ownerMessenger.on('message', (m) => void inbox.owner.push(m));
    agentMessenger.on('message', (m) => void inbox.agent.push(m));
    await ownerMessenger.start();
    await agentMessenger.start();
    await ownerRt.connect();
    await agentRt.connect();
    cleanups.push(() => ownerRt.close(), () => agentRt.close());
    return { owner, agent, conversationId, ownerMessenger, ownerRt, agentMessenger, agentRt, inbox, agentDeviceId: enrolled.device_id };
  }

  it('owner over REST: pending -> sent -> delivered -> read, with the reader named', async () => {
    const p = await pair();
    const statuses = history(p.ownerMessenger.statuses);
    expect(p.ownerMessenger.statuses).toBe(p.ownerRt.statuses);
    const sent = await p.ownerMessenger.sendText(p.conversationId, 'hello');
    await waitFor(() => p.ownerMessenger.statuses.get(sent.message_id)?.status === 'delivered', 'delivered');
    await waitFor(() => p.inbox.agent.length === 1, 'the agent has it');
    const ack = await p.agentMessenger.markRead(p.inbox.agent[0]!);
    expect(ack).toMatchObject({ recorded: true, read_receipts_enabled: true });
    await waitFor(() => p.ownerMessenger.statuses.get(sent.client_ref)?.status === 'read', 'read');
    expect(statuses(sent.client_ref)).toEqual(['pending', 'sent', 'delivered', 'read']);
    expect(p.ownerMessenger.statuses.get(sent.message_id)!.recipients).toEqual([{ device_id: p.agentDeviceId, delivered_at: expect.any(String), read_at: ack.read_at }]);
  });

  it('agent over its socket: receipts missed while the sender was offline are learnt after it reconnects', async () => {
    const p = await pair();
    const statuses = history(p.agentMessenger.statuses);
    const sent = await p.agentMessenger.sendText(p.conversationId, 'status report');
    await waitFor(() => p.agentMessenger.statuses.get(sent.message_id)?.status === 'delivered', 'delivered to the owner device');
    // The agent goes offline; the owner reads meanwhile (REST, as its device).
    p.agentRt.close();
    await waitFor(() => p.inbox.owner.length === 1, 'the owner has it');
    const read = await p.owner.readConversation(p.conversationId, { up_to_message_id: sent.message_id });
    expect(read.recorded).toBe(true);
    expect(p.agentMessenger.statuses.get(sent.message_id)!.status).toBe('delivered');
    await p.agentRt.connect();
    await waitFor(() => p.agentMessenger.statuses.get(sent.message_id)?.status === 'read', 'read, learnt from history');
    expect(statuses(sent.client_ref)).toEqual(['pending', 'sent', 'delivered', 'read']);
  });

  it('autoRead: the messenger reads what its listeners handled (one mark covers both messages)', async () => {
    const p = await pair({}, true);
    const a = await p.agentMessenger.sendText(p.conversationId, 'one');
    const b = await p.agentMessenger.sendText(p.conversationId, 'two');
    await waitFor(() => p.agentMessenger.statuses.get(b.message_id)?.status === 'read', 'both read');
    expect(p.agentMessenger.statuses.get(a.message_id)!.status).toBe('read');
    expect(p.inbox.owner.map((m) => m.message_id)).toEqual([a.message_id, b.message_id]);
  });

  it('a rate-limited message fails after its retries (429 each time)', async () => {
    const p = await pair({ maxSendAttempts: 2, maxRetryDelayMs: 20 });
    const refs: string[] = [];
    const statuses = history(p.agentRt.statuses);
    const failures: MessageStatusInfo[] = [];
    p.agentRt.statuses.on('status', (i) => void (i.status === 'failed' && failures.push(i)));
    // The limit is 3 messages a minute per device: the 4th is refused, and so is its retry.
    for (let i = 0; i < 3; i++) refs.push((await p.agentMessenger.sendText(p.conversationId, `m${i}`)).client_ref);
    const failed = await p.agentMessenger.sendText(p.conversationId, 'one too many').catch((e: unknown) => e);
    expect(failed).toMatchObject({ code: 'send_failed' });
    expect(failures).toHaveLength(1);
    const last = failures[0]!;
    expect(last.error).toMatch(/429|rate limit/);
    expect(statuses(last.client_ref!)).toEqual(['pending', 'failed']);
    expect(last.message_id).toBeUndefined();
    expect(refs.every((r) => p.agentRt.statuses.get(r)!.status !== 'failed')).toBe(true);
  }, 60_000);
});
