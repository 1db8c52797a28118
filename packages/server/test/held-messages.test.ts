/**
 * Held room messages end to end over real sockets (SPEC §3.8, §4.9; DESIGN §8.3, §8.5): the
 * recipient receives nothing while a message is held, receives the `room_message` after
 * approval and nothing after denial; a second decision answers 409; the held list never carries
 * ciphertext.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { activeAgent, newOwner, registerOwnerDevice, type Agent, type Owner, type OwnerDevice } from './flows.js';
import { startApp, type TestApp } from './harness.js';
import { wsAddress, WsPool, type WsClient } from './ws-client.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('held room messages', () => {
  let t: TestApp;
  let owner: Owner;
  let od: OwnerDevice;
  let sender: Agent;
  let recipient: Agent;
  let other: Owner;
  let roomId: string;
  const pool = new WsPool();

  beforeAll(async () => {
    t = await startApp({ listen: true, env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000' } });
    owner = await newOwner(t);
    od = await registerOwnerDevice(t, owner);
    sender = await activeAgent(t, owner);
    recipient = await activeAgent(t, owner);
    other = await newOwner(t, 'Other');
    const room = await t.request({
      method: 'POST',
      url: '/api/v1/rooms',
      headers: owner.auth,
      payload: { name: 'strict', member_device_ids: [od.deviceId, sender.deviceId, recipient.deviceId], security_level: 'strict' },
    });
    expect(room.status).toBe(201);
    roomId = room.body.room_id;
  });
  afterEach(() => pool.closeAll());
  afterAll(() => t.close());

  const connect = (a: Agent) => pool.connect(wsAddress(t.wsUrl, { token: a.jwt }));
  const decide = (id: string, decision: 'approve' | 'deny', who: Owner = owner) =>
    t.request({ method: 'POST', url: `/api/v1/policies/held-messages/${id}/${decision}`, headers: who.auth });
  const heldList = async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/policies/held-messages', headers: owner.auth });
    expect(res.status).toBe(200);
    return res.body.held_messages as Record<string, unknown>[];
  };
  /** The sender's socket sends a room message; answers its ack data. */
  const sendHeld = async (ws: WsClient, envelopes: unknown[]) => {
    ws.send('room_message', { room_id: roomId, message_type: 'artifact', priority: 'high', envelopes });
    return (await ws.next('room_message_ack')).data;
  };
  const expectNothing = async (ws: WsClient) => {
    await ws.roundTrip();
    expect(ws.buffered('room_message')).toEqual([]);
  };
  const timelineEntry = async (id: string) =>
    (await t.request({ method: 'GET', url: `/api/v1/rooms/${roomId}/messages`, headers: owner.auth })).body.messages.find((m: any) => m.room_message_id === id);

  it('holds, lists without ciphertext, and delivers the room_message after approval (409 on a second decision)', async () => {
    const wsRecipient = await connect(recipient);
    const wsSender = await connect(sender);
    const ack = await sendHeld(wsSender, [{ recipient_device_id: recipient.deviceId, header_blob: b64('hdr'), ciphertext: b64('top secret') }]);
    const [delivery] = ack.deliveries;
    expect(delivery).toMatchObject({ recipient_device_id: recipient.deviceId, outcome: 'held', held_message_id: expect.any(String) });
    await expectNothing(wsRecipient);

    const listed = (await heldList()).find((h) => h.held_message_id === delivery.held_message_id)!;
    expect(listed).toMatchObject({ room_id: roomId, sender_device_id: sender.deviceId, recipient_device_id: recipient.deviceId, message_type: 'artifact', priority: 'high', status: 'held' });
    expect(Object.keys(listed)).not.toContain('ciphertext');
    expect(JSON.stringify(listed)).not.toContain(b64('top secret'));
    expect((await decide(delivery.held_message_id, 'approve', other)).status).toBe(404);

    const approved = await decide(delivery.held_message_id, 'approve');
    expect(approved.status).toBe(200);
    expect(approved.body.status).toBe('approved');
    const got = await wsRecipient.next('room_message');
    expect(got.data).toMatchObject({
      room_id: roomId,
      room_message_id: ack.room_message_id,
      sender_device_id: sender.deviceId,
      header: b64('hdr'),
      ciphertext: b64('top secret'),
      message_type: 'artifact',
      priority: 'high',
    });
    expect((await timelineEntry(ack.room_message_id)).deliveries).toEqual([{ recipient_device_id: recipient.deviceId, outcome: 'delivered' }]);
    expect((await decide(delivery.held_message_id, 'approve')).status).toBe(409);
    expect((await decide(delivery.held_message_id, 'deny')).status).toBe(409);
    await expectNothing(wsRecipient);
  });

  it('delivers nothing after denial and drops the ciphertext (409 on a second decision)', async () => {
    const wsRecipient = await connect(recipient);
    const wsSender = await connect(sender);
    const ack = await sendHeld(wsSender, [{ recipient_device_id: recipient.deviceId, header_blob: b64('hdr'), ciphertext: b64('nope') }]);
    const heldId = ack.deliveries[0].held_message_id;
    const denied = await decide(heldId, 'deny');
    expect(denied.status).toBe(200);
    expect(denied.body.status).toBe('denied');
    await expectNothing(wsRecipient);
    expect((await decide(heldId, 'deny')).status).toBe(409);
    expect((await decide(heldId, 'approve')).status).toBe(409);
    await expectNothing(wsRecipient);
    expect((await timelineEntry(ack.room_message_id)).deliveries).toEqual([{ recipient_device_id: recipient.deviceId, outcome: 'blocked' }]);
    const recipientView = await t.request({ method: 'GET', url: `/api/v1/rooms/${roomId}/messages`, headers: recipient.auth });
    expect(recipientView.body.messages.map((m: any) => m.room_message_id)).not.toContain(ack.room_message_id);
    expect((await heldList()).map((h) => h.held_message_id)).not.toContain(heldId);
  });

  it('releases an MLS envelope to the approved recipient only', async () => {
    const wsRecipient = await connect(recipient);
    const wsOwner = await pool.connect(wsAddress(t.wsUrl, { token: owner.token, device_id: od.deviceId }));
    const wsSender = await connect(sender);
    const ack = await sendHeld(wsSender, [{ recipient_device_id: '*', header_blob: b64('mls-hdr'), ciphertext: b64('group') }]);
    const held = Object.fromEntries(ack.deliveries.map((d: any) => [d.recipient_device_id, d]));
    expect(held[recipient.deviceId].outcome).toBe('held');
    expect(held[od.deviceId].outcome).toBe('held');
    await expectNothing(wsRecipient);
    await expectNothing(wsOwner);

    expect((await decide(held[recipient.deviceId].held_message_id, 'approve')).status).toBe(200);
    expect((await wsRecipient.next('room_message')).data).toMatchObject({ room_message_id: ack.room_message_id, header: b64('mls-hdr'), ciphertext: b64('group') });
    expect((await decide(held[od.deviceId].held_message_id, 'deny')).status).toBe(200);
    await expectNothing(wsOwner);
    const view = await t.request({ method: 'GET', url: `/api/v1/rooms/${roomId}/messages`, headers: recipient.auth });
    expect(view.body.messages.find((m: any) => m.room_message_id === ack.room_message_id).envelope).toEqual({ header_blob: b64('mls-hdr'), ciphertext: b64('group') });
  });

  it('an unknown held message is 404, a malformed id 400, no auth 401', async () => {
    expect((await decide(randomUUID(), 'approve')).status).toBe(404);
    expect((await t.request({ method: 'POST', url: '/api/v1/policies/held-messages/xyz/approve', headers: owner.auth })).status).toBe(400);
    expect((await t.request({ method: 'POST', url: `/api/v1/policies/held-messages/${randomUUID()}/deny` })).status).toBe(401);
  });
});
