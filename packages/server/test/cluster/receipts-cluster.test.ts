/**
 * Receipts across instances (design §6, §8.32): two instances on one PostgreSQL
 * database and Redis. The sender's socket is on one instance and the recipient's on the other:
 * `message_delivered` (written by the recipient's instance's batch) and `message_read` reach the
 * sender through the bus, in that order, for pairwise conversations and rooms; a history page
 * fetched on the sender's instance delivers too. Runs on PostgreSQL with TEST_REDIS_URL.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { activeAgent } from '../../testing/flows.js';
import { backend, startInstances, type TestApp, type TestCluster } from '../../testing/harness.js';
import { agentSocket, b64, deliveredFrames, ownerSocket, receiptPair, sendOver } from '../../testing/receipt-flows.js';
import { WsPool, type Frame } from '../../testing/ws-client.js';

const isEvent = (event: string) => (f: Frame) => f.event === event;

describe.skipIf(backend !== 'postgres' || !process.env.TEST_REDIS_URL)('receipts across two instances', () => {
  let cluster: TestCluster;
  let a: TestApp;
  let b: TestApp;
  const pool = new WsPool();

  beforeAll(async () => {
    cluster = await startInstances(2, { RATE_LIMIT_ENROLL_PER_10MIN: '1000' });
    [a, b] = cluster.apps as [TestApp, TestApp];
  });
  afterEach(() => pool.closeAll());
  afterAll(() => cluster?.close());

  it('pairwise: delivered and read receipts reach the sender on the other instance, delivered first', async () => {
    const p = await receiptPair(a);
    const owner = await ownerSocket(pool, a, p);
    const agent = await agentSocket(pool, b, p.agent);
    const sent = [await sendOver(owner, p.conversationId), await sendOver(owner, p.conversationId)];
    expect((await agent.next('message', 5000)).data.message_id).toBe(sent[0]!.id);
    await agent.next('message', 5000);
    const frames = await deliveredFrames(owner, sent.map((m) => m.id));
    expect(frames.flatMap((f) => f.data.message_ids)).toEqual(sent.map((m) => m.id));

    agent.send('message_read', { conversation_id: p.conversationId, up_to_message_id: sent[1]!.id });
    expect((await agent.next(isEvent('message_read_ack'), 5000)).data).toMatchObject({ recorded: true });
    const read = await owner.next(isEvent('message_read'), 5000);
    expect(read.data).toMatchObject({ device_id: p.agent.deviceId, up_to_message_id: sent[1]!.id, cursor: sent[1]!.cursor });

    // History on either instance carries the same times.
    for (const t of [a, b]) {
      const h = await t.request({ method: 'GET', url: `/api/v1/conversations/${p.conversationId}/messages`, headers: p.owner.auth });
      expect(h.body.messages.map((m: { read_at: string | null }) => m.read_at)).toEqual([read.data.read_at, read.data.read_at]);
      expect(h.body.messages.every((m: { delivered_at: string | null }) => m.delivered_at !== null)).toBe(true);
    }
  });

  it('catch-up through the other instance: the fetched page is delivered to the sender in one frame', async () => {
    const p = await receiptPair(a);
    const owner = await ownerSocket(pool, a, p);
    const sent = [await sendOver(owner, p.conversationId), await sendOver(owner, p.conversationId), await sendOver(owner, p.conversationId)];
    const page = await b.request({ method: 'GET', url: `/api/v1/devices/${p.agent.deviceId}/messages`, headers: p.agent.auth });
    expect(page.status).toBe(200);
    const frame = await owner.next(isEvent('message_delivered'), 5000);
    expect(frame.data.message_ids).toEqual(sent.map((m) => m.id));
  });

  it('rooms: per-recipient delivered and read receipts cross instances', async () => {
    const p = await receiptPair(a);
    const other = await activeAgent(a, p.owner);
    const room = await a.request({ method: 'POST', url: '/api/v1/rooms', headers: p.owner.auth, payload: { name: 'x', member_device_ids: [p.agent.deviceId, other.deviceId] } });
    expect(room.status).toBe(201);
    const roomId = room.body.room_id as string;
    const sender = await agentSocket(pool, a, p.agent);
    const recipient = await agentSocket(pool, b, other);
    sender.send('room_message', { room_id: roomId, envelopes: [{ recipient_device_id: other.deviceId, header_blob: b64('h'), ciphertext: b64('c') }], client_ref: 'r' });
    const id = (await sender.next('room_message_ack', 5000)).data.room_message_id as string;
    await recipient.next('room_message', 5000);
    expect((await sender.next(isEvent('room_message_delivered'), 5000)).data).toMatchObject({ room_id: roomId, device_id: other.deviceId, room_message_ids: [id] });
    recipient.send('room_message_read', { room_id: roomId, up_to_room_message_id: id });
    expect((await recipient.next(isEvent('room_message_read_ack'), 5000)).data).toMatchObject({ recorded: true });
    expect((await sender.next(isEvent('room_message_read'), 5000)).data).toMatchObject({ device_id: other.deviceId, room_message_ids: [id] });
  });
});
