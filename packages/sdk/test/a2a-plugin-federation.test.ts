/**
 * A2A through the local plugin across tenants: the calling agent X (tenant A) and the answering
 * agent Y (tenant B, its own official `@a2a-js/sdk` server as `a2aUpstream`) belong to different
 * tenants. Without a federation agreement the official client gets a JSON-RPC error naming the
 * refusal; under an agreement, once Y's owner approves the channel, sends and streams reach Y's
 * server end to end (the database holds no plaintext). Tenant B's policies apply to the calls
 * (the stricter tenant wins); once the agreement is revoked the channel carries no call. A third
 * tenant renting Y on the marketplace calls it without an agreement, over a channel the rental
 * approves at once (docs/decisions.md "A2A channels backed by rentals").
 */
import type { Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import { TaskState, type Message, type StreamResponse } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scanForPlaintext } from '../../../demo/db-scan.js';
import { schema, startApp, type TestApp, rentAgent, type Owner } from '@parley/server/testing';
import { ParleyClient } from '../src/client/rest.js';
import { A2A_PARLEY_ERRORS } from '../src/node/a2a-errors.js';
import { heldCall, officialClient, PluginAgents, rpcError, sendRequest, startUpstream, text, type PluginAgent, type UpstreamLog } from './a2a-fixtures.js';
import { waitFor } from './wait.js';
const { hubIdentities } = schema;

const CANARY = `canary-${randomBytes(8).toString('hex')}`;
const inDays = (n: number) => new Date(Date.now() + n * 24 * 3600 * 1000).toISOString();

describe('A2A through the local plugin across tenants', () => {
  let t: TestApp;
  let agents: PluginAgents;
  let upstream: { url: string; server: Server; log: UpstreamLog };
  /** Owners of the calling tenant A and the answering tenant B. */
  let ownerA: ParleyClient;
  let ownerB: ParleyClient;
  let tenantB: Owner;
  let x: PluginAgent;
  let y: PluginAgent;

  /** A new tenant: its owner's client and the `Owner` of the server test flows (same token). */
  async function tenant(name: string): Promise<{ client: ParleyClient; owner: Owner }> {
    const sub = `a2a-fed-${name}-${randomBytes(4).toString('hex')}@example.com`;
    const token = await t.ownerToken(sub);
    const client = new ParleyClient({ baseUrl: t.baseUrl, ownerToken: token });
    const tenantId = (await client.createTenant({ name: `A2A federation ${name}` })).tenant_id;
    client.setTenantId(tenantId);
    return { client, owner: { sub, token, tenantId, auth: { authorization: `Bearer ${token}` } } };
  }
  const clientOf = (from: PluginAgent, to: PluginAgent): Promise<Client> => officialClient(from.plugin.url, from.plugin.token, to.address);

  beforeAll(async () => {
    t = await startApp({ listen: true });
    agents = new PluginAgents(t);
    upstream = await startUpstream();
    ownerA = (await tenant('a')).client;
    ({ client: ownerB, owner: tenantB } = await tenant('b'));
    // Across tenants the caller needs trust tier enterprise (the responder any tier).
    x = await agents.start(ownerA, t.baseUrl, 'x', { tier: 'enterprise' });
    y = await agents.start(ownerB, t.baseUrl, 'y', { a2aUpstream: upstream.url });
  });
  afterAll(async () => {
    await agents?.close();
    upstream?.server.close();
    await t?.close();
  });

  it('without a federation agreement the call is refused, naming the missing agreement; no channel is made', async () => {
    const client = await clientOf(x, y);
    expect((await client.getAgentCard()).name).toBe('Agent y');
    const err = await rpcError(client.sendMessage(sendRequest('hello across tenants')));
    expect(err.code).toBe(A2A_PARLEY_ERRORS.policy_blocked);
    expect(err.message).toMatch(/no active federation agreement/);
    expect(x.rt.channels.findByPeer(y.address)).toBeUndefined();
    expect(await ownerB.listA2aChannels()).toEqual([]);
    expect(upstream.log.heard).toEqual([]);
  });

  it('under an agreement the channel waits for the answering owner only; once approved it opens', async () => {
    const proposed = await ownerA.proposeFederation({ partner_tenant_id: tenantB.tenantId, trust_floor: 0.5, expires_at: inDays(30) });
    expect(proposed.status).toBe('pending');
    // A pending agreement does not federate yet.
    expect((await rpcError((await clientOf(x, y)).sendMessage(sendRequest('too early')))).message).toMatch(/no active federation agreement/);
    expect((await ownerB.acceptFederation(proposed.id)).status).toBe('active');

    const pending = await rpcError((await clientOf(x, y)).sendMessage(sendRequest('hello')));
    expect(pending.code).toBe(A2A_PARLEY_ERRORS.channel_pending);
    const channel = x.rt.channels.findByPeer(y.address)!;
    expect(channel.status).toBe('pending');
    const seen = (await ownerB.listA2aChannels()).find((c) => c.channelId === channel.channel_id);
    expect(seen).toMatchObject({ federated: true, agreementId: proposed.id, status: 'pending' });
    // The calling tenant's owner cannot approve on the answering tenant's behalf.
    await expect(ownerA.approveA2aChannel(channel.channel_id)).rejects.toMatchObject({ status: 403 });
    await ownerB.approveA2aChannel(channel.channel_id);
    const [xs, ys] = await Promise.all([x.rt.channels.waitOpen(channel.channel_id, 15_000), y.rt.channels.waitOpen(channel.channel_id, 15_000)]);
    expect(xs?.open && ys?.open).toBe(true);
  });

  it('send: the official client gets the official server answer across tenants', async () => {
    const answer = (await (await clientOf(x, y)).sendMessage(sendRequest(`secret ${CANARY}`))) as Message;
    expect(text(answer)).toBe(`echo: secret ${CANARY}`);
    expect(upstream.log.heard).toContain(`secret ${CANARY}`);
  });

  it('streaming: events arrive in order across tenants', async () => {
    const events: StreamResponse[] = [];
    for await (const e of (await clientOf(x, y)).sendMessageStream(sendRequest(`stream 3 ${CANARY}`))) events.push(e);
    expect(events[0]?.payload?.$case).toBe('task');
    const updates = events.flatMap((e) => (e.payload?.$case === 'statusUpdate' ? [text(e.payload.value.status?.message)] : []));
    expect(updates).toEqual(['chunk 1', 'chunk 2', 'chunk 3', 'done']);
    const last = events.at(-1)!.payload;
    expect(last?.$case === 'statusUpdate' && last.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it('the database holds no plaintext of the calls', async () => {
    const scan = await scanForPlaintext(t.app.parley.database, [CANARY]);
    expect(scan.columns.length).toBeGreaterThan(0);
    expect(scan.leaks).toEqual([]);
  });

  it("the answering tenant's block policy stops the call, even where the calling tenant only holds (the stricter wins)", async () => {
    const holdA = await ownerA.createPolicy({ name: 'hold a2a text', action: 'hold', conditions: { message_types: ['text'] } });
    const blockB = await ownerB.createPolicy({ name: 'block a2a text', action: 'block', conditions: { message_types: ['text'] } });
    try {
      const asked = `blocked call ${randomBytes(4).toString('hex')}`;
      const err = await rpcError((await clientOf(x, y)).sendMessage(sendRequest(asked)));
      expect(err.code).toBe(A2A_PARLEY_ERRORS.policy_blocked);
      expect(err.message).toMatch(/a policy blocked the A2A call/);
      expect(upstream.log.heard).not.toContain(asked);
    } finally {
      await ownerA.updatePolicy(holdA.policy_id, { enabled: false });
      await ownerB.updatePolicy(blockB.policy_id, { enabled: false });
    }
  });

  it("the answering tenant's hold policy holds the call there; once its owner approves, the call reaches Y's server", async () => {
    const holdB = await ownerB.createPolicy({ name: 'hold a2a text', action: 'hold', conditions: { message_types: ['text'] } });
    try {
      const { asked, heldId } = await heldCall(await clientOf(x, y), upstream.log.heard);
      // The held message lives in the tenant whose policy held it.
      expect((await ownerB.listHeldMessages()).map((h) => h.held_message_id)).toContain(heldId);
      expect((await ownerA.listHeldMessages()).map((h) => h.held_message_id)).not.toContain(heldId);
      await expect(ownerA.approveHeldMessage(heldId)).rejects.toMatchObject({ status: 404 });
      await ownerB.approveHeldMessage(heldId);
      await waitFor(() => upstream.log.heard.includes(asked), 'the approved call reaches the upstream', 15_000);
    } finally {
      await ownerB.updatePolicy(holdB.policy_id, { enabled: false });
    }
  });

  it('once the agreement is revoked, the open channel carries no call: the refusal names the agreement', async () => {
    const [agreement] = await ownerB.listFederationAgreements();
    expect((await ownerB.revokeFederation(agreement!.id)).status).toBe('revoked');
    const asked = `after revocation ${randomBytes(4).toString('hex')}`;
    const err = await rpcError((await clientOf(x, y)).sendMessage(sendRequest(asked)));
    expect(err.code).toBe(A2A_PARLEY_ERRORS.policy_blocked);
    expect(err.message).toMatch(/federation agreement .* expired or was revoked/);
    expect(upstream.log.heard).not.toContain(asked);
  });

  it('a tenant renting Y on the marketplace calls it without an agreement, over a channel the rental approves at once', async () => {
    const c = await tenant('c');
    // An unverified caller: the rental, not a trust tier, authorizes the channel.
    const z = await agents.start(c.client, t.baseUrl, 'z', { tier: 'unverified', trustScore: 0 });
    const [identity] = await t.app.parley.database.db.select().from(hubIdentities).where(eq(hubIdentities.hubAddress, y.address));
    const rentalId = await rentAgent(t, { owner: tenantB, address: y.address, identityId: identity!.id }, c.owner);
    // No owner approves anything: the first call goes through.
    const answer = (await (await clientOf(z, y)).sendMessage(sendRequest('rented call'))) as Message;
    expect(text(answer)).toBe('echo: rented call');
    expect((await c.client.listA2aChannels()).find((ch) => ch.responderHubAddress === y.address)).toMatchObject({ federated: true, agreementId: null, rentalId, status: 'active' });
  });
});
