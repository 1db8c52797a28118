/**
 * Rooms (contract §2.5, §4.6, §6.1; design §8.5): creation with pairwise conversations, membership,
 * details (read with an owner token, a device token or an API key) and updates, fan-out over real
 * sockets (enrolled agents, API-key agents, owner devices), MLS `*` envelopes, per-recipient
 * policy outcomes, strict rooms, and the timeline.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { workspaces } from '../../src/db/schema/index.js';
import { withTenant } from '../../src/db/tenant.js';
import { activeAgent, createInvite, enroll, newOwner, registerOwnerDevice, type Agent, type Owner, type OwnerDevice } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { newDeviceKeys } from '../../testing/keys.js';
import { wsAddress, WsPool, type WsClient } from '../../testing/ws-client.js';

const LIMIT = 2048;
const b64 = (s: string) => Buffer.from(s).toString('base64');
const envelope = (recipient: string, text: string) => ({ recipient_device_id: recipient, header_blob: b64(`hdr:${recipient}`), ciphertext: b64(text) });

describe('rooms', () => {
  let t: TestApp;
  let owner: Owner;
  let od: OwnerDevice;
  let a1: Agent;
  let a2: Agent;
  let a3: Agent;
  let other: Owner;
  let otherAgent: Agent;
  const pool = new WsPool();

  beforeAll(async () => {
    t = await startApp({ listen: true, env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000', LIMIT_MESSAGE_BYTES: String(LIMIT) } });
    owner = await newOwner(t);
    od = await registerOwnerDevice(t, owner);
    a1 = await activeAgent(t, owner);
    a2 = await activeAgent(t, owner);
    a3 = await activeAgent(t, owner);
    other = await newOwner(t, 'Other');
    await registerOwnerDevice(t, other);
    otherAgent = await activeAgent(t, other);
  });
  afterEach(() => pool.closeAll());
  afterAll(() => t.close());

  const api = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, headers: Record<string, string> = owner.auth, payload?: unknown) =>
    t.request({ method, url: `/api/v1${url}`, headers, ...(payload !== undefined ? { payload: payload as object } : {}) });
  const createRoom = (body: Record<string, unknown>, who: Owner = owner) => api('POST', '/rooms', who.auth, body);
  const newRoom = async (members: string[], extra: Record<string, unknown> = {}) => {
    const res = await createRoom({ name: 'ops', member_device_ids: members, ...extra });
    expect(res.status).toBe(201);
    return res.body;
  };
  const agentWs = (a: Agent) => pool.connect(wsAddress(t.wsUrl, { token: a.jwt }));
  const ownerWs = () => pool.connect(wsAddress(t.wsUrl, { token: owner.token, device_id: od.deviceId }));
  const ownerAs = () => ({ ...owner.auth, 'x-device-id': od.deviceId });
  const createPolicy = async (body: Record<string, unknown>) => {
    const res = await api('POST', '/policies', owner.auth, body);
    expect(res.status).toBe(201);
    return res.body.policy_id as string;
  };
  /**
   * An API-key agent of `who`: a key bound to fresh key material over its socket
   * (`client_key_register`), with that socket and the `X-API-Key` header.
   */
  const apiKeyAgent = async (who: Owner = owner) => {
    const key = (await api('POST', '/api-keys', who.auth, { name: 'third-party' })).body.key as string;
    const ws = await pool.open(wsAddress(t.wsUrl, { token: key }));
    const keys = newDeviceKeys();
    ws.send('client_key_register', { identity_public_key: keys.identityPublicKey, ephemeral_public_key: keys.ephemeralPublicKey, signature: keys.proof() });
    const deviceId = (await ws.next('client_key_accepted')).data.device_id as string;
    return { ws, deviceId, auth: { 'x-api-key': key } };
  };
  /** Nothing of `event` arrived by the time a round trip through the service completed. */
  const expectNone = async (ws: WsClient, event: string) => {
    await ws.roundTrip();
    expect(ws.buffered(event)).toEqual([]);
  };

  describe('create, details, list', () => {
    it('creates members, one pairwise conversation per pair, and announces room_joined / member_joined', async () => {
      const wsA1 = await agentWs(a1);
      const wsOwner = await ownerWs();
      const ids = [od.deviceId, a1.deviceId, a2.deviceId, a3.deviceId];
      const res = await createRoom({ name: 'war room', member_device_ids: [...ids, a1.deviceId.toUpperCase()] });
      expect(res.status).toBe(201);
      const room = res.body;
      expect(room).toMatchObject({ name: 'war room', security_level: 'standard', workspace_id: null, archived: false, mls_capable: false, policies: [] });
      expect(room.conversation_id).not.toBe(room.room_id);
      expect(room.members.map((m: any) => m.device_id).sort()).toEqual([...ids].sort());
      expect(room.members.find((m: any) => m.device_id === od.deviceId)).toMatchObject({ kind: 'owner', identity_public_key: od.keys.identityPublicKey });
      expect(room.members.find((m: any) => m.device_id === a1.deviceId).kind).toBe('agent');
      const n = ids.length;
      expect(room.conversations).toHaveLength((n * (n - 1)) / 2);
      const pairs = new Set(room.conversations.map((c: any) => [...c.device_ids].sort().join()));
      expect(pairs.size).toBe(6);
      for (const c of room.conversations) expect(c.device_ids[0] < c.device_ids[1]).toBe(true);

      const joined = await wsA1.next((f) => f.event === 'room_joined' && f.data.room_id === room.room_id);
      expect(joined.data).toMatchObject({ name: 'war room', conversation_id: room.conversation_id, security_level: 'standard' });
      expect(joined.data.members).toHaveLength(4);
      expect(joined.data.conversations).toHaveLength(3);
      expect(joined.data.conversations.every((c: any) => c.device_ids.includes(a1.deviceId))).toBe(true);
      await wsOwner.next((f) => f.event === 'room_joined' && f.data.room_id === room.room_id);
      const announced = new Set<string>();
      for (let i = 0; i < 4; i++) announced.add((await wsOwner.next((f) => f.event === 'member_joined' && f.data.room_id === room.room_id)).data.device_id);
      expect([...announced].sort()).toEqual([...ids].sort());

      const got = await api('GET', `/rooms/${room.room_id}`);
      expect(got.status).toBe(200);
      expect(got.body).toEqual(room);
      const listed = await api('GET', '/rooms');
      expect(listed.status).toBe(200);
      const entry = listed.body.rooms.find((r: any) => r.room_id === room.room_id);
      expect(entry).toMatchObject({ name: 'war room', mls_capable: false });
      expect(entry.conversations).toBeUndefined();
      expect((await api('GET', '/rooms', other.auth)).body.rooms).toEqual([]);
    });

    it('refuses bad members and bodies (400), unknown workspaces (404), missing auth (401), device tokens (403)', async () => {
      const { res: pending } = await enroll(t, (await createInvite(t, owner)).token, newDeviceKeys());
      const bad = [
        {},
        { name: 'x', member_device_ids: [] },
        { name: '', member_device_ids: [a1.deviceId] },
        { name: 'x', member_device_ids: ['not-a-uuid'] },
        { name: 'x', member_device_ids: [randomUUID()] },
        { name: 'x', member_device_ids: [a1.deviceId, otherAgent.deviceId] },
        { name: 'x', member_device_ids: [pending.body.device_id] },
        { name: 'x', member_device_ids: Array.from({ length: 101 }, () => randomUUID()) },
        { name: 'x', member_device_ids: [a1.deviceId], security_level: 'paranoid' },
        { name: 'x', member_device_ids: [a1.deviceId], workspace_id: 'nope' },
      ];
      for (const body of bad) expect((await createRoom(body)).status, JSON.stringify(body).slice(0, 80)).toBe(400);
      // team rooms only through POST /team-rooms, which checks workspace membership
      expect((await createRoom({ name: 'x', member_device_ids: [a1.deviceId], workspace_id: randomUUID() })).status).toBe(400);
      expect((await api('POST', '/rooms', {}, { name: 'x', member_device_ids: [a1.deviceId] })).status).toBe(401);
      expect((await api('POST', '/rooms', a1.auth, { name: 'x', member_device_ids: [a1.deviceId] })).status).toBe(403);
    });

    it('refuses workspace_id: team rooms are made by POST /team-rooms', async () => {
      const workspaceId = randomUUID();
      await withTenant(t.app.parley.database.db, owner.tenantId, (tx) => tx.insert(workspaces).values({ id: workspaceId, tenantId: owner.tenantId, name: 'team', createdBy: owner.sub }));
      const res = await createRoom({ name: 'x', member_device_ids: [a1.deviceId, a2.deviceId], workspace_id: workspaceId });
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(/team-rooms/);
    });

    it('GET /rooms/{id}: member devices read it, others 403; unknown and foreign rooms 404; bad id 400; no auth 401', async () => {
      const room = await newRoom([a1.deviceId, a2.deviceId]);
      expect((await api('GET', `/rooms/${room.room_id}`, a1.auth)).body.room_id).toBe(room.room_id);
      expect((await api('GET', `/rooms/${room.room_id}`, a3.auth)).status).toBe(403);
      expect((await api('GET', `/rooms/${room.room_id}`, other.auth)).status).toBe(404);
      expect((await api('GET', `/rooms/${room.room_id}`, otherAgent.auth)).status).toBe(404);
      expect((await api('GET', `/rooms/${randomUUID()}`)).status).toBe(404);
      expect((await api('GET', '/rooms/xyz')).status).toBe(400);
      expect((await api('GET', `/rooms/${room.room_id}`, {})).status).toBe(401);
      expect((await api('GET', '/rooms', {})).status).toBe(401);
    });

    it('GET /rooms/{id} and its timeline with X-API-Key: a member key reads them, a non-member or unbound key 403, a foreign one 404', async () => {
      const member = await apiKeyAgent();
      const outsider = await apiKeyAgent();
      const foreign = await apiKeyAgent(other);
      const room = await newRoom([member.deviceId, a1.deviceId]);
      const read = await api('GET', `/rooms/${room.room_id}`, member.auth);
      expect(read.status).toBe(200);
      expect(read.body).toMatchObject({ room_id: room.room_id, conversations: [{ device_ids: [member.deviceId, a1.deviceId].sort() }] });
      expect(read.body.members.map((m: any) => m.device_id).sort()).toEqual([member.deviceId, a1.deviceId].sort());

      const wsA1 = await agentWs(a1);
      wsA1.send('room_message', { room_id: room.room_id, envelopes: [envelope(member.deviceId, 'to the key')] });
      const ack = (await wsA1.next('room_message_ack')).data;
      const timeline = await api('GET', `/rooms/${room.room_id}/messages`, member.auth);
      expect(timeline.status).toBe(200);
      expect(timeline.body).toEqual({ messages: [expect.objectContaining({ room_message_id: ack.room_message_id, cursor: ack.cursor, envelope: { header_blob: b64(`hdr:${member.deviceId}`), ciphertext: b64('to the key') } })], next_cursor: ack.cursor });

      for (const url of [`/rooms/${room.room_id}`, `/rooms/${room.room_id}/messages`]) {
        expect((await api('GET', url, outsider.auth)).status, url).toBe(403);
        expect((await api('GET', url, foreign.auth)).status, url).toBe(404);
      }
      const unbound = (await api('POST', '/api-keys', owner.auth, { name: 'unbound' })).body.key as string;
      expect((await api('GET', `/rooms/${room.room_id}`, { 'x-api-key': unbound })).status).toBe(403);
      expect((await api('GET', `/rooms/${room.room_id}`, { 'x-api-key': `svc_agent_sk_dev_${'0'.repeat(64)}` })).status).toBe(401);
    });

    it('mls_capable once every member published a KeyPackage', async () => {
      const room = await newRoom([a1.deviceId, a2.deviceId]);
      const publish = (a: Agent) => api('POST', '/mls/key-packages', a.auth, { key_packages: [b64(`kp-${a.deviceId}`)] });
      expect((await publish(a1)).status).toBe(201);
      expect((await api('GET', `/rooms/${room.room_id}`)).body.mls_capable).toBe(false);
      expect((await publish(a2)).status).toBe(201);
      expect((await api('GET', `/rooms/${room.room_id}`)).body.mls_capable).toBe(true);
      expect((await api('GET', '/rooms')).body.rooms.find((r: any) => r.room_id === room.room_id).mls_capable).toBe(true);
    });
  });

  describe('PATCH /rooms/{id}', () => {
    it('renames, changes the security level and scopes existing policies to the room', async () => {
      const room = await newRoom([a1.deviceId, a2.deviceId]);
      const p1 = await createPolicy({ name: 'p1', conditions: {}, action: 'notify', enabled: false });
      const res = await api('PATCH', `/rooms/${room.room_id}`, owner.auth, { name: 'renamed', security_level: 'strict', policies: [p1, p1.toUpperCase()] });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ name: 'renamed', security_level: 'strict', policies: [p1] });
      const policy = (await api('GET', '/policies')).body.policies.find((p: any) => p.policy_id === p1);
      expect(policy.scope).toEqual({ room_id: room.room_id, skill: null });
    });

    it('404 unknown or foreign policy or room, 409 skill-scoped policy, 400 bad body, 401 without auth', async () => {
      const room = await newRoom([a1.deviceId, a2.deviceId]);
      const foreign = (await api('POST', '/policies', other.auth, { name: 'f', conditions: {}, action: 'allow' })).body.policy_id;
      expect((await api('PATCH', `/rooms/${room.room_id}`, owner.auth, { policies: [foreign] })).status).toBe(404);
      expect((await api('PATCH', `/rooms/${room.room_id}`, owner.auth, { policies: [randomUUID()] })).status).toBe(404);
      const skill = await createPolicy({ name: 's', scope: { skill: 'deploy' }, conditions: {}, action: 'allow' });
      expect((await api('PATCH', `/rooms/${room.room_id}`, owner.auth, { policies: [skill] })).status).toBe(409);
      for (const body of [{}, { name: '' }, { security_level: 'x' }, { policies: ['x'] }]) {
        expect((await api('PATCH', `/rooms/${room.room_id}`, owner.auth, body)).status, JSON.stringify(body)).toBe(400);
      }
      expect((await api('PATCH', `/rooms/${room.room_id}`, other.auth, { name: 'mine' })).status).toBe(404);
      expect((await api('PATCH', `/rooms/${randomUUID()}`, owner.auth, { name: 'x' })).status).toBe(404);
      expect((await api('PATCH', `/rooms/${room.room_id}`, {}, { name: 'x' })).status).toBe(401);
    });
  });

  describe('members', () => {
    it('adds a member with pairwise conversations (room_joined, member_joined) and removes it (member_left), keeping history', async () => {
      const room = await newRoom([od.deviceId, a1.deviceId]);
      const wsA3 = await agentWs(a3);
      const wsA1 = await agentWs(a1);
      const wsOwner = await ownerWs();
      const added = await api('POST', `/rooms/${room.room_id}/members`, owner.auth, { device_id: a3.deviceId });
      expect(added.status).toBe(201);
      expect(added.body.members.map((m: any) => m.device_id)).toContain(a3.deviceId);
      expect(added.body.conversations).toHaveLength(3);
      const joined = await wsA3.next((f) => f.event === 'room_joined' && f.data.room_id === room.room_id);
      expect(joined.data.conversations).toHaveLength(2);
      expect((await wsOwner.next('member_joined')).data).toEqual({ room_id: room.room_id, device_id: a3.deviceId });
      expect((await wsA1.next('member_joined')).data).toEqual({ room_id: room.room_id, device_id: a3.deviceId });

      expect((await api('POST', `/rooms/${room.room_id}/members`, owner.auth, { device_id: a3.deviceId })).status).toBe(409);
      const removed = await api('DELETE', `/rooms/${room.room_id}/members/${a3.deviceId}`);
      expect(removed.status).toBe(204);
      expect((await wsA3.next('member_left')).data).toEqual({ room_id: room.room_id, device_id: a3.deviceId });
      expect((await wsOwner.next('member_left')).data.device_id).toBe(a3.deviceId);
      const after = (await api('GET', `/rooms/${room.room_id}`)).body;
      expect(after.members).toHaveLength(2);
      expect(after.conversations).toHaveLength(1);
      expect((await api('DELETE', `/rooms/${room.room_id}/members/${a3.deviceId}`)).status).toBe(404);
      // Re-adding reuses the pairwise conversations of the former membership.
      const again = await api('POST', `/rooms/${room.room_id}/members`, owner.auth, { device_id: a3.deviceId });
      expect(again.body.conversations.map((c: any) => c.conversation_id).sort()).toEqual(added.body.conversations.map((c: any) => c.conversation_id).sort());
    });

    it('400 bad or inactive device, 404 unknown/foreign room, 401 without auth', async () => {
      const room = await newRoom([a1.deviceId]);
      expect((await api('POST', `/rooms/${room.room_id}/members`, owner.auth, { device_id: 'x' })).status).toBe(400);
      expect((await api('POST', `/rooms/${room.room_id}/members`, owner.auth, {})).status).toBe(400);
      expect((await api('POST', `/rooms/${room.room_id}/members`, owner.auth, { device_id: randomUUID() })).status).toBe(400);
      expect((await api('POST', `/rooms/${room.room_id}/members`, owner.auth, { device_id: otherAgent.deviceId })).status).toBe(400);
      expect((await api('POST', `/rooms/${room.room_id}/members`, other.auth, { device_id: otherAgent.deviceId })).status).toBe(404);
      expect((await api('POST', `/rooms/${randomUUID()}/members`, owner.auth, { device_id: a2.deviceId })).status).toBe(404);
      expect((await api('POST', `/rooms/${room.room_id}/members`, {}, { device_id: a2.deviceId })).status).toBe(401);
      expect((await api('DELETE', `/rooms/${room.room_id}/members/${a1.deviceId}`, other.auth)).status).toBe(404);
      expect((await api('DELETE', `/rooms/${room.room_id}/members/xyz`)).status).toBe(400);
      expect((await api('DELETE', `/rooms/${room.room_id}/members/${a1.deviceId}`, {})).status).toBe(401);
    });
  });

  describe('fan-out', () => {
    it('delivers each envelope to its recipient over real sockets (agent frame and owner REST)', async () => {
      const room = await newRoom([od.deviceId, a1.deviceId, a2.deviceId]);
      const wsA1 = await agentWs(a1);
      const wsA2 = await agentWs(a2);
      const wsOwner = await ownerWs();
      wsA1.send('room_message', { room_id: room.room_id, message_type: 'status_alert', priority: 'high', envelopes: [envelope(a2.deviceId, 'for a2'), envelope(od.deviceId, 'for owner')], client_ref: 'r1' });
      const ack = await wsA1.next('room_message_ack');
      expect(ack.data.client_ref).toBe('r1');
      expect(ack.data.deliveries).toEqual([
        { recipient_device_id: a2.deviceId, outcome: 'delivered' },
        { recipient_device_id: od.deviceId, outcome: 'delivered' },
      ]);
      const got = await wsA2.next('room_message');
      expect(got.data).toMatchObject({
        room_id: room.room_id,
        room_message_id: ack.data.room_message_id,
        sender_device_id: a1.deviceId,
        header: b64(`hdr:${a2.deviceId}`),
        ciphertext: b64('for a2'),
        message_type: 'status_alert',
        priority: 'high',
        timestamp: ack.data.timestamp,
      });
      expect((await wsOwner.next('room_message')).data.ciphertext).toBe(b64('for owner'));
      await expectNone(wsA1, 'room_message');

      const rest = await api('POST', `/rooms/${room.room_id}/messages`, ownerAs(), { envelopes: [envelope(a1.deviceId, 'from owner')] });
      expect(rest.status).toBe(201);
      expect(rest.body.deliveries).toEqual([{ recipient_device_id: a1.deviceId, outcome: 'delivered' }]);
      expect((await wsA1.next('room_message')).data).toMatchObject({ sender_device_id: od.deviceId, ciphertext: b64('from owner'), message_type: 'text', priority: 'normal' });
      await expectNone(wsA2, 'room_message');
    });

    it('lets an API-key agent that is a member send and receive room messages', async () => {
      const { ws: wsKey, deviceId } = await apiKeyAgent();
      const room = await newRoom([deviceId, a1.deviceId]);
      const wsA1 = await agentWs(a1);
      wsKey.send('room_message', { room_id: room.room_id, envelopes: [envelope(a1.deviceId, 'from key')] });
      expect((await wsKey.next('room_message_ack')).data.deliveries[0].outcome).toBe('delivered');
      expect((await wsA1.next('room_message')).data).toMatchObject({ sender_device_id: deviceId, ciphertext: b64('from key') });
      wsA1.send('room_message', { room_id: room.room_id, envelopes: [envelope(deviceId, 'to key')] });
      expect((await wsKey.next('room_message')).data.ciphertext).toBe(b64('to key'));
    });

    it('sends one MLS envelope ("*") to every other member, with per-recipient deliveries', async () => {
      const room = await newRoom([od.deviceId, a1.deviceId, a2.deviceId]);
      const wsA2 = await agentWs(a2);
      const wsOwner = await ownerWs();
      const wsA1 = await agentWs(a1);
      wsA1.send('room_message', { room_id: room.room_id, envelopes: [{ recipient_device_id: '*', header_blob: b64('mls'), ciphertext: b64('group secret') }] });
      const ack = await wsA1.next('room_message_ack');
      expect(ack.data.deliveries.map((d: any) => d.recipient_device_id).sort()).toEqual([od.deviceId, a2.deviceId].sort());
      expect(ack.data.deliveries.every((d: any) => d.outcome === 'delivered')).toBe(true);
      for (const ws of [wsA2, wsOwner]) expect((await ws.next('room_message')).data).toMatchObject({ header: b64('mls'), ciphertext: b64('group secret') });
      await expectNone(wsA1, 'room_message');
      const timeline = await api('GET', `/rooms/${room.room_id}/messages`, a2.auth);
      expect(timeline.body.messages.at(-1)).toMatchObject({ room_message_id: ack.data.room_message_id, envelope: { header_blob: b64('mls'), ciphertext: b64('group secret') } });
    });

    it('refuses non-members (403), bad recipients and bodies (400), oversized ciphertext (413), foreign rooms (404), no auth (401)', async () => {
      const room = await newRoom([od.deviceId, a1.deviceId, a2.deviceId]);
      const wsA3 = await agentWs(a3);
      wsA3.send('room_message', { room_id: room.room_id, envelopes: [envelope(a1.deviceId, 'x')], client_ref: 'nm' });
      expect((await wsA3.next('error')).data).toMatchObject({ status: 403, client_ref: 'nm' });
      const wsA1 = await agentWs(a1);
      const frames: [unknown, number][] = [
        [{ room_id: room.room_id, envelopes: [envelope(a3.deviceId, 'x')] }, 400],
        [{ room_id: room.room_id, envelopes: [envelope(a1.deviceId, 'self')] }, 400],
        [{ room_id: room.room_id, envelopes: [envelope(a2.deviceId, 'x'), envelope(a2.deviceId, 'y')] }, 400],
        [{ room_id: room.room_id, envelopes: [envelope(a2.deviceId, 'x'), { ...envelope(a2.deviceId, 'y'), recipient_device_id: '*' }] }, 400],
        [{ room_id: room.room_id, envelopes: [{ ...envelope(a2.deviceId, 'x'), ciphertext: 'abc' }] }, 400],
        [{ room_id: room.room_id, envelopes: [{ ...envelope(a2.deviceId, 'x'), ciphertext: '' }] }, 400],
        [{ room_id: room.room_id, envelopes: [{ recipient_device_id: '*', header_blob: b64('mls'), ciphertext: '' }] }, 400],
        [{ room_id: room.room_id, envelopes: [] }, 400],
        [{ room_id: 'nope', envelopes: [envelope(a2.deviceId, 'x')] }, 400],
        [{ room_id: room.room_id, envelopes: [envelope(a2.deviceId, 'x'.repeat(LIMIT + 1))] }, 413],
        [{ room_id: randomUUID(), envelopes: [envelope(a2.deviceId, 'x')] }, 404],
      ];
      for (const [i, [data, status]] of frames.entries()) {
        wsA1.send('room_message', { ...(data as object), client_ref: `c${i}` });
        expect((await wsA1.next('error')).data, JSON.stringify(data).slice(0, 120)).toMatchObject({ status, client_ref: `c${i}` });
      }
      const post = (headers: Record<string, string>, body: unknown, id = room.room_id) => api('POST', `/rooms/${id}/messages`, headers, body);
      expect((await post(ownerAs(), { envelopes: [envelope(a3.deviceId, 'x')] })).status).toBe(400);
      const empty = await post(ownerAs(), { envelopes: [{ ...envelope(a1.deviceId, 'x'), ciphertext: '' }] });
      expect(empty.status).toBe(400);
      expect(empty.body.detail).toMatch(/ciphertext/);
      expect((await post(ownerAs(), { envelopes: [envelope(a1.deviceId, 'x'.repeat(LIMIT + 1))] })).status).toBe(413);
      expect((await post(owner.auth, { envelopes: [envelope(a1.deviceId, 'x')] })).status).toBe(400);
      expect((await post(ownerAs(), {})).status).toBe(400);
      expect((await post({}, { envelopes: [envelope(a1.deviceId, 'x')] })).status).toBe(401);
      const otherDevice = await registerOwnerDevice(t, other);
      expect((await post({ ...other.auth, 'x-device-id': otherDevice.deviceId }, { envelopes: [envelope(a1.deviceId, 'x')] })).status).toBe(404);
      expect((await post(a1.auth, { envelopes: [envelope(a2.deviceId, 'x')] })).status).toBe(403);
    });

    it('an ACTIVE owner device that is not a member sends into its tenant’s room: it joins (room_joined, member_joined), then the message fans out', async () => {
      const room = await newRoom([a1.deviceId, a2.deviceId]);
      const wsA1 = await agentWs(a1);
      const wsOwner = await ownerWs();
      const sent = await api('POST', `/rooms/${room.room_id}/messages`, ownerAs(), { envelopes: [envelope(a1.deviceId, 'from the owner')] });
      expect(sent.status, JSON.stringify(sent.body)).toBe(201);
      expect(sent.body.deliveries).toEqual([expect.objectContaining({ recipient_device_id: a1.deviceId, outcome: 'delivered' })]);
      expect((await wsA1.next((f) => f.event === 'member_joined' && f.data.room_id === room.room_id)).data).toEqual({ room_id: room.room_id, device_id: od.deviceId });
      expect((await wsA1.next((f) => f.event === 'room_message' && f.data.room_id === room.room_id)).data).toMatchObject({ sender_device_id: od.deviceId, ciphertext: b64('from the owner') });
      const joined = await wsOwner.next((f) => f.event === 'room_joined' && f.data.room_id === room.room_id);
      expect(joined.data.conversations.map((c: any) => [...c.device_ids].sort())).toEqual(expect.arrayContaining([[od.deviceId, a1.deviceId].sort(), [od.deviceId, a2.deviceId].sort()]));
      const details = (await api('GET', `/rooms/${room.room_id}`)).body;
      expect(details.members.find((m: any) => m.device_id === od.deviceId)).toMatchObject({ kind: 'owner' });
      expect(details.conversations).toHaveLength(3);

      // A member now: its next message joins nothing.
      expect((await api('POST', `/rooms/${room.room_id}/messages`, ownerAs(), { envelopes: [envelope(a2.deviceId, 'again')] })).status).toBe(201);
      await wsOwner.roundTrip();
      expect(wsOwner.buffered((f) => f.event === 'room_joined' && f.data.room_id === room.room_id)).toEqual([]);

      // Over an owner device's socket too.
      const second = await registerOwnerDevice(t, owner);
      const wsSecond = await pool.connect(wsAddress(t.wsUrl, { token: owner.token, device_id: second.deviceId }));
      wsSecond.send('room_message', { room_id: room.room_id, envelopes: [envelope(a1.deviceId, 'from the phone')], client_ref: 'phone' });
      expect((await wsSecond.next('room_message_ack')).data).toMatchObject({ client_ref: 'phone', deliveries: [{ recipient_device_id: a1.deviceId, outcome: 'delivered' }] });
      expect((await wsSecond.next((f) => f.event === 'room_joined' && f.data.room_id === room.room_id)).data.members).toHaveLength(4);
      expect((await wsA1.next((f) => f.event === 'member_joined' && f.data.device_id === second.deviceId)).data.room_id).toBe(room.room_id);

      // Another tenant's owner device stays out (404), an agent that is not a member is still refused (403).
      const otherDevice = await registerOwnerDevice(t, other);
      expect((await api('POST', `/rooms/${room.room_id}/messages`, { ...other.auth, 'x-device-id': otherDevice.deviceId }, { envelopes: [envelope(a1.deviceId, 'x')] })).status).toBe(404);
      const wsA3 = await agentWs(a3);
      wsA3.send('room_message', { room_id: room.room_id, envelopes: [envelope(a1.deviceId, 'x')], client_ref: 'a3' });
      expect((await wsA3.next('error')).data).toMatchObject({ status: 403, client_ref: 'a3', detail: 'the sending device is not a member of this room' });
      expect((await api('GET', `/rooms/${room.room_id}`)).body.members).toHaveLength(4);
    });
  });

  describe('policies per recipient', () => {
    it('blocks one recipient and allows another; the blocked one receives nothing', async () => {
      const room = await newRoom([od.deviceId, a1.deviceId, a2.deviceId]);
      await createPolicy({ name: 'no a2', scope: { room_id: room.room_id }, conditions: { recipient_device_ids: [a2.deviceId] }, action: 'block' });
      const wsA2 = await agentWs(a2);
      const wsOwner = await ownerWs();
      const wsA1 = await agentWs(a1);
      wsA1.send('room_message', { room_id: room.room_id, envelopes: [envelope(a2.deviceId, 'x'), envelope(od.deviceId, 'y')] });
      const ack = await wsA1.next('room_message_ack');
      expect(ack.data.deliveries).toEqual([
        { recipient_device_id: a2.deviceId, outcome: 'blocked' },
        { recipient_device_id: od.deviceId, outcome: 'delivered' },
      ]);
      expect((await wsOwner.next('room_message')).data.ciphertext).toBe(b64('y'));
      await expectNone(wsA2, 'room_message');
      const timeline = await api('GET', `/rooms/${room.room_id}/messages`, { ...owner.auth, 'x-device-id': od.deviceId });
      expect(timeline.body.messages.at(-1)).toMatchObject({ deliveries: expect.arrayContaining([{ recipient_device_id: a2.deviceId, outcome: 'blocked', delivered_at: null, read_at: null }]), envelope: { ciphertext: b64('y') } });
      // The blocked recipient's own view does not show the message.
      expect((await api('GET', `/rooms/${room.room_id}/messages`, a2.auth)).body.messages).toEqual([]);
    });

    it('applies per-recipient outcomes to an MLS envelope too', async () => {
      const room = await newRoom([od.deviceId, a1.deviceId, a2.deviceId]);
      await createPolicy({ name: 'no owner', scope: { room_id: room.room_id }, conditions: { recipient_kinds: ['owner'] }, action: 'block' });
      const wsOwner = await ownerWs();
      const wsA2 = await agentWs(a2);
      const wsA1 = await agentWs(a1);
      wsA1.send('room_message', { room_id: room.room_id, envelopes: [{ recipient_device_id: '*', header_blob: b64('h'), ciphertext: b64('mls') }] });
      const ack = await wsA1.next('room_message_ack');
      expect(Object.fromEntries(ack.data.deliveries.map((d: any) => [d.recipient_device_id, d.outcome]))).toEqual({ [od.deviceId]: 'blocked', [a2.deviceId]: 'delivered' });
      expect((await wsA2.next('room_message')).data.ciphertext).toBe(b64('mls'));
      await expectNone(wsOwner, 'room_message');
    });

    it('notify delivers and sends policy_alert to the owner sockets', async () => {
      const room = await newRoom([od.deviceId, a1.deviceId, a2.deviceId]);
      const policyId = await createPolicy({ name: 'watch', scope: { room_id: room.room_id }, conditions: { message_types: ['artifact'] }, action: 'notify' });
      const wsOwner = await ownerWs();
      const wsA2 = await agentWs(a2);
      const wsA1 = await agentWs(a1);
      wsA1.send('room_message', { room_id: room.room_id, message_type: 'artifact', envelopes: [envelope(a2.deviceId, 'art')] });
      expect((await wsA1.next('room_message_ack')).data.deliveries).toEqual([{ recipient_device_id: a2.deviceId, outcome: 'notified' }]);
      expect((await wsA2.next('room_message')).data.ciphertext).toBe(b64('art'));
      const alert = await wsOwner.next('policy_alert');
      expect(alert.data).toMatchObject({ room_id: room.room_id, policy_id: policyId, sender_device_id: a1.deviceId, recipient_device_id: a2.deviceId, message_type: 'artifact' });
      expect(JSON.stringify(alert.data)).not.toContain(b64('art'));
    });

    it('a strict room holds agent-sent messages by default, not owner-sent ones', async () => {
      const room = await newRoom([od.deviceId, a1.deviceId, a2.deviceId], { security_level: 'strict' });
      const wsA2 = await agentWs(a2);
      const wsA1 = await agentWs(a1);
      wsA1.send('room_message', { room_id: room.room_id, envelopes: [envelope(a2.deviceId, 'held')] });
      const [d] = (await wsA1.next('room_message_ack')).data.deliveries;
      expect(d).toMatchObject({ recipient_device_id: a2.deviceId, outcome: 'held', held_message_id: expect.any(String) });
      await expectNone(wsA2, 'room_message');
      const held = (await api('GET', '/policies/held-messages')).body.held_messages;
      expect(held.find((h: any) => h.held_message_id === d.held_message_id)).toMatchObject({ room_id: room.room_id, policy_id: null, status: 'held' });

      const rest = await api('POST', `/rooms/${room.room_id}/messages`, ownerAs(), { envelopes: [envelope(a2.deviceId, 'from owner')] });
      expect(rest.body.deliveries[0].outcome).toBe('delivered');
      expect((await wsA2.next('room_message')).data.ciphertext).toBe(b64('from owner'));
    });

    it('pipelines the frames of a socket (window > 1) and keeps the order: per sender across rooms, per room by cursor', async () => {
      // Fresh senders: the rate test below counts a3's room messages of the last minute.
      const [s1, s2] = [await activeAgent(t, owner), await activeAgent(t, owner)];
      const r1 = await newRoom([s1.deviceId, a2.deviceId, s2.deviceId]);
      const r2 = await newRoom([s1.deviceId, a2.deviceId]);
      const [wsA1, wsA2, wsA3] = [await agentWs(s1), await agentWs(a2), await agentWs(s2)];
      const n = 24;
      for (let i = 0; i < n; i++) {
        const room = i % 3 === 2 ? r2 : r1;
        wsA1.send('room_message', { room_id: room.room_id, envelopes: [envelope(a2.deviceId, `a1:${i}`)], client_ref: `a1:${i}` });
        // A failing frame in the stream does not stall or reorder the others.
        if (i === 5) wsA1.send('room_message', { room_id: randomUUID(), envelopes: [envelope(a2.deviceId, 'lost')], client_ref: 'bad' });
        // Another sender (s2) into r1 at the same time.
        if (i % 2 === 0) wsA3.send('room_message', { room_id: r1.room_id, envelopes: [envelope(a2.deviceId, `a3:${i}`)], client_ref: `a3:${i}` });
      }
      const acks = new Map<string, Record<string, unknown>>();
      for (let i = 0; i < n; i++) {
        const ack = (await wsA1.next('room_message_ack')).data;
        acks.set(ack.client_ref as string, ack);
      }
      expect((await wsA1.next('error')).data).toMatchObject({ status: 404, client_ref: 'bad' });
      for (let i = 0; i < n / 2; i++) await wsA3.next('room_message_ack');

      const got: Record<string, unknown>[] = [];
      for (let i = 0; i < n + n / 2; i++) got.push((await wsA2.next('room_message')).data);
      const text = (g: Record<string, unknown>) => Buffer.from(g.ciphertext as string, 'base64').toString();
      // s1's messages arrive in send order, across both rooms.
      expect(got.filter((g) => g.sender_device_id === s1.deviceId).map(text)).toEqual(Array.from({ length: n }, (_, i) => `a1:${i}`));
      // Each event carries the cursor its ack announced, and a room's events arrive by ascending cursor.
      for (const g of got.filter((g) => g.sender_device_id === s1.deviceId)) expect(g.cursor).toBe(acks.get(text(g))!.cursor);
      for (const room of [r1, r2]) {
        const cursors = got.filter((g) => g.room_id === room.room_id).map((g) => Number(g.cursor));
        expect(cursors).toEqual([...cursors].sort((x, y) => x - y));
      }
      // a2's member timeline of r1 lists them in the same order.
      const timeline = await api('GET', `/rooms/${r1.room_id}/messages?limit=100`, a2.auth);
      expect(timeline.status).toBe(200);
      expect((timeline.body.messages as { room_message_id: string }[]).map((m) => m.room_message_id)).toEqual(
        got.filter((g) => g.room_id === r1.room_id).map((g) => g.room_message_id),
      );
      await expectNone(wsA2, 'room_message');
    });

    it('rate_per_minute_over counts the sender room messages of the last minute', async () => {
      const room = await newRoom([a3.deviceId, a2.deviceId]);
      await createPolicy({ name: 'burst', scope: { room_id: room.room_id }, conditions: { rate_per_minute_over: 2 }, action: 'block' });
      const wsA3 = await agentWs(a3);
      const outcomes: string[] = [];
      for (let i = 0; i < 3; i++) {
        wsA3.send('room_message', { room_id: room.room_id, envelopes: [envelope(a2.deviceId, `m${i}`)] });
        outcomes.push((await wsA3.next('room_message_ack')).data.deliveries[0].outcome);
      }
      expect(outcomes).toEqual(['delivered', 'delivered', 'blocked']);
    });
  });

  describe('timeline', () => {
    it('pages oldest first by cursor; shows the viewer envelope; member devices see only their own', async () => {
      const room = await newRoom([od.deviceId, a1.deviceId, a2.deviceId]);
      const sent: string[] = [];
      for (let i = 0; i < 5; i++) {
        const to = i % 2 === 0 ? a1.deviceId : a2.deviceId;
        const res = await api('POST', `/rooms/${room.room_id}/messages`, ownerAs(), { envelopes: [envelope(to, `m${i}`)], message_type: 'text' });
        sent.push(res.body.room_message_id);
      }
      const url = `/rooms/${room.room_id}/messages`;
      const latest = await api('GET', `${url}?limit=2`);
      expect(latest.status).toBe(200);
      expect(latest.body.messages.map((m: any) => m.room_message_id)).toEqual(sent.slice(3));
      expect(latest.body.messages[0].envelope).toBeUndefined();
      const first = await api('GET', `${url}?limit=2&since=0`);
      expect(first.body.messages.map((m: any) => m.room_message_id)).toEqual(sent.slice(0, 2));
      const second = await api('GET', `${url}?limit=2&since=${first.body.next_cursor}`);
      expect(second.body.messages.map((m: any) => m.room_message_id)).toEqual(sent.slice(2, 4));
      const third = await api('GET', `${url}?limit=2&since=${second.body.next_cursor}`);
      expect(third.body.messages.map((m: any) => m.room_message_id)).toEqual(sent.slice(4));
      expect((await api('GET', `${url}?since=${third.body.next_cursor}`)).body).toEqual({ messages: [], next_cursor: null });
      const byTime = await api('GET', `${url}?since=${encodeURIComponent('2000-01-01T00:00:00Z')}`);
      expect(byTime.body.messages).toHaveLength(5);

      const a1View = await api('GET', url, a1.auth);
      expect(a1View.body.messages.map((m: any) => m.room_message_id)).toEqual([sent[0], sent[2], sent[4]]);
      expect(a1View.body.messages[0]).toMatchObject({
        sender_device_id: od.deviceId,
        deliveries: [{ recipient_device_id: a1.deviceId, outcome: 'delivered' }],
        envelope: { header_blob: b64(`hdr:${a1.deviceId}`), ciphertext: b64('m0') },
      });
      const ownerView = await api('GET', url, { ...owner.auth, 'x-device-id': od.deviceId });
      expect(ownerView.body.messages.every((m: any) => m.envelope === undefined)).toBe(true);
      expect(ownerView.body.messages[1].deliveries).toMatchObject([{ recipient_device_id: a2.deviceId, outcome: 'delivered', read_at: null }]);
    });

    it('400 bad since/limit, 403 non-member device, 404 unknown or foreign room, 401 without auth', async () => {
      const room = await newRoom([a1.deviceId, a2.deviceId]);
      const url = `/rooms/${room.room_id}/messages`;
      expect((await api('GET', `${url}?since=yesterday`)).status).toBe(400);
      expect((await api('GET', `${url}?limit=0`)).status).toBe(400);
      expect((await api('GET', url, { ...owner.auth, 'x-device-id': 'nope' })).status).toBe(400);
      expect((await api('GET', url, a3.auth)).status).toBe(403);
      expect((await api('GET', url, other.auth)).status).toBe(404);
      expect((await api('GET', url, otherAgent.auth)).status).toBe(404);
      expect((await api('GET', `/rooms/${randomUUID()}/messages`)).status).toBe(404);
      expect((await api('GET', url, {})).status).toBe(401);
    });
  });
});
