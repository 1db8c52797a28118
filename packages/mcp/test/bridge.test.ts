/**
 * The bridge (contract §4.19; design §8.29): `parley-bridge --config` prints the host configuration;
 * `parley-bridge <hub> --api-key <key>` rents the hub's published listing with the tenant's
 * default payment method and serves, over stdio, one tool per rented skill; a call travels end to
 * end encrypted through the renter's local plugin over the A2A channel the rental authorizes, the
 * rented agent answers through its own plugin, and the answer is the tool's result. An invalid
 * token stops the bridge with one line.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { newOwner, type Owner, startApp, type TestApp, operatorAuth, publishedListing } from '@parley/server/testing';
import { BRIDGE_CLI, pluginAgent, pluginCall, runEntry, textOf, TSX_ARGS, type PluginAgent } from './fixtures.js';

const runBridge = (args: string[], env: Record<string, string> = {}) => runEntry(BRIDGE_CLI, args, env);

describe('parley-bridge', () => {
  let t: TestApp;
  let devOwner: Owner;
  let renterOwner: Owner;
  let dev: PluginAgent;
  let renter: PluginAgent;
  let stopAnswering = false;
  let answering: Promise<void> | undefined;

  beforeAll(async () => {
    t = await startApp({ listen: true });
    [devOwner, renterOwner] = await Promise.all([newOwner(t, 'Bridge Dev'), newOwner(t, 'Bridge Renter')]);
    dev = await pluginAgent(t, devOwner, 0.9, ['research', 'summarize']);
    const tier = await t.request({ method: 'POST', url: `/api/v1/hub/identities/${dev.identityId}/tier`, headers: await operatorAuth(t), payload: { tier: 'certified', reason: 'reviewed' } });
    expect(tier.status, JSON.stringify(tier.body)).toBe(200);
    await publishedListing(t, { owner: devOwner, address: dev.address } as never, { capabilities: ['research', 'summarize'], pricing: { model: 'per_task', price_cents: 300 }, term_hours: 1 });
    renter = await pluginAgent(t, renterOwner);
    expect((await t.request({ method: 'PUT', url: '/api/v1/marketplace/payment-method', headers: renterOwner.auth, payload: { payment_method: 'pm_card_visa' } })).status).toBe(200);

    // The rented agent: answers every skill_invocation it reads through its plugin.
    answering = (async () => {
      let since: string | undefined;
      while (!stopAnswering) {
        const page = await pluginCall(dev, 'GET', `/messages${since ? `?since=${encodeURIComponent(since)}` : ''}`).catch(() => ({ messages: [], next_since: null }));
        for (const m of page.messages) {
          const inv = m.text?.startsWith('{') ? JSON.parse(m.text) : undefined;
          if (inv?.parley !== 'skill_invocation') continue;
          const result = inv.skill === 'research' ? `found 3 sources on ${inv.args.topic}` : undefined;
          const answer = result ? { parley: 'skill_result', in_reply_to: inv.id, ok: true, result } : { parley: 'skill_result', in_reply_to: inv.id, ok: false, error: `cannot ${inv.skill} today` };
          await pluginCall(dev, 'POST', '/messages', { channel_id: m.channel_id, text: JSON.stringify({ ...answer, spt_seen: typeof inv.spt === 'string' }) });
        }
        since = page.next_since ?? since;
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
  });
  afterAll(async () => {
    stopAnswering = true;
    await answering;
    await Promise.all([dev?.stop(), renter?.stop()]);
    await t?.close();
  });

  it('--config prints the host configuration; usage errors exit 2', async () => {
    const r = await runBridge([dev.address, '--token', 'a.b.c', '--endpoint', t.baseUrl, '--config']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ mcpServers: { [dev.address]: { command: 'parley-bridge', args: [dev.address, '--endpoint', t.baseUrl, '--token', 'a.b.c'] } } });
    expect((await runBridge([])).code).toBe(2);
    expect((await runBridge(['Bad Name!'])).code).toBe(2);
  });

  it('an invalid token, or one for another hub, stops the bridge with one line', async () => {
    const r = await runBridge([dev.address, '--token', 'not-a-token', '--endpoint', t.baseUrl]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe('parley-bridge: the token is not a Skill Permission Token (a compact JWS with skill and aud claims)');
    const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const other = `${part({ alg: 'EdDSA' })}.${part({ sub: 'did:hub:someone-else', skill: 'research', aud: t.baseUrl })}.c2ln`;
    const wrongHub = await runBridge([dev.address, '--token', other, '--endpoint', t.baseUrl]);
    expect(wrongHub.code).toBe(1);
    expect(wrongHub.stderr.trim()).toBe(`parley-bridge: the token grants skills of did:hub:someone-else, not of did:hub:${dev.address}`);
    const remote = await runBridge([dev.address, '--token', other, '--endpoint', t.baseUrl], { PARLEY_PLUGIN_URL: 'http://plugin.example.com:18790' });
    expect(remote.code).toBe(2);
    expect(remote.stderr).toMatch(/PARLEY_PLUGIN_URL must be a loopback address/);
  });

  it('--api-key subscribes, serves the rented skills, and a call reaches the rented agent end to end', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [...TSX_ARGS, BRIDGE_CLI, dev.address, '--api-key', renter.apiKey, '--endpoint', t.baseUrl],
      env: { ...getDefaultEnvironment(), PARLEY_PLUGIN_URL: renter.plugin.url, PARLEY_STATE_DIR: renter.stateDir },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'bridge-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((x) => x.name)).toEqual(['research', 'summarize']);
      const rentals = await t.request({ method: 'GET', url: '/api/v1/marketplace/rentals?status=active', headers: renterOwner.auth });
      expect(rentals.body.rentals.map((r: any) => r.hub_address)).toEqual([dev.address]);

      const ok = (await client.callTool({ name: 'research', arguments: { topic: 'tides' } })) as CallToolResult;
      expect(ok.isError, textOf(ok)).toBeFalsy();
      expect(textOf(ok)).toBe('found 3 sources on tides');
      const refused = (await client.callTool({ name: 'summarize', arguments: {} })) as CallToolResult;
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toBe('cannot summarize today');
      // The channel the rental authorized: approved without the developer's owner, and backed by the rental.
      const channels = await t.request({ method: 'GET', url: '/api/v1/a2a/channels', headers: renterOwner.auth });
      expect(channels.body.channels[0]).toMatchObject({ responderHubAddress: dev.address, status: 'active', rentalId: rentals.body.rentals[0].rental_id });
    } finally {
      await client.close();
    }
  });
});
