/**
 * Held room messages end to end over real sockets (contract §3.8, §4.9; design §8.3, §8.5): the
 * recipient receives nothing while a message is held, receives the `room_message` after
 * approval and nothing after denial; a second decision answers 409; the held list never carries
 * ciphertext. The recipient's member timeline lists an approved message at its release, after
 * what it already read, once; a recipient removed from the room gets nothing (denied with the
 * removal, or dropped when the removal races the approval); an MLS ciphertext every recipient
 * was refused is dropped.
 */
import { randomUUID } from 'node:crypto';
import { and, eq, isNull } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { roomEnvelopes, roomMembers } from '../../src/db/schema/index.js';
import { withTenant } from '../../src/db/tenant.js';
import { activeAgent, newOwner, registerOwnerDevice, type Agent, type Owner, type OwnerDevice } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { wsAddress, WsPool, type WsClient } from '../../testing/ws-client.js';

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
  const timelineEntry = async (id: string, room = roomId) =>
    (await t.request({ method: 'GET', url: `/api/v1/rooms/${room}/messages`, headers: owner.auth })).body.messages.find((m: any) => m.room_message_id === id);
  /** A timeline page as `headers` reads it (`query` without the leading `?`). */
  const timeline = async (headers: Record<string, string>, query = '', room = roomId) => {
    const res = await t.request({ method: 'GET', url: `/api/v1/rooms/${room}/messages${query ? `?${query}` : ''}`, headers });
    expect(res.status).toBe(200);
    return res.body as { messages: any[]; next_cursor: string | null };
  };
  const ownerAs = () => ({ ...owner.auth, 'x-device-id': od.deviceId });
  /** A fresh strict room of the owner device, the sender and the recipient. */
  const strictRoom = async () => {
    const res = await t.request({ method: 'POST', url: '/api/v1/rooms', headers: owner.auth, payload: { name: 'strict', member_device_ids: [od.deviceId, sender.deviceId, recipient.deviceId], security_level: 'strict' } });
    expect(res.status).toBe(201);
    return res.body.room_id as string;
  };
  /** The stored envelope rows of a room message. */
  const envelopeRows = (roomMessageId: string) =>
    withTenant(t.app.parley.database.db, owner.tenantId, (tx) => tx.select().from(roomEnvelopes).where(eq(roomEnvelopes.roomMessageId, roomMessageId)).orderBy(roomEnvelopes.recipientDeviceId));
  const carrierOf = async (roomMessageId: string) =>
    (await withTenant(t.app.parley.database.db, owner.tenantId, (tx) => tx.select().from(roomEnvelopes).where(and(eq(roomEnvelopes.roomMessageId, roomMessageId), isNull(roomEnvelopes.recipientDeviceId)))))[0]!;

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
    expect((await timelineEntry(ack.room_message_id)).deliveries).toMatchObject([{ recipient_device_id: recipient.deviceId, outcome: 'delivered' }]);
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
    expect((await timelineEntry(ack.room_message_id)).deliveries).toEqual([{ recipient_device_id: recipient.deviceId, outcome: 'blocked', delivered_at: null, read_at: null }]);
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

  it("lists an approved message in the recipient's member timeline at its release: after what it read, once", async () => {
    const wsRecipient = await connect(recipient);
    const wsSender = await connect(sender);
    const ack = await sendHeld(wsSender, [{ recipient_device_id: recipient.deviceId, header_blob: b64('hdr'), ciphertext: b64('late') }]);
    const heldId = ack.deliveries[0].held_message_id;
    // The recipient reads a later message (owner-sent: not held) and pages up to it.
    const later = await t.request({ method: 'POST', url: `/api/v1/rooms/${roomId}/messages`, headers: ownerAs(), payload: { envelopes: [{ recipient_device_id: recipient.deviceId, header_blob: b64('h'), ciphertext: b64('meanwhile') }] } });
    expect(later.status).toBe(201);
    const live = (await wsRecipient.next('room_message')).data;
    expect(live).toMatchObject({ room_message_id: later.body.room_message_id, cursor: later.body.cursor });
    const read = await timeline(recipient.auth);
    expect(read.messages.map((m) => m.room_message_id)).not.toContain(ack.room_message_id);
    expect(read.next_cursor).toBe(live.cursor);
    expect(Number(ack.cursor)).toBeLessThan(Number(live.cursor));

    expect((await decide(heldId, 'approve')).status).toBe(200);
    const released = (await wsRecipient.next('room_message')).data;
    expect(released.room_message_id).toBe(ack.room_message_id);
    expect(Number(released.cursor)).toBeGreaterThan(Number(live.cursor));
    const caughtUp = await timeline(recipient.auth, `since=${read.next_cursor}`);
    expect(caughtUp.messages).toHaveLength(1);
    expect(caughtUp.messages[0]).toMatchObject({
      room_message_id: ack.room_message_id,
      sender_device_id: sender.deviceId,
      cursor: released.cursor,
      deliveries: [{ recipient_device_id: recipient.deviceId, outcome: 'delivered' }],
      envelope: { header_blob: b64('hdr'), ciphertext: b64('late') },
    });
    expect(caughtUp.next_cursor).toBe(released.cursor);
    expect(await timeline(recipient.auth, `since=${caughtUp.next_cursor}`)).toEqual({ messages: [], next_cursor: null });
    // Whole views: the recipient sees it once, after the later message; the sender at its send;
    // the owner view keeps send order (seq cursors).
    const ids = [ack.room_message_id, later.body.room_message_id];
    const order = (v: { messages: any[] }) => v.messages.map((m) => m.room_message_id).filter((id: string) => ids.includes(id));
    expect(order(await timeline(recipient.auth, 'since=0&limit=200'))).toEqual([later.body.room_message_id, ack.room_message_id]);
    const senderView = await timeline(sender.auth, 'since=0&limit=200');
    expect(senderView.messages.filter((m) => m.room_message_id === ack.room_message_id).map((m) => m.cursor)).toEqual([ack.cursor]);
    expect(order(await timeline(owner.auth, 'since=0&limit=200'))).toEqual(ids);
    // A timestamp `since` compares release times in the member view.
    const mid = new Date(Date.parse(released.timestamp) - 1).toISOString();
    expect((await timeline(recipient.auth, `since=${encodeURIComponent(mid)}`)).messages.map((m) => m.room_message_id)).toContain(ack.room_message_id);
    // Owners read a device's member view with view=member and X-Device-Id; devices cannot read the owner view.
    expect((await timeline(ownerAs(), 'view=member&limit=200')).messages.every((m) => m.sender_device_id === od.deviceId || m.deliveries.some((d: any) => d.recipient_device_id === od.deviceId))).toBe(true);
    expect((await t.request({ method: 'GET', url: `/api/v1/rooms/${roomId}/messages?view=member`, headers: owner.auth })).status).toBe(400);
    expect((await t.request({ method: 'GET', url: `/api/v1/rooms/${roomId}/messages?view=owner`, headers: recipient.auth })).status).toBe(403);
    expect((await t.request({ method: 'GET', url: `/api/v1/rooms/${roomId}/messages?view=all`, headers: owner.auth })).status).toBe(400);
  });

  it('denies what is held for a member when it is removed: a later approval answers 409, nothing is delivered', async () => {
    const room = await strictRoom();
    const wsRecipient = await connect(recipient);
    const wsSender = await connect(sender);
    wsSender.send('room_message', { room_id: room, envelopes: [{ recipient_device_id: recipient.deviceId, header_blob: b64('hdr'), ciphertext: b64('for the leaver') }] });
    const ack = (await wsSender.next('room_message_ack')).data;
    const heldId = ack.deliveries[0].held_message_id;
    expect((await t.request({ method: 'DELETE', url: `/api/v1/rooms/${room}/members/${recipient.deviceId}`, headers: owner.auth })).status).toBe(204);
    const approve = await decide(heldId, 'approve');
    expect(approve.status).toBe(409);
    expect(approve.body.detail).toContain('denied');
    expect((await heldList()).map((h) => h.held_message_id)).not.toContain(heldId);
    expect((await t.request({ method: 'GET', url: '/api/v1/policies/held-messages?status=denied', headers: owner.auth })).body.held_messages.map((h: any) => h.held_message_id)).toContain(heldId);
    expect((await timelineEntry(ack.room_message_id, room)).deliveries).toEqual([{ recipient_device_id: recipient.deviceId, outcome: 'blocked', delivered_at: null, read_at: null }]);
    expect((await envelopeRows(ack.room_message_id))[0]).toMatchObject({ outcome: 'blocked', ciphertext: null, headerBlob: null, releaseSeq: null });
    await expectNothing(wsRecipient);
  });

  it('drops an approved envelope whose recipient left between the approval and its release', async () => {
    const room = await strictRoom();
    const wsRecipient = await connect(recipient);
    const wsSender = await connect(sender);
    wsSender.send('room_message', { room_id: room, envelopes: [{ recipient_device_id: recipient.deviceId, header_blob: b64('hdr'), ciphertext: b64('too late') }] });
    const ack = (await wsSender.next('room_message_ack')).data;
    // The membership row goes without the removal's denial, as when the removal commits after the approval.
    await withTenant(t.app.parley.database.db, owner.tenantId, (tx) => tx.delete(roomMembers).where(and(eq(roomMembers.roomId, room), eq(roomMembers.deviceId, recipient.deviceId))));
    expect((await decide(ack.deliveries[0].held_message_id, 'approve')).body.status).toBe('approved');
    await expectNothing(wsRecipient);
    expect((await envelopeRows(ack.room_message_id))[0]).toMatchObject({ outcome: 'blocked', ciphertext: null, releaseSeq: null });
  });

  it('drops the MLS ciphertext once every recipient was refused (denied, removed), keeps it while one may read it', async () => {
    const room = await strictRoom();
    const wsOwner = await pool.connect(wsAddress(t.wsUrl, { token: owner.token, device_id: od.deviceId }));
    const wsSender = await connect(sender);
    const sendMls = async (text: string) => {
      wsSender.send('room_message', { room_id: room, envelopes: [{ recipient_device_id: '*', header_blob: b64('mls-hdr'), ciphertext: b64(text) }] });
      const ack = (await wsSender.next('room_message_ack')).data;
      return { id: ack.room_message_id as string, held: Object.fromEntries(ack.deliveries.map((d: any) => [d.recipient_device_id, d.held_message_id])) };
    };
    const kept = await sendMls('one reader');
    const dropped = await sendMls('no reader');
    expect((await decide(kept.held[od.deviceId], 'approve')).status).toBe(200);
    expect((await wsOwner.next('room_message')).data).toMatchObject({ room_message_id: kept.id, ciphertext: b64('one reader') });
    expect((await decide(dropped.held[od.deviceId], 'deny')).status).toBe(200);
    expect((await carrierOf(dropped.id)).ciphertext).not.toBeNull(); // the recipient's is still held
    expect((await t.request({ method: 'DELETE', url: `/api/v1/rooms/${room}/members/${recipient.deviceId}`, headers: owner.auth })).status).toBe(204);
    expect(await carrierOf(dropped.id)).toMatchObject({ ciphertext: null, headerBlob: null });
    expect((await carrierOf(kept.id)).ciphertext).toEqual(Buffer.from('one reader'));
    expect((await decide(kept.held[recipient.deviceId], 'approve')).status).toBe(409);
  });

  it('an unknown held message is 404, a malformed id 400, no auth 401', async () => {
    expect((await decide(randomUUID(), 'approve')).status).toBe(404);
    expect((await t.request({ method: 'POST', url: '/api/v1/policies/held-messages/xyz/approve', headers: owner.auth })).status).toBe(400);
    expect((await t.request({ method: 'POST', url: `/api/v1/policies/held-messages/${randomUUID()}/deny` })).status).toBe(401);
  });
});
