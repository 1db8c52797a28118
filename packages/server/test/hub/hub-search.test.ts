/**
 * Hub discovery (contract §2.8 public profile, §4.10; design §8.15): `GET /hub/search` — PostgreSQL
 * full-text relevance, tier and capability filters, the anonymous 10-result cap, limits, suspended
 * identities — and `GET`/`PATCH /hub/{hub_address}/profile` with the search document kept current.
 * Each app starts on a fresh database, so result sets are exact.
 */
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS_DIR } from '../../src/db/migrate.js';
import { activeAgent, newOwner, type Agent, type Owner } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { hubOwnerKey } from '../../testing/keys.js';

let seq = 0;
const addr = (prefix: string) => `${prefix}-${++seq}`;

describe('hub search and profiles', () => {
  let t: TestApp;
  let a: Owner;
  let b: Owner;
  let aAgent: Agent;
  let apiKey: Record<string, string>;

  const register = async (owner: Owner, body: Record<string, unknown>) => {
    const res = await t.request({ method: 'POST', url: '/api/v1/hub/identities', headers: owner.auth, payload: { public_key: hubOwnerKey(), ...body } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body as { id: string; hub_address: string; created_at: string };
  };
  const addCapability = async (owner: Owner, address: string, body: Record<string, unknown>) => {
    const res = await t.request({ method: 'POST', url: `/api/v1/hub/${address}/capabilities`, headers: owner.auth, payload: { version: '1.0.0', input_schema: { type: 'object' }, ...body } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  };
  const search = (query: Record<string, string | number>, headers: Record<string, string> = {}) =>
    t.request({ method: 'GET', url: `/api/v1/hub/search?${new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)]))}`, headers });
  const addresses = (res: { body: { results: { hub_address: string }[] } }) => res.body.results.map((r) => r.hub_address);
  const superuser = (q: ReturnType<typeof sql>) => t.app.parley.database.db.execute(q);

  beforeAll(async () => {
    t = await startApp();
    a = await newOwner(t, 'Tenant A');
    b = await newOwner(t, 'Tenant B');
    aAgent = await activeAgent(t, a);
    const key = await t.request({ method: 'POST', url: '/api/v1/api-keys', headers: a.auth, payload: { name: 'search' } });
    apiKey = { 'x-api-key': key.body.key };
  });
  afterAll(() => t.close());

  describe('relevance (websearch_to_tsquery, ts_rank, ties by address)', () => {
    beforeAll(async () => {
      // Tenant B's description match and tenant A's name match: search crosses tenants.
      await register(b, { hub_address: 'aa-linguist', display_name: 'Linguist', description: 'We translate contracts from German' });
      await register(a, { hub_address: 'zz-translator', display_name: 'Translator' });
      await register(a, { hub_address: 'mm-courier', display_name: 'Courier', description: 'Parcel delivery' });
      const scanner = await register(a, { hub_address: 'mm-scanner', display_name: 'Scanner', capabilities: ['pdf-export'] });
      await addCapability(a, scanner.hub_address, { name: 'ocr', description: 'optical character recognition for invoices' });
    });

    it('ranks a name match above a description match (stemmed: "translation" finds both)', async () => {
      for (const query of ['translate', 'translation', 'TRANSLATOR']) {
        const res = await search({ query });
        expect(res.status).toBe(200);
        expect(addresses(res), query).toEqual(['zz-translator', 'aa-linguist']);
      }
    });

    it('matches capability names and descriptions, the address, and websearch syntax', async () => {
      expect(addresses(await search({ query: 'ocr' }))).toEqual(['mm-scanner']);
      expect(addresses(await search({ query: 'invoices' }))).toEqual(['mm-scanner']);
      expect(addresses(await search({ query: 'pdf-export' }))).toEqual(['mm-scanner']);
      expect(addresses(await search({ query: 'mm-courier' }))).toEqual(['mm-courier']);
      expect(addresses(await search({ query: 'translate -german' }))).toEqual(['zz-translator']);
      expect(addresses(await search({ query: '"parcel delivery"' }))).toEqual(['mm-courier']);
      expect(addresses(await search({ query: 'courier or scanner' }))).toEqual(['mm-courier', 'mm-scanner']);
      expect((await search({ query: 'nothing-matches-this' })).body).toEqual({ results: [] });
    });

    it('a blank query is no text filter (results by address)', async () => {
      const all = addresses(await search({ query: '  ' }));
      expect(all).toEqual([...all].sort());
      expect(all).toEqual(expect.arrayContaining(['aa-linguist', 'mm-courier', 'mm-scanner', 'zz-translator']));
    });
  });

  it('filters by minimum tier and by capability name (registered or named at registration, any case)', async () => {
    const ids = {
      plain: await register(a, { hub_address: addr('tiered'), display_name: 'Tiered', capabilities: ['Weather'] }),
      cert: await register(a, { hub_address: addr('tiered'), display_name: 'Tiered' }),
      ent: await register(b, { hub_address: addr('tiered'), display_name: 'Tiered' }),
    };
    await superuser(sql`update hub_identities set trust_tier = 'certified' where id = ${ids.cert.id}`);
    await superuser(sql`update hub_identities set trust_tier = 'enterprise' where id = ${ids.ent.id}`);
    await addCapability(b, ids.ent.hub_address, { name: 'weather' });
    const q = { query: 'tiered' };
    expect(addresses(await search(q))).toHaveLength(3);
    expect(addresses(await search({ ...q, tier: 'unverified' }))).toHaveLength(3);
    expect(addresses(await search({ ...q, tier: 'certified' })).sort()).toEqual([ids.cert.hub_address, ids.ent.hub_address].sort());
    expect(addresses(await search({ ...q, tier: 'enterprise' }))).toEqual([ids.ent.hub_address]);
    expect(addresses(await search({ capability: 'weather' })).sort()).toEqual([ids.plain.hub_address, ids.ent.hub_address].sort());
    expect(addresses(await search({ capability: 'WEATHER', tier: 'enterprise' }))).toEqual([ids.ent.hub_address]);
    expect(addresses(await search({ capability: 'weather', query: 'translator' }))).toEqual([]);
    expect((await search({ capability: 'no-such-capability' })).body.results).toEqual([]);
  });

  describe('limits (contract §8: default 20, max 100; design §8.15: anonymous at most 10)', () => {
    beforeAll(async () => {
      for (let i = 0; i < 24; i++) await register(i % 2 ? a : b, { hub_address: `bulk-${String(i).padStart(2, '0')}`, display_name: 'Bulk loader', description: 'bulk' });
    });

    it('caps anonymous callers at 10, whatever the limit', async () => {
      expect(addresses(await search({ query: 'bulk' }))).toHaveLength(10);
      expect(addresses(await search({ query: 'bulk', limit: 100 }))).toHaveLength(10);
      expect(addresses(await search({ query: 'bulk', limit: 4 }))).toEqual(['bulk-00', 'bulk-01', 'bulk-02', 'bulk-03']);
    });

    it('gives owners, devices and API keys up to limit (default 20)', async () => {
      for (const auth of [a.auth, b.auth, aAgent.auth, apiKey]) {
        expect(addresses(await search({ query: 'bulk' }, auth))).toHaveLength(20);
        expect(addresses(await search({ query: 'bulk', limit: 100 }, auth))).toHaveLength(24);
        expect(addresses(await search({ query: 'bulk', limit: 3 }, auth))).toEqual(['bulk-00', 'bulk-01', 'bulk-02']);
      }
    });

    it('refuses bad queries with 400 and bad credentials with 401', async () => {
      for (const query of [{ limit: 101 }, { limit: 0 }, { limit: -1 }, { limit: 'ten' }, { limit: 2.5 }, { tier: 'gold' }, { capability: '' }, { query: 'x'.repeat(501) }]) {
        const res = await search(query as unknown as Record<string, string | number>);
        expect(res.status, JSON.stringify(query)).toBe(400);
        expect(res.body.detail).toEqual(expect.any(String));
      }
      expect((await search({ limit: 101 }, a.auth)).status).toBe(400);
      expect((await search({ query: 'bulk' }, { authorization: 'Bearer nope' })).status).toBe(401);
      expect((await search({ query: 'bulk' }, { 'x-api-key': 'svc_agent_sk_dev_' + '0'.repeat(64) })).status).toBe(401);
      // Hostile text is data, never SQL or a 5xx.
      for (const query of ["'; drop table hub_identities; --", '!!!&&|', '"unbalanced', 'a\u0000b', '(((', '-']) {
        expect((await search({ query })).status, JSON.stringify(query)).toBeLessThan(500);
      }
    });
  });

  it('excludes suspended identities', async () => {
    const s = await register(a, { hub_address: addr('suspended'), display_name: 'Dormant agent' });
    expect(addresses(await search({ query: 'dormant' }))).toEqual([s.hub_address]);
    await superuser(sql`update hub_identities set status = 'suspended' where id = ${s.id}`);
    expect(addresses(await search({ query: 'dormant' }))).toEqual([]);
  });

  it('the 0013 backfill migration computes the same search document as the service', async () => {
    const id = await register(a, { hub_address: addr('backfill'), display_name: 'Backfilled', description: 'old row', capabilities: ['legacy'] });
    await addCapability(a, id.hub_address, { name: 'modern', description: 'registered later' });
    const doc = async () => ((await superuser(sql`select search_document::text as d from hub_identities where id = ${id.id}`)) as unknown as { rows: { d: string | null }[] }).rows[0]!.d;
    const written = await doc();
    expect(written).toMatch(/'backfil':\d+A/);
    await superuser(sql`update hub_identities set search_document = null where id = ${id.id}`);
    await superuser(sql.raw(fs.readFileSync(path.join(MIGRATIONS_DIR, '0013_hub_search_backfill.sql'), 'utf8')));
    expect(await doc()).toBe(written);
  });

  describe('public profile', () => {
    it('answers the contract §2.8 fields to anyone; capabilities are the union; 0.5 score fallback', async () => {
      const id = await register(a, { hub_address: addr('Profiled'), display_name: 'Profiled', description: 'about me', capabilities: ['chat', 'ocr'] });
      await addCapability(a, id.hub_address, { name: 'ocr', version: '2.0.0' });
      await addCapability(a, id.hub_address, { name: 'vision' });
      for (const auth of [{}, a.auth, b.auth, aAgent.auth, apiKey]) {
        const res = await t.request({ method: 'GET', url: `/api/v1/hub/${id.hub_address.toUpperCase()}/profile`, headers: auth });
        expect(res.status).toBe(200);
        expect(res.body).toEqual({
          hub_address: id.hub_address,
          display_name: 'Profiled',
          description: 'about me',
          trust_tier: 'unverified',
          tier_source: 'computed',
          trust_score: 0.5,
          capabilities: ['chat', 'ocr', 'vision'],
          enrolled_at: id.created_at,
          last_active: null,
        });
      }
      await superuser(sql`update hub_identities set trust_score = 0.73 where id = ${id.id}`);
      expect((await t.request({ method: 'GET', url: `/api/v1/hub/${id.hub_address}/profile` })).body.trust_score).toBe(0.73);
    });

    it('takes enrolled_at and last_active from the bound device', async () => {
      const agent = await activeAgent(t, a);
      const id = await register(a, { hub_address: addr('bound'), display_name: 'Bound', device_id: agent.deviceId });
      const seen = new Date(Date.now() - 60_000);
      await superuser(sql`update devices set last_seen = ${seen.toISOString()} where id = ${agent.deviceId}`);
      const { rows } = (await superuser(sql`select created_at as enrolled_at from devices where id = ${agent.deviceId}`)) as unknown as { rows: { enrolled_at: string | Date }[] };
      const res = await t.request({ method: 'GET', url: `/api/v1/hub/${id.hub_address}/profile` });
      expect(res.status).toBe(200);
      expect(res.body.last_active).toBe(seen.toISOString());
      expect(res.body.enrolled_at).toBe(new Date(rows[0]!.enrolled_at).toISOString());
      expect(Date.parse(res.body.enrolled_at)).toBeLessThan(Date.parse(id.created_at));
    });

    it('answers 404 for an unknown address, 400 for a malformed one, 401 for a bad credential', async () => {
      expect((await t.request({ method: 'GET', url: `/api/v1/hub/${addr('nobody')}/profile` })).status).toBe(404);
      expect((await t.request({ method: 'GET', url: '/api/v1/hub/-x-/profile' })).status).toBe(400);
      expect((await t.request({ method: 'GET', url: '/api/v1/hub/aa-linguist/profile', headers: { authorization: 'Bearer nope' } })).status).toBe(401);
    });
  });

  describe('profile update (owner)', () => {
    const patch = (address: string, body: unknown, headers: Record<string, string> = a.auth) =>
      t.request({ method: 'PATCH', url: `/api/v1/hub/${address}/profile`, headers, payload: body as object });

    it('updates display_name and description (200 profile) and the search document with them', async () => {
      const id = await register(a, { hub_address: addr('renamed'), display_name: 'Old name', description: 'gardening tips' });
      expect(addresses(await search({ query: 'gardening' }))).toEqual([id.hub_address]);
      const res = await patch(id.hub_address, { display_name: 'Quantum chemist', description: 'molecular simulations' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ hub_address: id.hub_address, display_name: 'Quantum chemist', description: 'molecular simulations', trust_tier: 'unverified' });
      expect(addresses(await search({ query: 'gardening' }))).toEqual([]);
      expect(addresses(await search({ query: 'quantum' }))).toEqual([id.hub_address]);
      expect(addresses(await search({ query: 'simulation' }))).toEqual([id.hub_address]);
      const only = await patch(id.hub_address.toUpperCase(), { description: null });
      expect(only.status).toBe(200);
      expect(only.body).toMatchObject({ display_name: 'Quantum chemist', description: null });
      expect(addresses(await search({ query: 'simulation' }))).toEqual([]);
      expect((await patch(id.hub_address, { description: 'back' })).body.description).toBe('back');
      expect((await patch(id.hub_address, { description: '' })).body.description).toBeNull();
      const list = (await t.request({ method: 'GET', url: `/api/v1/hub/identities/${id.id}`, headers: a.auth })).body;
      expect(list).toMatchObject({ display_name: 'Quantum chemist', description: null });
    });

    it('route matrix: 400 bad bodies, 401 without auth, 403 device token, 404 across tenants', async () => {
      const id = await register(a, { hub_address: addr('guarded'), display_name: 'Guarded' });
      for (const body of [{}, { display_name: '' }, { display_name: 'x'.repeat(101) }, { description: 'x'.repeat(1001) }, { display_name: null }, { display_name: ['a', 'b'] }, { other: 'x' }]) {
        const res = await patch(id.hub_address, body);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.body.detail).toEqual(expect.any(String));
      }
      expect((await patch(id.hub_address, { display_name: 'X' }, {})).status).toBe(401);
      expect((await patch(id.hub_address, { display_name: 'X' }, { authorization: 'Bearer nope' })).status).toBe(401);
      expect((await patch(id.hub_address, { display_name: 'X' }, aAgent.auth)).status).toBe(403);
      expect((await patch(id.hub_address, { display_name: 'X' }, apiKey)).status).toBe(403);
      expect((await patch(id.hub_address, { display_name: 'Hijacked' }, b.auth)).status).toBe(404);
      expect((await patch(addr('unknown'), { display_name: 'X' })).status).toBe(404);
      expect((await patch('-x-', { display_name: 'X' })).status).toBe(400);
      expect((await t.request({ method: 'GET', url: `/api/v1/hub/${id.hub_address}/profile` })).body.display_name).toBe('Guarded');
    });
  });
});
