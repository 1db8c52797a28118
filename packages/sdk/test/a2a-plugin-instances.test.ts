/**
 * A2A through the local plugin across service instances: two instances share one PostgreSQL
 * database and Redis (the cluster configuration of docs/operations.md); the calling agent X's
 * runtime and plugin connect to instance A, the answering agent Y's (its own official
 * `@a2a-js/sdk` server as `a2aUpstream`) to instance B. The channel approval, each call and every
 * answer and stream event cross instances; the official client's sends and streams get their
 * answers, in order.
 * Needs TEST_DATABASE_URL and TEST_REDIS_URL (`.ci/run` sets both); skipped without them.
 */
import type { Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import { TaskState, type Message, type StreamResponse } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInstances, type TestApp, type TestCluster } from '@parley/server/testing';
import { ParleyClient } from '../src/client/rest.js';
import { A2A_PARLEY_ERRORS } from '../src/node/a2a-errors.js';
import { officialClient, PluginAgents, rpcError, sendRequest, startUpstream, text, type PluginAgent, type UpstreamLog } from './a2a-fixtures.js';

const cluster = !!process.env.TEST_DATABASE_URL && !!process.env.TEST_REDIS_URL;

describe.skipIf(!cluster)('A2A through the local plugin across instances (needs TEST_DATABASE_URL and TEST_REDIS_URL)', () => {
  let instances: TestCluster;
  let a: TestApp;
  let b: TestApp;
  let agents: PluginAgents;
  let upstream: { url: string; server: Server; log: UpstreamLog };
  let x: PluginAgent;
  let y: PluginAgent;
  let client: Client;

  beforeAll(async () => {
    instances = await startInstances(2);
    [a, b] = instances.apps as [TestApp, TestApp];
    agents = new PluginAgents(a);
    upstream = await startUpstream();
    // One owner token is valid on every instance: the tenant is made through A, its agents connect to A and B.
    const token = await a.ownerToken(`a2a-instances-${randomBytes(4).toString('hex')}@example.com`);
    const ownerA = new ParleyClient({ baseUrl: a.baseUrl, ownerToken: token });
    const tenantId = (await ownerA.createTenant({ name: 'A2A instances' })).tenant_id;
    ownerA.setTenantId(tenantId);
    x = await agents.start(ownerA, a.baseUrl, 'x');
    y = await agents.start(ownerA, b.baseUrl, 'y', { a2aUpstream: upstream.url });
    client = await officialClient(x.plugin.url, x.plugin.token, y.address);

    // The channel X requests through A is approved through B; both agents learn it on their own instance.
    expect((await rpcError(client.sendMessage(sendRequest('hello')))).code).toBe(A2A_PARLEY_ERRORS.channel_pending);
    const channel = x.rt.channels.findByPeer(y.address)!;
    const ownerB = new ParleyClient({ baseUrl: b.baseUrl, ownerToken: token });
    ownerB.setTenantId(tenantId);
    await ownerB.approveA2aChannel(channel.channel_id);
    const [xs, ys] = await Promise.all([x.rt.channels.waitOpen(channel.channel_id, 15_000), y.rt.channels.waitOpen(channel.channel_id, 15_000)]);
    expect(xs?.open && ys?.open).toBe(true);
  });
  afterAll(async () => {
    await agents?.close();
    upstream?.server.close();
    await instances?.close();
  });

  it('send: each call gets its own answer, in order, and the upstream hears them in order', async () => {
    const asked = Array.from({ length: 5 }, (_, i) => `call ${i} ${randomBytes(3).toString('hex')}`);
    const answers: (string | undefined)[] = [];
    for (const q of asked) answers.push(text((await client.sendMessage(sendRequest(q))) as Message));
    expect(answers).toEqual(asked.map((q) => `echo: ${q}`));
    expect(upstream.log.heard.slice(-asked.length)).toEqual(asked);
    // Calls at once are told apart: each caller gets its own answer.
    const together = Array.from({ length: 4 }, (_, i) => `together ${i}`);
    const got = await Promise.all(together.map(async (q) => text((await client.sendMessage(sendRequest(q))) as Message)));
    expect(got).toEqual(together.map((q) => `echo: ${q}`));
  });

  it('streaming: events cross both instances in order', async () => {
    const events: StreamResponse[] = [];
    for await (const e of client.sendMessageStream(sendRequest('stream 8'))) events.push(e);
    expect(events[0]?.payload?.$case).toBe('task');
    const updates = events.flatMap((e) => (e.payload?.$case === 'statusUpdate' ? [text(e.payload.value.status?.message)] : []));
    expect(updates).toEqual([...Array.from({ length: 8 }, (_, i) => `chunk ${i + 1}`), 'done']);
    const last = events.at(-1)!.payload;
    expect(last?.$case === 'statusUpdate' && last.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });
});
