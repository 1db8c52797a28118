/** Connections (contract §4.10): agent devices, A2A channels and federation agreements; owner devices with health. */
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { a2aChannels, federationAgreements } from '../../src/db/schema/index.js';
import { activeAgent, createInvite, enroll, newOwner, registerOwnerDevice, type Agent, type Owner, type OwnerDevice } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { wsAddress, WsPool } from '../../testing/ws-client.js';

describe('connections', () => {
  let t: TestApp;
  let acme: Owner;
  let beta: Owner;
  let od: OwnerDevice;
  let a1: Agent;
  let pendingId: string;
  let b1: Agent;
  const channelId = randomUUID();
  const proposedId = randomUUID();
  const expiredId = randomUUID();

  beforeAll(async () => {
    t = await startApp({ listen: true });
    acme = await newOwner(t, 'Acme');
    beta = await newOwner(t, 'Beta');
    od = await registerOwnerDevice(t, acme);
    a1 = await activeAgent(t, acme);
    pendingId = (await enroll(t, (await createInvite(t, acme)).token)).res.body.device_id;
    b1 = await activeAgent(t, beta);
    // Two-party rows as the A2A and federation modules store them (written here directly, as the
    // database superuser, so that every status can be set up).
    const { db } = t.app.parley.database;
    await db.insert(a2aChannels).values({
      id: channelId,
      tenantId: acme.tenantId,
      partnerTenantId: beta.tenantId,
      initiatorHubAddress: 'acme-bot',
      responderHubAddress: 'beta-bot',
      initiatorDeviceId: a1.deviceId,
      responderDeviceId: b1.deviceId,
      status: 'active',
      approvedAt: new Date(),
      activatedAt: new Date(),
    });
    const day = 24 * 3600_000;
    await db.insert(federationAgreements).values([
      { id: proposedId, tenantId: acme.tenantId, partnerTenantId: beta.tenantId, trustFloor: 0.6, allowedCapabilities: ['search'], expiresAt: new Date(Date.now() + 30 * day), createdBy: acme.sub },
      { id: expiredId, tenantId: beta.tenantId, partnerTenantId: acme.tenantId, trustFloor: 0.8, status: 'active', expiresAt: new Date(Date.now() - day), createdBy: beta.sub },
    ]);
  });
  const pool = new WsPool();
  afterAll(async () => {
    await pool.closeAll();
    await t.close();
  });

  const get = (url: string, auth: Record<string, string> = acme.auth) => t.request({ method: 'GET', url: `/api/v1${url}`, headers: auth });

  it('lists agent devices, A2A channels and federation agreements of the tenant', async () => {
    const res = await get('/connections');
    expect(res.status).toBe(200);
    const byId = new Map(res.body.connections.map((c: any) => [c.connection_id, c]));
    expect(byId.get(a1.deviceId)).toEqual({
      connection_id: a1.deviceId,
      type: 'device',
      status: 'ACTIVE',
      label: expect.any(String),
      created_at: expect.any(String),
      last_seen: expect.toSatisfy((v: unknown) => v === null || typeof v === 'string'),
    });
    expect(byId.get(pendingId)).toMatchObject({ type: 'device', status: 'PENDING' });
    expect(byId.has(od.deviceId)).toBe(false);
    expect(byId.get(channelId)).toEqual({
      connection_id: channelId,
      type: 'a2a_channel',
      status: 'active',
      label: 'acme-bot → beta-bot',
      peer: 'beta-bot',
      created_at: expect.any(String),
    });
    expect(byId.get(proposedId)).toMatchObject({ type: 'federation', status: 'pending', peer: beta.tenantId, label: 'federation with Beta' });
    expect(byId.get(expiredId)).toMatchObject({ type: 'federation', status: 'expired', peer: beta.tenantId });
    expect(byId.has(b1.deviceId)).toBe(false);
    const times = res.body.connections.map((c: any) => c.created_at);
    expect(times).toEqual([...times].sort().reverse());

    const feds = await get('/connections?type=federation');
    expect(feds.body.connections.map((c: any) => c.connection_id).sort()).toEqual([proposedId, expiredId].sort());
    expect((await get('/connections?type=a2a_channel')).body.connections.map((c: any) => c.connection_id)).toEqual([channelId]);
    expect((await get('/connections?type=bogus')).status).toBe(400);
  });

  it('shows one connection with the details of its type', async () => {
    const dev = await get(`/connections/${a1.deviceId}`);
    expect(dev.status).toBe(200);
    expect(dev.body).toMatchObject({ type: 'device', device: { device_id: a1.deviceId, kind: 'agent', fingerprint: expect.any(String), health: expect.any(String) } });

    const ch = await get(`/connections/${channelId.toUpperCase()}`);
    expect(ch.status).toBe(200);
    expect(ch.body.a2a_channel).toMatchObject({
      channel_id: channelId,
      direction: 'outbound',
      initiator_device_id: a1.deviceId,
      responder_device_id: null,
      initiator_hub_address: 'acme-bot',
      responder_hub_address: 'beta-bot',
    });
    const fed = await get(`/connections/${proposedId}`);
    expect(fed.body.federation).toMatchObject({
      agreement_id: proposedId,
      direction: 'proposed',
      proposer_tenant_id: acme.tenantId,
      partner_tenant_id: beta.tenantId,
      peer_tenant_name: 'Beta',
      trust_floor: 0.6,
      allowed_capabilities: ['search'],
      audit_sharing: false,
    });
  });

  it("shows the partner tenant its own side of two-party connections and nothing of the other tenant's devices", async () => {
    const ch = await get(`/connections/${channelId}`, beta.auth);
    expect(ch.status).toBe(200);
    expect(ch.body).toMatchObject({ peer: 'acme-bot', a2a_channel: { direction: 'inbound', initiator_device_id: null, responder_device_id: b1.deviceId } });
    const fed = await get(`/connections/${proposedId}`, beta.auth);
    expect(fed.body).toMatchObject({ peer: acme.tenantId, label: 'federation with Acme', federation: { direction: 'received', peer_tenant_name: 'Acme' } });
    const list = (await get('/connections', beta.auth)).body.connections.map((c: any) => c.connection_id);
    expect(list).toEqual(expect.arrayContaining([b1.deviceId, channelId, proposedId, expiredId]));
    expect(list).not.toContain(a1.deviceId);
    expect((await get(`/connections/${a1.deviceId}`, beta.auth)).status).toBe(404);
    const stranger = await newOwner(t, 'Stranger');
    for (const id of [a1.deviceId, channelId, proposedId]) expect((await get(`/connections/${id}`, stranger.auth)).status).toBe(404);
    expect((await get('/connections', stranger.auth)).body.connections).toEqual([]);
  });

  it('answers 404 for unknown ids and owner devices, 400 for malformed ids, 401 without auth, 403 for device tokens', async () => {
    expect((await get(`/connections/${randomUUID()}`)).status).toBe(404);
    expect((await get(`/connections/${od.deviceId}`)).status).toBe(404);
    expect((await get('/connections/not-a-uuid')).status).toBe(400);
    for (const url of ['/connections', `/connections/${a1.deviceId}`, '/owner-connections']) {
      expect((await t.request({ method: 'GET', url: `/api/v1${url}` })).status).toBe(401);
      expect((await get(url, { authorization: 'Bearer nope' })).status).toBe(401);
      expect((await get(url, a1.auth)).status).toBe(403);
    }
  });

  it("lists the caller's owner devices with health (design §8.2), last_seen and presence", async () => {
    const second = await registerOwnerDevice(t, acme);
    const removed = await registerOwnerDevice(t, acme);
    const rm = await t.request({ method: 'DELETE', url: `/api/v1/devices/${removed.deviceId}/remove`, headers: { ...acme.auth, 'x-device-id': od.deviceId } });
    expect(rm.status).toBe(204);
    const { db } = t.app.parley.database;
    await db.execute(sql`update devices set last_seen = now() where id = ${od.deviceId}`);
    await db.execute(sql`update devices set last_seen = now() - interval '10 minutes' where id = ${second.deviceId}`);

    const res = await get('/owner-connections');
    expect(res.status).toBe(200);
    const byId = new Map(res.body.owner_connections.map((d: any) => [d.device_id, d]));
    expect([...byId.keys()].sort()).toEqual([od.deviceId, second.deviceId].sort());
    expect(byId.get(od.deviceId)).toMatchObject({ kind: 'owner', status: 'ACTIVE', health: 'green', online: false, last_seen: expect.any(String) });
    expect(byId.get(second.deviceId)).toMatchObject({ health: 'yellow' });

    await pool.connect(wsAddress(t.wsUrl, { token: acme.token, device_id: second.deviceId }));
    const online = (await get('/owner-connections')).body.owner_connections.find((d: any) => d.device_id === second.deviceId);
    expect(online).toMatchObject({ online: true });

    const betaOwn = await get('/owner-connections', beta.auth);
    expect(betaOwn.body.owner_connections).toEqual([]);
  });
});
