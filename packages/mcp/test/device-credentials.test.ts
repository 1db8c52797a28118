/**
 * Device credentials (design §8.27): with PARLEY_PRIVATE_KEY (the enrolled agent device's Ed25519
 * key) and PARLEY_DEVICE_ID instead of an API key, the tool server obtains its device JWT by the
 * challenge route (proof of possession) and acts as that device — svc_subscribe included (the
 * marketplace's rental routes take the agent's own device JWT); a key that is not the device's is a
 * tool error with the service's detail.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activeAgent, newOwner, type Agent, type Owner, startApp, type TestApp, hubOwnerKey, certifiedDeveloper, operatorAuth, publishedListing } from '@parley/server/testing';
import { parseConfig } from '../src/config.js';
import { ToolRuntime } from '../src/server.js';
import { addr, setTier } from './fixtures.js';

const seedHex = (a: Agent) => Buffer.from(a.keys.privateKey.export({ format: 'jwk' }).d!, 'base64url').toString('hex');

describe('device credentials', () => {
  let t: TestApp;
  let owner: Owner;
  let agent: Agent;
  let address: string;
  const runtimes: ToolRuntime[] = [];
  const runtime = (privateKey: string) => {
    const r = new ToolRuntime(parseConfig({ PARLEY_ENDPOINT: t.baseUrl, PARLEY_AGENT_ID: `did:hub:${address}`, PARLEY_PRIVATE_KEY: privateKey, PARLEY_DEVICE_ID: agent.deviceId }));
    runtimes.push(r);
    return r;
  };

  beforeAll(async () => {
    t = await startApp({ listen: true });
    owner = await newOwner(t, 'Device Co');
    agent = await activeAgent(t, owner);
    address = addr('dev');
    const reg = await t.request({ method: 'POST', url: '/api/v1/hub/register', headers: owner.auth, payload: { hub_address: address, display_name: 'Device agent', device_id: agent.deviceId, public_key: hubOwnerKey() } });
    expect(reg.status).toBe(201);
    await setTier(t, address, 'certified', 0.9);
  });
  afterAll(async () => {
    for (const r of runtimes) await r.close();
    await t?.close();
  });

  it('acts as the enrolled device through a device JWT renewed by challenge', async () => {
    const r = runtime(seedHex(agent));
    const audit = await r.call('svc_submit_audit', { action: 'device.checked' });
    expect(audit.isError, JSON.stringify(audit.content)).toBeFalsy();
    const events = await t.request({ method: 'GET', url: '/api/v1/audit/events?type=agent.action', headers: owner.auth });
    expect(events.body.events[0]).toMatchObject({ event_id: (audit.structuredContent as any).event_id, actor: `device:${agent.deviceId}`, data: { hub_address: address } });
    const policy = await r.call('svc_check_policy', { skillName: 'anything' });
    expect(policy.structuredContent).toMatchObject({ allowed: false, decided_by: 'grant' });
  });

  it('svc_subscribe rents a listing of another tenant as the device, with the default payment method', async () => {
    const dev = await certifiedDeveloper(t, await operatorAuth(t));
    const listingId = await publishedListing(t, dev);
    const put = await t.request({ method: 'PUT', url: '/api/v1/marketplace/payment-method', headers: owner.auth, payload: { payment_method: 'pm_card_visa' } });
    expect(put.status).toBe(200);
    const sub = await runtime(seedHex(agent)).call('svc_subscribe', { listingId, hubName: dev.address });
    expect(sub.isError, JSON.stringify(sub.content)).toBeFalsy();
    const out = sub.structuredContent as { rental_id: string; status: string; hub_name: string; spt_token: string };
    expect(out).toMatchObject({ status: 'active', hub_name: dev.address });
    expect(out.spt_token.split('.')).toHaveLength(3);
    const rental = await t.request({ method: 'GET', url: `/api/v1/marketplace/rentals/${out.rental_id}`, headers: owner.auth });
    expect(rental.body).toMatchObject({ role: 'renter', status: 'active' });
    const events = await t.request({ method: 'GET', url: '/api/v1/audit/events?type=rental.created', headers: owner.auth });
    expect(events.body.events.find((e: { subject: string }) => e.subject === out.rental_id)?.actor).toBe(`device:${agent.deviceId}`);
  });

  it('a key that is not the device’s is a tool error with the service’s detail', async () => {
    const r = runtime('11'.repeat(32));
    const res = await r.call('svc_submit_audit', { action: 'x' });
    expect(res.isError).toBe(true);
    expect((res.content[0] as { text: string }).text).toMatch(/^(400|401|403) /);
  });
});
