/** API keys (contract §2.6, §4.8): raw key once, hash only at rest, revoke, atomic rotate, delete, isolation. */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashSecret } from '../../src/lib/crypto.js';
import { newOwner, type Owner } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';

describe('API keys', () => {
  let t: TestApp;
  let owner: Owner;
  beforeAll(async () => {
    t = await startApp();
    owner = await newOwner(t);
  });
  afterAll(() => t.close());

  const create = (body: unknown, auth = owner.auth) => t.request({ method: 'POST', url: '/api/v1/api-keys', headers: auth, payload: body as object });

  it('creates a key shown once, stores only its BLAKE2b-256 hash, and lists it without the secret', async () => {
    const res = await create({ name: 'crawler', env: 'prod' });
    expect(res.status).toBe(201);
    expect(res.body.key).toMatch(/^svc_agent_sk_prod_[0-9a-f]{64}$/);
    expect(res.body.key.startsWith(res.body.prefix)).toBe(true);
    expect(res.body.status).toBe('active');
    const list = await t.request({ method: 'GET', url: '/api/v1/api-keys', headers: owner.auth });
    const listed = list.body.api_keys.find((k: any) => k.id === res.body.id);
    expect(listed).toBeDefined();
    expect(JSON.stringify(list.body)).not.toContain(res.body.key);
    const rows = (await t.app.parley.database.db.execute(sql`select key_hash from api_keys where id = ${res.body.id}`)) as unknown as { rows: { key_hash: string }[] };
    expect(rows.rows[0]!.key_hash).toBe(hashSecret(res.body.key));
  });

  it('defaults env to dev and refuses bad input and missing auth', async () => {
    const dflt = await create({ name: 'x' });
    expect(dflt.body.key).toMatch(/^svc_agent_sk_dev_/);
    expect((await create({ name: 'x', env: 'qa' })).status).toBe(400);
    expect((await create({})).status).toBe(400);
    expect((await t.request({ method: 'POST', url: '/api/v1/api-keys', payload: { name: 'x' } })).status).toBe(401);
    expect((await t.request({ method: 'GET', url: '/api/v1/api-keys', headers: { authorization: 'Bearer nope' } })).status).toBe(401);
  });

  it('revokes once (409 the second time)', async () => {
    const k = (await create({ name: 'temp' })).body;
    const r1 = await t.request({ method: 'POST', url: `/api/v1/api-keys/${k.id}/revoke`, headers: owner.auth });
    expect(r1.status).toBe(200);
    expect(r1.body.status).toBe('revoked');
    expect((await t.request({ method: 'POST', url: `/api/v1/api-keys/${k.id}/revoke`, headers: owner.auth })).status).toBe(409);
  });

  it('rotates atomically: the old key is revoked, the new one is active and linked to it', async () => {
    const k = (await create({ name: 'rotating', env: 'staging' })).body;
    const rot = await t.request({ method: 'POST', url: `/api/v1/api-keys/${k.id}/rotate`, headers: owner.auth });
    expect(rot.status).toBe(200);
    expect(rot.body.key).toMatch(/^svc_agent_sk_staging_[0-9a-f]{64}$/);
    expect(rot.body.key).not.toBe(k.key);
    expect(rot.body.rotated_from).toBe(k.id);
    const list = (await t.request({ method: 'GET', url: '/api/v1/api-keys', headers: owner.auth })).body.api_keys;
    expect(list.find((x: any) => x.id === k.id).status).toBe('revoked');
    expect(list.find((x: any) => x.id === rot.body.id).status).toBe('active');
    expect((await t.request({ method: 'POST', url: `/api/v1/api-keys/${k.id}/rotate`, headers: owner.auth })).status).toBe(409);
  });

  it('deletes a key (204, then 404) and keeps tenants apart', async () => {
    const k = (await create({ name: 'gone' })).body;
    const other = await newOwner(t, 'Other');
    expect((await t.request({ method: 'DELETE', url: `/api/v1/api-keys/${k.id}`, headers: other.auth })).status).toBe(404);
    expect((await t.request({ method: 'POST', url: `/api/v1/api-keys/${k.id}/revoke`, headers: other.auth })).status).toBe(404);
    const otherList = (await t.request({ method: 'GET', url: '/api/v1/api-keys', headers: other.auth })).body.api_keys;
    expect(otherList).toEqual([]);
    expect((await t.request({ method: 'DELETE', url: `/api/v1/api-keys/${k.id}`, headers: owner.auth })).status).toBe(204);
    expect((await t.request({ method: 'DELETE', url: `/api/v1/api-keys/${k.id}`, headers: owner.auth })).status).toBe(404);
  });
});
