/**
 * Delivery and read receipts in rooms (design §8.5; docs/decisions.md "Delivery
 * and read receipts"): per recipient for pairwise envelopes, per member for an MLS message (one
 * `*` envelope), delivered by a live frame or by a member-timeline page, read marks by release
 * position forwarded to each sender with its own ids, timelines carrying every recipient's
 * delivered_at / read_at, a held envelope delivered only once released, and the refusals.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { activeAgent, newOwner, registerOwnerDevice, type Agent, type Owner, type OwnerDevice } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { b64, marksOf } from '../../testing/receipt-flows.js';
import { wsAddress, WsPool, type Frame, type WsClient } from '../../testing/ws-client.js';

const isEvent = (event: string) => (f: Frame) => f.event === event;
const envelope = (recipient: string, text: string) => ({ recipient_device_id: recipient, header_blob: b64(`hdr:${recipient}`), ciphertext: b64(text) });

interface Delivery {
  recipient_device_id: string;
  outcome: string;
  delivered_at: string | null;
  read_at: string | null;
}

describe('delivery and read receipts (rooms)', () => {
  let t: TestApp;
  let owner: Owner;
  let od: OwnerDevice;
  let a1: Agent;
  let a2: Agent;
  let a3: Agent;
  const pool = new WsPool();

  beforeAll(async () => {
    t = await startApp({ listen: true, env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000' } });
    owner = await newOwner(t);
    od = await registerOwnerDevice(t, owner);
    [a1, a2, a3] = [await activeAgent(t, owner), await activeAgent(t, owner), await activeAgent(t, owner)];
  });
  afterEach(() => pool.closeAll());
  afterAll(() => t?.close());

  const api = (method: 'GET' | 'POST' | 'PATCH', url: string, headers: Record<string, string> = owner.auth, payload?: unknown) =>
    t.request({ method, url: `/api/v1${url}`, headers, ...(payload !== undefined ? { payload: payload as object } : {}) });
  const newRoom = async (members: string[], extra: Record<string, unknown> = {}) => {
    const res = await api('POST', '/rooms', owner.auth, { name: 'ops', member_device_ids: members, ...extra });
    expect(res.status).toBe(201);
    return res.body.room_id as string;
  };
  const socket = (a: Agent) => pool.connect(wsAddress(t.wsUrl, { token: a.jwt }));
  let refs = 0;
  const send = async (ws: WsClient, roomId: string, envelopes: unknown[]) => {
    const ref = `room-${++refs}`;
    ws.send('room_message', { room_id: roomId, envelopes, client_ref: ref });
    const ack = await ws.next((f) => (f.event === 'room_message_ack' || f.event === 'error') && f.data.client_ref === ref);
    expect(ack.event, JSON.stringify(ack.data)).toBe('room_message_ack');
    return ack.data.room_message_id as string;
  };
  const read = async (ws: WsClient, roomId: string, upTo: string) => {
    ws.send('room_message_read', { room_id: roomId, up_to_room_message_id: upTo, client_ref: `read-${upTo}` });
    return ws.next((f) => (f.event === 'room_message_read_ack' || f.event === 'error') && f.data.client_ref === `read-${upTo}`);
  };
  /** The owner view's deliveries of one message, by recipient. */
  const deliveriesOf = async (roomId: string, id: string): Promise<Map<string, Delivery>> => {
    const res = await api('GET', `/rooms/${roomId}/messages`);
    expect(res.status).toBe(200);
    const entry = res.body.messages.find((m: { room_message_id: string }) => m.room_message_id === id);
    return new Map((entry.deliveries as Delivery[]).map((d) => [d.recipient_device_id, d]));
  };

  it('pairwise envelopes: delivered per recipient (live frame; member-timeline page), read per recipient, on the owner timeline too', async () => {
    const roomId = await newRoom([a1.deviceId, a2.deviceId, a3.deviceId]);
    const ws1 = await socket(a1);
    const ws2 = await socket(a2); // a3 stays offline
    const m1 = await send(ws1, roomId, [envelope(a2.deviceId, 'one'), envelope(a3.deviceId, 'one')]);
    await ws2.next('room_message');

    const live = await ws1.next(isEvent('room_message_delivered'));
    expect(live.data).toMatchObject({ room_id: roomId, device_id: a2.deviceId, room_message_ids: [m1] });
    let d = await deliveriesOf(roomId, m1);
    expect(d.get(a2.deviceId)).toMatchObject({ outcome: 'delivered', delivered_at: live.data.delivered_at, read_at: null });
    expect(d.get(a3.deviceId)).toMatchObject({ outcome: 'delivered', delivered_at: null, read_at: null });

    // a3 catches up with its member timeline: that page delivers to it.
    const page = await api('GET', `/rooms/${roomId}/messages`, a3.auth);
    expect(page.body.messages.map((m: { room_message_id: string }) => m.room_message_id)).toEqual([m1]);
    const fetched = await ws1.next(isEvent('room_message_delivered'));
    expect(fetched.data).toMatchObject({ device_id: a3.deviceId, room_message_ids: [m1] });

    // a2 reads: only a2's read time is set, and the sender hears of it.
    const ack = await read(ws2, roomId, m1);
    expect(ack.data).toMatchObject({ room_id: roomId, up_to_room_message_id: m1, recorded: true, read_receipts_enabled: true });
    const readFrame = await ws1.next(isEvent('room_message_read'));
    expect(readFrame.data).toEqual({ room_id: roomId, device_id: a2.deviceId, room_message_ids: [m1], up_to_room_message_id: m1, read_at: ack.data.read_at });
    d = await deliveriesOf(roomId, m1);
    expect(d.get(a2.deviceId)!.read_at).toBe(ack.data.read_at);
    expect(d.get(a3.deviceId)).toMatchObject({ read_at: null });
    expect(d.get(a3.deviceId)!.delivered_at).toBe(fetched.data.delivered_at);
    // The sender's member view shows its own message's deliveries with their times as well.
    const mine = await api('GET', `/rooms/${roomId}/messages`, a1.auth);
    expect(mine.body.messages[0].deliveries.find((x: Delivery) => x.recipient_device_id === a2.deviceId).read_at).toBe(ack.data.read_at);
  });

  it('MLS ("*"): one envelope, receipts per member', async () => {
    const roomId = await newRoom([od.deviceId, a1.deviceId, a2.deviceId]);
    const ws1 = await socket(a1);
    const ws2 = await socket(a2);
    const ownerWs = await pool.connect(wsAddress(t.wsUrl, { token: owner.token, device_id: od.deviceId }));
    const m = await send(ws1, roomId, [{ recipient_device_id: '*', header_blob: b64('mls'), ciphertext: b64('group') }]);
    await ws2.next('room_message');
    await ownerWs.next('room_message');
    // One frame per member (the same batch or not).
    const frames = [await ws1.next(isEvent('room_message_delivered')), await ws1.next(isEvent('room_message_delivered'))];
    expect(frames.map((f) => f.data.device_id).sort()).toEqual([a2.deviceId, od.deviceId].sort());
    for (const f of frames) expect(f.data.room_message_ids).toEqual([m]);

    // Only the owner device reads (over REST, as its device).
    const rest = await api('POST', `/rooms/${roomId}/read`, { ...owner.auth, 'x-device-id': od.deviceId }, { up_to_room_message_id: m });
    expect(rest.status).toBe(200);
    expect(rest.body).toMatchObject({ recorded: true });
    expect((await ws1.next(isEvent('room_message_read'))).data).toMatchObject({ device_id: od.deviceId, room_message_ids: [m] });
    const d = await deliveriesOf(roomId, m);
    expect(d.get(od.deviceId)!.read_at).toBe(rest.body.read_at);
    expect(d.get(a2.deviceId)).toMatchObject({ read_at: null });
    expect(d.get(a2.deviceId)!.delivered_at).not.toBeNull();
  });

  it('one read covering two senders: each sender gets its own ids, in release order; the mark is the reader position', async () => {
    const roomId = await newRoom([a1.deviceId, a2.deviceId, a3.deviceId]);
    const [ws1, ws2, ws3] = [await socket(a1), await socket(a2), await socket(a3)];
    const x1 = await send(ws1, roomId, [envelope(a3.deviceId, 'x1')]);
    const y1 = await send(ws2, roomId, [envelope(a3.deviceId, 'y1')]);
    const x2 = await send(ws1, roomId, [envelope(a3.deviceId, 'x2')]);
    for (let i = 0; i < 3; i++) await ws3.next('room_message');
    expect((await read(ws3, roomId, x2)).data).toMatchObject({ recorded: true });
    expect((await ws1.next(isEvent('room_message_read'))).data.room_message_ids).toEqual([x1, x2]);
    expect((await ws2.next(isEvent('room_message_read'))).data.room_message_ids).toEqual([y1]);
    // Reading an earlier one again changes nothing and forwards nothing.
    expect((await read(ws3, roomId, y1)).data).toMatchObject({ recorded: false });
    const y2 = await send(ws2, roomId, [envelope(a3.deviceId, 'y2')]);
    await ws3.next('room_message');
    await read(ws3, roomId, y2);
    expect((await ws2.next(isEvent('room_message_read'))).data.room_message_ids).toEqual([y2]);
    expect(ws1.buffered(isEvent('room_message_read'))).toEqual([]);
    expect((await marksOf(t, roomId)).map((m) => m.reader_device_id)).toEqual([a3.deviceId]);
  });

  it('refusals: another room (404), own message (404), not received (409), not released (a held envelope: 404); off: nothing stored', async () => {
    const roomId = await newRoom([a1.deviceId, a2.deviceId]);
    const otherRoom = await newRoom([a1.deviceId, a2.deviceId]);
    const ws1 = await socket(a1);
    const m = await send(ws1, roomId, [envelope(a2.deviceId, 'never seen')]); // a2 offline
    const rest = (who: Agent, room: string, id: string) => api('POST', `/rooms/${room}/read`, who.auth, { up_to_room_message_id: id });
    expect((await rest(a2, roomId, m)).status).toBe(409);
    expect((await rest(a2, otherRoom, m)).status).toBe(404);
    expect((await rest(a1, roomId, m)).status).toBe(404);
    expect((await rest(a3, roomId, m)).status).toBe(404);
    expect(await marksOf(t, roomId)).toEqual([]);

    // A held envelope is not released to its recipient: no receipt of any kind before approval.
    const strict = await newRoom([a1.deviceId, a2.deviceId], { security_level: 'strict' });
    const ws2 = await socket(a2);
    const held = await send(ws1, strict, [envelope(a2.deviceId, 'held')]);
    expect((await read(ws2, strict, held)).data).toMatchObject({ status: 404 });
    const list = await api('GET', '/policies/held-messages');
    const h = list.body.held_messages.find((x: { room_id: string }) => x.room_id === strict);
    expect((await api('POST', `/policies/held-messages/${h.held_message_id}/approve`)).status).toBe(200);
    await ws2.next('room_message');
    expect((await ws1.next(isEvent('room_message_delivered'))).data).toMatchObject({ room_id: strict, device_id: a2.deviceId, room_message_ids: [held] });

    // Read receipts off for a2: acknowledged, nothing stored, nothing forwarded.
    expect((await api('PATCH', `/devices/${a2.deviceId}/settings`, owner.auth, { read_receipts_enabled: false })).status).toBe(200);
    expect((await read(ws2, strict, held)).data).toMatchObject({ recorded: false, read_receipts_enabled: false, read_at: null });
    expect(await marksOf(t, strict)).toEqual([]);
    expect((await api('PATCH', `/devices/${a2.deviceId}/settings`, owner.auth, { read_receipts_enabled: true })).status).toBe(200);
    expect((await read(ws2, strict, held)).data).toMatchObject({ recorded: true });
    expect((await ws1.next(isEvent('room_message_read'))).data.room_message_ids).toEqual([held]);
    expect(ws1.buffered(isEvent('room_message_read'))).toEqual([]);
  });
});
