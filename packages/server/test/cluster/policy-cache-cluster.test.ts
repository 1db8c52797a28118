/**
 * The compiled-rule cache of the policy engine across instances (policies/compiled.ts):
 * two instances on one PostgreSQL database and the Redis bus. Instance B sends room messages with
 * its cached compiled policies; each policy create, update and delete made on instance A applies to
 * B's very next send (the `policy_epochs` version, bumped by a trigger in A's transaction, is read
 * by B's flush), and B recompiles exactly once per change, not on every send.
 *
 * Runs on PostgreSQL with TEST_REDIS_URL (PGlite cannot be shared between processes).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activeAgent, newOwner, registerOwnerDevice } from '../../testing/flows.js';
import { backend, startInstances, type TestApp, type TestCluster } from '../../testing/harness.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');

describe.skipIf(backend !== 'postgres' || !process.env.TEST_REDIS_URL)('compiled policy cache on two instances', () => {
  let cluster: TestCluster;
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    cluster = await startInstances(2, { RATE_LIMIT_ENROLL_PER_10MIN: '1000' });
    [a, b] = cluster.apps as [TestApp, TestApp];
  });
  afterAll(() => cluster?.close());

  it('applies a policy created, updated and deleted on one instance to the next send on the other', async () => {
    const owner = await newOwner(a);
    const od = await registerOwnerDevice(a, owner);
    const agent = await activeAgent(a, owner);
    const room = await a.request({ method: 'POST', url: '/api/v1/rooms', headers: owner.auth, payload: { name: 'ops', member_device_ids: [od.deviceId, agent.deviceId] } });
    expect(room.status).toBe(201);
    const roomId = room.body.room_id as string;
    /** One room message from the owner device to the agent through instance B; answers the agent's outcome. */
    const sendOnB = async () => {
      const res = await b.request({
        method: 'POST',
        url: `/api/v1/rooms/${roomId}/messages`,
        headers: { ...owner.auth, 'x-device-id': od.deviceId },
        payload: { envelopes: [{ recipient_device_id: agent.deviceId, header_blob: b64('h'), ciphertext: b64('c') }] },
      });
      expect(res.status).toBe(201);
      return res.body.deliveries[0].outcome as string;
    };
    const policiesOnA = (method: 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
      a.request({ method, url: `/api/v1/policies${url}`, headers: owner.auth, ...(payload ? { payload } : {}) });
    const compilesOnB = () => b.app.parley.policies.compiles;

    // Warm B's cache: the first send compiles the (empty) set once, later sends reuse it.
    expect(await sendOnB()).toBe('delivered');
    const warm = compilesOnB();
    expect(await sendOnB()).toBe('delivered');
    expect(await sendOnB()).toBe('delivered');
    expect(compilesOnB()).toBe(warm);

    const created = await policiesOnA('POST', '', { name: 'hold the agent', conditions: { recipient_device_ids: [agent.deviceId] }, action: 'hold' });
    expect(created.status).toBe(201);
    expect(await sendOnB()).toBe('held');
    expect(compilesOnB()).toBe(warm + 1);
    expect(await sendOnB()).toBe('held');
    expect(compilesOnB()).toBe(warm + 1);

    expect((await policiesOnA('PATCH', `/${created.body.policy_id}`, { action: 'block' })).status).toBe(200);
    expect(await sendOnB()).toBe('blocked');
    expect(compilesOnB()).toBe(warm + 2);

    expect((await policiesOnA('PATCH', `/${created.body.policy_id}`, { enabled: false })).status).toBe(200);
    expect(await sendOnB()).toBe('delivered');

    expect((await policiesOnA('PATCH', `/${created.body.policy_id}`, { enabled: true, action: 'notify' })).status).toBe(200);
    expect(await sendOnB()).toBe('notified');

    expect((await policiesOnA('DELETE', `/${created.body.policy_id}`)).status).toBe(204);
    expect(await sendOnB()).toBe('delivered');
    expect(compilesOnB()).toBe(warm + 5);
    expect(await sendOnB()).toBe('delivered');
    expect(compilesOnB()).toBe(warm + 5);
  });
});
