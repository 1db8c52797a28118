/**
 * Compliance report (contract §3.3 enterprise feature, §4.12 `GET /trust-scores/{agent_id}/report`):
 * 403 below the enterprise tier, the JSON sections at enterprise against seeded rows (scores per
 * window, tier changes, policy outcomes over 30 days, drift, active grants, audit count and chain
 * check), the standalone HTML download (content type, attachment name, every value escaped), the
 * format choice (query or Accept), and the route matrix.
 */
import { and, eq, gte, inArray, or, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditEvents } from '../../src/db/schema/index.js';
import { TRUST_DIMENSIONS, TRUST_WINDOWS } from '../../src/modules/trust/types.js';
import { activeAgent, newOwner, type Agent, type Owner } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { DAY_MS, dims, registerIdentity, TrustSeed } from '../../testing/trust-fixtures.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const NASTY = '<script>alert("x")</script> & \'Co\'';

describe('GET /trust-scores/{agent_id}/report', () => {
  let t: TestApp;
  let seed: TrustSeed;
  let a: Owner;
  let b: Owner;
  let ent: Agent;
  let entId: { address: string; id: string };
  let cert: Agent;
  let certId: { address: string; id: string };
  let bare: Agent;

  beforeAll(async () => {
    t = await startApp({ env: { RATE_LIMITS: 'off' } });
    seed = new TrustSeed(t);
    a = await newOwner(t, 'Report A');
    b = await newOwner(t, 'Report B');
    ent = await activeAgent(t, a);
    entId = await registerIdentity(t, a, ent.deviceId, NASTY);
    await seed.setTier(entId.id, 'enterprise');
    cert = await activeAgent(t, a);
    certId = await registerIdentity(t, a, cert.deviceId);
    await seed.setTier(certId.id, 'certified');
    bare = await activeAgent(t, a);
  });
  afterAll(() => t.close());

  const report = (ref: string, query = '', headers: Record<string, string> = a.auth) => t.request({ method: 'GET', url: `/api/v1/trust-scores/${ref}/report${query}`, headers });

  it('403 below the enterprise tier, naming the tier (HTML requests too)', async () => {
    const c = await report(cert.deviceId);
    expect(c.status).toBe(403);
    expect(c.body.detail).toMatch(/enterprise/);
    expect(c.body.detail).toMatch(/certified/);
    const n = await report(bare.deviceId, '?format=html');
    expect(n.status).toBe(403);
    expect(n.body.detail).toMatch(/tier is unverified/);
  });

  it('JSON at enterprise: every section from the stored rows', async () => {
    const now = Date.now();
    const at = (d: number) => new Date(now - d * DAY_MS);
    await seed.snapshot({ tenantId: a.tenantId, deviceId: ent.deviceId, at: at(0.25), composite: 0.86, dimensions: dims(0.86, { uptime: 0.99 }), percentile: 90, tier: 'enterprise' });
    await seed.snapshot({ tenantId: a.tenantId, deviceId: ent.deviceId, window: '90d', at: at(0.25), composite: 0.82, percentile: 80, tier: 'enterprise' });
    await seed.tierChange(a.tenantId, entId.id, 'certified', 'enterprise', at(3));
    await seed.tierChange(a.tenantId, entId.id, 'unverified', 'certified', at(120));
    for (const o of ['allow', 'allow', 'allow', 'block', 'hold', 'notify']) await seed.policyEvaluation(a.tenantId, ent.deviceId, o, at(2));
    await seed.policyEvaluation(a.tenantId, ent.deviceId, 'block', at(31));
    await seed.policyEvaluation(a.tenantId, cert.deviceId, 'block', at(1));
    await seed.grant(a.tenantId, ent.deviceId, 'active', 'enterprise');
    await seed.grant(a.tenantId, ent.deviceId, 'revoked');
    await seed.grant(a.tenantId, ent.deviceId, 'expired');
    await seed.grant(a.tenantId, cert.deviceId, 'active');

    const res = await report(entId.address.toUpperCase());
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const r = res.body;
    expect(r.report_id).toMatch(UUID);
    expect(Math.abs(Date.parse(r.generated_at) - Date.now())).toBeLessThan(60_000);
    expect(r.agent).toEqual({ agent_id: ent.deviceId, hub_address: entId.address, did: `did:hub:${entId.address}`, display_name: NASTY, tier: 'enterprise', enrolled_at: expect.any(String) });
    expect(Object.keys(r.scores).sort()).toEqual([...TRUST_WINDOWS].sort());
    expect(r.scores['7d']).toMatchObject({ composite_score: 0.86, percentile: 90, computed_at: at(0.25).toISOString(), dimensions: dims(0.86, { uptime: 0.99 }) });
    expect(r.scores['90d']).toMatchObject({ composite_score: 0.82, percentile: 80 });
    // No 30d snapshot: the contract §3.9 warm-up answer.
    expect(r.scores['30d']).toMatchObject({ composite_score: 0.5, percentile: 50, dimensions: dims(0.5) });
    expect(Object.values(r.scores['30d'].sources)).toEqual(TRUST_DIMENSIONS.map(() => 'warmup'));
    // Tier changes of the last 90 days only.
    expect(r.tier_changes).toEqual([{ from_tier: 'certified', to_tier: 'enterprise', reason: 'trust_recompute', changed_at: at(3).toISOString() }]);
    // 30 days, this agent as sender: 3 allow, 1 block, 1 hold, 1 notify; violations = block + hold.
    expect(r.policy).toEqual({ period_days: 30, evaluations: 6, violations: 2, by_outcome: { allow: 3, block: 1, hold: 1, notify: 1 } });
    expect(r.drift).toMatchObject({ agent_id: ent.deviceId, window: '30d', baseline: null, alert: false });
    expect(r.active_grants).toBe(1);

    // Audit: events of the last 30 days about the agent (device or identity as subject, or the device as actor).
    const db = t.app.parley.database.db;
    const [expected] = await db
      .select({ n: sql<number>`count(*)::int` })
      .from(auditEvents)
      .where(and(gte(auditEvents.createdAt, at(30)), or(inArray(auditEvents.subject, [ent.deviceId, entId.id]), eq(auditEvents.actor, `device:${ent.deviceId}`))));
    expect(expected!.n).toBeGreaterThan(0); // enrolment and approval at least
    expect(r.audit).toEqual({ period_days: 30, events_30d: expected!.n, chain_valid: true });

    // format=json is the default made explicit.
    const explicit = await report(ent.deviceId, '?format=json');
    expect(explicit.status).toBe(200);
    expect(explicit.body.agent.agent_id).toBe(ent.deviceId);
    expect(explicit.body.report_id).not.toBe(r.report_id);
  });

  it('HTML download: text/html, attachment name, every value escaped', async () => {
    const today = new Date().toISOString().slice(0, 10);
    for (const [query, headers] of [
      ['?format=html', a.auth],
      ['', { ...a.auth, accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.8' }],
    ] as const) {
      const res = await report(ent.deviceId, query, headers);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['content-disposition']).toBe(`attachment; filename="parley-compliance-${entId.address}-${today}.html"`);
      const html = res.body as string;
      expect(html.startsWith('<!DOCTYPE html>')).toBe(true);
      expect(html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;Co&#39;');
      expect(html).not.toContain('<script');
      expect(html).toContain(`did:hub:${entId.address}`);
      expect(html).toContain('0.860');
      expect(html).toMatch(/Audit chain<\/dt><dd class="ok">verified/);
    }
    // An explicit format=json wins over Accept.
    const json = await report(ent.deviceId, '?format=json', { ...a.auth, accept: 'text/html' });
    expect(json.headers['content-type']).toMatch(/^application\/json/);
  });

  it('400 unknown format; 401 without auth; 403 device token; 404 across tenants', async () => {
    for (const f of ['pdf', 'HTML', '']) expect((await report(ent.deviceId, `?format=${f}`)).status, f).toBe(400);
    expect((await report(ent.deviceId, '', {})).status).toBe(401);
    expect((await report(ent.deviceId, '', ent.auth)).status).toBe(403);
    expect((await report(ent.deviceId, '', b.auth)).status).toBe(404);
    expect((await report(entId.address, '', b.auth)).status).toBe(404);
    expect((await report('00000000-0000-4000-8000-000000000000')).status).toBe(404);
  });

  it('chain_valid is false once a stored audit event was altered', async () => {
    // Tamper with the tenant's chain with the connection's own privileges (the app role may not).
    const db = t.app.parley.database.db;
    const [first] = await db.select().from(auditEvents).where(eq(auditEvents.tenantId, a.tenantId)).orderBy(auditEvents.seq).limit(1);
    await db.update(auditEvents).set({ data: { tampered: true } }).where(eq(auditEvents.id, first!.id));
    const res = await report(ent.deviceId);
    expect(res.status).toBe(200);
    expect(res.body.audit.chain_valid).toBe(false);
    const html = await report(ent.deviceId, '?format=html');
    expect(html.body).toMatch(/Audit chain<\/dt><dd class="alert">BROKEN/);
  });
});
