/**
 * An instance whose Redis (`REDIS_URL`) is unreachable when it starts (docs/operations.md
 * "Faults"): it starts anyway and serves degraded (`/readyz` 200 `degraded`, Redis down), like a
 * running instance whose Redis goes away; when Redis answers, it joins: the event bus subscribes
 * (its sockets close with 1012 to catch up, events of other instances reach it, its own reach
 * them), HTTP rate limits and presence are kept in Redis, and readiness is `ok`.
 *
 * Runs a redis-server of its own (testing/own-services.ts), stopped before the app starts.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisBus } from '../../src/realtime/redis-bus.js';
import type { BusEvent } from '../../src/realtime/bus.js';
import { activeAgent, newOwner, registerOwnerDevice } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { until } from '../../testing/until.js';
import { findRedisServer, startOwnRedis, type OwnRedis } from '../../testing/own-services.js';
import { WsPool, wsAddress } from '../../testing/ws-client.js';

const redisBin = findRedisServer();

describe.skipIf(!redisBin)('an instance started while its Redis is down', () => {
  let redis: OwnRedis;
  let t: TestApp | undefined;
  let other: RedisBus | undefined;
  let inspect: Redis | undefined;
  const pool = new WsPool();

  beforeAll(async () => {
    redis = await startOwnRedis(redisBin!);
    await redis.stop();
  });
  afterAll(async () => {
    await pool.closeAll();
    await other?.close();
    inspect?.disconnect();
    await t?.close();
    await redis?.stop();
  });

  const readyz = async () => (t ? await t.request({ method: 'GET', url: '/readyz' }) : undefined);

  it('starts and serves degraded, then joins the bus, rate limits and presence when Redis answers', async () => {
    t = await startApp({ listen: true, env: { REDIS_URL: redis.url, RATE_LIMIT_ENROLL_PER_10MIN: '1000' } });

    const down = await readyz();
    expect(down).toMatchObject({ status: 200, body: { status: 'degraded', checks: { database: 'ok', redis: 'down' } } });
    expect(down!.body.detail).toMatch(/redis: .*cross-instance delivery paused/);

    // It serves meanwhile: an owner, an active agent and its socket.
    const owner = await newOwner(t);
    const od = await registerOwnerDevice(t, owner);
    const agent = await activeAgent(t, owner);
    const before = await pool.connect(wsAddress(t.wsUrl, { token: agent.jwt }));

    await redis.start();
    await until('readiness is ok', async () => ((await readyz())?.body.status === 'ok' ? true : undefined));

    // The bus subscribed: events of other instances may have been missed, so its sockets reconnect and catch up.
    expect((await before.waitClose(10_000)).code).toBe(1012);

    // Another instance's bus on the same Redis: events flow both ways.
    other = await RedisBus.connect(redis.url);
    const seen: BusEvent[] = [];
    other.subscribe((e) => seen.push(e));
    const agentWs = await pool.connect(wsAddress(t.wsUrl, { token: agent.jwt }));
    const ownerWs = await pool.connect(wsAddress(t.wsUrl, { token: owner.token, device_id: od.deviceId }));
    agentWs.send('typing', { conversation_id: agent.conversationId });
    await ownerWs.next('typing');
    await until('the instance publishes to Redis', async () => (seen.some((e) => e.type === 'frame' && e.event === 'typing') ? true : undefined));
    await other.publish({ type: 'close_device', deviceId: agent.deviceId, code: 4001, reason: 'revoked elsewhere' });
    expect((await agentWs.waitClose(5_000)).code).toBe(4001);

    // Rate limits and presence live in Redis again.
    inspect = new Redis(redis.url);
    await t.request({ method: 'GET', url: '/api/v1/devices', headers: owner.auth });
    expect(await inspect.keys('parley-rl:*')).not.toHaveLength(0);
    const presence = await pool.connect(wsAddress(t.wsUrl, { token: agent.jwt }));
    await until('the agent is announced in Redis', async () => ((await inspect!.zcard(`parley:presence:${agent.deviceId}`)) > 0 ? true : undefined));
    await presence.close();
  }, 60_000);
});
