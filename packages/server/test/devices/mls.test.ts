/** MLS KeyPackage directory: publish, count, claim once, tenant isolation, auth. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activeAgent, newOwner, registerOwnerDevice, type Agent, type Owner, type OwnerDevice } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';

describe('MLS KeyPackages', () => {
  let t: TestApp;
  let owner: Owner;
  let od: OwnerDevice;
  let agent: Agent;
  const kp = (i: number) => Buffer.from(`key-package-${i}`).toString('base64');

  beforeAll(async () => {
    t = await startApp();
    owner = await newOwner(t);
    od = await registerOwnerDevice(t, owner);
    agent = await activeAgent(t, owner);
  });
  afterAll(() => t.close());

  it('an agent publishes, an owner device claims each KeyPackage exactly once, oldest first', async () => {
    const pub = await t.request({ method: 'POST', url: '/api/v1/mls/key-packages', headers: agent.auth, payload: { key_packages: [kp(1), kp(2)] } });
    expect(pub.status).toBe(201);
    expect(pub.body).toEqual({ device_id: agent.deviceId, published: 2, available: 2 });

    const headers = { ...owner.auth, 'x-device-id': od.deviceId };
    const count = await t.request({ method: 'GET', url: `/api/v1/mls/key-packages/${agent.deviceId}`, headers });
    expect(count.body.available).toBe(2);

    const claimed = [];
    for (let i = 0; i < 2; i++) {
      const c = await t.request({ method: 'POST', url: '/api/v1/mls/key-packages/claim', headers, payload: { device_id: agent.deviceId } });
      expect(c.status).toBe(200);
      claimed.push(c.body.key_package);
    }
    expect(claimed).toEqual([kp(1), kp(2)]);
    const none = await t.request({ method: 'POST', url: '/api/v1/mls/key-packages/claim', headers, payload: { device_id: agent.deviceId } });
    expect(none.status).toBe(404);
  });

  it('an owner publishes for its own device only with X-Device-Id', async () => {
    const missing = await t.request({ method: 'POST', url: '/api/v1/mls/key-packages', headers: owner.auth, payload: { key_packages: [kp(3)] } });
    expect(missing.status).toBe(400);
    const ok = await t.request({ method: 'POST', url: '/api/v1/mls/key-packages', headers: { ...owner.auth, 'x-device-id': od.deviceId }, payload: { key_packages: [kp(3)] } });
    expect(ok.status).toBe(201);
    expect(ok.body.device_id).toBe(od.deviceId);
    const asAgentDevice = await t.request({ method: 'POST', url: '/api/v1/mls/key-packages', headers: { ...owner.auth, 'x-device-id': agent.deviceId }, payload: { key_packages: [kp(4)] } });
    expect(asAgentDevice.status).toBe(403);
  });

  it('refuses bad input, missing auth and other tenants', async () => {
    expect((await t.request({ method: 'POST', url: '/api/v1/mls/key-packages', headers: agent.auth, payload: { key_packages: ['not base64!'] } })).status).toBe(400);
    expect((await t.request({ method: 'POST', url: '/api/v1/mls/key-packages', headers: agent.auth, payload: { key_packages: [] } })).status).toBe(400);
    expect((await t.request({ method: 'POST', url: '/api/v1/mls/key-packages', payload: { key_packages: [kp(5)] } })).status).toBe(401);
    const other = await newOwner(t, 'Other');
    const otherAgent = await activeAgent(t, other);
    await t.request({ method: 'POST', url: '/api/v1/mls/key-packages', headers: otherAgent.auth, payload: { key_packages: [kp(6)] } });
    const cross = await t.request({ method: 'POST', url: '/api/v1/mls/key-packages/claim', headers: agent.auth, payload: { device_id: otherAgent.deviceId } });
    expect(cross.status).toBe(404);
    const count = await t.request({ method: 'GET', url: `/api/v1/mls/key-packages/${otherAgent.deviceId}`, headers: agent.auth });
    expect(count.status).toBe(404);
  });

  it('ciphersuite labels: a claim takes the first accepted suite the device offers; the default accepts only suite 3', async () => {
    const dev = await activeAgent(t, owner);
    const headers = { ...owner.auth, 'x-device-id': od.deviceId };
    const url = '/api/v1/mls/key-packages';
    expect((await t.request({ method: 'POST', url, headers: dev.auth, payload: { key_packages: [kp(20)] } })).status).toBe(201);
    expect((await t.request({ method: 'POST', url, headers: dev.auth, payload: { key_packages: [kp(21), kp(22)], cipher_suite: 84 } })).status).toBe(201);
    const count = await t.request({ method: 'GET', url: `${url}/${dev.deviceId}`, headers });
    expect(count.body).toEqual({ device_id: dev.deviceId, available: 3, by_cipher_suite: [{ cipher_suite: 3, available: 1 }, { cipher_suite: 84, available: 2 }] });
    const take = (cipher_suites?: number[]) =>
      t.request({ method: 'POST', url: `${url}/claim`, headers, payload: { device_id: dev.deviceId, ...(cipher_suites ? { cipher_suites } : {}) } });
    const hybrid = await take([84, 3]);
    expect([hybrid.body.key_package, hybrid.body.cipher_suite]).toEqual([kp(21), 84]);
    const old = await take(); // a client from before X-Wing: never an X-Wing KeyPackage
    expect([old.body.key_package, old.body.cipher_suite]).toEqual([kp(20), 3]);
    expect((await take()).status).toBe(404);
    expect((await take([84, 3])).body.key_package).toBe(kp(22));
    expect((await take([84, 3])).status).toBe(404);
    expect((await t.request({ method: 'POST', url, headers: dev.auth, payload: { key_packages: [kp(23)], cipher_suite: 0 } })).status).toBe(400);
  });

  it('revoking a device deletes its unclaimed KeyPackages', async () => {
    const other = await activeAgent(t, owner);
    await t.request({ method: 'POST', url: '/api/v1/mls/key-packages', headers: other.auth, payload: { key_packages: [kp(7), kp(8)] } });
    const headers = { ...owner.auth, 'x-device-id': od.deviceId };
    expect((await t.request({ method: 'GET', url: `/api/v1/mls/key-packages/${other.deviceId}`, headers })).body.available).toBe(2);
    expect((await t.request({ method: 'PATCH', url: `/api/v1/devices/${other.deviceId}/revoke`, headers: owner.auth })).status).toBe(200);
    expect((await t.request({ method: 'GET', url: `/api/v1/mls/key-packages/${other.deviceId}`, headers })).body.available).toBe(0);
  });
});
