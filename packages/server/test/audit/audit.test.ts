/**
 * Audit log (contract §4.14; design §8.10, §8.22): the pure hash chain against hand-computed values,
 * actions recording chained events in their own transactions, tampering detection (an edited or a
 * deleted row), the routes' auth matrix and tenant isolation, and the `audit-verify` CLI command.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// Two chained events and their hashes, computed by hand with Python (the fixture says how).
import { CHAIN_EVENT_1 as e1, CHAIN_EVENT_2 as e2, CHAIN_HASH_1 as H1, CHAIN_HASH_2 as H2 } from '@parley/sdk/testing';
import { eventHash, GENESIS_HASH, verifyChain, type ChainRow } from '../../src/modules/audit/chain.js';
import { activeAgent, createInvite, newOwner, type Owner } from '../../testing/flows.js';
import { backend, createPgDatabase, startApp, type TestApp } from '../../testing/harness.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const run = promisify(execFile);

describe('audit chain (pure)', () => {
  const rows = (): ChainRow[] => [
    { ...e1, prev_hash: GENESIS_HASH, hash: H1 },
    { ...e2, prev_hash: H1, hash: H2 },
  ];

  it('hashes prev_hash bytes || JCS(event) with BLAKE2b-256 (key order does not matter)', () => {
    expect(GENESIS_HASH).toBe('0'.repeat(64));
    expect(eventHash(GENESIS_HASH, e1)).toBe(H1);
    expect(eventHash(H1, e2)).toBe(H2);
  });

  it('verifies a good chain and names the first broken link', () => {
    expect(verifyChain(rows())).toEqual({ valid: true, checked: 2, first_broken: null });
    expect(verifyChain([])).toEqual({ valid: true, checked: 0, first_broken: null });
    const edited = rows();
    edited[0]!.data = { n: 3, label: 'x' };
    expect(verifyChain(edited)).toEqual({ valid: false, checked: 1, first_broken: { seq: 1, event_id: e1.event_id, reason: 'hash_mismatch' } });
    expect(verifyChain([rows()[1]!]).first_broken).toMatchObject({ seq: 2, reason: 'seq_gap' });
    const relinked = rows();
    relinked[1]!.prev_hash = GENESIS_HASH;
    expect(verifyChain(relinked).first_broken).toMatchObject({ seq: 2, reason: 'prev_hash_mismatch' });
  });
});

describe('audit log (HTTP)', () => {
  let t: TestApp;
  let owner: Owner;
  beforeAll(async () => {
    t = await startApp();
    owner = await newOwner(t);
  });
  afterAll(() => t.close());

  const events = (o: Owner, query = '') => t.request({ method: 'GET', url: `/api/v1/audit/events${query}`, headers: o.auth });
  const verify = (o: Owner) => t.request({ method: 'GET', url: '/api/v1/audit/verify', headers: o.auth });
  const db = () => t.app.parley.database.db;

  it('records chained events for invites, devices, API keys, policies, settings and scan rules', async () => {
    const invite = await createInvite(t, owner);
    expect((await t.request({ method: 'POST', url: `/api/v1/invites/${invite.id}/revoke`, headers: owner.auth })).status).toBe(200);
    const agent = await activeAgent(t, owner);
    expect((await t.request({ method: 'PATCH', url: `/api/v1/devices/${agent.deviceId}/revoke`, headers: owner.auth })).status).toBe(200);
    expect((await t.request({ method: 'DELETE', url: `/api/v1/devices/${agent.deviceId}`, headers: owner.auth })).status).toBe(204);
    const key = (await t.request({ method: 'POST', url: '/api/v1/api-keys', headers: owner.auth, payload: { name: 'k' } })).body;
    const rotated = (await t.request({ method: 'POST', url: `/api/v1/api-keys/${key.id}/rotate`, headers: owner.auth })).body;
    expect((await t.request({ method: 'POST', url: `/api/v1/api-keys/${rotated.id}/revoke`, headers: owner.auth })).status).toBe(200);
    expect((await t.request({ method: 'DELETE', url: `/api/v1/api-keys/${rotated.id}`, headers: owner.auth })).status).toBe(204);
    const policy = await t.request({ method: 'POST', url: '/api/v1/policies', headers: owner.auth, payload: { name: 'p', conditions: {}, action: 'allow' } });
    expect(policy.status).toBe(201);
    expect((await t.request({ method: 'PATCH', url: `/api/v1/policies/${policy.body.policy_id}`, headers: owner.auth, payload: { priority: 5 } })).status).toBe(200);
    expect((await t.request({ method: 'DELETE', url: `/api/v1/policies/${policy.body.policy_id}`, headers: owner.auth })).status).toBe(204);
    expect((await t.request({ method: 'PATCH', url: '/api/v1/settings', headers: owner.auth, payload: { scan_rules_enabled: false } })).status).toBe(200);
    const rules = [{ id: 'secret', name: 'Secret word', pattern: 'hunter2', action: 'block', severity: 'high' }];
    expect((await t.request({ method: 'POST', url: '/api/v1/scan-rules', headers: owner.auth, payload: { rules } })).status).toBe(201);

    const res = await events(owner, '?limit=200');
    expect(res.status).toBe(200);
    const list = res.body.events as { event_id: string; type: string; actor: string; subject: string | null; prev_hash: string; hash: string }[];
    expect(list.map((e) => e.type).reverse()).toEqual([
      'invite.created',
      'invite.revoked',
      'invite.created',
      'device.enrolled',
      'device.approved',
      'device.activated',
      'device.revoked',
      'device.deleted',
      'api_key.created',
      'api_key.rotated',
      'api_key.revoked',
      'api_key.deleted',
      'policy.created',
      'policy.updated',
      'policy.deleted',
      'settings.updated',
      'scan_rules.updated',
    ]);
    expect(res.body.next_cursor).toBeNull();
    // newest first, each linked to the one before it; the first starts from 64 zeros
    for (let i = 0; i < list.length - 1; i++) expect(list[i]!.prev_hash).toBe(list[i + 1]!.hash);
    expect(list.at(-1)!.prev_hash).toBe(GENESIS_HASH);
    expect(list.find((e) => e.type === 'invite.revoked')).toMatchObject({ actor: owner.sub, subject: invite.id });
    // no secrets: neither the invite token nor any raw API key
    expect(JSON.stringify(list)).not.toContain(invite.token);
    expect(JSON.stringify(list)).not.toContain(key.key);
    expect((await verify(owner)).body).toEqual({ valid: true, checked: list.length, first_broken: null });
  });

  it('filters by type, actor, subject and time, and pages with cursor', async () => {
    const byType = await events(owner, '?type=invite.created');
    expect(byType.body.events).toHaveLength(2);
    const page1 = await events(owner, '?limit=4');
    expect(page1.body.events).toHaveLength(4);
    expect(page1.body.next_cursor).toMatch(/^\d+$/);
    const page2 = await events(owner, `?limit=4&cursor=${page1.body.next_cursor}`);
    expect(page1.body.events[3].prev_hash).toBe(page2.body.events[0].hash);
    const bySubject = await events(owner, `?subject=${byType.body.events[0].subject}`);
    expect(bySubject.body.events.length).toBeGreaterThanOrEqual(1);
    expect((await events(owner, `?actor=${encodeURIComponent(owner.sub)}&type=policy.created`)).body.events).toHaveLength(1);
    expect((await events(owner, '?since=2999-01-01T00:00:00Z')).body.events).toHaveLength(0);
    expect((await events(owner, '?until=2000-01-01T00:00:00Z')).body.events).toHaveLength(0);
    for (const bad of ['?limit=0', '?limit=201', '?type=nope', '?cursor=abc', '?since=yesterday']) expect((await events(owner, bad)).status, bad).toBe(400);
  });

  it('route matrix: 401 without auth, 403 for a device token, tenant isolation', async () => {
    const other = await newOwner(t);
    const agent = await activeAgent(t, other);
    for (const url of ['/api/v1/audit/events', '/api/v1/audit/verify']) {
      expect((await t.request({ method: 'GET', url })).status).toBe(401);
      expect((await t.request({ method: 'GET', url, headers: agent.auth })).status).toBe(403);
    }
    const mine = (await events(other)).body.events as { event_id: string }[];
    const theirs = new Set(((await events(owner, '?limit=200')).body.events as { event_id: string }[]).map((e) => e.event_id));
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.some((e) => theirs.has(e.event_id))).toBe(false);
    expect((await verify(other)).body.valid).toBe(true);
  });

  it('a row edited in the database breaks the chain at that seq', async () => {
    const o = await newOwner(t);
    for (let i = 0; i < 3; i++) await createInvite(t, o);
    expect((await verify(o)).body).toMatchObject({ valid: true, checked: 3 });
    await db().execute(sql`update audit_events set data = '{"label":"forged"}'::jsonb where tenant_id = ${o.tenantId} and seq = 2`);
    const v = (await verify(o)).body;
    expect(v.valid).toBe(false);
    expect(v.first_broken).toMatchObject({ seq: 2, reason: 'hash_mismatch' });
  });

  it('a deleted row breaks the chain', async () => {
    const o = await newOwner(t);
    for (let i = 0; i < 3; i++) await createInvite(t, o);
    await db().execute(sql`delete from audit_events where tenant_id = ${o.tenantId} and seq = 2`);
    const v = (await verify(o)).body;
    expect(v.valid).toBe(false);
    expect(v.first_broken).toMatchObject({ seq: 3, reason: 'seq_gap' });
  });

  it('the application role cannot rewrite the log', async () => {
    await expect(
      db().transaction(async (tx) => {
        await tx.execute(sql`select set_config('app.tenant_id', ${owner.tenantId}, true), set_config('role', 'parley_app', true)`);
        await tx.execute(sql`update audit_events set data = '{}'::jsonb`);
      }),
    ).rejects.toThrow();
  });
});

describe('audit-verify CLI', () => {
  it('prints the verdict and exits 0 for a valid chain, 1 for a broken one', { timeout: 90_000 }, async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-audit-'));
    const pg = backend === 'postgres' ? await createPgDatabase() : undefined;
    try {
      const t = await startApp({ dataDir, ...(pg ? { databaseUrl: pg.url } : {}) });
      const o = await newOwner(t);
      await createInvite(t, o);
      await createInvite(t, o);
      await t.close();
      const env = { ...process.env, DATA_DIR: dataDir, DATABASE_URL: pg?.url ?? '', OIDC_ISSUER: '', OIDC_AUDIENCE: '', OIDC_JWKS_URL: '', LOG_LEVEL: 'silent' };
      const cli = (tenant: string) => run('npx', ['tsx', '--conditions=parley-source', 'packages/server/src/cli.ts', 'audit-verify', '--tenant', tenant], { cwd: REPO_ROOT, env });
      const ok = await cli(o.tenantId);
      expect(JSON.parse(ok.stdout.trim().split('\n').at(-1)!)).toEqual({ valid: true, checked: 2, first_broken: null });

      const t2 = await startApp({ dataDir, ...(pg ? { databaseUrl: pg.url } : {}) });
      await t2.app.parley.database.db.execute(sql`update audit_events set actor = 'mallory' where tenant_id = ${o.tenantId} and seq = 1`);
      await t2.close();
      const broken = await cli(o.tenantId).then(
        () => undefined,
        (err: { code: number; stdout: string }) => err,
      );
      expect(broken?.code).toBe(1);
      expect(JSON.parse(broken!.stdout.trim().split('\n').at(-1)!)).toMatchObject({ valid: false, first_broken: { seq: 1 } });
    } finally {
      await pg?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
