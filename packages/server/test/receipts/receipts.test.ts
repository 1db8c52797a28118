/**
 * Delivery and read receipts of pairwise conversations (@parley/protocol
 * `areas/receipts.ts`; docs/decisions.md "Delivery and read receipts"), over real sockets:
 * batched `message_delivered` for live frames and for fetched history (catch-up after a
 * reconnect, in order), `message_read` forwarded to the sender, history carrying delivered_at and
 * read_at, refusals (never received, another conversation, own message, not a side), read
 * receipts off by the device or the tenant (nothing stored, nothing forwarded), and the device
 * settings routes.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { activeAgent, registerOwnerDevice } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { agentSocket, deliveredFrames, marksOf, ownerSocket, receiptPair, sendOver, type ReceiptPair } from '../../testing/receipt-flows.js';
import { WsPool, type Frame } from '../../testing/ws-client.js';

const isEvent = (event: string) => (f: Frame) => f.event === event;

describe('delivery and read receipts (pairwise conversations)', () => {
  let t: TestApp;
  const pool = new WsPool();

  beforeAll(async () => {
    t = await startApp({ listen: true, env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000' } });
  });
  afterEach(() => pool.closeAll());
  afterAll(() => t?.close());

  const history = async (p: ReceiptPair, headers: Record<string, string> = {}) => {
    const res = await t.request({ method: 'GET', url: `/api/v1/conversations/${p.conversationId}/messages`, headers: { ...p.owner.auth, ...headers } });
    expect(res.status).toBe(200);
    return res.body.messages as { message_id: string; delivered_at: string | null; read_at: string | null; cursor: string }[];
  };
  const pending = async (p: ReceiptPair) => (await t.request({ method: 'GET', url: `/api/v1/devices/${p.agent.deviceId}/pending`, headers: p.agent.auth })).body.pending as number;

  it('live deliveries reach the sender batched (many ids per frame, in send order, each once); the live frame carries no receipt fields', async () => {
    const p = await receiptPair(t);
    const owner = await ownerSocket(pool, t, p);
    const agent = await agentSocket(pool, t, p.agent);
    // Sent back to back, each answered by its client_ref: the 20 deliveries fall into few receipt batches.
    const sent = await Promise.all(Array.from({ length: 20 }, () => sendOver(owner, p.conversationId)));
    const ids = sent.map((m) => m.id);
    const live = await agent.next('message');
    expect(live.data).not.toHaveProperty('delivered_at');
    expect(live.data).not.toHaveProperty('read_at');

    const frames = await deliveredFrames(owner, ids);
    const reported = frames.flatMap((f) => f.data.message_ids as string[]);
    expect(reported).toEqual(ids); // in send order, each exactly once
    expect(frames.length).toBeLessThan(ids.length); // batched (RECEIPT_BATCH_DELAY_MS per batch), many ids per frame
    for (const f of frames) {
      expect(f.data).toMatchObject({ conversation_id: p.conversationId, device_id: p.agent.deviceId });
      expect(Date.parse(f.data.delivered_at)).not.toBeNaN();
    }
    const h = await history(p);
    expect(h.every((m) => m.delivered_at !== null && m.read_at === null)).toBe(true);
  });

  it("the sender's own other socket does not count as a delivery", async () => {
    const p = await receiptPair(t);
    const first = await ownerSocket(pool, t, p);
    const second = await ownerSocket(pool, t, p);
    const m = await sendOver(first, p.conversationId);
    expect((await second.next('message')).data.message_id).toBe(m.id);
    // The agent is offline: the message is still pending for it, and nobody was told "delivered".
    expect(await pending(p)).toBe(1);
    expect((await history(p)).find((x) => x.message_id === m.id)?.delivered_at).toBeNull();
    expect(first.buffered(isEvent('message_delivered'))).toEqual([]);
  });

  it('catch-up after a reconnect: fetched history is delivered in one frame, in order, and reads follow their deliveries', async () => {
    const p = await receiptPair(t);
    const owner = await ownerSocket(pool, t, p);
    let agent = await agentSocket(pool, t, p.agent);
    const m1 = await sendOver(owner, p.conversationId);
    await agent.next('message');
    await deliveredFrames(owner, [m1.id]);
    await agent.close();

    const missed = [await sendOver(owner, p.conversationId), await sendOver(owner, p.conversationId), await sendOver(owner, p.conversationId)];
    agent = await agentSocket(pool, t, p.agent);
    const page = await t.request({ method: 'GET', url: `/api/v1/devices/${p.agent.deviceId}/messages?since=${m1.cursor}`, headers: p.agent.auth });
    expect(page.status).toBe(200);
    expect(page.body.messages.map((m: { message_id: string }) => m.message_id)).toEqual(missed.map((m) => m.id));
    // The page hands delivered_at over as it was before the fetch; the receipt went out before it answered.
    const delivered = await owner.next(isEvent('message_delivered'));
    expect(delivered.data.message_ids).toEqual(missed.map((m) => m.id));
    expect(await pending(p)).toBe(0);

    // The same page again reports nothing new.
    const again = await t.request({ method: 'GET', url: `/api/v1/devices/${p.agent.deviceId}/messages?since=${m1.cursor}`, headers: p.agent.auth });
    expect(again.body.messages.every((m: { delivered_at: string | null }) => m.delivered_at !== null)).toBe(true);

    agent.send('message_read', { conversation_id: p.conversationId, up_to_message_id: missed[2]!.id, client_ref: 'read-1' });
    const ack = await agent.next(isEvent('message_read_ack'));
    expect(ack.data).toMatchObject({ conversation_id: p.conversationId, up_to_message_id: missed[2]!.id, recorded: true, read_receipts_enabled: true, client_ref: 'read-1' });
    const read = await owner.next(isEvent('message_read'));
    expect(read.data).toMatchObject({ conversation_id: p.conversationId, device_id: p.agent.deviceId, up_to_message_id: missed[2]!.id, cursor: missed[2]!.cursor });
    expect(read.data.read_at).toBe(ack.data.read_at);
    const order = owner.received.map((f) => f.event).filter((e) => e === 'message_delivered' || e === 'message_read');
    expect(order.lastIndexOf('message_delivered')).toBeLessThan(order.indexOf('message_read'));
    expect(owner.buffered(isEvent('message_delivered'))).toEqual([]);

    // History (owner view and the agent's device view): every message up to the mark is read at the mark's time.
    const h = await history(p);
    expect(h.map((m) => m.read_at)).toEqual([read.data.read_at, read.data.read_at, read.data.read_at, read.data.read_at]);
    const own = await t.request({ method: 'GET', url: `/api/v1/devices/${p.agent.deviceId}/messages`, headers: p.agent.auth });
    expect(own.body.messages.every((m: { read_at: string | null }) => m.read_at === read.data.read_at)).toBe(true);
  });

  it('a read right after a live delivery waits for the delivered batch: accepted, and "delivered" reaches the sender first', async () => {
    const p = await receiptPair(t);
    const owner = await ownerSocket(pool, t, p);
    const agent = await agentSocket(pool, t, p.agent);
    const m = await sendOver(owner, p.conversationId);
    await agent.next('message');
    agent.send('message_read', { conversation_id: p.conversationId, up_to_message_id: m.id });
    expect((await agent.next(isEvent('message_read_ack'))).data).toMatchObject({ recorded: true });
    await owner.next(isEvent('message_read'));
    const order = owner.received.filter((f) => f.event === 'message_delivered' || f.event === 'message_read').map((f) => f.event);
    expect(order).toEqual(['message_delivered', 'message_read']);
  });

  it('a mark only moves forward: an older or equal read is acknowledged, neither stored again nor forwarded', async () => {
    const p = await receiptPair(t);
    const owner = await ownerSocket(pool, t, p);
    const agent = await agentSocket(pool, t, p.agent);
    const [m1, m2, m3] = [await sendOver(owner, p.conversationId), await sendOver(owner, p.conversationId), await sendOver(owner, p.conversationId)];
    await deliveredFrames(owner, [m1.id, m2.id, m3.id]);
    const read = async (id: string) => {
      agent.send('message_read', { conversation_id: p.conversationId, up_to_message_id: id });
      return (await agent.next(isEvent('message_read_ack'))).data;
    };
    expect(await read(m2.id)).toMatchObject({ recorded: true });
    const first = await read(m1.id);
    expect(first).toMatchObject({ recorded: false, read_receipts_enabled: true });
    expect(first.read_at).not.toBeNull();
    expect(await read(m2.id)).toMatchObject({ recorded: false });
    expect(await read(m3.id)).toMatchObject({ recorded: true });
    // Exactly two reads were forwarded, in order.
    expect((await owner.next(isEvent('message_read'))).data.up_to_message_id).toBe(m2.id);
    expect((await owner.next(isEvent('message_read'))).data.up_to_message_id).toBe(m3.id);
    expect(owner.buffered(isEvent('message_read'))).toEqual([]);
    const h = await history(p);
    expect(h.map((m) => m.read_at !== null)).toEqual([true, true, true]);
    expect(await marksOf(t, p.conversationId)).toEqual([{ reader_device_id: p.agent.deviceId, up_to: expect.anything() }]);
  });

  it('refuses a read of a message the device never received (409), of another conversation (404), its own (404), or by a non-side (403; another tenant: 404)', async () => {
    const p = await receiptPair(t);
    const other = await receiptPair(t);
    const owner = await ownerSocket(pool, t, p);
    const m = await sendOver(owner, p.conversationId); // the agent is offline: never received
    const read = (auth: Record<string, string>, conversationId: string, id: string) =>
      t.request({ method: 'POST', url: `/api/v1/conversations/${conversationId}/read`, headers: auth, payload: { up_to_message_id: id } });

    const never = await read(p.agent.auth, p.conversationId, m.id);
    expect(never.status).toBe(409);
    expect(never.body.detail).toMatch(/not received/);

    // Over the socket: the same refusal as an error frame with the client_ref.
    const agent = await agentSocket(pool, t, p.agent);
    const otherOwner = await ownerSocket(pool, t, other);
    const foreign = await sendOver(otherOwner, other.conversationId);
    agent.send('message_read', { conversation_id: p.conversationId, up_to_message_id: foreign.id, client_ref: 'x' }); // another conversation's message
    expect((await agent.next(isEvent('error'))).data).toMatchObject({ status: 404, client_ref: 'x' });

    const mine = await sendOver(agent, p.conversationId);
    expect((await read(p.agent.auth, p.conversationId, mine.id)).status).toBe(404); // its own message
    expect((await read(p.agent.auth, p.conversationId, '00000000-0000-4000-8000-000000000000')).status).toBe(404);
    const stranger = await activeAgent(t, p.owner);
    expect((await read(stranger.auth, p.conversationId, m.id)).status).toBe(403); // not a side
    expect((await read(other.agent.auth, p.conversationId, m.id)).status).toBe(404); // another tenant's conversation
    expect((await read({}, p.conversationId, m.id)).status).toBe(401);
    expect((await t.request({ method: 'POST', url: `/api/v1/conversations/${p.conversationId}/read`, headers: p.agent.auth, payload: { up_to_message_id: 'nope' } })).status).toBe(400);
    // Owner callers must name their device.
    expect((await read(p.owner.auth, p.conversationId, mine.id)).status).toBe(400);
    expect(await marksOf(t, p.conversationId)).toEqual([]);
    expect(owner.buffered(isEvent('message_read'))).toEqual([]);

    // The owner, reading over REST as its device after a history fetch as that device: accepted.
    const h = await history(p, { 'x-device-id': p.od.deviceId });
    expect(h.find((x) => x.message_id === mine.id)?.delivered_at).not.toBeNull();
    const ok = await read({ ...p.owner.auth, 'x-device-id': p.od.deviceId }, p.conversationId, mine.id);
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ recorded: true, read_receipts_enabled: true });
    expect((await agent.next(isEvent('message_read'))).data).toMatchObject({ device_id: p.od.deviceId, up_to_message_id: mine.id });
  });

  it('read receipts off for the device: the read is acknowledged, nothing is stored or forwarded', async () => {
    const p = await receiptPair(t);
    const owner = await ownerSocket(pool, t, p);
    const agent = await agentSocket(pool, t, p.agent);
    const [m1, m2] = [await sendOver(owner, p.conversationId), await sendOver(owner, p.conversationId)];
    await deliveredFrames(owner, [m1.id, m2.id]);

    const off = await t.request({ method: 'PATCH', url: '/api/v1/devices/self/settings', headers: p.agent.auth, payload: { read_receipts_enabled: false } });
    expect(off.status).toBe(200);
    expect(off.body).toEqual({ device_id: p.agent.deviceId, read_receipts_enabled: false, read_receipts_effective: false, require_post_quantum: false });
    agent.send('message_read', { conversation_id: p.conversationId, up_to_message_id: m1.id });
    expect((await agent.next(isEvent('message_read_ack'))).data).toMatchObject({ recorded: false, read_receipts_enabled: false, read_at: null });
    expect(await marksOf(t, p.conversationId)).toEqual([]);
    expect((await history(p)).every((m) => m.read_at === null)).toBe(true);

    // Back on: the next read is the first one the owner hears of.
    expect((await t.request({ method: 'PATCH', url: `/api/v1/devices/${p.agent.deviceId}/settings`, headers: p.owner.auth, payload: { read_receipts_enabled: true } })).body.read_receipts_effective).toBe(true);
    agent.send('message_read', { conversation_id: p.conversationId, up_to_message_id: m2.id });
    expect((await agent.next(isEvent('message_read_ack'))).data).toMatchObject({ recorded: true });
    expect((await owner.next(isEvent('message_read'))).data.up_to_message_id).toBe(m2.id);
    expect(owner.buffered(isEvent('message_read'))).toEqual([]);
  });

  it('read receipts off for the tenant: nothing stored or forwarded for any device; delivered receipts still go out', async () => {
    const p = await receiptPair(t);
    const owner = await ownerSocket(pool, t, p);
    const agent = await agentSocket(pool, t, p.agent);
    const patch = (v: boolean | null) => t.request({ method: 'PATCH', url: '/api/v1/settings', headers: p.owner.auth, payload: { read_receipts_enabled: v } });
    const off = await patch(false);
    expect(off.status).toBe(200);
    expect(off.body.read_receipts_enabled).toBe(false);
    expect((await t.request({ method: 'GET', url: '/api/v1/devices/self/settings', headers: p.agent.auth })).body).toEqual({
      device_id: p.agent.deviceId,
      read_receipts_enabled: true,
      read_receipts_effective: false,
      require_post_quantum: false,
    });

    const m1 = await sendOver(owner, p.conversationId);
    await deliveredFrames(owner, [m1.id]);
    agent.send('message_read', { conversation_id: p.conversationId, up_to_message_id: m1.id });
    expect((await agent.next(isEvent('message_read_ack'))).data).toMatchObject({ recorded: false, read_receipts_enabled: false });
    // The owner's own device too.
    const m2 = await sendOver(agent, p.conversationId);
    await owner.next('message');
    owner.send('message_read', { conversation_id: p.conversationId, up_to_message_id: m2.id });
    expect((await owner.next(isEvent('message_read_ack'))).data).toMatchObject({ recorded: false, read_receipts_enabled: false });
    expect(await marksOf(t, p.conversationId)).toEqual([]);

    expect((await patch(null)).body.read_receipts_enabled).toBe(true); // reset to the default (on)
    agent.send('message_read', { conversation_id: p.conversationId, up_to_message_id: m1.id });
    expect((await agent.next(isEvent('message_read_ack'))).data).toMatchObject({ recorded: true });
    expect((await owner.next(isEvent('message_read'))).data.up_to_message_id).toBe(m1.id);
    expect(agent.buffered(isEvent('message_read'))).toEqual([]);
  });

  it('device settings routes: validation, auth, tenant scope, audit', async () => {
    const p = await receiptPair(t);
    const other = await receiptPair(t);
    const url = `/api/v1/devices/${p.agent.deviceId}/settings`;
    expect((await t.request({ method: 'GET', url, headers: p.owner.auth })).body).toEqual({ device_id: p.agent.deviceId, read_receipts_enabled: true, read_receipts_effective: true, require_post_quantum: false });
    expect((await t.request({ method: 'GET', url })).status).toBe(401);
    expect((await t.request({ method: 'GET', url, headers: p.agent.auth })).status).toBe(403); // owner route
    expect((await t.request({ method: 'GET', url, headers: other.owner.auth })).status).toBe(404); // another tenant's device
    expect((await t.request({ method: 'PATCH', url, headers: p.owner.auth, payload: {} })).status).toBe(400);
    expect((await t.request({ method: 'PATCH', url, headers: p.owner.auth, payload: { read_receipts_enabled: 'no' } })).status).toBe(400);
    const unknown = await t.request({ method: 'PATCH', url, headers: p.owner.auth, payload: { typing: false } });
    expect(unknown.status).toBe(400);
    expect((await t.request({ method: 'PATCH', url: '/api/v1/devices/self/settings', headers: p.owner.auth, payload: { read_receipts_enabled: false } })).status).toBe(403); // device route
    const od = await registerOwnerDevice(t, p.owner);
    const set = await t.request({ method: 'PATCH', url: `/api/v1/devices/${od.deviceId}/settings`, headers: p.owner.auth, payload: { read_receipts_enabled: false } });
    expect(set.body).toEqual({ device_id: od.deviceId, read_receipts_enabled: false, read_receipts_effective: false, require_post_quantum: false });
    const audit = await t.request({ method: 'GET', url: '/api/v1/audit/events?type=device.settings_updated', headers: p.owner.auth });
    expect(audit.body.events[0]).toMatchObject({ type: 'device.settings_updated', actor: p.owner.sub, subject: od.deviceId, data: { keys: ['read_receipts_enabled'] } });
    // A second agent of the tenant keeps its own setting.
    const a2 = await activeAgent(t, p.owner);
    expect((await t.request({ method: 'GET', url: '/api/v1/devices/self/settings', headers: a2.auth })).body.read_receipts_enabled).toBe(true);
  });
});
