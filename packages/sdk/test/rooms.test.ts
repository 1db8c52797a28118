/**
 * Rooms in the SDK (contract §2.5, §4.6; design §8.5): `SecureMessenger.seal` + room envelopes in
 * memory, then `RoomMessenger` against a real server: an owner creates a room with two agents, an
 * agent's room message is encrypted once per recipient and both other members decrypt it, the
 * database holds no plaintext, an agent→agent block policy yields `blocked` for the agent and
 * `delivered` for the owner, catch-up after a restart (a held message approved while the
 * recipient was offline included; an owner device's too), and the realtime client's `sendRoom`
 * error path.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { scanForPlaintext } from '../../../demo/db-scan.js';
import { startApp, type TestApp } from '@parley/server/testing';
import { activate, enroll } from '../src/client/enrollment.js';
import { ParleyClient } from '../src/client/rest.js';
import type { Room } from '@parley/protocol';
import { DeviceIdentity } from '../src/crypto/keys.js';
import type { PeerDevice } from '../src/crypto/session.js';
import { nodeWebSocket } from '../src/node/ws.js';
import { RealtimeClient } from '../src/realtime/client.js';
import { RealtimeError, type PolicyAlertEvent } from '../src/realtime/types.js';
import { SecureMessenger } from '../src/secure/messenger.js';
import { restRoomTransport, RoomMessenger } from '../src/secure/rooms.js';
import type { SecureMessage, SecureMessengerError } from '../src/secure/types.js';
import { MemorySessionStore, type SessionStore } from '../src/storage.js';
import { sleep, waitFor } from './wait.js';

const text = (m: SecureMessage) => (m.content?.type === 'text' ? m.content.payload.text : `<${m.content?.type}>`);
const peerOf = (id: DeviceIdentity): PeerDevice => ({ device_id: id.deviceId!, ...id.publicKeys });

describe('SecureMessenger.seal and room envelopes (in memory)', () => {
  it('one plaintext sealed for two peers, each decrypts it in its pairwise session, in order, once', async () => {
    const [a, b, c] = ['a', 'b', 'c'].map((n) => DeviceIdentity.generate().withDeviceId(`00000000-0000-4000-8000-00000000000${n === 'a' ? 1 : n === 'b' ? 2 : 3}`));
    const open = (id: DeviceIdentity) => SecureMessenger.open({ identity: id, store: new MemorySessionStore(), mls: false });
    const [ma, mb, mc] = await Promise.all([open(a!), open(b!), open(c!)]);
    await ma.addConversation('conv-ab', peerOf(b!));
    await ma.addConversation('conv-ac', peerOf(c!));
    await mb.addConversation('conv-ab', peerOf(a!));
    await mc.addConversation('conv-ac', peerOf(a!));
    const got: SecureMessage[] = [];
    mb.on('message', (m) => void got.push(m));
    mc.on('message', (m) => void got.push(m));

    const plaintexts = ['first', 'second'].map((s) => new TextEncoder().encode(s));
    const sealed = [];
    for (const p of plaintexts) sealed.push(await ma.seal(['conv-ab', 'conv-ac'], p));
    expect(sealed[0]!.map((w) => w.conversation_id)).toEqual(['conv-ab', 'conv-ac']);
    expect(sealed[0]!.every((w) => w.protocol === 'x3dh-dr')).toBe(true);
    expect(sealed[0]![0]!.ciphertext).not.toBe(sealed[0]![1]!.ciphertext);

    for (const [i, s] of sealed.entries()) {
      for (const [j, m] of [mb, mc].entries()) {
        const w = s[j]!;
        const msg = { message_id: `rm-${i}`, conversation_id: w.conversation_id, sender_device_id: a!.deviceId!, header_blob: w.header_blob, ciphertext: w.ciphertext, timestamp: new Date().toISOString(), message_type: 'text', priority: 'normal', cursor: String(i + 1), room_id: 'room-1' };
        await m.receive(msg);
        await m.receive(msg); // a duplicate is dropped
      }
    }
    expect(got.map((m) => [m.conversation_id, new TextDecoder().decode(m.plaintext), m.room_id])).toEqual([
      ['conv-ab', 'first', 'room-1'],
      ['conv-ac', 'first', 'room-1'],
      ['conv-ab', 'second', 'room-1'],
      ['conv-ac', 'second', 'room-1'],
    ]);
    // Room cursors stay out of the device-wide resume window, but count for their conversation.
    expect(mb.resumeCursor()).toBe('0');
    expect(mb.resumeCursor('conv-ab')).toBe('1');
    await expect(ma.seal(['conv-ab', 'nope'], plaintexts[0]!)).rejects.toMatchObject({ code: 'unknown_conversation' });
  });

  it('addRoom takes member keys from the room, else from the caller; a member without keys is refused', async () => {
    const [a, b, c] = [1, 2, 3].map((i) => DeviceIdentity.generate().withDeviceId(`00000000-0000-4000-8000-00000000001${i}`));
    const store = new MemorySessionStore();
    const messenger = await SecureMessenger.open({ identity: a!, store, mls: false });
    const rooms = await RoomMessenger.open({ messenger, store });
    const room = {
      room_id: 'room-1',
      conversation_id: 'timeline-1',
      name: 'r',
      members: [
        { device_id: a!.deviceId!, kind: 'agent' as const },
        { device_id: b!.deviceId!, kind: 'agent' as const, ...b!.publicKeys },
        { device_id: c!.deviceId!, kind: 'owner' as const },
      ],
      conversations: [
        { conversation_id: 'ab', device_ids: [a!.deviceId!, b!.deviceId!] },
        { conversation_id: 'ac', device_ids: [a!.deviceId!, c!.deviceId!] },
        { conversation_id: 'bc', device_ids: [b!.deviceId!, c!.deviceId!] },
      ],
    };
    await expect(rooms.addRoom(room)).rejects.toMatchObject({ code: 'unknown_conversation' });
    expect([...rooms.peers('room-1')]).toEqual([[b!.deviceId!, 'ab']]);
    await rooms.addRoom(room, [peerOf(c!)]);
    expect(Object.fromEntries(rooms.peers('room-1'))).toEqual({ [b!.deviceId!]: 'ab', [c!.deviceId!]: 'ac' });
    expect(messenger.peer('ac')).toEqual(peerOf(c!));
    // Saved: a reopened room layer knows the room (and what to catch up).
    const reopened = await RoomMessenger.open({ messenger, store });
    expect(Object.fromEntries(reopened.peers('room-1'))).toEqual({ [b!.deviceId!]: 'ab', [c!.deviceId!]: 'ac' });
    await expect(rooms.sendText('room-1', 'x')).rejects.toMatchObject({ code: 'no_transport' });
  });
});

interface Member {
  identity: DeviceIdentity;
  client: ParleyClient;
  store: SessionStore;
  messenger: SecureMessenger;
  rooms: RoomMessenger;
  rt: RealtimeClient;
  received: SecureMessage[];
  errors: SecureMessengerError[];
}

describe('RoomMessenger against a real server', () => {
  let t: TestApp;
  const cleanups: (() => unknown)[] = [];

  beforeAll(async () => {
    t = await startApp({ listen: true, env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000' } });
  });
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  afterAll(() => t?.close());

  let n = 0;
  async function world() {
    const ownerJwt = await t.ownerToken(`rooms-${++n}-${Date.now()}@example.com`);
    const owner = new ParleyClient({ baseUrl: t.baseUrl, ownerToken: ownerJwt });
    const tenant = await owner.createTenant({ name: `Rooms ${n}` });
    const ownerKeys = DeviceIdentity.generate();
    const od = await owner.registerOwnerDevice({ ...ownerKeys.publicKeys, name: 'laptop' });
    owner.setOwnerDeviceId(od.device_id);
    const agents = [];
    for (const name of ['agent-a', 'agent-b']) {
      const invite = await owner.createInvite();
      const keys = DeviceIdentity.generate();
      const client = new ParleyClient({ baseUrl: t.baseUrl });
      const enrolled = await enroll(client, invite.token, { identityPublicKey: keys.identityPublicKeyHex, ephemeralPublicKey: keys.ephemeralPublicKeyHex, sign: (m) => keys.sign(m), name });
      await owner.approveDevice(enrolled.device_id);
      const act = await activate(client, enrolled.device_id, (m) => keys.sign(m));
      client.setDeviceToken(act.device_jwt);
      agents.push({ identity: keys.withDeviceId(enrolled.device_id), client });
    }
    return { owner, ownerJwt, tenantId: tenant.tenant_id, ownerIdentity: ownerKeys.withDeviceId(od.device_id), agents: agents as [(typeof agents)[0], (typeof agents)[0]] };
  }

  /** A room member: messenger + room layer + realtime client (owners send over REST). */
  async function member(identity: DeviceIdentity, client: ParleyClient, token: () => Promise<string | undefined>, owner: boolean, store: SessionStore = new MemorySessionStore()): Promise<Member> {
    const messenger = await SecureMessenger.open({ identity, store, client, mls: false });
    const rooms = await RoomMessenger.open({ messenger, store, client, ...(owner ? { transport: restRoomTransport(client, identity.deviceId!) } : {}) });
    const rt = new RealtimeClient({ url: t.baseUrl, token, WebSocket: nodeWebSocket(), ...(owner ? { deviceId: identity.deviceId! } : {}) });
    const m: Member = { identity, client, store, messenger, rooms, rt, received: [], errors: [] };
    messenger.on('message', (msg) => void m.received.push(msg));
    messenger.on('error', (e) => void m.errors.push(e));
    rooms.on('error', (e) => void m.errors.push(e));
    rooms.attach(rt, { transport: !owner });
    await messenger.start();
    await rt.connect();
    cleanups.push(() => rt.close());
    return m;
  }

  async function setup() {
    const w = await world();
    const [a, b] = w.agents;
    const owner = await member(w.ownerIdentity, w.owner, async () => w.ownerJwt, true);
    const agentA = await member(a.identity, a.client, () => a.client.currentDeviceToken(), false);
    const agentB = await member(b.identity, b.client, () => b.client.currentDeviceToken(), false);
    const room = await w.owner.createRoom({ name: 'ops', member_device_ids: [w.ownerIdentity.deviceId!, a.identity.deviceId!, b.identity.deviceId!] });
    expect(room.conversations).toHaveLength(3);
    expect(room.members.every((m) => m.identity_public_key && m.ephemeral_public_key)).toBe(true);
    // The agents register the room from `room_joined`, the owner from `member_joined` (re-read).
    const all = [owner, agentA, agentB];
    await waitFor(() => all.every((m) => m.rooms.peers(room.room_id).size === 2), 'every member registers the room');
    return { w, room, owner, agentA, agentB };
  }

  it('an agent sends one room message encrypted per recipient; the agent and the owner decrypt it; no plaintext in the database', async () => {
    const { w, room, owner, agentA, agentB } = await setup();
    expect([...agentA.rooms.peers(room.room_id).keys()].sort()).toEqual([w.ownerIdentity.deviceId!, agentB.identity.deviceId!].sort());

    const secret = `room secret ${Date.now()}`;
    const sent = await agentA.rooms.sendText(room.room_id, secret);
    expect(sent.recipients).toHaveLength(2);
    expect(Object.fromEntries(sent.deliveries.map((d) => [d.recipient_device_id, d.outcome]))).toEqual({ [agentB.identity.deviceId!]: 'delivered', [w.ownerIdentity.deviceId!]: 'delivered' });

    await waitFor(() => agentB.received.length === 1 && owner.received.length === 1, 'both members decrypt');
    for (const m of [agentB.received[0]!, owner.received[0]!]) {
      expect(text(m)).toBe(secret);
      expect(m).toMatchObject({ room_id: room.room_id, message_id: sent.room_message_id, sender_device_id: agentA.identity.deviceId, cursor: sent.cursor, protocol: 'x3dh-dr' });
    }
    expect(agentB.received[0]!.conversation_id).not.toBe(owner.received[0]!.conversation_id);

    // The owner answers over REST; both agents read it.
    const reply = 'owner reply';
    await owner.rooms.sendText(room.room_id, reply);
    await waitFor(() => agentA.received.length === 1 && agentB.received.length === 2, 'agents read the owner');
    expect(text(agentA.received[0]!)).toBe(reply);
    expect(text(agentB.received[1]!)).toBe(reply);

    // The timeline holds the two messages; the owner's view lists both outcomes of the first.
    const timeline = await w.owner.roomTimeline(room.room_id);
    expect(timeline.messages.map((e) => e.room_message_id)[0]).toBe(sent.room_message_id);
    expect(timeline.messages).toHaveLength(2);

    const report = await scanForPlaintext(t.app.parley.database, [secret, reply]);
    expect(report.columns.some((c) => c.endsWith('room_envelopes.ciphertext'))).toBe(true);
    expect(report.leaks).toEqual([]);
    expect([...agentA.errors, ...agentB.errors, ...owner.errors]).toEqual([]);
  });

  it('a policy blocking agent-to-agent messages: blocked for the agent, delivered to the owner', async () => {
    const { w, room, owner, agentA, agentB } = await setup();
    const policy = await w.owner.createPolicy({ name: 'no agent chatter', conditions: { sender_kinds: ['agent'], recipient_kinds: ['agent'] }, action: 'block' });
    expect((await w.owner.listPolicies()).policies.map((p) => p.policy_id)).toContain(policy.policy_id);

    const sent = await agentA.rooms.sendText(room.room_id, 'should not reach B');
    const outcome = Object.fromEntries(sent.deliveries.map((d) => [d.recipient_device_id, d.outcome]));
    expect(outcome).toEqual({ [agentB.identity.deviceId!]: 'blocked', [w.ownerIdentity.deviceId!]: 'delivered' });
    await waitFor(() => owner.received.length === 1, 'the owner decrypts');
    expect(text(owner.received[0]!)).toBe('should not reach B');

    // B's pairwise session simply skips the blocked message: the next one still decrypts. A
    // notify policy lets it through and alerts the owner's sockets.
    const alerts: PolicyAlertEvent[] = [];
    owner.rt.on('policy_alert', (a) => void alerts.push(a));
    const notify = await w.owner.updatePolicy(policy.policy_id, { action: 'notify' });
    expect(notify.action).toBe('notify');
    const next = await agentA.rooms.sendText(room.room_id, 'now B may read');
    expect(next.deliveries.find((d) => d.recipient_device_id === agentB.identity.deviceId)?.outcome).toBe('notified');
    await waitFor(() => agentB.received.length === 1 && owner.received.length === 2 && alerts.length === 1, 'B and the owner read the next one; the owner is alerted');
    expect(text(agentB.received[0]!)).toBe('now B may read');
    expect(alerts[0]).toMatchObject({ room_id: room.room_id, policy_id: policy.policy_id, sender_device_id: agentA.identity.deviceId, recipient_device_id: agentB.identity.deviceId });
    await w.owner.deletePolicy(policy.policy_id);
    expect(await w.owner.listPolicies()).toEqual({ policies: [] });
    expect([...agentA.errors, ...agentB.errors, ...owner.errors]).toEqual([]);
  });

  it('held messages are released to the recipient on approval', async () => {
    const { w, room, agentA, agentB } = await setup();
    await w.owner.createPolicy({ name: 'hold agent chatter', conditions: { sender_kinds: ['agent'], recipient_kinds: ['agent'] }, action: 'hold' });
    const sent = await agentA.rooms.sendText(room.room_id, 'held for review');
    const held = sent.deliveries.find((d) => d.recipient_device_id === agentB.identity.deviceId)!;
    expect(held.outcome).toBe('held');
    const list = await w.owner.listHeldMessages();
    expect(list.map((h) => h.held_message_id)).toContain(held.held_message_id);
    await sleep(100);
    expect(agentB.received).toHaveLength(0);
    const approved = await w.owner.approveHeldMessage(held.held_message_id!);
    expect(approved.status).toBe('approved');
    await waitFor(() => agentB.received.length === 1, 'B reads the approved message');
    expect(text(agentB.received[0]!)).toBe('held for review');
    // A denied one never arrives; deciding twice is a 409.
    const second = await agentA.rooms.sendText(room.room_id, 'denied');
    const heldId = second.deliveries.find((d) => d.outcome === 'held')!.held_message_id!;
    expect((await w.owner.denyHeldMessage(heldId)).status).toBe('denied');
    await expect(w.owner.denyHeldMessage(heldId)).rejects.toMatchObject({ status: 409 });
    expect(await w.owner.listHeldMessages({ status: 'denied' })).toHaveLength(1);
  });

  it('catches up from the room timeline after a restart, without repeats', async () => {
    const { w, room, owner, agentA, agentB } = await setup();
    await agentA.rooms.sendText(room.room_id, 'one');
    await waitFor(() => agentB.received.length === 1, 'B reads one');
    await agentB.rt.settled();
    // B goes away; two messages arrive meanwhile (one from the owner over REST, one from A).
    agentB.rt.close();
    await agentB.rooms.close();
    await agentB.messenger.close();
    await owner.rooms.sendText(room.room_id, 'two');
    await agentA.rooms.sendText(room.room_id, 'three');

    const b = w.agents[1];
    const again = await member(b.identity, b.client, () => b.client.currentDeviceToken(), false, agentB.store);
    expect(again.rooms.roomIds()).toEqual([room.room_id]);
    await waitFor(() => again.received.length === 2, 'B catches up two');
    expect(again.received.map(text).sort()).toEqual(['three', 'two']);
    await sleep(100);
    expect(again.received).toHaveLength(2);
    expect(again.errors).toEqual([]);
  });

  it('catches up a held message approved while the recipient was offline, exactly once', async () => {
    const { w, room, owner, agentA, agentB } = await setup();
    await w.owner.createPolicy({ name: 'hold agent chatter', conditions: { sender_kinds: ['agent'], recipient_kinds: ['agent'] }, action: 'hold' });
    const sent = await agentA.rooms.sendText(room.room_id, 'held while B was away');
    const held = sent.deliveries.find((d) => d.recipient_device_id === agentB.identity.deviceId)!;
    expect(held.outcome).toBe('held');
    // B reads a later message, so its resume point is past the held message's send.
    await owner.rooms.sendText(room.room_id, 'later, from the owner');
    await waitFor(() => agentB.received.length === 1, 'B reads the owner');
    await agentB.rt.settled();
    agentB.rt.close();
    await agentB.rooms.close();
    await agentB.messenger.close();

    expect((await w.owner.approveHeldMessage(held.held_message_id!)).status).toBe('approved');
    const b = w.agents[1];
    const again = await member(b.identity, b.client, () => b.client.currentDeviceToken(), false, agentB.store);
    await waitFor(() => again.received.length === 1, 'B catches up the approved message');
    expect(text(again.received[0]!)).toBe('held while B was away');
    expect(again.received[0]!).toMatchObject({ room_id: room.room_id, message_id: sent.room_message_id, sender_device_id: agentA.identity.deviceId });
    // Its cursor is its release position, after the owner's message B had read.
    expect(Number(again.received[0]!.cursor)).toBeGreaterThan(Number(agentB.received[0]!.cursor));
    expect(await again.rooms.catchUp(room.room_id)).toBe(0);
    await sleep(100);
    expect(again.received).toHaveLength(1);
    expect(again.errors).toEqual([]);
  });

  it("an owner device's catch-up reads its member view (cursors of its room_message events)", async () => {
    const { w, room, owner, agentA } = await setup();
    await agentA.rooms.sendText(room.room_id, 'first');
    await waitFor(() => owner.received.length === 1, 'the owner reads first');
    // The owner-view cursor (send order) and the member-view cursor (release order) differ in kind;
    // the owner's room layer pages the member view as its own device.
    const memberView = await w.owner.roomTimeline(room.room_id, { view: 'member' });
    expect(memberView.messages.map((e) => e.cursor)).toEqual([owner.received[0]!.cursor]);
    await owner.rt.settled();
    owner.rt.close();
    await owner.rooms.close();
    await owner.messenger.close();
    await agentA.rooms.sendText(room.room_id, 'second');
    const again = await member(w.ownerIdentity, w.owner, async () => w.ownerJwt, true, owner.store);
    await waitFor(() => again.received.length === 1, 'the owner catches up second');
    expect(text(again.received[0]!)).toBe('second');
    await sleep(100);
    expect(again.received).toHaveLength(1);
    expect(again.errors).toEqual([]);
  });

  it('sendRoom resolves with the room_message_ack and rejects with the error frame of its client_ref', async () => {
    const { room, agentA, agentB } = await setup();
    const envelope = { recipient_device_id: agentB.identity.deviceId!, header_blob: 'aGVhZGVy', ciphertext: 'Y2lwaGVydGV4dA==' };
    const ack = await agentA.rt.sendRoom({ room_id: room.room_id, envelopes: [envelope], client_ref: 'ref-1' });
    expect(ack).toMatchObject({ client_ref: 'ref-1', deliveries: [{ recipient_device_id: agentB.identity.deviceId, outcome: 'delivered' }] });
    expect(ack.room_message_id).toMatch(/^[0-9a-f-]{36}$/);
    const err = await agentA.rt.sendRoom({ room_id: room.room_id, envelopes: [{ ...envelope, recipient_device_id: agentA.identity.deviceId! }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RealtimeError);
    expect(err).toMatchObject({ code: 'server', status: 400 });
    // Not connected yet: queued, then sent once the connection is up.
    const b = (await agentA.client.currentDeviceToken())!;
    const offline = new RealtimeClient({ url: t.baseUrl, token: b, WebSocket: nodeWebSocket() });
    cleanups.push(() => offline.close());
    const queued = offline.sendRoom({ room_id: room.room_id, envelopes: [envelope] });
    expect(offline.queuedCount).toBe(1);
    await offline.connect();
    expect((await queued).deliveries).toEqual([{ recipient_device_id: agentB.identity.deviceId, outcome: 'delivered' }]);
    // B got the two undecryptable envelopes: reported, not delivered.
    await waitFor(() => agentB.errors.length === 2, 'B reports the bad envelopes');
    expect(agentB.errors.map((e) => e.code)).toEqual(['decrypt_failed', 'decrypt_failed']);
    expect(agentB.received).toHaveLength(0);
  });

  it('room_joined registers the room on its own: an agent added later reads the next message', async () => {
    const { w, room, agentA } = await setup();
    const invite = await w.owner.createInvite();
    const keys = DeviceIdentity.generate();
    const client = new ParleyClient({ baseUrl: t.baseUrl });
    const enrolled = await enroll(client, invite.token, { identityPublicKey: keys.identityPublicKeyHex, ephemeralPublicKey: keys.ephemeralPublicKeyHex, sign: (m) => keys.sign(m) });
    await w.owner.approveDevice(enrolled.device_id);
    client.setDeviceToken((await activate(client, enrolled.device_id, (m) => keys.sign(m))).device_jwt);
    const late = await member(keys.withDeviceId(enrolled.device_id), client, () => client.currentDeviceToken(), false);
    const updated: Room = await w.owner.addRoomMember(room.room_id, { device_id: enrolled.device_id });
    expect(updated.members).toHaveLength(4);
    await waitFor(() => late.rooms.peers(room.room_id).size === 3, 'room_joined registers the room');
    // A re-reads the member list before sending: the new member gets an envelope too.
    const sent = await agentA.rooms.sendText(room.room_id, 'welcome');
    expect(sent.recipients).toContain(enrolled.device_id);
    await waitFor(() => late.received.length === 1, 'the new member reads');
    expect(text(late.received[0]!)).toBe('welcome');
  });
});
