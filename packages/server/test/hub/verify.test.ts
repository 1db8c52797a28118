/**
 * Verify agent (contract §4.11, §8): `GET /verify/{hub_address}` — status (verified, unverified,
 * suspended, not_found), tier, trust scores (contract §2.9 keys: the latest snapshot of the requested
 * window, else the contract §3.9 warm-up values — the same values GET /trust-scores answers), active
 * grants (active SPTs of the bound device),
 * timestamps, the window parameter, public access with credential checks, and the contract §8 limits
 * (per IP, higher per API key).
 */
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devices, hubIdentities } from '../../src/db/schema/index.js';
import { TRUST_DIMENSIONS } from '../../src/modules/verification/service.js';
import { activeAgent, newOwner, type Agent, type Owner } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { dims, TrustSeed } from '../../testing/trust-fixtures.js';
import { hubOwnerKey } from '../../testing/keys.js';

let seq = 0;
const addr = (prefix = 'vfy') => `${prefix}-${Date.now().toString(36)}-${++seq}`;

describe('GET /verify/{hub_address}', () => {
  let t: TestApp;
  let a: Owner;

  const get = (address: string, query = '', headers: Record<string, string> = {}) => t.request({ method: 'GET', url: `/api/v1/verify/${address}${query}`, headers });
  const update = (address: string, set: Partial<typeof hubIdentities.$inferInsert>) => t.app.parley.database.db.update(hubIdentities).set(set).where(eq(hubIdentities.hubAddress, address));
  const register = async (owner: Owner, deviceId?: string) => {
    const hub_address = addr();
    const res = await t.request({ method: 'POST', url: '/api/v1/hub/identities', headers: owner.auth, payload: { hub_address, display_name: 'Agent', public_key: hubOwnerKey(), ...(deviceId ? { device_id: deviceId } : {}) } });
    expect(res.status).toBe(201);
    return hub_address;
  };

  beforeAll(async () => {
    // The contract §8 limits have their own suite below; these tests make more requests than 30/min.
    t = await startApp({ env: { RATE_LIMIT_VERIFY_PUBLIC_PER_MIN: '1000' } });
    a = await newOwner(t, 'Verify tenant');
  });
  afterAll(() => t.close());

  it('a certified identity with an ACTIVE bound device is verified, with the full answer shape', async () => {
    const agent = await activeAgent(t, a);
    const address = await register(a, agent.deviceId);
    const unverified = await get(address.toUpperCase());
    expect(unverified.status).toBe(200);
    expect(unverified.body).toMatchObject({ did: `did:hub:${address}`, status: 'unverified', trust_tier: 'unverified', window: '7d', active_grants: 0, last_attestation: null });

    const attested = new Date('2026-01-02T03:04:05.000Z');
    await update(address, { trustTier: 'certified', trustScore: 0.73, lastAttestationAt: attested });
    const res = await get(address);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ did: `did:hub:${address}`, status: 'verified', trust_tier: 'certified', last_attestation: attested.toISOString() });
    expect(Object.keys(res.body.trust_scores).sort()).toEqual(['composite', ...TRUST_DIMENSIONS].sort());
    expect(TRUST_DIMENSIONS).toHaveLength(12);
    // No snapshot yet: contract §3.9 warm-up values, not the identity's stored (7-day) trust_score.
    expect(res.body.trust_scores.composite).toBe(0.5);
    for (const d of TRUST_DIMENSIONS) expect(res.body.trust_scores[d]).toBe(0.5);
    const [device] = await t.app.parley.database.db.select().from(devices).where(eq(devices.id, agent.deviceId));
    expect(res.body.enrolled_at).toBe(device!.enrolledAt.toISOString());
    expect(res.body.last_seen).toBe(device!.lastSeen?.toISOString() ?? null);

    await update(address, { trustTier: 'enterprise', trustScore: null });
    const enterprise = await get(address);
    expect(enterprise.body).toMatchObject({ status: 'verified', trust_tier: 'enterprise' });
    expect(enterprise.body.trust_scores.composite).toBe(0.5);
  });

  it('a certified identity without a bound device is unverified; enrolled_at falls back to registration', async () => {
    const address = await register(a);
    await update(address, { trustTier: 'certified' });
    const res = await get(address);
    expect(res.body).toMatchObject({ status: 'unverified', trust_tier: 'certified', last_seen: null });
    const [row] = await t.app.parley.database.db.select().from(hubIdentities).where(eq(hubIdentities.hubAddress, address));
    expect(res.body.enrolled_at).toBe(row!.createdAt.toISOString());
  });

  it('suspended: the identity suspended, or its device revoked', async () => {
    const suspended = await register(a);
    await update(suspended, { trustTier: 'certified', status: 'suspended' });
    expect((await get(suspended)).body.status).toBe('suspended');

    const agent: Agent = await activeAgent(t, a);
    const address = await register(a, agent.deviceId);
    await update(address, { trustTier: 'certified' });
    expect((await get(address)).body.status).toBe('verified');
    expect((await t.request({ method: 'PATCH', url: `/api/v1/devices/${agent.deviceId}/revoke`, headers: a.auth })).status).toBe(200);
    // Revocation also demotes the bound identity (trust/retire.ts retireAgentDevice).
    expect((await get(address)).body).toMatchObject({ status: 'suspended', trust_tier: 'unverified' });
  });

  it('trust_scores come from the latest snapshot of the requested window, the contract §3.9 warm-up values without one', async () => {
    const seed = new TrustSeed(t);
    const agent = await activeAgent(t, a);
    const address = await register(a, agent.deviceId);
    await update(address, { trustScore: 0.66 });
    const now = Date.now();
    await seed.snapshot({ tenantId: a.tenantId, deviceId: agent.deviceId, window: '30d', at: new Date(now - 7200_000), composite: 0.2, dimensions: dims(0.2) });
    await seed.snapshot({ tenantId: a.tenantId, deviceId: agent.deviceId, window: '30d', at: new Date(now - 3600_000), composite: 0.71, dimensions: dims(0.7, { uptime: 0.93, compliance: 0 }) });
    const month = await get(address, '?window=30d');
    expect(month.body.trust_scores).toEqual({ composite: 0.71, ...dims(0.7, { uptime: 0.93, compliance: 0 }) });
    // No 7d snapshot: 0.5 everywhere (the stored trust_score 0.66 is not answered).
    const week = await get(address);
    expect(week.body.trust_scores).toEqual({ composite: 0.5, ...dims(0.5) });

    // A 7d snapshot (and the stored 7-day trust_score) never answers for 90d, which has no snapshot.
    await seed.snapshot({ tenantId: a.tenantId, deviceId: agent.deviceId, window: '7d', at: new Date(now - 60_000), composite: 0.66, dimensions: dims(0.66) });
    expect((await get(address)).body.trust_scores).toEqual({ composite: 0.66, ...dims(0.66) });
    expect((await get(address, '?window=90d')).body.trust_scores).toEqual({ composite: 0.5, ...dims(0.5) });

    // Every window: the same composite and dimensions as GET /trust-scores/{agent_id}.
    for (const w of ['7d', '30d', '90d']) {
      const scores = await t.request({ method: 'GET', url: `/api/v1/trust-scores/${agent.deviceId}?window=${w}`, headers: a.auth });
      expect(scores.status, w).toBe(200);
      const { composite, ...dimensions } = (await get(address, `?window=${w}`)).body.trust_scores as Record<string, number>;
      expect({ composite, dimensions }, w).toEqual({ composite: scores.body.composite_score, dimensions: scores.body.dimensions });
    }
  });

  it('a device-less identity answers the contract §3.9 warm-up values for every window, whatever its stored trust_score', async () => {
    const address = await register(a);
    await update(address, { trustScore: 0.91 });
    for (const w of ['7d', '30d', '90d']) expect((await get(address, `?window=${w}`)).body.trust_scores, w).toEqual({ composite: 0.5, ...dims(0.5) });
  });

  it('active_grants counts the bound device’s active SPTs (not revoked, not expired)', async () => {
    const seed = new TrustSeed(t);
    const agent = await activeAgent(t, a);
    const other = await activeAgent(t, a);
    const address = await register(a, agent.deviceId);
    expect((await get(address)).body.active_grants).toBe(0);
    await seed.grant(a.tenantId, agent.deviceId, 'active');
    await seed.grant(a.tenantId, agent.deviceId, 'active', 'enterprise');
    await seed.grant(a.tenantId, agent.deviceId, 'revoked');
    await seed.grant(a.tenantId, agent.deviceId, 'expired');
    await seed.grant(a.tenantId, other.deviceId, 'active');
    expect((await get(address)).body.active_grants).toBe(2);
    // An identity without a bound device has none.
    expect((await get(await register(a))).body.active_grants).toBe(0);
  });

  it('an unknown address answers 200 not_found (the platform issuer address too); a malformed one 400', async () => {
    const unknown = addr('nobody');
    const res = await get(unknown);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ did: `did:hub:${unknown}`, status: 'not_found', trust_tier: null, trust_scores: null, window: '7d', active_grants: 0, enrolled_at: null, last_seen: null, last_attestation: null });
    expect((await get('parley')).body.status).toBe('not_found');
    for (const bad of ['ab', '-abc', 'a_b_c', 'x'.repeat(33)]) expect((await get(bad)).status, bad).toBe(400);
  });

  it('window: 7d (default), 30d, 90d; anything else 400', async () => {
    const address = await register(a);
    for (const w of ['7d', '30d', '90d']) {
      const res = await get(address, `?window=${w}`);
      expect(res.status).toBe(200);
      expect(res.body.window).toBe(w);
    }
    for (const w of ['1d', '7D', '', '365d']) expect((await get(address, `?window=${w}`)).status, w).toBe(400);
  });

  it('is public; a sent credential is verified (owner JWT or API key accepted, unknown API key 401)', async () => {
    const address = await register(a);
    const key = await t.request({ method: 'POST', url: '/api/v1/api-keys', headers: a.auth, payload: { name: 'verifier' } });
    expect(key.status).toBe(201);
    expect((await get(address, '', a.auth)).status).toBe(200);
    expect((await get(address, '', { 'x-api-key': key.body.key })).status).toBe(200);
    expect((await get(address, '', { 'x-api-key': 'svc_key_unknown' })).status).toBe(401);
    expect((await get(address, '', { authorization: 'Bearer not-a-token' })).status).toBe(401);
  });
});

describe('verify rate limits (contract §8)', () => {
  let t: TestApp;
  let owner: Owner;

  beforeAll(async () => {
    t = await startApp({ env: { RATE_LIMIT_VERIFY_PUBLIC_PER_MIN: '3', RATE_LIMIT_VERIFY_API_KEY_PER_MIN: '6' } });
    owner = await newOwner(t, 'Limits');
  });
  afterAll(() => t.close());

  const statuses = async (n: number, url: string, headers: Record<string, string> = {}, method: 'GET' | 'POST' = 'GET') => {
    const out: number[] = [];
    for (let i = 0; i < n; i++) out.push((await t.request({ method, url, headers, ...(method === 'POST' ? { payload: { credential: {} } } : {}) })).status);
    return out;
  };

  it('GET /verify/{address}: public callers per IP, API-key callers get the higher limit', async () => {
    expect(await statuses(4, `/api/v1/verify/${addr()}`)).toEqual([200, 200, 200, 429]);
    const key = await t.request({ method: 'POST', url: '/api/v1/api-keys', headers: owner.auth, payload: { name: 'bulk verifier' } });
    expect(key.status).toBe(201);
    expect(await statuses(7, `/api/v1/verify/${addr()}`, { 'x-api-key': key.body.key })).toEqual([200, 200, 200, 200, 200, 200, 429]);
    const limited = await t.request({ method: 'GET', url: `/api/v1/verify/${addr()}` });
    expect(limited.status).toBe(429);
    expect(limited.body.detail).toMatch(/rate limit/);
  });

  it('POST /verify/credential has the same limits', async () => {
    const key = await t.request({ method: 'POST', url: '/api/v1/api-keys', headers: owner.auth, payload: { name: 'credential verifier' } });
    expect(key.status).toBe(201);
    expect(await statuses(7, '/api/v1/verify/credential', { 'x-api-key': key.body.key }, 'POST')).toEqual([200, 200, 200, 200, 200, 200, 429]);
  });
});
