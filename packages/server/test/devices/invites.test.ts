/**
 * Invites over HTTP (contract §2.2, §3.2, §4.2, §5, §7; design §5, §7): creation with the raw token
 * shown once, listing, revocation, soft deletion, tenant isolation, authentication failures, and
 * expiry enforced at use time (no job run).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { blake2b } from '@noble/hashes/blake2.js';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createInvite, enroll, newOwner, type Owner } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';

const TOKEN_RE = /^svc_tok_[0-9a-f]{64}$/;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** An invite as answered by the API (design §7). */
interface InviteJson {
  id: string;
  status: string;
  label: string | null;
  expires_at: string;
  consumed_at: string | null;
  device_id: string | null;
}

let t: TestApp;

beforeAll(async () => {
  t = await startApp({ env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000' } });
});
afterAll(() => t.close());
afterEach(() => {
  vi.useRealTimers();
});

/** Run a raw SQL query as the connecting user (to inspect stored state, never to change it). */
async function rawQuery(sql: string, params: unknown[] = []): Promise<Record<string, unknown>[]> {
  const raw = t.app.parley.database.raw;
  const res = raw.kind === 'pg' ? await raw.pool.query(sql, params) : await raw.client.query(sql, params);
  return res.rows as Record<string, unknown>[];
}

async function listInvites(owner: Owner): Promise<InviteJson[]> {
  const res = await t.request({ method: 'GET', url: '/api/v1/invites', headers: owner.auth });
  expect(res.status).toBe(200);
  expect(Array.isArray(res.body.invites)).toBe(true);
  return res.body.invites;
}

async function inviteStatus(owner: Owner, id: string): Promise<string | undefined> {
  return (await listInvites(owner)).find((i) => i.id === id)?.status;
}

const revoke = (owner: Owner, id: string) => t.request({ method: 'POST', url: `/api/v1/invites/${id}/revoke`, headers: owner.auth });
const remove = (owner: Owner, id: string) => t.request({ method: 'DELETE', url: `/api/v1/invites/${id}`, headers: owner.auth });

/** A token signed by the dev IdP with its signature altered. */
async function tamperedToken(): Promise<string> {
  const good = await t.ownerToken(`tamper-${randomUUID()}@example.com`);
  const [h, p, s] = good.split('.');
  const sig = Buffer.from(s!, 'base64url');
  sig[0] = sig[0]! ^ 0xff;
  return `${h}.${p}.${sig.toString('base64url')}`;
}

describe('POST /api/v1/invites', () => {
  it('answers 201 with the raw svc_tok_ token, an active status and a 10-minute expiry', async () => {
    const owner = await newOwner(t);
    const before = Date.now();
    const res = await t.request({ method: 'POST', url: '/api/v1/invites', headers: owner.auth, payload: { label: 'ci-bot' } });
    expect(res.status).toBe(201);
    expect(res.body.id).toMatch(UUID_RE);
    expect(res.body.token).toMatch(TOKEN_RE);
    expect(res.body.status).toBe('active');
    expect(res.body.label).toBe('ci-bot');
    const expiresAt = Date.parse(res.body.expires_at);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 10 * 60_000 - 1000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 10 * 60_000 + 1000);
  });

  it('accepts a request without a body (label is optional)', async () => {
    const owner = await newOwner(t);
    const res = await t.request({ method: 'POST', url: '/api/v1/invites', headers: owner.auth });
    expect(res.status).toBe(201);
    expect(res.body.token).toMatch(TOKEN_RE);
    expect(res.body.label ?? null).toBeNull();
  });

  it('issues a different token for every invite', async () => {
    const owner = await newOwner(t);
    const a = await createInvite(t, owner);
    const b = await createInvite(t, owner);
    expect(a.id).not.toBe(b.id);
    expect(a.token).not.toBe(b.token);
  });

  it('stores only the BLAKE2b-256 hash of the token, never the raw token', async () => {
    const owner = await newOwner(t);
    const inv = await createInvite(t, owner);
    const rows = await rawQuery('select * from invites where id = $1', [inv.id]);
    expect(rows).toHaveLength(1);
    const expectedHash = Buffer.from(blake2b(Buffer.from(inv.token, 'utf8'), { dkLen: 32 })).toString('hex');
    expect(rows[0]!.token_hash).toBe(expectedHash);
    const stored = JSON.stringify(rows[0], (_k, v: unknown) => (v instanceof Date ? v.toISOString() : v));
    expect(stored).not.toContain(inv.token);
    expect(stored).not.toContain(inv.token.slice('svc_tok_'.length));
  });

  it('answers 400 for bad body types', async () => {
    const owner = await newOwner(t);
    for (const payload of [{ label: { nested: true } }, { label: ['a', 'b'] }, { label: 'x'.repeat(201) }, [1, 2, 3]]) {
      const res = await t.request({ method: 'POST', url: '/api/v1/invites', headers: owner.auth, payload: payload as object });
      expect(res.status, JSON.stringify(payload)).toBe(400);
      expect(typeof res.body.detail).toBe('string');
    }
    const notJson = await t.request({
      method: 'POST',
      url: '/api/v1/invites',
      headers: { ...owner.auth, 'content-type': 'application/json' },
      payload: '{"label": ',
    });
    expect(notJson.status).toBe(400);
    expect(typeof notJson.body.detail).toBe('string');
    // nothing was created by the refused requests
    expect(await listInvites(owner)).toHaveLength(0);
  });
});

describe('GET /api/v1/invites', () => {
  it('lists the tenant invites with their fields and never the raw token', async () => {
    const owner = await newOwner(t);
    const a = await createInvite(t, owner);
    const b = await createInvite(t, owner);
    const res = await t.request({ method: 'GET', url: '/api/v1/invites', headers: owner.auth });
    expect(res.status).toBe(200);
    const invites = res.body.invites as InviteJson[];
    expect(invites.map((i) => i.id).sort()).toEqual([a.id, b.id].sort());
    for (const i of invites) {
      expect(i.status).toBe('active');
      expect(i).not.toHaveProperty('token');
      expect(typeof i.expires_at).toBe('string');
    }
    const text = JSON.stringify(res.body);
    expect(text).not.toContain(a.token);
    expect(text).not.toContain(b.token);
    expect(text).not.toContain('svc_tok_');
  });
});

describe('authentication and tenant resolution', () => {
  const routes = (id: string) => [
    { method: 'POST' as const, url: '/api/v1/invites', payload: {} },
    { method: 'GET' as const, url: '/api/v1/invites' },
    { method: 'POST' as const, url: `/api/v1/invites/${id}/revoke` },
    { method: 'DELETE' as const, url: `/api/v1/invites/${id}` },
  ];

  it('answers 401 without or with a bad Authorization header', async () => {
    const owner = await newOwner(t);
    const inv = await createInvite(t, owner);
    const expired = await t.app.parley.devIdp!.mint(owner.sub, { ttlSec: -60 });
    const badHeaders: Record<string, string>[] = [
      {},
      { authorization: 'Bearer garbage' },
      { authorization: 'Bearer a.b.c' },
      { authorization: `Basic ${Buffer.from('u:p').toString('base64')}` },
      { authorization: `Bearer ${await tamperedToken()}` },
      { authorization: `Bearer ${expired}` },
    ];
    for (const r of routes(inv.id)) {
      for (const headers of badHeaders) {
        const res = await t.request({ ...r, headers });
        expect(res.status, `${r.method} ${r.url} ${JSON.stringify(headers).slice(0, 40)}`).toBe(401);
        expect(typeof res.body.detail).toBe('string');
      }
    }
    // the invite was neither revoked nor deleted by the refused calls
    expect(await inviteStatus(owner, inv.id)).toBe('active');
  });

  it('answers 403 for a user who belongs to no tenant', async () => {
    const owner = await newOwner(t);
    const inv = await createInvite(t, owner);
    const lonely = await t.ownerToken(`lonely-${randomUUID()}@example.com`);
    for (const r of routes(inv.id)) {
      const res = await t.request({ ...r, headers: { authorization: `Bearer ${lonely}` } });
      expect(res.status, `${r.method} ${r.url}`).toBe(403);
    }
    expect(await inviteStatus(owner, inv.id)).toBe('active');
  });

  it('answers 403 when X-Tenant-Id or the tenant claim names a tenant the user is not a member of', async () => {
    const a = await newOwner(t);
    const b = await newOwner(t);
    const viaHeader = await t.request({ method: 'GET', url: '/api/v1/invites', headers: { ...a.auth, 'x-tenant-id': b.tenantId } });
    expect(viaHeader.status).toBe(403);
    const claimToken = await t.ownerToken(a.sub, { tenant_id: b.tenantId });
    const viaClaim = await t.request({ method: 'GET', url: '/api/v1/invites', headers: { authorization: `Bearer ${claimToken}` } });
    expect(viaClaim.status).toBe(403);
    const create = await t.request({ method: 'POST', url: '/api/v1/invites', headers: { ...a.auth, 'x-tenant-id': b.tenantId }, payload: {} });
    expect(create.status).toBe(403);
    expect(await listInvites(b)).toHaveLength(0);
  });

  it('X-Tenant-Id chooses between the tenants of a user with several', async () => {
    const owner = await newOwner(t, 'First');
    const second = await t.request({ method: 'POST', url: '/api/v1/tenants', headers: owner.auth, payload: { name: 'Second' } });
    expect(second.status).toBe(201);
    const secondTenant = second.body.tenant_id as string;
    const inFirst = await t.request({ method: 'POST', url: '/api/v1/invites', headers: { ...owner.auth, 'x-tenant-id': owner.tenantId }, payload: {} });
    const inSecond = await t.request({ method: 'POST', url: '/api/v1/invites', headers: { ...owner.auth, 'x-tenant-id': secondTenant }, payload: {} });
    expect(inFirst.status).toBe(201);
    expect(inSecond.status).toBe(201);
    const l1 = await t.request({ method: 'GET', url: '/api/v1/invites', headers: { ...owner.auth, 'x-tenant-id': owner.tenantId } });
    const l2 = await t.request({ method: 'GET', url: '/api/v1/invites', headers: { ...owner.auth, 'x-tenant-id': secondTenant } });
    expect((l1.body.invites as InviteJson[]).map((i) => i.id)).toEqual([inFirst.body.id]);
    expect((l2.body.invites as InviteJson[]).map((i) => i.id)).toEqual([inSecond.body.id]);
  });
});

describe('tenant isolation', () => {
  it('tenant B cannot see, revoke or delete tenant A invites (404)', async () => {
    const a = await newOwner(t, 'A');
    const b = await newOwner(t, 'B');
    const active = await createInvite(t, a);
    const revoked = await createInvite(t, a);
    expect((await revoke(a, revoked.id)).status).toBe(200);

    const bList = await listInvites(b);
    expect(bList.map((i) => i.id)).not.toContain(active.id);
    expect(bList.map((i) => i.id)).not.toContain(revoked.id);

    const r1 = await revoke(b, active.id);
    expect(r1.status).toBe(404);
    expect(typeof r1.body.detail).toBe('string');
    expect((await remove(b, revoked.id)).status).toBe(404);
    expect((await remove(b, active.id)).status).toBe(404);

    // A's invites are untouched
    expect(await inviteStatus(a, active.id)).toBe('active');
    expect(await inviteStatus(a, revoked.id)).toBe('revoked');
  });
});

describe('invite transitions (contract §3.2)', () => {
  it('answers 400 for a non-uuid id and 404 for an unknown one', async () => {
    const owner = await newOwner(t);
    for (const r of [
      { method: 'POST' as const, url: '/api/v1/invites/not-a-uuid/revoke' },
      { method: 'DELETE' as const, url: '/api/v1/invites/not-a-uuid' },
      { method: 'DELETE' as const, url: '/api/v1/invites/1234' },
    ]) {
      const res = await t.request({ ...r, headers: owner.auth });
      expect(res.status, r.url).toBe(400);
      expect(typeof res.body.detail).toBe('string');
    }
    expect((await revoke(owner, randomUUID())).status).toBe(404);
    expect((await remove(owner, randomUUID())).status).toBe(404);
  });

  it('active -> revoked: 200 with the updated invite; the token no longer enrolls', async () => {
    const owner = await newOwner(t);
    const inv = await createInvite(t, owner);
    const res = await revoke(owner, inv.id);
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(inv.id);
    expect(res.body.status).toBe('revoked');
    expect(res.body).not.toHaveProperty('token');
    expect(await inviteStatus(owner, inv.id)).toBe('revoked');
    const { res: e } = await enroll(t, inv.token);
    expect(e.status).toBe(401);
  });

  it('revoking a revoked invite answers 409', async () => {
    const owner = await newOwner(t);
    const inv = await createInvite(t, owner);
    expect((await revoke(owner, inv.id)).status).toBe(200);
    const again = await revoke(owner, inv.id);
    expect(again.status).toBe(409);
    expect(typeof again.body.detail).toBe('string');
    expect(await inviteStatus(owner, inv.id)).toBe('revoked');
  });

  it('active -> consumed by enrollment; revoking a consumed invite answers 409', async () => {
    const owner = await newOwner(t);
    const inv = await createInvite(t, owner);
    const { res: e } = await enroll(t, inv.token);
    expect(e.status).toBe(201);
    const listed = (await listInvites(owner)).find((i) => i.id === inv.id);
    expect(listed).toMatchObject({ status: 'consumed', device_id: e.body.device_id });
    expect(typeof listed?.consumed_at).toBe('string');
    const res = await revoke(owner, inv.id);
    expect(res.status).toBe(409);
    expect(typeof res.body.detail).toBe('string');
    expect(await inviteStatus(owner, inv.id)).toBe('consumed');
    // single use
    const { res: second } = await enroll(t, inv.token);
    expect(second.status).toBe(401);
  });

  it('deleting an active invite answers 409 and keeps it', async () => {
    const owner = await newOwner(t);
    const inv = await createInvite(t, owner);
    const res = await remove(owner, inv.id);
    expect(res.status).toBe(409);
    expect(typeof res.body.detail).toBe('string');
    expect(await inviteStatus(owner, inv.id)).toBe('active');
    // still usable
    const { res: e } = await enroll(t, inv.token);
    expect(e.status).toBe(201);
  });

  it('revoked -> soft-deleted: 204, then absent from the list and 404', async () => {
    const owner = await newOwner(t);
    const inv = await createInvite(t, owner);
    const keep = await createInvite(t, owner);
    expect((await revoke(owner, inv.id)).status).toBe(200);
    const res = await remove(owner, inv.id);
    expect(res.status).toBe(204);
    expect(res.body).toBeUndefined();
    const ids = (await listInvites(owner)).map((i) => i.id);
    expect(ids).not.toContain(inv.id);
    expect(ids).toContain(keep.id);
    expect((await remove(owner, inv.id)).status).toBe(404);
    expect((await revoke(owner, inv.id)).status).toBe(404);
    const { res: e } = await enroll(t, inv.token);
    expect(e.status).toBe(401);
  });

  it('consumed -> soft-deleted: 204, then absent from the list and 404; the device stays', async () => {
    const owner = await newOwner(t);
    const inv = await createInvite(t, owner);
    const { res: e } = await enroll(t, inv.token);
    expect(e.status).toBe(201);
    const res = await remove(owner, inv.id);
    expect(res.status).toBe(204);
    expect((await listInvites(owner)).map((i) => i.id)).not.toContain(inv.id);
    expect((await remove(owner, inv.id)).status).toBe(404);
    const devices = await t.request({ method: 'GET', url: '/api/v1/devices', headers: owner.auth });
    expect(devices.status).toBe(200);
    expect((devices.body.devices as { device_id: string }[]).map((d) => d.device_id)).toContain(e.body.device_id);
  });
});

describe('invite expiry (10 minutes, enforced at use time)', () => {
  it('an invite is usable just before 10 minutes and expired just after, without any job run', async () => {
    const owner = await newOwner(t);
    const early = await createInvite(t, owner);
    const late = await createInvite(t, owner);
    const start = Date.now();

    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(start + 9 * 60_000 + 50_000);
    expect(await inviteStatus(owner, early.id)).toBe('active');
    const { res: ok } = await enroll(t, early.token);
    expect(ok.status).toBe(201);

    vi.setSystemTime(start + 10 * 60_000 + 5_000);
    expect(await inviteStatus(owner, late.id)).toBe('expired');
    const { res: lapsed } = await enroll(t, late.token);
    expect(lapsed.status).toBe(401);
    expect(typeof lapsed.body.detail).toBe('string');

    // the stored row was never touched by the expiry job: the answer comes from the use-time check
    const rows = await rawQuery('select status from invites where id = $1', [late.id]);
    expect(rows[0]!.status).toBe('active');

    // expired cannot be revoked (only active can), and can be soft-deleted
    const rev = await revoke(owner, late.id);
    expect(rev.status).toBe(409);
    const del = await remove(owner, late.id);
    expect(del.status).toBe(204);
    expect((await listInvites(owner)).map((i) => i.id)).not.toContain(late.id);

    // the consumed one stays consumed, not expired
    expect(await inviteStatus(owner, early.id)).toBe('consumed');
  });

  it('an unknown token of the right shape answers 401', async () => {
    const { res } = await enroll(t, `svc_tok_${randomBytes(32).toString('hex')}`);
    expect(res.status).toBe(401);
  });
});
