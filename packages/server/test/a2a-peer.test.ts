/**
 * `GET /api/v1/a2a/channels/{id}/peer` (docs/decisions.md "A2A channels"): a party agent that
 * missed `a2a_channel_approved` reads the same data again — its role and the peer's hub address,
 * device and keys — once the channel is approved; 409 while pending and after it closed; 403 for
 * an agent that is not a party; 404 for another tenant.
 */
import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { hubIdentities } from '../src/db/schema/index.js';
import { newOwner, type Owner } from './flows.js';
import { startApp, type TestApp } from './harness.js';
import { hubOwnerKey, newDeviceKeys, type DeviceKeys } from './keys.js';
import { wsAddress, WsPool, type WsClient } from './ws-client.js';

interface KeyAgent {
  deviceId: string;
  address: string;
  keys: DeviceKeys;
  ws: WsClient;
  headers: { 'x-api-key': string };
}

describe('A2A channel peer keys', () => {
  let t: TestApp;
  const pool = new WsPool();
  beforeAll(async () => {
    t = await startApp({ listen: true });
  });
  afterEach(() => pool.closeAll());
  afterAll(() => t.close());

  async function keyAgent(owner: Owner): Promise<KeyAgent> {
    const created = await t.request({ method: 'POST', url: '/api/v1/api-keys', headers: owner.auth, payload: { name: 'agent' } });
    const ws = await pool.open(wsAddress(t.wsUrl, { token: created.body.key }));
    const keys = newDeviceKeys();
    ws.send('client_key_register', { identity_public_key: keys.identityPublicKey, ephemeral_public_key: keys.ephemeralPublicKey, signature: keys.proof() });
    const deviceId = (await ws.next('client_key_accepted')).data.device_id as string;
    const address = `peer-${randomBytes(5).toString('hex')}`;
    const reg = await t.request({ method: 'POST', url: '/api/v1/hub/register', headers: owner.auth, payload: { hub_address: address, display_name: address, device_id: deviceId, public_key: hubOwnerKey() } });
    expect(reg.status).toBe(201);
    await t.app.parley.database.db.update(hubIdentities).set({ trustTier: 'certified', trustScore: 0.9 }).where(eq(hubIdentities.hubAddress, address));
    return { deviceId, address, keys, ws, headers: { 'x-api-key': created.body.key } };
  }

  const peer = (a: KeyAgent, id: string) => t.request({ method: 'GET', url: `/api/v1/a2a/channels/${id}/peer`, headers: a.headers });

  it('answers what a2a_channel_approved carried, to each party, only while approved or active', async () => {
    const owner = await newOwner(t);
    const [x, y, z] = [await keyAgent(owner), await keyAgent(owner), await keyAgent(owner)];
    const req = await t.request({ method: 'POST', url: '/api/v1/a2a/channels/request', headers: x.headers, payload: { responder_hub_address: y.address } });
    expect(req.status).toBe(201);
    const id = req.body.channel_id as string;
    expect((await peer(x, id)).status).toBe(409);

    expect((await t.request({ method: 'POST', url: `/api/v1/a2a/channels/${id}/approve`, headers: owner.auth })).status).toBe(200);
    const event = (await x.ws.next('a2a_channel_approved')).data;
    const forX = await peer(x, id);
    expect(forX.status).toBe(200);
    expect(forX.body).toEqual(event);
    expect(forX.body).toMatchObject({ channel_id: id, role: 'initiator', peer_hub_address: y.address, peer_device_id: y.deviceId, peer_identity_public_key: y.keys.identityPublicKey, peer_ephemeral_public_key: y.keys.ephemeralPublicKey });
    expect((await peer(y, id)).body).toMatchObject({ role: 'responder', peer_hub_address: x.address, peer_device_id: x.deviceId, peer_identity_public_key: x.keys.identityPublicKey });

    expect((await peer(z, id)).status).toBe(403);
    const stranger = await keyAgent(await newOwner(t, 'Other'));
    expect((await peer(stranger, id)).status).toBe(404);
    expect((await t.request({ method: 'GET', url: `/api/v1/a2a/channels/${id}/peer`, headers: owner.auth })).status).toBe(403);

    expect((await t.request({ method: 'POST', url: `/api/v1/a2a/channels/${id}/revoke`, headers: x.headers })).status).toBe(200);
    expect((await peer(x, id)).status).toBe(409);
  });
});
