/**
 * What the owners' web app needs for its first sign-in and its platform operator screens
 * (docs/decisions.md "Platform operators and operator tier grants"):
 * - `GET /api/v1/me`: 200 before the owner has a tenant (no 403 to provoke), the tenant and role
 *   after, and the operator flag from `PLATFORM_OPERATOR_SUBS` or the development operator claim;
 * - `GET /api/v1/hub/review`: hub identities of every tenant for operators only (401, 403), newest
 *   first, suspended ones left out, with the id a tier grant names and the grant's reason and expiry;
 *   filters (exact tier, part of the address or display name) and keyset pages.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activeAgent, newOwner, type Owner } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { hubOwnerKey } from '../../testing/keys.js';

const OPERATOR = 'reviewer@platform.test';
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const stamp = Date.now().toString(36);
let seq = 0;

describe('GET /api/v1/me and GET /api/v1/hub/review', () => {
  let t: TestApp;
  let a: Owner;
  let b: Owner;
  let op: { authorization: string };

  const me = (headers: Record<string, string>) => t.request({ method: 'GET', url: '/api/v1/me', headers });
  const review = (query: string, headers: Record<string, string> = op) => t.request({ method: 'GET', url: `/api/v1/hub/review${query}`, headers });

  /** A hub identity of `owner` (no bound device) named `name`; answers its id and address. */
  async function identity(owner: Owner, name: string): Promise<{ id: string; address: string }> {
    const address = `rv-${stamp}-${++seq}`;
    const res = await t.request({ method: 'POST', url: '/api/v1/hub/identities', headers: owner.auth, payload: { hub_address: address, display_name: name, public_key: hubOwnerKey(), capabilities: ['review-me'] } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return { id: res.body.id, address };
  }

  beforeAll(async () => {
    t = await startApp({ env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000', PLATFORM_OPERATOR_SUBS: OPERATOR } });
    a = await newOwner(t, 'Tenant A');
    b = await newOwner(t, 'Tenant B');
    op = bearer(await t.ownerToken(OPERATOR));
  });
  afterAll(() => t?.close());

  it('me: 200 with a null tenant before the first one, then the tenant and role; the operator flag', async () => {
    const fresh = bearer(await t.ownerToken(`fresh-${stamp}@example.com`));
    const before = await me(fresh);
    expect(before.status).toBe(200);
    expect(before.body).toEqual({ sub: `fresh-${stamp}@example.com`, tenant_id: null, role: null, operator: false });
    const created = await t.request({ method: 'POST', url: '/api/v1/tenants', headers: fresh, payload: { name: 'Fresh' } });
    expect(created.status).toBe(201);
    expect((await me(fresh)).body).toEqual({ sub: `fresh-${stamp}@example.com`, tenant_id: created.body.tenant_id, role: 'OWNER_ADMIN', operator: false });
    // Listed in PLATFORM_OPERATOR_SUBS, without any tenant.
    expect((await me(op)).body).toEqual({ sub: OPERATOR, tenant_id: null, role: null, operator: true });
    // The development provider's operator claim.
    const devOp = bearer(await t.ownerToken(`devop-${stamp}@example.com`, { parley_operator: true }));
    expect((await me(devOp)).body.operator).toBe(true);
  });

  it('me: 401 without a valid owner token, 403 for an agent device', async () => {
    for (const headers of [{}, bearer('not-a-token')]) {
      const res = await me(headers);
      expect(res.status).toBe(401);
      expect(typeof res.body.detail).toBe('string');
    }
    const agent = await activeAgent(t, a);
    const res = await me(agent.auth);
    expect(res.status).toBe(403);
    expect(typeof res.body.detail).toBe('string');
  });

  it('review: operators only (401 without a token, 403 for an owner who is not one)', async () => {
    expect((await review('', {})).status).toBe(401);
    const refused = await review('', a.auth);
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toMatch(/platform operators/);
  });

  it("review: every tenant's identities, newest first, with id, DID and the grant's reason and expiry", async () => {
    const older = await identity(a, 'Alpha reviewer candidate');
    const newer = await identity(b, 'Bravo reviewer candidate');
    const expires = new Date(Date.now() + 7 * 24 * 3_600_000).toISOString();
    const granted = await t.request({ method: 'POST', url: `/api/v1/hub/identities/${older.id}/tier`, headers: op, payload: { tier: 'certified', reason: 'manual review passed', expires_at: expires } });
    expect(granted.status, JSON.stringify(granted.body)).toBe(200);

    const res = await review(`?query=${stamp}`);
    expect(res.status).toBe(200);
    const ids = res.body.identities.map((i: { id: string }) => i.id);
    expect(ids.indexOf(newer.id)).toBeGreaterThanOrEqual(0);
    expect(ids.indexOf(newer.id)).toBeLessThan(ids.indexOf(older.id));
    const g = res.body.identities.find((i: { id: string }) => i.id === older.id);
    expect(g).toMatchObject({
      hub_address: older.address,
      did: `did:hub:${older.address}`,
      display_name: 'Alpha reviewer candidate',
      trust_tier: 'certified',
      tier_source: 'operator',
      tier_grant_reason: 'manual review passed',
      capabilities: ['review-me'],
      trust_score: 0.5,
    });
    expect(Date.parse(g.tier_grant_expires_at)).toBe(Date.parse(expires));
    const n = res.body.identities.find((i: { id: string }) => i.id === newer.id);
    expect(n).toMatchObject({ trust_tier: 'unverified', tier_source: 'computed', tier_grant_reason: null, tier_grant_expires_at: null });
    expect(typeof n.created_at).toBe('string');
  });

  it('review: filters by exact tier and by a part of the address or display name (any case)', async () => {
    const x = await identity(a, `Xylophone ${stamp}`);
    const byName = await review(`?query=${encodeURIComponent('XYLOPHONE')}`);
    expect(byName.body.identities.map((i: { id: string }) => i.id)).toEqual([x.id]);
    const byAddress = await review(`?query=${encodeURIComponent(x.address.toUpperCase())}`);
    expect(byAddress.body.identities.map((i: { id: string }) => i.id)).toEqual([x.id]);
    const certified = await review(`?tier=certified&query=${stamp}`);
    expect(certified.body.identities.length).toBeGreaterThan(0);
    for (const i of certified.body.identities) expect(i.trust_tier).toBe('certified');
    expect(certified.body.identities.map((i: { id: string }) => i.id)).not.toContain(x.id);
    expect((await review('?query=%25')).body.identities).toEqual([]);
  });

  it('review: leaves out suspended identities (their bound agent revoked)', async () => {
    const agent = await activeAgent(t, b);
    const address = `rv-${stamp}-${++seq}`;
    const reg = await t.request({ method: 'POST', url: '/api/v1/hub/identities', headers: b.auth, payload: { hub_address: address, display_name: 'Soon revoked', device_id: agent.deviceId, public_key: hubOwnerKey() } });
    expect(reg.status).toBe(201);
    expect((await review(`?query=${address}`)).body.identities.map((i: { id: string }) => i.id)).toEqual([reg.body.id]);
    expect((await t.request({ method: 'PATCH', url: `/api/v1/devices/${agent.deviceId}/revoke`, headers: b.auth })).status).toBe(200);
    expect((await review(`?query=${address}`)).body.identities).toEqual([]);
  });

  it('review: keyset pages cover every identity once; 400 for a bad cursor, tier or limit', async () => {
    for (let i = 0; i < 3; i++) await identity(b, `Paged ${i}`);
    const all = (await review(`?query=${stamp}&limit=200`)).body.identities.map((i: { id: string }) => i.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { status: number; body: { identities: { id: string }[]; next_cursor: string | null } } = await review(`?query=${stamp}&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(page.status).toBe(200);
      expect(page.body.identities.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.identities.map((i) => i.id));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual(all);
    expect(all.length).toBeGreaterThanOrEqual(6);
    for (const bad of ['?cursor=nope', '?tier=gold', '?limit=0', '?limit=201']) {
      const res = await review(bad);
      expect(res.status, bad).toBe(400);
      expect(typeof res.body.detail).toBe('string');
    }
  });
});
