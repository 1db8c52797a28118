/**
 * Two service instances on one PostgreSQL database, joined by the Redis event bus (design §2, §5,
 * §6): an agent socket on instance 1 and an owner-device socket on instance 2 exchange messages,
 * and a revocation made through instance 2 closes the agent's socket on instance 1 with 4001.
 *
 * Runs only with TEST_REDIS_URL and TEST_BACKEND=postgres (PGlite cannot be shared between
 * instances). Each run uses its own Redis channel so that concurrent runs do not see each other.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { activeAgent, newOwner, registerOwnerDevice, type Agent, type Owner, type OwnerDevice } from '../../testing/flows.js';
import { backend, startInstances, type TestApp, type TestCluster } from '../../testing/harness.js';
import { WsPool, wsAddress, type Frame } from '../../testing/ws-client.js';

const redisUrl = process.env.TEST_REDIS_URL;
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const isAck = (ref: string) => (f: Frame) => f.event === 'message_ack' && f.data?.client_ref === ref;
const isMessage = (id: string) => (f: Frame) => f.event === 'message' && f.data?.message_id === id;

describe.skipIf(!redisUrl || backend !== 'postgres')('Redis event bus across two instances', () => {
  let cluster: TestCluster;
  let one: TestApp;
  let two: TestApp;
  const pool = new WsPool();

  beforeAll(async () => {
    // Rate-limit counters live in the shared Redis: keep the per-IP enrollment limit out of the way.
    cluster = await startInstances(2, { RATE_LIMIT_ENROLL_PER_10MIN: '1000' });
    [one, two] = cluster.apps as [TestApp, TestApp];
  });
  afterEach(() => pool.closeAll());
  afterAll(() => cluster?.close());

  async function setup(): Promise<{ owner: Owner; od: OwnerDevice; agent: Agent; conv: string }> {
    const owner = await newOwner(two);
    const od = await registerOwnerDevice(two, owner);
    const agent = await activeAgent(one, owner);
    return { owner, od, agent, conv: agent.conversationId! };
  }

  it('delivers messages both ways between an agent on instance 1 and an owner device on instance 2', async () => {
    const { owner, od, agent, conv } = await setup();
    const agentWs = await pool.connect(wsAddress(one.wsUrl, { token: agent.jwt }));
    const ownerWs = await pool.connect(wsAddress(two.wsUrl, { token: owner.token, device_id: od.deviceId }));
    // A second socket of the owner device, on instance 1.
    const ownerOther = await pool.connect(wsAddress(one.wsUrl, { token: owner.token, device_id: od.deviceId }));

    const down = { conversation_id: conv, header_blob: b64('h-down'), ciphertext: b64('c-down'), priority: 'high', client_ref: 'down' };
    ownerWs.send('message', down);
    const ack = await ownerWs.next(isAck('down'));
    // Committed before the ack: instance 1 reads it from the shared database.
    const hist = await one.request({ method: 'GET', url: `/api/v1/conversations/${conv}/messages`, headers: owner.auth });
    expect(hist.body.messages.map((m: { message_id: string }) => m.message_id)).toContain(ack.data.message_id);
    const got = await agentWs.next(isMessage(ack.data.message_id));
    expect(got.data).toMatchObject({
      conversation_id: conv,
      sender_device_id: od.deviceId,
      header_blob: down.header_blob,
      ciphertext: down.ciphertext,
      priority: 'high',
      message_type: 'text',
      topic_id: agent.defaultTopicId,
      message_group_id: agent.groupId,
    });
    expect((await ownerOther.next(isMessage(ack.data.message_id))).data.sender_device_id).toBe(od.deviceId);

    const up = { conversation_id: conv, header_blob: b64('h-up'), ciphertext: b64('c-up'), client_ref: 'up' };
    agentWs.send('message', up);
    const ack2 = await agentWs.next(isAck('up'));
    const got2 = await ownerWs.next(isMessage(ack2.data.message_id));
    expect(got2.data).toMatchObject({ conversation_id: conv, sender_device_id: agent.deviceId, ciphertext: up.ciphertext });
    await ownerOther.next(isMessage(ack2.data.message_id));

    agentWs.send('typing', { conversation_id: conv });
    expect((await ownerWs.next('typing')).data).toEqual({ conversation_id: conv, device_id: agent.deviceId });

    // No echo to the sending sockets, wherever the event went through.
    await sleep(200);
    await ownerWs.roundTrip();
    await agentWs.roundTrip();
    expect(ownerWs.received.filter(isMessage(ack.data.message_id))).toEqual([]);
    expect(agentWs.received.filter(isMessage(ack2.data.message_id))).toEqual([]);
  });

  it("revocation through instance 2 closes the agent's socket on instance 1 with 4001", async () => {
    const { owner, od, agent } = await setup();
    const agentWs = await pool.connect(wsAddress(one.wsUrl, { token: agent.jwt }));
    const ownerWs = await pool.connect(wsAddress(two.wsUrl, { token: owner.token, device_id: od.deviceId }));

    const start = Date.now();
    const closed = agentWs.waitClose(1500).then((c) => ({ ...c, at: Date.now() }));
    const res = await two.request({ method: 'PATCH', url: `/api/v1/devices/${agent.deviceId}/revoke`, headers: owner.auth });
    expect(res.status).toBe(200);
    const c = await closed;
    expect(c.code).toBe(4001);
    expect(c.at - start).toBeLessThan(1000);
    expect(ownerWs.isOpen).toBe(true);

    const again = await pool.open(wsAddress(one.wsUrl, { token: agent.jwt }));
    expect((await again.waitClose(2000)).code).toBe(4001);
  });
});
