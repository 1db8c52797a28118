/**
 * Discovery and marketplace tools over stdio (contract §4.19, §4.10, §4.11, §4.16; design §8.28,
 * §8.29): the `parley-mcp` command as a child process, driven by the official SDK's client,
 * against a real Parley server. Success and failure paths; failures are tool errors with the
 * service's detail, never protocol errors.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startApp, type TestApp, certifiedDeveloper, operatorAuth, publishedListing, type Developer, schema } from '@parley/server/testing';
import { eq } from 'drizzle-orm';
import { call, failed, keyAgent, mcpEnv, ok, stdioClient, textOf, type KeyAgent } from './fixtures.js';
const { hubIdentities } = schema;

describe('discovery and marketplace tools over stdio', () => {
  let t: TestApp;
  let agent: KeyAgent;
  let client: Client;
  let dev: Developer;
  let listingId: string;

  beforeAll(async () => {
    t = await startApp({ listen: true });
    agent = await keyAgent(t);
    dev = await certifiedDeveloper(t, await operatorAuth(t));
    listingId = await publishedListing(t, dev);
    client = await stdioClient(mcpEnv(t, agent));
  });
  afterAll(async () => {
    await client?.close();
    await t?.close();
  });

  it('lists the 13 tools with input and output schemas', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((x) => x.name).sort()).toEqual(
      [
        'svc_check_policy',
        'svc_compose_team',
        'svc_connect_agent',
        'svc_delegate_skill',
        'svc_discover_agents',
        'svc_discover_skills',
        'svc_get_agent_info',
        'svc_open_channel',
        'svc_poll_messages',
        'svc_register_agent',
        'svc_send_message',
        'svc_submit_audit',
        'svc_subscribe',
      ].sort(),
    );
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type).toBe('object');
      expect(tool.description!.length).toBeGreaterThan(20);
    }
    const send = tools.find((x) => x.name === 'svc_send_message')!;
    expect(send.inputSchema.required).toEqual(['text']);
  });

  it('svc_discover_skills finds the published listing without authentication, filtered by tags and certification', async () => {
    const found = ok(await call(client, 'svc_discover_skills', { query: 'research', tags: ['research', 'summarize'], certification: 'certified' }));
    const mine = found.listings.find((l: any) => l.listing_id === listingId);
    expect(mine).toMatchObject({ hub_name: dev.address, certification: 'certified', skills: ['research', 'summarize'], pricing: { model: 'per_hour', price_cents: 2500 } });
    expect(found.count).toBe(found.listings.length);
    const none = ok(await call(client, 'svc_discover_skills', { tags: ['research', 'no-such-skill'] }));
    expect(none.listings.find((l: any) => l.listing_id === listingId)).toBeUndefined();
    const enterprise = ok(await call(client, 'svc_discover_skills', { certification: 'enterprise' }));
    expect(enterprise.listings.find((l: any) => l.listing_id === listingId)).toBeUndefined();
  });

  it('svc_discover_agents answers hub profiles with trust scores', async () => {
    const r = ok(await call(client, 'svc_discover_agents', { query: agent.address, tier: 'certified' }));
    expect(r.agents).toHaveLength(1);
    expect(r.agents[0]).toMatchObject({ hub_name: agent.address, did: agent.did, trust_tier: 'certified', capabilities: ['research'] });
    expect(typeof r.agents[0].trust_score).toBe('number');
    expect(ok(await call(client, 'svc_discover_agents', { query: agent.address, tier: 'enterprise' })).count).toBe(0);
  });

  it('svc_get_agent_info carries the verify-agent status, active grants and listing pricing', async () => {
    const info = ok(await call(client, 'svc_get_agent_info', { hubName: `did:hub:${dev.address}` }));
    expect(info).toMatchObject({
      hub_name: dev.address,
      did: `did:hub:${dev.address}`,
      status: 'verified',
      certification: 'certified',
      active_grants: 0,
      skills: expect.arrayContaining(['research', 'summarize']),
      pricing: { model: 'per_hour', price_cents: 2500 },
      listing_id: listingId,
      mcp_url: null,
    });
    const self = ok(await call(client, 'svc_get_agent_info', { hubName: agent.address }));
    expect(self).toMatchObject({ hub_name: agent.address, pricing: null, listing_id: null });
    expect(failed(await call(client, 'svc_get_agent_info', { hubName: 'nobody-here-x' }))).toMatch(/^404 /);
    expect(failed(await call(client, 'svc_get_agent_info', { hubName: 'Not A Name!' }))).toMatch(/not a hub name/);
  });

  it('svc_get_agent_info writes the verification status and the tier each under its name', async () => {
    const newcomer = await keyAgent(t, undefined, 'unverified', null);
    const r = await call(client, 'svc_get_agent_info', { hubName: newcomer.address });
    expect(ok(r)).toMatchObject({ status: 'unverified', certification: 'unverified' });
    expect(textOf(r)).toMatch(new RegExp(`^${newcomer.did} "[^"]*": verification unverified, tier unverified, trust 0\\.50, 0 active grant\\(s\\)`));
    const listed = textOf(await call(client, 'svc_get_agent_info', { hubName: dev.address }));
    expect(listed).toMatch(/: verification verified, tier certified, trust /);
  });

  it('svc_discover_skills and svc_discover_agents leave out an agent whose identity is suspended', async () => {
    const other = await certifiedDeveloper(t, await operatorAuth(t), 'Other Dev');
    const otherListing = await publishedListing(t, other);
    const skills = async () => ok(await call(client, 'svc_discover_skills', { tags: ['research'] })).listings.map((l: { listing_id: string }) => l.listing_id);
    const agents = async () => ok(await call(client, 'svc_discover_agents', { query: other.address })).agents.map((a: { hub_name: string }) => a.hub_name);
    expect(await skills()).toContain(otherListing);
    expect(await agents()).toEqual([other.address]);
    await t.app.parley.database.db.update(hubIdentities).set({ status: 'suspended' }).where(eq(hubIdentities.id, other.identityId));
    expect(await skills()).not.toContain(otherListing);
    expect(await skills()).toContain(listingId);
    expect(await agents()).toEqual([]);
  });

  it('invalid arguments and unknown tools are tool errors, not protocol errors', async () => {
    expect(failed(await call(client, 'svc_discover_skills', { limit: 0 }))).toMatch(/invalid arguments for svc_discover_skills: \/limit/);
    expect(failed(await call(client, 'svc_get_agent_info', {}))).toMatch(/invalid arguments.*hubName/);
    expect(failed(await call(client, 'svc_no_such_tool', {}))).toMatch(/unknown tool/);
  });

  it('svc_subscribe says how to set a payment method, then rents with the default one and answers the SPT and a bridge configuration', async () => {
    expect(failed(await call(client, 'svc_subscribe', { listingId }))).toMatch(/PUT \/api\/v1\/marketplace\/payment-method/);
    const put = await t.request({ method: 'PUT', url: '/api/v1/marketplace/payment-method', headers: agent.owner.auth, payload: { payment_method: 'pm_card_visa' } });
    expect(put.status).toBe(200);
    expect(failed(await call(client, 'svc_subscribe', { listingId, hubName: agent.address }))).toMatch(/rents/);

    const sub = ok(await call(client, 'svc_subscribe', { listingId, hubName: dev.address }));
    expect(sub).toMatchObject({ status: 'active', hub_name: dev.address, amount_cents: 5000 });
    expect(sub.spt_token.split('.')).toHaveLength(3);
    expect(sub.mcp_config.mcpServers[dev.address]).toEqual({ command: 'parley-bridge', args: [dev.address, '--endpoint', t.baseUrl, '--token', sub.spt_token] });
    const valid = await t.request({ method: 'POST', url: '/api/v1/grants/validate', payload: { token: sub.spt_token, audience: JSON.parse(Buffer.from(sub.spt_token.split('.')[1], 'base64url').toString()).aud } });
    expect(valid.body.valid).toBe(true);

    const declined = await t.request({ method: 'PUT', url: '/api/v1/marketplace/payment-method', headers: agent.owner.auth, payload: { payment_method: 'pm_card_chargeDeclined' } });
    expect(declined.status).toBe(200);
    expect(failed(await call(client, 'svc_subscribe', { listingId }))).toMatch(/^402 |declined|failed/);
  });

  it('svc_connect_agent answers a ready-to-paste configuration and the claude mcp add line', async () => {
    const r = ok(await call(client, 'svc_connect_agent', { hubName: dev.address, sptToken: 'aaa.bbb.ccc' }));
    expect(r.mcp_config).toEqual({ mcpServers: { [dev.address]: { command: 'parley-bridge', args: [dev.address, '--endpoint', t.baseUrl, '--token', 'aaa.bbb.ccc'] } } });
    expect(r.claude_command).toBe(`claude mcp add ${dev.address} -- parley-bridge ${dev.address} --endpoint ${t.baseUrl} --token aaa.bbb.ccc`);
    const noToken = ok(await call(client, 'svc_connect_agent', { hubName: dev.address }));
    expect(noToken.mcp_config.mcpServers[dev.address].env).toHaveProperty('PARLEY_API_KEY');
  });
});
