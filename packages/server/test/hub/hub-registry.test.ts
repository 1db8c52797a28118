/**
 * Hub-address registry (contract §2.8 address part, §4.10; design §8.13, §8.15, §8.18): registration
 * by `POST /hub/register` and `POST /hub/identities`, address rules, platform-wide uniqueness,
 * device binding, listing, details, isolation across tenants, and the HubService lookups A2A uses.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTenant } from '../../src/db/tenant.js';
import { activeAgent, createInvite, enroll, newOwner, registerOwnerDevice, type Agent, type Owner } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { hubOwnerKey, newDeviceKeys } from '../../testing/keys.js';

let seq = 0;
/** A fresh valid address (unique per run and per call). */
const addr = (prefix = 'agent') => `${prefix}-${Date.now().toString(36)}-${++seq}`;
const ed25519B64 = () => Buffer.from(newDeviceKeys().identityPublicKey, 'hex').toString('base64');

describe('hub-address registry', () => {
  let t: TestApp;
  let a: Owner;
  let b: Owner;
  let aAgent: Agent;
  let bAgent: Agent;

  /** Registers with a fresh owner key unless `body` names one (`public_key: undefined` leaves it out). */
  const register = (owner: Pick<Owner, 'auth'> | { auth: Record<string, string> }, body: Record<string, unknown>, url = '/api/v1/hub/identities') =>
    t.request({ method: 'POST', url, headers: owner.auth, payload: { public_key: hubOwnerKey(), ...body } });

  beforeAll(async () => {
    t = await startApp();
    a = await newOwner(t, 'Tenant A');
    b = await newOwner(t, 'Tenant B');
    aAgent = await activeAgent(t, a);
    bAgent = await activeAgent(t, b);
  });
  afterAll(() => t.close());

  it('registers through both routes and answers the identity with its DID', async () => {
    const publicKey = ed25519B64();
    for (const url of ['/api/v1/hub/register', '/api/v1/hub/identities']) {
      const address = addr();
      const res = await register(a, { hub_address: address, display_name: 'Translator', description: 'fr<->en', capabilities: ['translate', 'summarize', 'translate'], public_key: publicKey }, url);
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        hub_address: address,
        did: `did:hub:${address}`,
        display_name: 'Translator',
        description: 'fr<->en',
        capabilities: ['translate', 'summarize'],
        public_key: publicKey,
        device_id: null,
        trust_tier: 'unverified',
      });
      expect(res.body.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(Number.isNaN(Date.parse(res.body.created_at))).toBe(false);
    }
    const minimal = await register(a, { hub_address: addr(), display_name: 'Min' });
    expect(minimal.status).toBe(201);
    expect(minimal.body).toMatchObject({ description: null, capabilities: [], public_key: expect.any(String), device_id: null });
    // contract §2.8: the registration body carries the owner key; without it nothing is registered.
    for (const url of ['/api/v1/hub/register', '/api/v1/hub/identities']) {
      const address = addr();
      const keyless = await register(a, { hub_address: address, display_name: 'No key', public_key: undefined }, url);
      expect(keyless.status, url).toBe(400);
      expect(keyless.body.detail).toMatch(/public_key/);
      expect((await t.request({ method: 'GET', url: `/api/v1/hub/${address}/did` })).status).toBe(404);
    }
  });

  it.each([
    ['abc', true],
    ['a-b', true],
    ['a1-2b', true],
    ['x'.repeat(32), true],
    ['ab', false],
    ['x'.repeat(33), false],
    ['-abc', false],
    ['abc-', false],
    ['a_b', false],
    ['a.b', false],
    ['a b', false],
    ['ab\u00e9', false],
    ['', false],
  ])('address %j is %s', async (address, ok) => {
    // Each app starts on a fresh database, so the table's valid addresses are free.
    const res = await register(a, { hub_address: address, display_name: 'Table' });
    expect(res.status, JSON.stringify(res.body)).toBe(ok ? 201 : 400);
    if (ok) expect(res.body.hub_address).toBe(address);
    else expect(res.body.detail).toEqual(expect.any(String));
  });

  it('accepts uppercase and stores it lowercase; the address is unique platform-wide in any case (409)', async () => {
    const address = addr('MixedCase');
    const res = await register(a, { hub_address: address, display_name: 'Upper' });
    expect(res.status).toBe(201);
    expect(res.body.hub_address).toBe(address.toLowerCase());
    expect(res.body.did).toBe(`did:hub:${address.toLowerCase()}`);
    // Same tenant, lowercase form: taken.
    expect((await register(a, { hub_address: address.toLowerCase(), display_name: 'Again' })).status).toBe(409);
    // Another tenant, either case: taken (platform-wide).
    const other = await register(b, { hub_address: address.toUpperCase(), display_name: 'Squatter' });
    expect(other.status).toBe(409);
    expect(other.body.detail).toMatch(/already registered/);
  });

  it('refuses bad bodies with 400', async () => {
    const base = { hub_address: addr(), display_name: 'Ok' };
    const bad: Record<string, unknown>[] = [
      {},
      { hub_address: addr() },
      { display_name: 'No address' },
      { ...base, display_name: '' },
      { ...base, hub_address: 42 },
      { ...base, capabilities: [{ name: 'translate' }] },
      { ...base, capabilities: Array.from({ length: 101 }, (_, i) => `c${i}`) },
      { ...base, capabilities: [''] },
      { ...base, public_key: 'not base64!' },
      { ...base, public_key: Buffer.alloc(31).toString('base64') },
      { ...base, public_key: Buffer.alloc(33).toString('base64') },
      { ...base, public_key: newDeviceKeys().identityPublicKey }, // hex, not base64
      { ...base, device_id: 'not-a-uuid' },
    ];
    for (const body of bad) {
      const res = await register(a, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.detail).toEqual(expect.any(String));
    }
    // Nothing above was registered.
    expect((await register(a, base)).status).toBe(201);
  });

  it('needs an owner token: 401 without or with a bad one, 403 with a device token', async () => {
    const body = { hub_address: addr(), display_name: 'X' };
    for (const url of ['/api/v1/hub/register', '/api/v1/hub/identities']) {
      expect((await t.request({ method: 'POST', url, payload: body })).status).toBe(401);
      expect((await register({ auth: { authorization: 'Bearer nope' } }, body, url)).status).toBe(401);
      expect((await register(aAgent, body, url)).status).toBe(403);
    }
    for (const url of ['/api/v1/hub/identities', `/api/v1/hub/identities/${randomUUID()}`]) {
      expect((await t.request({ method: 'GET', url })).status).toBe(401);
      expect((await t.request({ method: 'GET', url, headers: aAgent.auth })).status).toBe(403);
    }
  });

  describe('device binding (design §8.18)', () => {
    it('binds an ACTIVE agent device of the tenant, at most one identity per device (409)', async () => {
      const agent = await activeAgent(t, a);
      const res = await register(a, { hub_address: addr('bound'), display_name: 'Bound', device_id: agent.deviceId.toUpperCase() });
      expect(res.status).toBe(201);
      expect(res.body.device_id).toBe(agent.deviceId);
      const again = await register(a, { hub_address: addr('bound'), display_name: 'Second', device_id: agent.deviceId });
      expect(again.status).toBe(409);
      expect(again.body.detail).toMatch(/already bound/);
    });

    it("answers 404 for an unknown device or another tenant's device", async () => {
      expect((await register(a, { hub_address: addr(), display_name: 'X', device_id: randomUUID() })).status).toBe(404);
      expect((await register(a, { hub_address: addr(), display_name: 'X', device_id: bAgent.deviceId })).status).toBe(404);
    });

    it('refuses an owner device (400) and an agent device that is not ACTIVE (409)', async () => {
      const dev = await registerOwnerDevice(t, a);
      expect((await register(a, { hub_address: addr(), display_name: 'X', device_id: dev.deviceId })).status).toBe(400);
      const invite = await createInvite(t, a);
      const { res } = await enroll(t, invite.token);
      expect(res.status).toBe(201);
      const pending = await register(a, { hub_address: addr(), display_name: 'X', device_id: res.body.device_id });
      expect(pending.status).toBe(409);
      expect(pending.body.detail).toMatch(/PENDING/);
    });

    it('a failed registration binds nothing (the address stays free)', async () => {
      const address = addr('free');
      expect((await register(a, { hub_address: address, display_name: 'X', device_id: randomUUID() })).status).toBe(404);
      expect((await register(a, { hub_address: address, display_name: 'X' })).status).toBe(201);
    });
  });

  it("lists only the tenant's identities and shows details; another tenant's id answers 404", async () => {
    const c = await newOwner(t, 'Tenant C');
    expect((await t.request({ method: 'GET', url: '/api/v1/hub/identities', headers: c.auth })).body).toEqual({ identities: [] });
    const mine = (await register(c, { hub_address: addr('c'), display_name: 'C one', capabilities: ['x'] })).body;
    const list = await t.request({ method: 'GET', url: '/api/v1/hub/identities', headers: c.auth });
    expect(list.status).toBe(200);
    expect(list.body.identities).toEqual([mine]);
    const one = await t.request({ method: 'GET', url: `/api/v1/hub/identities/${mine.id}`, headers: c.auth });
    expect(one.status).toBe(200);
    expect(one.body).toEqual(mine);
    expect((await t.request({ method: 'GET', url: `/api/v1/hub/identities/${mine.id.toUpperCase()}`, headers: c.auth })).status).toBe(200);
    expect((await t.request({ method: 'GET', url: `/api/v1/hub/identities/${mine.id}`, headers: a.auth })).status).toBe(404);
    expect((await t.request({ method: 'GET', url: `/api/v1/hub/identities/${randomUUID()}`, headers: c.auth })).status).toBe(404);
    expect((await t.request({ method: 'GET', url: '/api/v1/hub/identities/nope', headers: c.auth })).status).toBe(400);
    const aList = (await t.request({ method: 'GET', url: '/api/v1/hub/identities', headers: a.auth })).body.identities as { id: string }[];
    expect(aList.length).toBeGreaterThan(0);
    expect(aList.some((i) => i.id === mine.id)).toBe(false);
  });

  describe('HubService (used by A2A)', () => {
    it('findByAddress resolves any tenant, any case, and answers null for unknown or malformed addresses', async () => {
      const address = addr('lookup');
      const created = (await register(b, { hub_address: address, display_name: 'Lookup', device_id: bAgent.deviceId })).body;
      const hub = t.app.parley.hub;
      const found = await hub.findByAddress(address.toUpperCase());
      expect(found).toMatchObject({ id: created.id, tenantId: b.tenantId, hubAddress: address, deviceId: bAgent.deviceId });
      expect(await hub.findByAddress(addr('unknown'))).toBeNull();
      expect(await hub.findByAddress('-bad-')).toBeNull();
      expect(await hub.findByAddress('')).toBeNull();
    });

    it("findByDevice answers the device's identity inside its tenant's scope only", async () => {
      const agent = await activeAgent(t, a);
      const created = (await register(a, { hub_address: addr('dev'), display_name: 'Dev', device_id: agent.deviceId })).body;
      const { db } = t.app.parley.database;
      const hub = t.app.parley.hub;
      expect(await withTenant(db, a.tenantId, (tx) => hub.findByDevice(tx, agent.deviceId))).toMatchObject({ id: created.id });
      expect(await withTenant(db, b.tenantId, (tx) => hub.findByDevice(tx, agent.deviceId))).toBeNull();
      expect(await withTenant(db, a.tenantId, (tx) => hub.findByDevice(tx, randomUUID()))).toBeNull();
    });
  });
});
