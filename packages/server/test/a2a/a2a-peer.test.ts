/**
 * `GET /api/v1/a2a/channels/{id}/peer` (docs/decisions.md "A2A channels"): a party agent that
 * missed `a2a_channel_approved` reads the same data again — its role and the peer's hub address,
 * device and keys — once the channel is approved; 409 while pending, after it closed and once the
 * peer device is revoked; 403 for an agent that is not a party; 404 for another tenant.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { newOwner, type Owner } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { keyAgent as newKeyAgent, type KeyAgent } from '../../testing/key-agents.js';
import { WsPool } from '../../testing/ws-client.js';

describe('A2A channel peer keys', () => {
  let t: TestApp;
  const pool = new WsPool();
  beforeAll(async () => {
    t = await startApp({ listen: true });
  });
  afterEach(() => pool.closeAll());
  afterAll(() => t.close());

  const keyAgent = (owner: Owner) => newKeyAgent(t, pool, owner, { prefix: 'peer' });

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

    // A revoked peer device's keys are not handed out.
    const second = await t.request({ method: 'POST', url: '/api/v1/a2a/channels/request', headers: x.headers, payload: { responder_hub_address: z.address } });
    expect((await t.request({ method: 'POST', url: `/api/v1/a2a/channels/${second.body.channel_id}/approve`, headers: owner.auth })).status).toBe(200);
    expect((await peer(x, second.body.channel_id)).status).toBe(200);
    expect((await t.request({ method: 'PATCH', url: `/api/v1/devices/${z.deviceId}/revoke`, headers: owner.auth })).status).toBe(200);
    const gone = await peer(x, second.body.channel_id);
    expect(gone.status).toBe(409);
    expect(gone.body.detail).toMatch(/not ACTIVE/);
  });
});
