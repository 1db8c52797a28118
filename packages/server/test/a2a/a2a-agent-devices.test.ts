/**
 * A2A channel requests by enrolled agent devices (contract §4.13, §3.3; design §8.5; docs/decisions.md
 * "A2A channels"): an agent device's own JWT requests, lists and revokes channels acting as
 * itself, exactly like an API key; every rule stays (tier refusal naming the tier, the federation
 * agreement gate across tenants, one open channel per pair); an owner device's JWT and a
 * `initiator_device_id` naming another device are refused.
 */
import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hubIdentities } from '../../src/db/schema/index.js';
import { activeAgent, newOwner, registerOwnerDevice, type Agent, type Owner } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { hubOwnerKey } from '../../testing/keys.js';

const CHANNELS = '/api/v1/a2a/channels';
const inDays = (n: number) => new Date(Date.now() + n * 24 * 3600 * 1000).toISOString();

describe('A2A channels requested by agent device JWTs', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startApp({ env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000' } });
  });
  afterAll(() => t.close());

  /** An enrolled ACTIVE agent with a hub identity at `tier` / `score`. */
  async function agentWithIdentity(owner: Owner, tier = 'certified', score: number | null = 0.9): Promise<Agent & { address: string }> {
    const agent = await activeAgent(t, owner);
    const address = `dev-${randomBytes(5).toString('hex')}`;
    const res = await t.request({ method: 'POST', url: '/api/v1/hub/register', headers: owner.auth, payload: { hub_address: address, display_name: address, device_id: agent.deviceId, public_key: hubOwnerKey() } });
    expect(res.status).toBe(201);
    await t.app.parley.database.db.update(hubIdentities).set({ trustTier: tier, trustScore: score }).where(eq(hubIdentities.hubAddress, address));
    return { ...agent, address };
  }

  const request = (headers: Record<string, string>, payload: Record<string, unknown>) => t.request({ method: 'POST', url: `${CHANNELS}/request`, headers, payload });
  const list = (headers: Record<string, string>) => t.request({ method: 'GET', url: CHANNELS, headers });

  it('a certified agent device requests a channel as itself, lists its own channels and revokes; the request is audited with its actor', async () => {
    const owner = await newOwner(t);
    const x = await agentWithIdentity(owner);
    const y = await agentWithIdentity(owner);
    const z = await agentWithIdentity(owner);

    const res = await request(x.auth, { responder_hub_address: y.address });
    expect(res.status).toBe(201);
    const id = res.body.channel_id as string;
    expect(res.body).toMatchObject({ channelId: id, initiatorHubAddress: x.address, responderHubAddress: y.address, status: 'pending' });
    // One open channel per pair, whichever credential asks.
    expect((await request(x.auth, { responder_hub_address: y.address })).status).toBe(409);
    // The device acts for itself only.
    expect((await request(x.auth, { responder_hub_address: z.address, initiator_device_id: z.deviceId })).status).toBe(403);

    const mine = await list(x.auth);
    expect(mine.status).toBe(200);
    expect(mine.body.channels.map((c: any) => c.channelId)).toEqual([id]);
    expect((await list(y.auth)).body.channels.map((c: any) => c.channelId)).toEqual([id]);
    expect((await list(z.auth)).body.channels).toEqual([]);

    const [requested] = (await t.request({ method: 'GET', url: `/api/v1/audit/events?type=a2a_channel.requested&subject=${id}`, headers: owner.auth })).body.events;
    expect(requested).toMatchObject({ actor: `device:${x.deviceId}`, data: { initiator_device_id: x.deviceId } });

    const revoked = await t.request({ method: 'POST', url: `${CHANNELS}/${id}/revoke`, headers: y.auth });
    expect(revoked.status).toBe(200);
    expect(revoked.body.status).toBe('revoked');
    // A non-party agent of the same tenant is refused, as for API keys.
    expect((await t.request({ method: 'POST', url: `${CHANNELS}/${id}/revoke`, headers: z.auth })).status).toBe(403);
  });

  it('keeps the rules: an unverified device is refused naming the tier; no identity 403; across tenants enterprise and an agreement', async () => {
    const owner = await newOwner(t);
    const target = await agentWithIdentity(owner);
    const low = await agentWithIdentity(owner, 'unverified', 0.2);
    const refused = await request(low.auth, { responder_hub_address: target.address });
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toMatch(/certified/);
    expect(refused.body.detail).toMatch(/unverified/);

    const bare = await activeAgent(t, owner);
    const noIdentity = await request(bare.auth, { responder_hub_address: target.address });
    expect(noIdentity.status).toBe(403);
    expect(noIdentity.body.detail).toMatch(/hub identity/);

    const other = await newOwner(t);
    const far = await agentWithIdentity(other, 'enterprise');
    const top = await agentWithIdentity(owner, 'enterprise', 0.9);
    // Enterprise but no agreement: the federation gate.
    const noAgreement = await request(top.auth, { responder_hub_address: far.address });
    expect(noAgreement.status).toBe(403);
    expect(noAgreement.body.detail).toMatch(/agreement/);
    const proposed = await t.request({ method: 'POST', url: '/api/v1/federation/agreements', headers: owner.auth, payload: { partner_tenant_id: other.tenantId, trust_floor: 0.5, allowed_capabilities: [], expires_at: inDays(30) } });
    expect(proposed.status).toBe(201);
    expect((await t.request({ method: 'POST', url: `/api/v1/federation/agreements/${proposed.body.id}/accept`, headers: other.auth })).status).toBe(200);
    // Certified is not enough across tenants, even with an agreement.
    const needsEnterprise = await request(target.auth, { responder_hub_address: far.address });
    expect(needsEnterprise.status).toBe(403);
    expect(needsEnterprise.body.detail).toMatch(/enterprise/);
    const federated = await request(top.auth, { responder_hub_address: far.address });
    expect(federated.status).toBe(201);
    expect(federated.body.federated).toBe(true);
    // The other tenant's agent sees it; the other tenant's non-party agent does not.
    expect((await list(far.auth)).body.channels.map((c: any) => c.channelId)).toEqual([federated.body.channel_id]);
    const bystander = await agentWithIdentity(other);
    expect((await list(bystander.auth)).body.channels).toEqual([]);
  });

  it('an owner device JWT is refused (owners use the owner token); an unregistered API key still lists nothing', async () => {
    const owner = await newOwner(t);
    const target = await agentWithIdentity(owner);
    const od = await registerOwnerDevice(t, owner);
    // Owner devices get no device JWT from any route; mint one with the service's key to show the route refuses it.
    const { token } = await t.app.parley.deviceTokens.issue(od.deviceId, owner.tenantId);
    const asOwnerDevice = { authorization: `Bearer ${token}` };
    expect((await request(asOwnerDevice, { responder_hub_address: target.address })).status).toBe(403);
    expect((await list(asOwnerDevice)).status).toBe(403);

    const key = await t.request({ method: 'POST', url: '/api/v1/api-keys', headers: owner.auth, payload: { name: 'fresh' } });
    const unregistered = await list({ 'x-api-key': key.body.key });
    expect(unregistered.status).toBe(200);
    expect(unregistered.body.channels).toEqual([]);
    expect((await request({ 'x-api-key': key.body.key }, { responder_hub_address: target.address })).status).toBe(403);
  });
});
