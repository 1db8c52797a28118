/**
 * PQXDH prekeys of the X3DH fallback (design §8.34): stored and served as opaque blobs;
 * one last-resort prekey per device (replaced on publish, never consumed), one-time prekeys claimed
 * once and first; 404 (classical X3DH) for devices that published none; tenant isolation; deleted
 * on revocation.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activeAgent, newOwner, registerOwnerDevice, type Agent, type Owner, type OwnerDevice } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';

const b64 = (n: number) => randomBytes(n).toString('base64');
const prekey = (keyId: string) => ({ key_id: keyId, public_key: b64(1184), signature: b64(64) });

describe('PQ prekeys', () => {
  let t: TestApp;
  let owner: Owner;
  let od: OwnerDevice;
  let agent: Agent;
  let asOwnerDevice: Record<string, string>;

  beforeAll(async () => {
    t = await startApp();
    owner = await newOwner(t);
    od = await registerOwnerDevice(t, owner);
    agent = await activeAgent(t, owner);
    asOwnerDevice = { ...owner.auth, 'x-device-id': od.deviceId };
  });
  afterAll(() => t.close());

  const publish = (auth: Record<string, string>, payload: object) => t.request({ method: 'POST', url: '/api/v1/pq-prekeys', headers: auth, payload });
  const claim = (auth: Record<string, string>, deviceId: string) => t.request({ method: 'POST', url: '/api/v1/pq-prekeys/claim', headers: auth, payload: { device_id: deviceId } });

  it('a device without PQ prekeys (an older client) answers 404: the peer runs classical X3DH', async () => {
    const count = await t.request({ method: 'GET', url: `/api/v1/pq-prekeys/${agent.deviceId}`, headers: asOwnerDevice });
    expect(count.body).toEqual({ device_id: agent.deviceId, last_resort: false, last_resort_key_id: null, last_resort_signature: null, one_time_available: 0 });
    expect((await claim(asOwnerDevice, agent.deviceId)).status).toBe(404);
  });

  it('serves the blobs byte for byte: one-time prekeys once each, oldest first, then the last-resort one every time', async () => {
    const last = prekey('last-1');
    const [o1, o2] = [prekey('one-1'), prekey('one-2')];
    const pub = await publish(agent.auth, { last_resort: last, one_time: [o1, o2] });
    expect(pub.status).toBe(201);
    expect(pub.body).toEqual({ device_id: agent.deviceId, last_resort: true, last_resort_key_id: 'last-1', last_resort_signature: last.signature, one_time_available: 2 });

    const got = [];
    for (let i = 0; i < 4; i++) {
      const c = await claim(asOwnerDevice, agent.deviceId);
      expect(c.status).toBe(200);
      got.push(c.body);
    }
    expect(got.map((c) => [c.key_id, c.one_time])).toEqual([['one-1', true], ['one-2', true], ['last-1', false], ['last-1', false]]);
    expect(got[0]).toEqual({ device_id: agent.deviceId, ...o1, one_time: true });
    expect(got[2]).toEqual({ device_id: agent.deviceId, ...last, one_time: false });
    expect((await t.request({ method: 'GET', url: `/api/v1/pq-prekeys/${agent.deviceId}`, headers: asOwnerDevice })).body.one_time_available).toBe(0);
  });

  it('a new last-resort prekey replaces the old one', async () => {
    const next = prekey('last-2');
    expect((await publish(agent.auth, { last_resort: next })).status).toBe(201);
    const c = await claim(asOwnerDevice, agent.deviceId);
    expect(c.body).toEqual({ device_id: agent.deviceId, ...next, one_time: false });
    expect((await t.request({ method: 'GET', url: `/api/v1/pq-prekeys/${agent.deviceId}`, headers: asOwnerDevice })).body.last_resort_key_id).toBe('last-2');
  });

  it('an owner publishes for its own device with X-Device-Id, and claims an agent the same way', async () => {
    expect((await publish(owner.auth, { last_resort: prekey('o') })).status).toBe(400);
    const ok = await publish(asOwnerDevice, { last_resort: prekey('o') });
    expect(ok.status).toBe(201);
    expect(ok.body.device_id).toBe(od.deviceId);
    const c = await claim(agent.auth, od.deviceId);
    expect(c.status).toBe(200);
    expect(c.body.key_id).toBe('o');
  });

  it('refuses malformed input: nothing to publish, bad base64, oversize blobs, repeated ids, bad ids', async () => {
    expect((await publish(agent.auth, {})).status).toBe(400);
    expect((await publish(agent.auth, { one_time: [] })).status).toBe(400);
    expect((await publish(agent.auth, { last_resort: { ...prekey('x'), public_key: 'not base64!' } })).status).toBe(400);
    expect((await publish(agent.auth, { last_resort: { ...prekey('x'), public_key: 'QQ' } })).status).toBe(400); // not canonical (padding)
    expect((await publish(agent.auth, { last_resort: { ...prekey('x'), public_key: b64(4097) } })).status).toBe(400);
    expect((await publish(agent.auth, { last_resort: { ...prekey('x'), signature: b64(257) } })).status).toBe(400);
    expect((await publish(agent.auth, { one_time: [prekey('same'), prekey('same')] })).status).toBe(400);
    expect((await publish(agent.auth, { last_resort: prekey('no spaces') })).status).toBe(400);
    expect((await publish({}, { last_resort: prekey('x') })).status).toBe(401);
  });

  it('keeps tenants apart and serves nothing of a revoked device', async () => {
    const other = await newOwner(t, 'Other');
    const otherAgent = await activeAgent(t, other);
    expect((await publish(otherAgent.auth, { last_resort: prekey('theirs') })).status).toBe(201);
    expect((await claim(agent.auth, otherAgent.deviceId)).status).toBe(404);
    expect((await t.request({ method: 'GET', url: `/api/v1/pq-prekeys/${otherAgent.deviceId}`, headers: agent.auth })).status).toBe(404);

    const leaving = await activeAgent(t, owner);
    expect((await publish(leaving.auth, { last_resort: prekey('l'), one_time: [prekey('l1')] })).status).toBe(201);
    expect((await t.request({ method: 'PATCH', url: `/api/v1/devices/${leaving.deviceId}/revoke`, headers: owner.auth })).status).toBe(200);
    expect((await claim(asOwnerDevice, leaving.deviceId)).status).toBe(404);
    expect((await t.request({ method: 'GET', url: `/api/v1/pq-prekeys/${leaving.deviceId}`, headers: asOwnerDevice })).body).toEqual({
      device_id: leaving.deviceId,
      last_resort: false,
      last_resort_key_id: null,
      last_resort_signature: null,
      one_time_available: 0,
    });
  });
});
