import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startApp, type TestApp } from '../../server/test/harness.js';
import { call, keyAgent, mcpEnv, ok, stdioClient, type KeyAgent } from './fixtures.js';

describe('smoke', () => {
  let t: TestApp;
  let agent: KeyAgent;
  let client: Client;
  beforeAll(async () => {
    t = await startApp({ listen: true });
    agent = await keyAgent(t);
    client = await stdioClient(mcpEnv(t, agent));
  });
  afterAll(async () => {
    await client?.close();
    await t?.close();
  });
  it('lists and calls', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((x) => x.name)).toHaveLength(13);
    const r = ok(await call(client, 'svc_discover_agents', { query: agent.address }));
    expect(r.agents[0].hub_name).toBe(agent.address);
    const info = ok(await call(client, 'svc_get_agent_info', { hubName: agent.did }));
    expect(info).toMatchObject({ hub_name: agent.address, status: 'verified' });
  });
});
