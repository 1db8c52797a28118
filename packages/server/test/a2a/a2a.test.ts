/**
 * Agent-to-agent channels (contract §2.11, §3.3, §3.5, §4.13, §6.1; design §8.5; docs/decisions.md
 * "A2A channels"): request / approve / reject / revoke, key exchange and messages over real
 * sockets of API-key agents, both tenants' policies (stricter wins, hold then approve), tier
 * refusals that name the tier, federated channels with W3C traceparent, and the agreement gate.
 */
import { randomBytes } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { hubIdentities } from '../../src/db/schema/index.js';
import { activeAgent, newOwner, registerOwnerDevice, type Owner } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { hubOwnerKey } from '../../testing/keys.js';
import { activeChannel as activeChannelOf, keyAgent as newKeyAgent, type KeyAgent } from '../../testing/key-agents.js';
import { wsAddress, WsPool, type WsClient } from '../../testing/ws-client.js';
import { waitFor } from '../../testing/webhook-receiver.js';

const CHANNELS = '/api/v1/a2a/channels';
const TRACEPARENT = /^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;
const inDays = (n: number) => new Date(Date.now() + n * 24 * 3600 * 1000).toISOString();
const b64 = (s: string) => Buffer.from(s).toString('base64');
/** An `a2a_message` frame sent by `deviceId` (a REST sender's own sockets get a copy too). */
const from = (deviceId: string) => (f: { event: string; data: any }) => f.event === 'a2a_message' && f.data.sender_device_id === deviceId;

describe('A2A channels', () => {
  let t: TestApp;
  const pool = new WsPool();

  beforeAll(async () => {
    t = await startApp({ listen: true });
  });
  afterEach(() => pool.closeAll());
  afterAll(() => t.close());

  const setTier = (address: string, trustTier: string, trustScore: number | null) =>
    t.app.parley.database.db.update(hubIdentities).set({ trustTier, trustScore }).where(eq(hubIdentities.hubAddress, address));

  /** Register a hub identity bound to `deviceId` and give it a tier and score (superuser). */
  async function identity(owner: Owner, deviceId: string, tier = 'certified', score: number | null = 0.9): Promise<string> {
    const address = `agent-${randomBytes(5).toString('hex')}`;
    const res = await t.request({ method: 'POST', url: '/api/v1/hub/register', headers: owner.auth, payload: { hub_address: address, display_name: address, device_id: deviceId, public_key: hubOwnerKey() } });
    expect(res.status).toBe(201);
    await setTier(address, tier, score);
    return address;
  }

  /** An API key whose socket registered key material (trust on first use), with a hub identity. */
  const keyAgent = (owner: Owner, tier = 'certified', score: number | null = 0.9): Promise<KeyAgent> => newKeyAgent(t, pool, owner, { tier, score });

  /** An owner socket (registered owner device) to observe owner events. */
  async function ownerSocket(owner: Owner): Promise<WsClient> {
    const od = await registerOwnerDevice(t, owner);
    return pool.connect(wsAddress(t.wsUrl, { token: owner.token, device_id: od.deviceId }));
  }

  const request = (headers: Record<string, string>, payload: Record<string, unknown>) => t.request({ method: 'POST', url: `${CHANNELS}/request`, headers, payload });
  const act = (headers: Record<string, string>, id: string, verb: 'approve' | 'reject' | 'revoke') => t.request({ method: 'POST', url: `${CHANNELS}/${id}/${verb}`, headers });
  const send = (a: KeyAgent, id: string, body: Record<string, unknown> = {}) =>
    t.request({ method: 'POST', url: `${CHANNELS}/${id}/messages`, headers: a.headers, payload: { header_blob: b64('hdr'), ciphertext: b64('secret'), ...body } });

  /** Propose and accept a federation agreement between two tenants. */
  async function federate(a: Owner, b: Owner, terms: Record<string, unknown> = {}): Promise<string> {
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/federation/agreements',
      headers: a.auth,
      payload: { partner_tenant_id: b.tenantId, trust_floor: 0.5, allowed_capabilities: [], expires_at: inDays(30), ...terms },
    });
    expect(res.status).toBe(201);
    expect((await t.request({ method: 'POST', url: `/api/v1/federation/agreements/${res.body.id}/accept`, headers: b.auth })).status).toBe(200);
    return res.body.id as string;
  }

  /** request -> approve -> both key exchanges over the sockets: an active channel. */
  const activeChannel = (x: KeyAgent, y: KeyAgent, capability?: string) => activeChannelOf(t, x, y, capability);

  async function policy(owner: Owner, action: string, conditions: Record<string, unknown>): Promise<void> {
    const res = await t.request({ method: 'POST', url: '/api/v1/policies', headers: owner.auth, payload: { name: `${action} rule`, action, conditions } });
    expect(res.status).toBe(201);
  }

  it('same tenant: request -> approve -> key exchange over sockets -> active -> messages both ways, history', async () => {
    const owner = await newOwner(t);
    const ownerWs = await ownerSocket(owner);
    const x = await keyAgent(owner);
    const y = await keyAgent(owner);

    const req = await request(x.headers, { responder_hub_address: y.address.toUpperCase() });
    expect(req.status).toBe(201);
    const id = req.body.channel_id as string;
    expect(req.body).toMatchObject({
      channelId: id,
      initiatorHubAddress: x.address,
      responderHubAddress: y.address,
      conversationId: null,
      status: 'pending',
      capability: null,
      federated: false,
      agreementId: null,
      approvedAt: null,
      activatedAt: null,
    });
    expect((await ownerWs.next('a2a_channel_requested')).data).toMatchObject({ channel_id: id, status: 'pending' });
    // One open channel per agent pair, whichever side asks.
    expect((await request(y.headers, { responder_hub_address: x.address })).status).toBe(409);

    const mine = await t.request({ method: 'GET', url: CHANNELS, headers: x.headers });
    expect(mine.body.channels.map((c: any) => c.channelId)).toEqual([id]);
    expect((await t.request({ method: 'GET', url: `${CHANNELS}?status=pending`, headers: owner.auth })).body.channels.map((c: any) => c.channelId)).toEqual([id]);
    expect((await t.request({ method: 'GET', url: `${CHANNELS}?status=active`, headers: owner.auth })).body.channels).toEqual([]);

    // Messages and key exchange need the right state.
    expect((await send(x, id)).status).toBe(409);
    const approved = await act(owner.auth, id, 'approve');
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ channelId: id, status: 'approved' });
    expect(approved.body.approvedAt).toEqual(expect.any(String));
    expect((await act(owner.auth, id, 'approve')).status).toBe(409);

    const xa = (await x.ws.next('a2a_channel_approved')).data;
    const ya = (await y.ws.next('a2a_channel_approved')).data;
    expect(xa).toMatchObject({ channel_id: id, role: 'initiator', peer_hub_address: y.address, peer_device_id: y.deviceId, peer_identity_public_key: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(ya).toMatchObject({ channel_id: id, role: 'responder', peer_hub_address: x.address, peer_device_id: x.deviceId, peer_ephemeral_public_key: expect.stringMatching(/^[0-9a-f]{64}$/) });

    x.ws.send('a2a_key_exchange', { channel_id: id, header_blob: b64('x-hs'), ciphertext: b64('x-welcome'), client_ref: 'kx1' });
    expect((await x.ws.next('a2a_key_exchange_ack')).data).toEqual({ channel_id: id, status: 'approved', conversation_id: null, client_ref: 'kx1' });
    expect((await y.ws.next('a2a_key_exchange')).data).toMatchObject({ channel_id: id, sender_device_id: x.deviceId, header_blob: b64('x-hs'), ciphertext: b64('x-welcome') });
    y.ws.send('a2a_key_exchange', { channel_id: id, header_blob: b64('y-hs'), ciphertext: b64('y-welcome') });
    const done = (await y.ws.next('a2a_key_exchange_ack')).data;
    expect(done).toMatchObject({ channel_id: id, status: 'active', conversation_id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect((await x.ws.next('a2a_key_exchange')).data).toMatchObject({ sender_device_id: y.deviceId, ciphertext: b64('y-welcome') });
    expect((await x.ws.next('a2a_channel_activated')).data).toEqual({ channel_id: id, conversation_id: done.conversation_id });
    expect((await y.ws.next('a2a_channel_activated')).data).toEqual({ channel_id: id, conversation_id: done.conversation_id });
    x.ws.send('a2a_key_exchange', { channel_id: id, header_blob: '', ciphertext: b64('late') });
    expect((await x.ws.next('error')).data.status).toBe(409);

    // Socket send, delivered to the peer; REST send the other way.
    x.ws.send('a2a_message', { channel_id: id, header_blob: b64('h1'), ciphertext: b64('c1'), message_type: 'artifact', priority: 'high', client_ref: 'm1' });
    const ack = (await x.ws.next('a2a_message_ack')).data;
    expect(ack).toMatchObject({ channel_id: id, outcome: 'delivered', traceparent: null, client_ref: 'm1' });
    expect(ack.held_message_id).toBeUndefined();
    const got = (await y.ws.next('a2a_message')).data;
    expect(got).toMatchObject({ channel_id: id, message_id: ack.message_id, sender_device_id: x.deviceId, header_blob: b64('h1'), ciphertext: b64('c1'), message_type: 'artifact', priority: 'high', traceparent: null, timestamp: ack.timestamp });
    const back = await send(y, id, { ciphertext: b64('c2') });
    expect(back.status).toBe(201);
    expect(back.body).toMatchObject({ channel_id: id, outcome: 'delivered' });
    expect((await x.ws.next('a2a_message')).data).toMatchObject({ message_id: back.body.message_id, sender_device_id: y.deviceId, ciphertext: b64('c2'), message_type: 'text', priority: 'normal' });

    // History: handshakes and messages, oldest first, with a cursor.
    const hist = await t.request({ method: 'GET', url: `${CHANNELS}/${id}/messages`, headers: y.headers });
    expect(hist.status).toBe(200);
    expect(hist.body.messages.map((m: any) => m.message_type)).toEqual(['key_exchange', 'key_exchange', 'artifact', 'text']);
    const after = await t.request({ method: 'GET', url: `${CHANNELS}/${id}/messages?since=${hist.body.messages[1].cursor}&limit=1`, headers: x.headers });
    expect(after.body.messages.map((m: any) => m.message_id)).toEqual([ack.message_id]);
    expect(after.body.next_cursor).toBe(after.body.messages[0].cursor);
    const listed = (await t.request({ method: 'GET', url: `${CHANNELS}?status=active`, headers: owner.auth })).body.channels[0];
    expect(listed).toMatchObject({ channelId: id, status: 'active', conversationId: done.conversation_id });
  });

  it('a delivered message enqueues its a2a.message webhooks (recipient and sender devices) with it; a held one when released', async () => {
    const owner = await newOwner(t);
    const x = await keyAgent(owner);
    const y = await keyAgent(owner);
    const id = await activeChannel(x, y);
    const db = t.app.parley.database.db;
    await db.execute(sql`update devices set webhook_url = 'https://hooks.example/a2a' where id in (${x.deviceId}, ${y.deviceId})`);
    const hooks = async (deviceId: string) =>
      ((await db.execute(sql`select payload from webhook_deliveries where device_id = ${deviceId} and event_type = 'a2a.message' order by created_at`)) as unknown as { rows: { payload: any }[] }).rows.map(
        (r) => r.payload.data.message_id,
      );

    const sent = await send(x, id, { ciphertext: b64('secret') });
    expect(sent.body).toMatchObject({ outcome: 'delivered' });
    expect(await hooks(y.deviceId)).toEqual([sent.body.message_id]);
    expect(await hooks(x.deviceId)).toEqual([sent.body.message_id]);
    const [row] = ((await db.execute(sql`select payload from webhook_deliveries where device_id = ${y.deviceId} and event_type = 'a2a.message'`)) as unknown as { rows: { payload: any }[] }).rows;
    expect(row!.payload).toMatchObject({ type: 'a2a.message', data: { channel_id: id, message_id: sent.body.message_id, sender_device_id: x.deviceId } });
    expect(JSON.stringify(row!.payload)).not.toContain(b64('secret'));

    await policy(owner, 'hold', { message_types: ['decision_request'] });
    const held = await send(x, id, { message_type: 'decision_request' });
    expect(held.body).toMatchObject({ outcome: 'held' });
    expect(await hooks(y.deviceId)).toEqual([sent.body.message_id]);
    const approved = await t.request({ method: 'POST', url: `/api/v1/policies/held-messages/${held.body.held_message_id}/approve`, headers: owner.auth });
    expect(approved.status).toBe(200);
    await waitFor(async () => (await hooks(y.deviceId)).length === 2, 'the released message\'s webhook');
    expect(await hooks(y.deviceId)).toEqual([sent.body.message_id, held.body.message_id]);
    expect(await hooks(x.deviceId)).toEqual([sent.body.message_id, held.body.message_id]);
  });

  it('tier refusals name the tier; identities, devices and input are checked', async () => {
    const owner = await newOwner(t);
    const low = await keyAgent(owner, 'unverified', 0.2);
    const target = await keyAgent(owner);
    const refused = await request(low.headers, { responder_hub_address: target.address });
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toMatch(/certified/);
    expect(refused.body.detail).toMatch(/unverified/);

    // Cross-tenant needs enterprise, even with an agreement.
    const other = await newOwner(t);
    const far = await keyAgent(other, 'enterprise');
    await federate(owner, other);
    const needsEnterprise = await request(target.headers, { responder_hub_address: far.address });
    expect(needsEnterprise.status).toBe(403);
    expect(needsEnterprise.body.detail).toMatch(/enterprise/);

    // An owner names the initiating agent device (400 without it); the device needs a hub identity.
    const enrolled = await activeAgent(t, owner);
    expect((await request(owner.auth, { responder_hub_address: target.address })).status).toBe(400);
    const noIdentity = await request(owner.auth, { responder_hub_address: target.address, initiator_device_id: enrolled.deviceId });
    expect(noIdentity.status).toBe(403);
    expect(noIdentity.body.detail).toMatch(/hub identity/);
    await identity(owner, enrolled.deviceId);
    const byOwner = await request(owner.auth, { responder_hub_address: target.address, initiator_device_id: enrolled.deviceId });
    expect(byOwner.status).toBe(201);
    expect(byOwner.body.initiatorHubAddress).not.toBe(target.address);
    // Another tenant's device is invisible; unknown addresses 404; bad input 400; no auth 401.
    expect((await request(other.auth, { responder_hub_address: target.address, initiator_device_id: enrolled.deviceId })).status).toBe(404);
    expect((await request(target.headers, { responder_hub_address: 'no-such-agent' })).status).toBe(404);
    expect((await request(target.headers, { responder_hub_address: target.address })).status).toBe(400);
    expect((await request(target.headers, { responder_hub_address: '-bad-' })).status).toBe(400);
    expect((await request(target.headers, {})).status).toBe(400);
    expect((await request(target.headers, { responder_hub_address: far.address, initiator_device_id: 'nope' })).status).toBe(400);
    expect((await request(target.headers, { responder_hub_address: far.address, initiator_device_id: enrolled.deviceId })).status).toBe(403);
    expect((await request({}, { responder_hub_address: target.address })).status).toBe(401);
    expect((await t.request({ method: 'GET', url: CHANNELS })).status).toBe(401);
    expect((await t.request({ method: 'GET', url: `${CHANNELS}?status=open`, headers: owner.auth })).status).toBe(400);
    // An agent device JWT acts as itself (a2a-agent-devices.test.ts): here the pair already has an open channel.
    expect((await request(enrolled.auth, { responder_hub_address: target.address })).status).toBe(409);
  });

  it('reject and revoke transitions; only the right parties may act, other tenants see nothing', async () => {
    const owner = await newOwner(t);
    const outsider = await newOwner(t);
    const x = await keyAgent(owner);
    const y = await keyAgent(owner);
    const z = await keyAgent(owner);

    const first = (await request(x.headers, { responder_hub_address: y.address })).body.channel_id as string;
    expect((await act(outsider.auth, first, 'approve')).status).toBe(404);
    expect((await act(outsider.auth, first, 'reject')).status).toBe(404);
    expect((await act(outsider.auth, first, 'revoke')).status).toBe(404);
    expect((await t.request({ method: 'GET', url: CHANNELS, headers: outsider.auth })).body.channels).toEqual([]);
    expect((await act(x.headers, first, 'approve')).status).toBe(403);
    expect((await act(owner.auth, 'not-a-uuid', 'approve')).status).toBe(400);
    expect((await act({}, first, 'reject')).status).toBe(401);
    const rejected = await act(owner.auth, first, 'reject');
    expect(rejected.status).toBe(200);
    expect(rejected.body.status).toBe('rejected');
    expect((await x.ws.next('a2a_channel_rejected')).data).toEqual({ channel_id: first });
    for (const verb of ['approve', 'reject', 'revoke'] as const) expect((await act(owner.auth, first, verb)).status).toBe(409);

    // A rejected channel no longer blocks a new request; a non-party agent cannot revoke it.
    const second = (await request(x.headers, { responder_hub_address: y.address })).body.channel_id as string;
    expect((await act(owner.auth, second, 'approve')).status).toBe(200);
    expect((await act(z.headers, second, 'revoke')).status).toBe(403);
    expect((await t.request({ method: 'GET', url: `${CHANNELS}/${second}/messages`, headers: z.headers })).status).toBe(403);
    const revoked = await act(y.headers, second, 'revoke');
    expect(revoked.status).toBe(200);
    expect(revoked.body.status).toBe('revoked');
    expect((await x.ws.next('a2a_channel_revoked')).data).toEqual({ channel_id: second });
    expect((await y.ws.next('a2a_channel_revoked')).data).toEqual({ channel_id: second });
    expect((await act(owner.auth, second, 'revoke')).status).toBe(409);
    x.ws.send('a2a_key_exchange', { channel_id: second, header_blob: '', ciphertext: b64('late') });
    expect((await x.ws.next('error')).data.status).toBe(409);

    // The owner may revoke an active channel of its tenant; messages are refused afterwards.
    const third = await activeChannel(x, y);
    expect((await act(owner.auth, third, 'revoke')).status).toBe(200);
    expect((await send(x, third)).status).toBe(409);
    const stranger = await keyAgent(outsider);
    expect((await t.request({ method: 'GET', url: `${CHANNELS}/${third}/messages`, headers: stranger.headers })).status).toBe(404);
    expect((await send(stranger, third)).status).toBe(404);
    expect((await act(stranger.headers, third, 'revoke')).status).toBe(404);
    expect((await t.request({ method: 'GET', url: `${CHANNELS}/${third}/messages`, headers: outsider.auth })).status).toBe(403);
  });

  it('socket frames are validated and answer errors with the client_ref', async () => {
    const owner = await newOwner(t);
    const x = await keyAgent(owner);
    x.ws.send('a2a_message', { channel_id: 'nope', header_blob: '', ciphertext: '', client_ref: 'bad' });
    expect((await x.ws.next('error')).data).toMatchObject({ status: 400, client_ref: 'bad' });
    x.ws.send('a2a_message', { channel_id: '00000000-0000-4000-8000-000000000000', header_blob: '', ciphertext: '', client_ref: 'empty' });
    expect((await x.ws.next('error')).data).toMatchObject({ status: 400, client_ref: 'empty', detail: expect.stringMatching(/ciphertext/) });
    x.ws.send('a2a_message', { channel_id: '00000000-0000-4000-8000-000000000000', header_blob: '', ciphertext: b64('late'), client_ref: 'unknown' });
    expect((await x.ws.next('error')).data).toMatchObject({ status: 404, client_ref: 'unknown' });
  });

  it('REST sends spend the same per-device budget as a2a_message frames (contract §8: 60 per minute): then 429 with Retry-After', async () => {
    const owner = await newOwner(t);
    const x = await keyAgent(owner);
    const y = await keyAgent(owner);
    const id = await activeChannel(x, y);
    const frame = (ref: string) => x.ws.send('a2a_message', { channel_id: id, header_blob: b64('hdr'), ciphertext: b64(ref), client_ref: ref });
    for (let i = 0; i < 30; i++) frame(`f${i}`);
    for (let i = 0; i < 30; i++) await x.ws.next((f) => f.event === 'a2a_message_ack' && f.data.client_ref === `f${i}`);
    for (let i = 0; i < 30; i++) expect((await send(x, id)).status).toBe(201);
    const refused = await send(x, id);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    frame('over');
    expect((await x.ws.next((f) => f.event === 'error' && f.data.client_ref === 'over')).data.status).toBe(429);
    expect((await send(y, id)).status).toBe(201);
  });

  describe('federated channel between two tenants', () => {
    let a: Owner;
    let b: Owner;
    let x: KeyAgent;
    let y: KeyAgent;

    beforeAll(async () => {
      a = await newOwner(t, 'Initiator Inc');
      b = await newOwner(t, 'Responder Ltd');
    });

    it('needs an active agreement, the trust floor and an allowed capability; carries traceparent; both policies apply', async () => {
      const aWs = await ownerSocket(a);
      const bWs = await ownerSocket(b);
      x = await keyAgent(a, 'enterprise', 0.9);
      y = await keyAgent(b, 'enterprise', 0.9);
      const refused = await request(x.headers, { responder_hub_address: y.address });
      expect(refused.status).toBe(403);
      expect(refused.body.detail).toMatch(/agreement/);

      const agreementId = await federate(a, b, { trust_floor: 0.7, allowed_capabilities: ['translate'] });
      expect((await request(x.headers, { responder_hub_address: y.address })).status).toBe(403);
      expect((await request(x.headers, { responder_hub_address: y.address, capability: 'summarize' })).status).toBe(403);
      await setTier(y.address, 'enterprise', null);
      const floor = await request(x.headers, { responder_hub_address: y.address, capability: 'translate' });
      expect(floor.status).toBe(403);
      expect(floor.body.detail).toMatch(/trust floor/);
      await setTier(y.address, 'enterprise', 0.75);

      const req = await request(x.headers, { responder_hub_address: y.address, capability: 'translate' });
      expect(req.status).toBe(201);
      const id = req.body.channel_id as string;
      expect(req.body).toMatchObject({ federated: true, agreementId, capability: 'translate', initiatorHubAddress: x.address, responderHubAddress: y.address });
      expect((await bWs.next('a2a_channel_requested')).data.channel_id).toBe(id);
      // Both tenants see it; only the responder's owner approves.
      expect((await t.request({ method: 'GET', url: CHANNELS, headers: b.auth })).body.channels.map((c: any) => c.channelId)).toEqual([id]);
      expect((await act(a.auth, id, 'approve')).status).toBe(403);
      expect((await act(a.auth, id, 'reject')).status).toBe(403);
      expect((await act(b.auth, id, 'approve')).status).toBe(200);
      expect((await x.ws.next('a2a_channel_approved')).data).toMatchObject({ role: 'initiator', peer_device_id: y.deviceId });
      await y.ws.next('a2a_channel_approved');
      x.ws.send('a2a_key_exchange', { channel_id: id, header_blob: b64('x'), ciphertext: b64('x') });
      y.ws.send('a2a_key_exchange', { channel_id: id, header_blob: b64('y'), ciphertext: b64('y') });
      await x.ws.next('a2a_channel_activated');
      await y.ws.next('a2a_channel_activated');

      // traceparent: generated when absent, forwarded unchanged when given, validated.
      const generated = await send(x, id);
      expect(generated.status).toBe(201);
      expect(generated.body.traceparent).toMatch(TRACEPARENT);
      expect((await y.ws.next('a2a_message')).data.traceparent).toBe(generated.body.traceparent);
      const given = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
      y.ws.send('a2a_message', { channel_id: id, header_blob: b64('h'), ciphertext: b64('c'), traceparent: given });
      expect((await y.ws.next('a2a_message_ack')).data.traceparent).toBe(given);
      expect((await x.ws.next(from(y.deviceId))).data.traceparent).toBe(given);
      for (const bad of ['00-00000000000000000000000000000000-00f067aa0ba902b7-01', '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01', 'garbage', given.toUpperCase()]) {
        expect((await send(x, id, { traceparent: bad })).status).toBe(400);
      }

      // Both tenants' policies: the responder's block beats the initiator's notify.
      await policy(a, 'notify', { message_types: ['status_alert', 'artifact'] });
      await policy(b, 'block', { message_types: ['status_alert'], cross_tenant: true });
      await policy(b, 'hold', { message_types: ['decision_request'] });
      const blocked = await send(x, id, { message_type: 'status_alert' });
      expect(blocked.body).toMatchObject({ outcome: 'blocked' });
      const notified = await send(x, id, { message_type: 'artifact' });
      expect(notified.body).toMatchObject({ outcome: 'notified' });
      const delivered = (await y.ws.next('a2a_message')).data;
      expect(delivered).toMatchObject({ message_id: notified.body.message_id, message_type: 'artifact' });
      expect((await aWs.next('policy_alert')).data).toMatchObject({ channel_id: id, sender_device_id: x.deviceId, recipient_device_id: y.deviceId, message_type: 'artifact' });
      expect(bWs.buffered('policy_alert')).toEqual([]);

      // Held in the responder's tenant, delivered once its owner approves.
      const held = await send(x, id, { message_type: 'decision_request', ciphertext: b64('please decide') });
      expect(held.body).toMatchObject({ outcome: 'held', held_message_id: expect.any(String) });
      const list = await t.request({ method: 'GET', url: '/api/v1/policies/held-messages', headers: b.auth });
      expect(list.body.held_messages).toEqual([expect.objectContaining({ held_message_id: held.body.held_message_id, channel_id: id, sender_device_id: x.deviceId })]);
      expect((await t.request({ method: 'GET', url: '/api/v1/policies/held-messages', headers: a.auth })).body.held_messages).toEqual([]);
      expect(y.ws.buffered('a2a_message')).toEqual([]);
      const approved = await t.request({ method: 'POST', url: `/api/v1/policies/held-messages/${held.body.held_message_id}/approve`, headers: b.auth });
      expect(approved.status).toBe(200);
      expect((await y.ws.next('a2a_message')).data).toMatchObject({ message_id: held.body.message_id, ciphertext: b64('please decide'), traceparent: held.body.traceparent });
      const history = (await t.request({ method: 'GET', url: `${CHANNELS}/${id}/messages`, headers: y.headers })).body.messages;
      expect(history.at(-1).message_id).toBe(held.body.message_id);
      expect(history.map((m: any) => m.message_id)).not.toContain(blocked.body.message_id);
      expect(history.every((m: any) => m.message_type === 'key_exchange' || TRACEPARENT.test(m.traceparent))).toBe(true);

      // Expired agreement: the channel is refused.
      await t.app.parley.database.db.execute(sql`update federation_agreements set expires_at = now() - interval '1 minute' where id = ${agreementId}`);
      const expired = await send(x, id);
      expect(expired.status).toBe(403);
      expect(expired.body.detail).toMatch(/agreement/);
      y.ws.send('a2a_message', { channel_id: id, header_blob: '', ciphertext: b64('late'), client_ref: 'late' });
      expect((await y.ws.next('error')).data).toMatchObject({ status: 403, client_ref: 'late' });
    });
  });
});
