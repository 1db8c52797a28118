/**
 * Platform operators and the operator tier grant (design §8.25; contract §3.3, §3.9; docs/decisions.md
 * "Platform operators and operator tier grants"): `PLATFORM_OPERATOR_SUBS` and the dev provider's
 * operator claim (`owner-token --operator`, never honoured on external OIDC tokens); the route
 * matrix of `POST /hub/identities/{id}/tier` (401, 403, 400, 404); a grant's effects (tier,
 * `tier_source`, `hub_tier_changes`, audit `hub.tier_granted` in the identity's tenant chain, the
 * `svc.trust` span, capabilities); and the trust engine afterwards: warm-up and fleet-median
 * scores keep the grant, certify keeps it, a real-telemetry score below the threshold drops it, so
 * does the expiry (also for an identity the recompute does not score).
 */
import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { grantState, tierUnderGrant } from '../../src/modules/trust/tier-grant.js';
import { telemetryComposite } from '../../src/modules/trust/fallbacks.js';
import { TrustEngine } from '../../src/modules/trust/engine.js';
import { TRUST_DIMENSIONS } from '../../src/modules/trust/types.js';
import { activeAgent, newOwner, type Agent, type Owner } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { hubOwnerKey } from '../../testing/keys.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const run = promisify(execFile);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const OPERATOR = 'ops@platform.test';
let seq = 0;
const addr = () => `op-${Date.now().toString(36)}-${++seq}`;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('operator tier grants: pure rules', () => {
  it('PLATFORM_OPERATOR_SUBS is comma-separated, trimmed, de-duplicated; none by default', () => {
    expect(loadConfig({ PLATFORM_OPERATOR_SUBS: ' a@x.test , ,b@x.test,a@x.test' }).platformOperatorSubs).toEqual(['a@x.test', 'b@x.test']);
    expect(loadConfig({}).platformOperatorSubs).toEqual([]);
  });

  it('telemetryComposite weighs real-telemetry dimensions only; none → null', () => {
    const all = <T>(v: T) => Object.fromEntries(TRUST_DIMENSIONS.map((d) => [d, v]));
    expect(telemetryComposite(all(0.5), all('warmup'))).toBeNull();
    expect(telemetryComposite(all(0.3), {})).toBeNull();
    // uptime (0.1) at 1 and task_success (0.1) at 0 from telemetry, the rest fleet medians at 0.
    const dims = { ...all(0), uptime: 1 };
    expect(telemetryComposite(dims, { ...all('fleet_median'), uptime: 'telemetry', task_success: 'telemetry' })).toBeCloseTo(0.5, 10);
    expect(telemetryComposite(all(0.9), all('telemetry'))).toBeCloseTo(0.9, 10);
  });

  it('grantState and tierUnderGrant', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    expect(grantState({ tierSource: 'computed', tierGrantExpiresAt: null }, now)).toBe('none');
    expect(grantState({ tierSource: 'operator', tierGrantExpiresAt: null }, now)).toBe('valid');
    expect(grantState({ tierSource: 'operator', tierGrantExpiresAt: new Date(now.getTime() + 1) }, now)).toBe('valid');
    expect(grantState({ tierSource: 'operator', tierGrantExpiresAt: now }, now)).toBe('expired');
    // Falls: never on fallback scores, only when the real-telemetry score is below the threshold too.
    expect(tierUnderGrant({ from: 'certified', computed: 'unverified', latest: 0.5, latestTelemetry: null })).toEqual({ tier: 'certified', score: null });
    expect(tierUnderGrant({ from: 'certified', computed: 'unverified', latest: 0.55, latestTelemetry: 0.9 })).toEqual({ tier: 'certified', score: null });
    expect(tierUnderGrant({ from: 'certified', computed: 'unverified', latest: 0.5, latestTelemetry: 0.3 })).toEqual({ tier: 'unverified', score: 0.5 });
    expect(tierUnderGrant({ from: 'enterprise', computed: 'unverified', latest: 0.4, latestTelemetry: 0.7 })).toEqual({ tier: 'certified', score: 0.7 });
    // Rises: kept, except out of an unverified grant.
    expect(tierUnderGrant({ from: 'certified', computed: 'enterprise', latest: 0.85, latestTelemetry: 0.85 }).tier).toBe('enterprise');
    expect(tierUnderGrant({ from: 'unverified', computed: 'certified', latest: 0.7, latestTelemetry: 0.7 }).tier).toBe('unverified');
  });
});

describe('operator tier grants', () => {
  let t: TestApp;
  let engine: TrustEngine;
  let a: Owner;
  let opAuth: { authorization: string };

  const exec = async <T = Record<string, unknown>>(q: ReturnType<typeof sql>) => ((await t.app.parley.database.db.execute(q)) as unknown as { rows: T[] }).rows;
  const grant = (id: string, payload: unknown, headers: Record<string, string> = opAuth) => t.request({ method: 'POST', url: `/api/v1/hub/identities/${id}/tier`, headers, payload: payload as object });
  const identity = async (id: string) =>
    (await exec<{ trust_tier: string; tier_source: string; tier_grant_reason: string | null; tier_grant_expires_at: unknown }>(
      sql`select trust_tier, tier_source, tier_grant_reason, tier_grant_expires_at from hub_identities where id = ${id}`,
    ))[0]!;
  const tierChanges = (id: string) => exec<{ from_tier: string; to_tier: string; reason: string }>(sql`select from_tier, to_tier, reason from hub_tier_changes where identity_id = ${id} order by created_at`);
  const auditOf = (tenantId: string, type: string, id: string) =>
    exec<{ actor: string; data: Record<string, unknown> }>(sql`select actor, data from audit_events where tenant_id = ${tenantId} and type = ${type} and subject = ${id} order by seq`);

  /** An identity of `owner` bound to a new ACTIVE agent (activated `ageMs` ago) with an SLA capability. */
  async function candidate(owner: Owner, ageMs = 0): Promise<{ id: string; address: string; agent: Agent }> {
    const agent = await activeAgent(t, owner);
    if (ageMs > 0) await exec(sql`update devices set activated_at = ${new Date(Date.now() - ageMs).toISOString()}::timestamptz where id = ${agent.deviceId}`);
    const reg = await t.request({ method: 'POST', url: '/api/v1/hub/identities', headers: owner.auth, payload: { hub_address: addr(), display_name: 'Granted', device_id: agent.deviceId, public_key: hubOwnerKey() } });
    expect(reg.status).toBe(201);
    const cap = { name: 'translate', version: '1.0.0', input_schema: { type: 'object' }, sla: { latency_p95_ms: 500, uptime_sla: 0.99 } };
    expect((await t.request({ method: 'POST', url: `/api/v1/hub/${reg.body.hub_address}/capabilities`, headers: owner.auth, payload: cap })).status).toBe(201);
    return { id: reg.body.id, address: reg.body.hub_address, agent };
  }

  /** `n` spans named `name` of the device, one second apart from `start`; the first `errors` fail. */
  const spans = (owner: Owner, deviceId: string, start: Date, name: string, n: number, errors = 0) =>
    exec(sql`
      insert into telemetry_spans (id, tenant_id, device_id, trace_id, span_id, name, kind, start_time, end_time, duration_us, status_code, attributes, resource)
      select gen_random_uuid(), ${owner.tenantId}, ${deviceId}, md5(random()::text || g::text), substr(md5(random()::text), 1, 16), ${name}, 1,
             ${start.toISOString()}::timestamptz + g * interval '1 second', ${start.toISOString()}::timestamptz + g * interval '1 second', 1000,
             case when g <= ${errors} then 2 else 0 end, '{}'::jsonb, '{}'::jsonb
      from generate_series(1, ${n}::int) g`);
  /** Presence in every hour of the last `hours` hours (uptime 1). */
  const presence = (owner: Owner, deviceId: string, hours: number) =>
    exec(sql`
      insert into device_presence (tenant_id, device_id, hour)
      select ${owner.tenantId}, ${deviceId}, date_trunc('hour', now()) - g * interval '1 hour' from generate_series(0, ${hours}::int) g
      on conflict do nothing`);

  beforeAll(async () => {
    t = await startApp({ env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000', PLATFORM_OPERATOR_SUBS: `${OPERATOR}, second@platform.test` } });
    engine = new TrustEngine({ db: t.app.parley.database.db, log: t.app.log });
    a = await newOwner(t, 'Tenant A');
    // The operator belongs to no tenant: operator routes need no membership.
    opAuth = bearer(await t.ownerToken(OPERATOR));
  });
  afterAll(() => t.close());

  it('route matrix: 401 without an owner token, 403 for non-operators, 400 bad bodies, 404 unknown identity', async () => {
    const c = await candidate(a);
    const ok = { tier: 'certified', reason: 'reviewed' };
    const noToken = await grant(c.id, ok, {});
    expect(noToken.status).toBe(401);
    expect(typeof noToken.body.detail).toBe('string');
    expect((await grant(c.id, ok, bearer('not-a-token'))).status).toBe(401);
    // The identity's own owner, an agent, an API key: not operators.
    const key = await t.request({ method: 'POST', url: '/api/v1/api-keys', headers: a.auth, payload: { name: 'k' } });
    for (const headers of [a.auth, c.agent.auth, { 'x-api-key': key.body.key as string }]) {
      const res = await grant(c.id, ok, headers);
      expect(res.status).toBe(403);
      expect(typeof res.body.detail).toBe('string');
    }
    const past = new Date(Date.now() - 60_000).toISOString();
    const bad: unknown[] = [
      {},
      { tier: 'certified' },
      { reason: 'x' },
      { tier: 'gold', reason: 'x' },
      { tier: 'Certified', reason: 'x' },
      { tier: 'certified', reason: '' },
      { tier: 'certified', reason: '   ' },
      { tier: 'certified', reason: 'x'.repeat(501) },
      { tier: 'certified', reason: 'x', expires_at: 'tomorrow' },
      { tier: 'certified', reason: 'x', expires_at: past },
    ];
    for (const body of bad) {
      const res = await grant(c.id, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(typeof res.body.detail).toBe('string');
    }
    expect((await grant('not-a-uuid', ok)).status).toBe(400);
    const unknown = await grant(randomUUID(), ok);
    expect(unknown.status).toBe(404);
    expect(typeof unknown.body.detail).toBe('string');
    // Nothing changed.
    expect(await identity(c.id)).toMatchObject({ trust_tier: 'unverified', tier_source: 'computed' });
    expect(await tierChanges(c.id)).toEqual([]);
  });

  it('a grant: tier and tier_source, hub_tier_changes, audit hub.tier_granted in the tenant chain, svc.trust span, capabilities', async () => {
    const c = await candidate(a);
    const expiresAt = new Date(Date.now() + 30 * DAY).toISOString();
    const res = await grant(c.id, { tier: 'certified', reason: ' reviewed the agent on 2026-11-20 ', expires_at: expiresAt });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: c.id, hub_address: c.address, trust_tier: 'certified', tier_source: 'operator', device_id: c.agent.deviceId });
    expect(await identity(c.id)).toMatchObject({ trust_tier: 'certified', tier_source: 'operator', tier_grant_reason: 'reviewed the agent on 2026-11-20' });
    expect(new Date((await identity(c.id)).tier_grant_expires_at as string).toISOString()).toBe(expiresAt);
    // The owner and the public see it.
    expect((await t.request({ method: 'GET', url: `/api/v1/hub/identities/${c.id}`, headers: a.auth })).body).toMatchObject({ trust_tier: 'certified', tier_source: 'operator' });
    expect((await t.request({ method: 'GET', url: `/api/v1/hub/${c.address}/profile` })).body).toMatchObject({ trust_tier: 'certified', tier_source: 'operator' });
    expect(await tierChanges(c.id)).toEqual([{ from_tier: 'unverified', to_tier: 'certified', reason: 'operator_grant' }]);
    expect((await exec<{ certification_tier: string }>(sql`select certification_tier from hub_capabilities where identity_id = ${c.id}`))[0]!.certification_tier).toBe('certified');
    // Audited once, in the identity's tenant chain, by the operator (no hub.tier_changed twin).
    const events = await t.request({ method: 'GET', url: `/api/v1/audit/events?type=hub.tier_granted&subject=${c.id}`, headers: a.auth });
    expect(events.status).toBe(200);
    expect(events.body.events).toHaveLength(1);
    expect(events.body.events[0]).toMatchObject({
      type: 'hub.tier_granted',
      actor: OPERATOR,
      subject: c.id,
      data: { from: 'unverified', to: 'certified', reason: 'reviewed the agent on 2026-11-20', expires_at: expiresAt, revoked_grants: [] },
    });
    expect(await auditOf(a.tenantId, 'hub.tier_changed', c.id)).toEqual([]);
    expect((await t.request({ method: 'GET', url: '/api/v1/audit/verify', headers: a.auth })).body).toMatchObject({ valid: true });
    const trust = await exec<{ attributes: Record<string, unknown> }>(sql`select attributes from telemetry_spans where device_id = ${c.agent.deviceId} and name = 'svc.trust'`);
    expect(trust.map((s) => s.attributes)).toEqual([
      expect.objectContaining({ operation: 'tier_change', 'svc.trust.from_tier': 'unverified', 'svc.trust.to_tier': 'certified', 'svc.trust.reason': 'operator_grant', 'svc.trust.tier_source': 'operator' }),
    ]);

    // A second grant of the same tier replaces the grant: audited, no tier change recorded.
    const again = await grant(c.id, { tier: 'certified', reason: 'annual review' });
    expect(again.status).toBe(200);
    expect(await identity(c.id)).toMatchObject({ tier_source: 'operator', tier_grant_reason: 'annual review', tier_grant_expires_at: null });
    expect(await tierChanges(c.id)).toHaveLength(1);
    expect(await auditOf(a.tenantId, 'hub.tier_granted', c.id)).toHaveLength(2);
  });

  it('a recompute in the 48-hour warm-up and a certify run keep the grant', async () => {
    const owner = await newOwner(t, 'Warm-up');
    const c = await candidate(owner);
    expect((await grant(c.id, { tier: 'certified', reason: 'fresh install, reviewed' })).status).toBe(200);
    const summary = await engine.recomputeTenant(owner.tenantId, new Date());
    expect(summary.tierChanges).toBe(0);
    const [w7] = await exec<{ composite: number; sources: Record<string, string>; tier: string }>(
      sql`select composite, sources, tier from trust_snapshots where device_id = ${c.agent.deviceId} and "window" = '7d'`,
    );
    // The warm-up score (0.5) is below the certified threshold, yet the grant holds.
    expect(w7!.composite).toBe(0.5);
    expect(new Set(Object.values(w7!.sources))).toEqual(new Set(['warmup']));
    expect(w7!.tier).toBe('certified');
    expect(await identity(c.id)).toMatchObject({ trust_tier: 'certified', tier_source: 'operator' });
    const cert = await t.request({ method: 'POST', url: `/api/v1/hub/identities/${c.id}/certify`, headers: owner.auth });
    expect(cert.status).toBe(200);
    expect(cert.body).toMatchObject({ tier: 'certified', upgraded: false });
    expect(await identity(c.id)).toMatchObject({ trust_tier: 'certified', tier_source: 'operator' });
    expect((await tierChanges(c.id)).map((x) => x.reason)).toEqual(['operator_grant']);
  });

  it('missing dimensions filled by low fleet medians do not lower the grant; the same scores demote a computed tier', async () => {
    const owner = await newOwner(t, 'Fleet');
    const granted = await candidate(owner, 5 * DAY);
    const computed = await candidate(owner, 5 * DAY);
    // A peer whose only data are bad: expired decisions, blocked messages, failing tools.
    const peer = await activeAgent(t, owner);
    await exec(sql`update devices set activated_at = ${new Date(Date.now() - 5 * DAY).toISOString()}::timestamptz where id = ${peer.deviceId}`);
    const yesterday = new Date(Date.now() - DAY);
    for (let i = 0; i < 3; i++) {
      await exec(sql`insert into decisions (id, tenant_id, device_id, title, options, status, created_by, created_at, resolved_at, resolved_by)
                     values (${randomUUID()}, ${owner.tenantId}, ${peer.deviceId}, 'Ship?', '[]'::jsonb, 'expired', 'device', ${yesterday.toISOString()}::timestamptz, ${new Date(yesterday.getTime() + HOUR).toISOString()}::timestamptz, 'system')`);
      await exec(sql`insert into policy_evaluations (id, tenant_id, subject_kind, subject_id, sender_device_id, outcome, duration_us, created_at)
                     values (${randomUUID()}, ${owner.tenantId}, 'room_envelope', ${randomUUID()}, ${peer.deviceId}, 'block', 5, ${yesterday.toISOString()}::timestamptz)`);
    }
    await spans(owner, peer.deviceId, yesterday, 'svc.tool', 10, 10);
    // Both identities: flawless real telemetry (always present, every task succeeds), nothing else.
    for (const c of [granted, computed]) {
      await presence(owner, c.agent.deviceId, 5 * 24 + 1);
      await spans(owner, c.agent.deviceId, yesterday, 'svc.task', 20);
    }
    expect((await grant(granted.id, { tier: 'certified', reason: 'reviewed' })).status).toBe(200);
    await exec(sql`update hub_identities set trust_tier = 'certified' where id = ${computed.id}`);

    await engine.recomputeTenant(owner.tenantId, new Date());
    const [w7] = await exec<{ composite: number; sources: Record<string, string> }>(
      sql`select composite, sources from trust_snapshots where device_id = ${granted.agent.deviceId} and "window" = '7d'`,
    );
    expect(w7!.composite).toBeLessThan(0.6);
    expect(w7!.sources).toMatchObject({ uptime: 'telemetry', task_success: 'telemetry', responsiveness: 'fleet_median', compliance: 'fleet_median', tool_accuracy: 'fleet_median' });
    expect(await identity(granted.id)).toMatchObject({ trust_tier: 'certified', tier_source: 'operator' });
    expect(await identity(computed.id)).toMatchObject({ trust_tier: 'unverified', tier_source: 'computed' });
  });

  it('a window score from real telemetry below the threshold drops the grant', async () => {
    const owner = await newOwner(t, 'Real');
    const c = await candidate(owner, 5 * DAY);
    expect((await grant(c.id, { tier: 'certified', reason: 'reviewed' })).status).toBe(200);
    await spans(owner, c.agent.deviceId, new Date(Date.now() - DAY), 'svc.task', 50, 50);
    const summary = await engine.recomputeTenant(owner.tenantId, new Date());
    expect(summary.tierChanges).toBe(1);
    expect(await identity(c.id)).toMatchObject({ trust_tier: 'unverified', tier_source: 'computed', tier_grant_reason: null, tier_grant_expires_at: null });
    expect(await tierChanges(c.id)).toEqual([
      { from_tier: 'unverified', to_tier: 'certified', reason: 'operator_grant' },
      { from_tier: 'certified', to_tier: 'unverified', reason: 'trust_recompute' },
    ]);
    const [changed] = await auditOf(owner.tenantId, 'hub.tier_changed', c.id);
    expect(changed).toMatchObject({ actor: 'system', data: { from: 'certified', to: 'unverified', reason: 'trust_recompute' } });
    expect(changed!.data.score).toBeLessThan(0.6);
    expect((await t.request({ method: 'GET', url: `/api/v1/hub/identities/${c.id}`, headers: owner.auth })).body).toMatchObject({ trust_tier: 'unverified', tier_source: 'computed' });
  });

  it('an expired grant drops: the computed rules decide again (bound and unbound identities)', async () => {
    const owner = await newOwner(t, 'Expiry');
    const c = await candidate(owner);
    const unbound = await t.request({ method: 'POST', url: '/api/v1/hub/identities', headers: owner.auth, payload: { hub_address: addr(), display_name: 'Unbound', public_key: hubOwnerKey() } });
    expect(unbound.status).toBe(201);
    const expiresAt = new Date(Date.now() + HOUR);
    for (const id of [c.id, unbound.body.id as string]) {
      expect((await grant(id, { tier: 'enterprise', reason: 'trial', expires_at: expiresAt.toISOString() })).status).toBe(200);
    }
    // Before the expiry the warm-up score keeps it.
    expect((await engine.recomputeTenant(owner.tenantId, new Date(expiresAt.getTime() - 60_000))).tierChanges).toBe(0);
    expect(await identity(c.id)).toMatchObject({ trust_tier: 'enterprise', tier_source: 'operator' });
    // After it: no 7-day hold behind the tier → unverified, source computed, reason grant_expired.
    const summary = await engine.recomputeTenant(owner.tenantId, new Date(expiresAt.getTime() + 60_000));
    expect(summary.tierChanges).toBe(2);
    for (const id of [c.id, unbound.body.id as string]) {
      expect(await identity(id)).toMatchObject({ trust_tier: 'unverified', tier_source: 'computed', tier_grant_reason: null, tier_grant_expires_at: null });
      expect((await tierChanges(id)).at(-1)).toEqual({ from_tier: 'enterprise', to_tier: 'unverified', reason: 'grant_expired' });
      expect((await auditOf(owner.tenantId, 'hub.tier_changed', id)).map((e) => [e.actor, e.data.reason])).toEqual([['system', 'grant_expired']]);
    }
    expect((await exec<{ certification_tier: string }>(sql`select certification_tier from hub_capabilities where identity_id = ${c.id}`))[0]!.certification_tier).toBe('unverified');
  });

  it('the dev provider operator claim and `owner-token --operator` make an operator; without it, a tenant-less owner is not one', { timeout: 60_000 }, async () => {
    const unknown = randomUUID();
    const body = { tier: 'certified', reason: 'reviewed' };
    // The claim, minted by the dev provider: the route answers 404 for the unknown identity, past the operator check.
    expect((await grant(unknown, body, bearer(await t.app.parley.devIdp!.mint('dev-op@example.com', { operator: true })))).status).toBe(404);
    expect((await grant(unknown, body, bearer(await t.ownerToken('plain@example.com')))).status).toBe(403);
    expect((await grant(unknown, body, bearer(await t.ownerToken('second@platform.test')))).status).toBe(404);

    const env = { ...process.env, DATA_DIR: t.config.dataDir, OIDC_ISSUER: '', OIDC_AUDIENCE: '', OIDC_JWKS_URL: '', LOG_LEVEL: 'silent' };
    const cli = async (...args: string[]) =>
      (await run('npx', ['tsx', '--conditions=parley-source', 'packages/server/src/cli.ts', 'owner-token', '--sub', 'cli-op@example.com', ...args], { cwd: REPO_ROOT, env })).stdout.trim().split('\n').at(-1)!;
    expect((await grant(unknown, body, bearer(await cli('--operator')))).status).toBe(404);
    expect((await grant(unknown, body, bearer(await cli()))).status).toBe(403);
  });
});

describe('operator tier grants: external OIDC provider', () => {
  const ISSUER = 'https://idp.test';
  let t: TestApp;
  let server: http.Server;
  let idpKey: CryptoKey;

  const sign = (sub: string, claims: Record<string, unknown> = {}) =>
    new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid: 'k1', typ: 'JWT' }).setIssuer(ISSUER).setAudience('parley').setSubject(sub).setIssuedAt().setExpirationTime('10m').sign(idpKey);

  beforeAll(async () => {
    const pair = await generateKeyPair('ES256', { extractable: true });
    idpKey = pair.privateKey;
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
    server = http.createServer((req, res) => {
      if (req.url === '/jwks') res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    t = await startApp({ env: { OIDC_ISSUER: ISSUER, OIDC_AUDIENCE: 'parley', OIDC_JWKS_URL: `http://127.0.0.1:${port}/jwks`, PLATFORM_OPERATOR_SUBS: 'listed@idp.test' } });
  });
  afterAll(async () => {
    await t?.close();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('the parley_operator claim of an external token means nothing; a listed sub is an operator', async () => {
    const url = `/api/v1/hub/identities/${randomUUID()}/tier`;
    const payload = { tier: 'certified', reason: 'reviewed' };
    const claimed = await t.request({ method: 'POST', url, headers: bearer(await sign('alice@idp.test', { parley_operator: true })), payload });
    expect(claimed.status).toBe(403);
    expect(typeof claimed.body.detail).toBe('string');
    expect((await t.request({ method: 'POST', url, headers: bearer(await sign('listed@idp.test')), payload })).status).toBe(404);
  });
});
