/**
 * Trust score routes (contract §2.9, §3.9, §4.12; design §8.18, §8.21): current score (snapshot or the
 * contract §3.9 warm-up answer), fleet overview against a hand computation, history with tier changes,
 * PSI drift against a hand computation from seeded daily rows and baselines, recalibration (409
 * without enough complete days, then 200 and audited), recompute through the engine (per-tenant
 * rate limit; 409 while another recompute of the tenant runs, which the job skips), and per route
 * the matrix: 400 bad input, 401 without auth, 403 for a device token, 404 across tenants.
 */
import { and, eq } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditEvents, devices, trustBaselines, trustSnapshots } from '../../src/db/schema/index.js';
import { TrustEngine } from '../../src/modules/trust/engine.js';
import { TRUST_DIMENSIONS, type TrustDimension } from '../../src/modules/trust/types.js';
import { activeAgent, newOwner, registerOwnerDevice, type Agent, type Owner } from '../../testing/flows.js';
import { backend, startApp, type TestApp } from '../../testing/harness.js';
import { DAY_MS, daysAgo, dims, registerIdentity, TrustSeed } from '../../testing/trust-fixtures.js';

describe('trust score routes', () => {
  let t: TestApp;
  let seed: TrustSeed;
  let a: Owner;
  let b: Owner;
  let agent: Agent;
  let identity: { address: string; id: string };
  let otherAgent: Agent;

  beforeAll(async () => {
    t = await startApp({ env: { RATE_LIMITS: 'off' } });
    seed = new TrustSeed(t);
    a = await newOwner(t, 'Trust A');
    b = await newOwner(t, 'Trust B');
    agent = await activeAgent(t, a);
    identity = await registerIdentity(t, a, agent.deviceId);
    otherAgent = await activeAgent(t, b);
  });
  afterAll(() => t.close());

  const get = (url: string, headers: Record<string, string> | undefined = a.auth) => t.request({ method: 'GET', url: `/api/v1${url}`, ...(headers ? { headers } : {}) });
  const post = (url: string, headers: Record<string, string> | undefined = a.auth) => t.request({ method: 'POST', url: `/api/v1${url}`, ...(headers ? { headers } : {}) });

  /** The matrix every `{agent_id}` route shares: 401 without auth, 403 for a device token, 404 for unknown and other tenants' agents and owner devices. */
  async function agentMatrix(method: 'GET' | 'POST', suffix: string) {
    const send = (id: string, headers?: Record<string, string>) => (method === 'GET' ? get(`/trust-scores/${id}${suffix}`, headers) : post(`/trust-scores/${id}${suffix}`, headers));
    expect((await send(agent.deviceId, {})).status).toBe(401);
    expect((await send(agent.deviceId, agent.auth)).status).toBe(403);
    const foreign = await send(agent.deviceId, b.auth);
    expect(foreign.status).toBe(404);
    expect(foreign.body.detail).toBe('agent not found');
    expect((await send(identity.address, b.auth)).status).toBe(404);
    expect((await send(otherAgent.deviceId)).status).toBe(404);
    expect((await send('00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await send('no-such-agent')).status).toBe(404);
    const od = await registerOwnerDevice(t, a);
    expect((await send(od.deviceId)).status).toBe(404);
  }

  describe('GET /trust-scores/{agent_id}', () => {
    it('answers the contract §3.9 warm-up before the engine scored the agent', async () => {
      const fresh = await activeAgent(t, a);
      const before = Date.now();
      const res = await get(`/trust-scores/${fresh.deviceId}`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ agent_id: fresh.deviceId, hub_address: null, window: '7d', composite_score: 0.5, tier: 'unverified', percentile: 50, dimensions: dims(0.5) });
      expect(Object.values(res.body.sources)).toEqual(TRUST_DIMENSIONS.map(() => 'warmup'));
      expect(Date.parse(res.body.computed_at)).toBeGreaterThanOrEqual(before - 1000);
      expect(Date.parse(res.body.computed_at)).toBeLessThanOrEqual(Date.now() + 1000);
    });

    it('answers the newest snapshot of the window, by device id or hub address (any case)', async () => {
      const now = Date.now();
      await seed.snapshot({ tenantId: a.tenantId, deviceId: agent.deviceId, at: new Date(now - 2 * DAY_MS), composite: 0.4, percentile: 10 });
      const newest = dims(0.7, { uptime: 0.95, compliance: 0 });
      const sources = { ...(Object.fromEntries(TRUST_DIMENSIONS.map((d) => [d, 'telemetry'])) as Record<TrustDimension, 'telemetry'>), volume: 'fleet_median' as const };
      await seed.snapshot({ tenantId: a.tenantId, deviceId: agent.deviceId, at: new Date(now - 3600_000), composite: 0.72, dimensions: newest, sources, percentile: 0, tier: 'unverified' });
      await seed.snapshot({ tenantId: a.tenantId, deviceId: agent.deviceId, window: '30d', at: new Date(now - 3600_000), composite: 0.61, percentile: 75 });
      await seed.setTier(identity.id, 'certified');

      for (const ref of [agent.deviceId, agent.deviceId.toUpperCase(), identity.address, identity.address.toUpperCase()]) {
        const res = await get(`/trust-scores/${ref}`);
        expect(res.status, ref).toBe(200);
        expect(res.body).toEqual({
          agent_id: agent.deviceId,
          hub_address: identity.address,
          window: '7d',
          composite_score: 0.72,
          // The identity's current tier, not the one stored with the snapshot.
          tier: 'certified',
          dimensions: newest,
          percentile: 0,
          computed_at: new Date(now - 3600_000).toISOString(),
          sources,
        });
      }
      const month = await get(`/trust-scores/${agent.deviceId}?window=30d`);
      expect(month.body).toMatchObject({ window: '30d', composite_score: 0.61, percentile: 75 });
      // No 90d snapshot yet: that window still answers the warm-up.
      const quarter = await get(`/trust-scores/${agent.deviceId}?window=90d`);
      expect(quarter.body).toMatchObject({ window: '90d', composite_score: 0.5, percentile: 50, tier: 'certified' });
    });

    it('400 on a bad window; 401, 403, 404 matrix', async () => {
      for (const w of ['1d', '7D', '', '365d']) expect((await get(`/trust-scores/${agent.deviceId}?window=${w}`)).status, w).toBe(400);
      await agentMatrix('GET', '');
    });
  });

  describe('GET /trust-scores/fleet', () => {
    it('lists the newest snapshot per agent with per-dimension median, population std dev and mean', async () => {
      const owner = await newOwner(t, 'Fleet');
      const [x, y, z, unscored, revoked] = [await activeAgent(t, owner), await activeAgent(t, owner), await activeAgent(t, owner), await activeAgent(t, owner), await activeAgent(t, owner)];
      const xi = await registerIdentity(t, owner, x.deviceId);
      await seed.setTier(xi.id, 'enterprise');
      const now = Date.now();
      const at = (h: number) => new Date(now - h * 3600_000);
      // Older snapshot of x: ignored (the newest one counts).
      await seed.snapshot({ tenantId: owner.tenantId, deviceId: x.deviceId, at: at(30), composite: 0.99, dimensions: dims(0.99) });
      await seed.snapshot({ tenantId: owner.tenantId, deviceId: x.deviceId, at: at(6), composite: 0.45, dimensions: dims(0.5, { uptime: 0.2, reliability: 0.9 }), percentile: 17 });
      await seed.snapshot({ tenantId: owner.tenantId, deviceId: y.deviceId, at: at(5), composite: 0.55, dimensions: dims(0.5, { uptime: 0.6, reliability: 0.9 }), percentile: 50 });
      await seed.snapshot({ tenantId: owner.tenantId, deviceId: z.deviceId, at: at(4), composite: 0.65, dimensions: dims(0.5, { uptime: 0.7, reliability: 0.9 }), percentile: 83 });
      // Another window and another tenant: not part of this overview.
      await seed.snapshot({ tenantId: owner.tenantId, deviceId: x.deviceId, window: '30d', at: at(1), composite: 0.1, dimensions: dims(0.1) });
      await seed.snapshot({ tenantId: b.tenantId, deviceId: otherAgent.deviceId, at: at(1), composite: 0.3, dimensions: dims(0.3) });
      // A revoked agent's last snapshots stay stored but leave the overview.
      await seed.snapshot({ tenantId: owner.tenantId, deviceId: revoked!.deviceId, at: at(2), composite: 0.05, dimensions: dims(0.05) });
      await t.app.parley.database.db.update(devices).set({ status: 'REVOKED' }).where(eq(devices.id, revoked!.deviceId));

      const res = await get('/trust-scores/fleet', owner.auth);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ window: '7d', computed_at: at(4).toISOString(), count: 3 });
      const byId = new Map((res.body.agents as { agent_id: string }[]).map((r) => [r.agent_id, r]));
      expect([...byId.keys()].sort()).toEqual([x.deviceId, y.deviceId, z.deviceId].sort());
      expect(byId.has(unscored!.deviceId)).toBe(false);
      expect(byId.has(revoked!.deviceId)).toBe(false);
      expect(byId.get(x.deviceId)).toEqual({ agent_id: x.deviceId, hub_address: xi.address, composite_score: 0.45, tier: 'enterprise', percentile: 17 });
      expect(byId.get(y.deviceId)).toEqual({ agent_id: y.deviceId, hub_address: null, composite_score: 0.55, tier: 'unverified', percentile: 50 });

      // uptime [0.2, 0.6, 0.7]: median 0.6, mean 0.5, population σ = sqrt((0.09 + 0.01 + 0.04) / 3) = sqrt(0.14 / 3).
      const up = res.body.dimensions.uptime;
      expect(up.median).toBeCloseTo(0.6, 12);
      expect(up.mean).toBeCloseTo(0.5, 12);
      expect(up.stddev).toBeCloseTo(0.216024689946929, 12);
      // reliability [0.9, 0.9, 0.9]: σ = 0 (a zero, not a null).
      expect(res.body.dimensions.reliability.stddev).toBe(0);
      expect(res.body.dimensions.reliability.median).toBeCloseTo(0.9, 12);
      expect(res.body.dimensions.compliance).toEqual({ median: 0.5, stddev: 0, mean: 0.5 });
      expect(Object.keys(res.body.dimensions).sort()).toEqual([...TRUST_DIMENSIONS].sort());

      const month = await get('/trust-scores/fleet?window=30d', owner.auth);
      expect(month.body).toMatchObject({ window: '30d', count: 1, agents: [{ agent_id: x.deviceId, composite_score: 0.1 }] });
    });

    it('an empty fleet: count 0, computed_at null, statistics null', async () => {
      const owner = await newOwner(t, 'Empty fleet');
      const res = await get('/trust-scores/fleet?window=90d', owner.auth);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ window: '90d', computed_at: null, count: 0, agents: [] });
      expect(res.body.dimensions.uptime).toEqual({ median: null, stddev: null, mean: null });
    });

    it('400 bad window, 401 without auth, 403 for a device token', async () => {
      expect((await get('/trust-scores/fleet?window=14d')).status).toBe(400);
      expect((await get('/trust-scores/fleet', {})).status).toBe(401);
      expect((await get('/trust-scores/fleet', agent.auth)).status).toBe(403);
    });
  });

  describe('GET /trust-scores/{agent_id}/history', () => {
    it('7d snapshots of the last N days, oldest first, with the tier changes of the period', async () => {
      const h = await activeAgent(t, a);
      const hi = await registerIdentity(t, a, h.deviceId);
      const now = Date.now();
      const at = (d: number) => new Date(now - d * DAY_MS);
      await seed.snapshot({ tenantId: a.tenantId, deviceId: h.deviceId, at: at(40), composite: 0.3 });
      await seed.snapshot({ tenantId: a.tenantId, deviceId: h.deviceId, at: at(1), composite: 0.8, tier: 'certified', dimensions: dims(0.8, { volume: 0.25 }) });
      await seed.snapshot({ tenantId: a.tenantId, deviceId: h.deviceId, at: at(20), composite: 0.65, tier: 'certified' });
      await seed.snapshot({ tenantId: a.tenantId, deviceId: h.deviceId, window: '30d', at: at(2), composite: 0.1 });
      await seed.tierChange(a.tenantId, hi.id, 'unverified', 'certified', at(19));
      await seed.tierChange(a.tenantId, hi.id, 'certified', 'unverified', at(50));

      const res = await get(`/trust-scores/${hi.address}/history`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        agent_id: h.deviceId,
        days: 30,
        history: [
          { computed_at: at(20).toISOString(), composite_score: 0.65, tier: 'certified', dimensions: dims(0.65) },
          { computed_at: at(1).toISOString(), composite_score: 0.8, tier: 'certified', dimensions: dims(0.8, { volume: 0.25 }) },
        ],
        tier_changes: [{ from_tier: 'unverified', to_tier: 'certified', reason: 'trust_recompute', changed_at: at(19).toISOString() }],
      });
      const longer = await get(`/trust-scores/${h.deviceId}/history?days=60`);
      expect(longer.body.days).toBe(60);
      expect(longer.body.history.map((p: { composite_score: number }) => p.composite_score)).toEqual([0.3, 0.65, 0.8]);
      expect(longer.body.tier_changes.map((c: { to_tier: string }) => c.to_tier)).toEqual(['unverified', 'certified']);
      const short = await get(`/trust-scores/${h.deviceId}/history?days=1`);
      expect(short.body.history).toEqual([]);
      expect(short.body.tier_changes).toEqual([]);
    });

    it('400 for days outside 1..365 or not an integer; 401, 403, 404 matrix', async () => {
      for (const d of ['0', '366', '-1', '1.5', 'abc', '']) expect((await get(`/trust-scores/${agent.deviceId}/history?days=${d}`)).status, d).toBe(400);
      expect((await get(`/trust-scores/${agent.deviceId}/history?days=365`)).status).toBe(200);
      await agentMatrix('GET', '/history');
    });
  });

  describe('drift', () => {
    it('no baseline yet: baseline null, every dimension null, no alert', async () => {
      const fresh = await activeAgent(t, a);
      await seed.daily(a.tenantId, fresh.deviceId, daysAgo(1), { uptime: 0.5 });
      const res = await get(`/trust-scores/${fresh.deviceId}/drift`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ agent_id: fresh.deviceId, window: '30d', baseline: null, alert: false });
      expect(res.body.dimensions).toEqual(Object.fromEntries(TRUST_DIMENSIONS.map((d) => [d, null])));
    });

    it('PSI per dimension against the baseline bins, from the daily values of the window', async () => {
      const d = await activeAgent(t, a);
      // Baseline: every uptime day in the last bin [0.9, 1.0]; reliability half in bin 5, half in bin 9.
      const last = [0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
      const split = [0, 0, 0, 0, 0, 0.5, 0, 0, 0, 0.5];
      await seed.baseline(a.tenantId, d.deviceId, 'uptime', last, 30);
      await seed.baseline(a.tenantId, d.deviceId, 'reliability', split, 28);
      await seed.baseline(a.tenantId, d.deviceId, 'compliance', last, 30);
      // 20 days in the 30-day window: uptime 0.95 on 10 days (bin 9), 0.55 on 10 days (bin 5); reliability the same split.
      for (let i = 1; i <= 20; i++) await seed.daily(a.tenantId, d.deviceId, daysAgo(i), { uptime: i <= 10 ? 0.95 : 0.55, reliability: i % 2 ? 0.95 : 0.55, volume: 0.3 });
      // Outside the 30-day window, inside the 90-day one: uptime 0.05 (bin 0).
      for (let i = 40; i < 60; i++) await seed.daily(a.tenantId, d.deviceId, daysAgo(i), { uptime: 0.05 });

      const res = await get(`/trust-scores/${d.deviceId}/drift`);
      expect(res.status).toBe(200);
      expect(res.body.baseline).toMatchObject({ window_start: daysAgo(120), window_end: daysAgo(91), reason: 'initial' });
      // uptime: e = (ε … ε, 1), a = (bin5 0.5, bin9 0.5), ε = 1e-4 for the empty bins on both sides:
      // bin5 (0.5 − ε) ln(0.5 / ε) + bin9 (0.5 − 1) ln(0.5 / 1) = 0.4999 ln 5000 + 0.5 ln 2 ≈ 4.6043
      const up = res.body.dimensions.uptime;
      expect(up.psi).toBeCloseTo(0.4999 * Math.log(5000) + 0.5 * Math.LN2, 10);
      expect(up).toMatchObject({ status: 'significant', baseline_samples: 30, current_samples: 20 });
      // reliability: the same split as the baseline → PSI 0, stable.
      expect(res.body.dimensions.reliability).toEqual({ psi: 0, status: 'stable', baseline_samples: 28, current_samples: 20 });
      // compliance has a baseline but no daily value; volume has values but no baseline: both null.
      expect(res.body.dimensions.compliance).toBeNull();
      expect(res.body.dimensions.volume).toBeNull();
      expect(res.body.alert).toBe(true);

      // 90 days: uptime a = (bin0 0.5, bin5 0.25, bin9 0.25):
      // bin0 (0.5 − ε) ln(0.5/ε) + bin5 (0.25 − ε) ln(0.25/ε) + bin9 (0.25 − 1) ln 0.25
      const q = await get(`/trust-scores/${d.deviceId}/drift?window=90d`);
      expect(q.body.window).toBe('90d');
      expect(q.body.dimensions.uptime.current_samples).toBe(40);
      expect(q.body.dimensions.uptime.psi).toBeCloseTo(0.4999 * Math.log(5000) + 0.2499 * Math.log(2500) + -0.75 * Math.log(0.25), 10);
      // 7 days: uptime 0.95 on days 1-6 (today's row does not exist) → a = bin9 1 = e → PSI 0.
      const w = await get(`/trust-scores/${d.deviceId}/drift?window=7d`);
      expect(w.body.dimensions.uptime).toMatchObject({ psi: 0, status: 'stable', current_samples: 6 });
    });

    it('drift: 400 bad window; 401, 403, 404 matrix', async () => {
      expect((await get(`/trust-scores/${agent.deviceId}/drift?window=30`)).status).toBe(400);
      await agentMatrix('GET', '/drift');
    });

    it('recalibrate: 409 without enough recent data, then replaces every baseline from the most recent 30 days, audited', async () => {
      const r = await activeAgent(t, a);
      await seed.baseline(a.tenantId, r.deviceId, 'compliance', [0, 0, 0, 0, 0, 0, 0, 0, 0, 1], 30);
      for (let i = 1; i <= 5; i++) await seed.daily(a.tenantId, r.deviceId, daysAgo(i), { uptime: 0.35 });
      const early = await post(`/trust-scores/${r.deviceId}/drift/recalibrate`);
      expect(early.status).toBe(409);
      expect(early.body.detail).toMatch(/not enough data/);
      // Untouched by the refused run.
      expect((await get(`/trust-scores/${r.deviceId}/drift`)).body.baseline.reason).toBe('initial');

      // 20 of the 30 days ending yesterday carry data (the minimum): days 1-20.
      for (let i = 6; i <= 20; i++) await seed.daily(a.tenantId, r.deviceId, daysAgo(i), { uptime: i <= 10 ? 0.35 : 0.75, task_success: 1 });
      const res = await post(`/trust-scores/${r.deviceId}/drift/recalibrate`);
      expect(res.status).toBe(200);
      expect(res.body.agent_id).toBe(r.deviceId);
      expect(res.body.baseline).toMatchObject({ window_start: daysAgo(30), window_end: daysAgo(1), reason: 'recalibrated' });
      // uptime: 10 days 0.35 (bin 3), 10 days 0.75 (bin 7).
      expect(res.body.dimensions.uptime).toEqual({ bins: [0, 0, 0, 0.5, 0, 0, 0, 0.5, 0, 0], samples: 20 });
      expect(res.body.dimensions.task_success).toEqual({ bins: [0, 0, 0, 0, 0, 0, 0, 0, 0, 1], samples: 15 });
      expect(res.body.dimensions.compliance).toBeNull();

      const db = t.app.parley.database.db;
      const rows = await db.select().from(trustBaselines).where(eq(trustBaselines.deviceId, r.deviceId));
      expect(rows.map((x) => x.dimension).sort()).toEqual(['task_success', 'uptime']);
      for (const row of rows) expect(row).toMatchObject({ reason: 'recalibrated', establishedBy: a.sub, windowEnd: daysAgo(1) });
      const audit = await db.select().from(auditEvents).where(and(eq(auditEvents.type, 'trust.baseline_recalibrated'), eq(auditEvents.subject, r.deviceId)));
      expect(audit).toHaveLength(1);
      expect(audit[0]).toMatchObject({ actor: a.sub, data: { window_start: daysAgo(30), window_end: daysAgo(1), dimensions: ['uptime', 'task_success'] } });

      // Drift now compares with the new baseline: the same distribution → PSI 0.
      const drift = await get(`/trust-scores/${r.deviceId}/drift`);
      expect(drift.body.baseline.reason).toBe('recalibrated');
      expect(drift.body.dimensions.uptime).toMatchObject({ psi: 0, status: 'stable', baseline_samples: 20, current_samples: 20 });
      expect(drift.body.dimensions.compliance).toBeNull();
    });

    it('recalibrate: only complete days count (today is still running)', async () => {
      const r = await activeAgent(t, a);
      // Today and the 19 days before: 20 rows, but only 19 complete days → not enough.
      for (let i = 0; i <= 19; i++) await seed.daily(a.tenantId, r.deviceId, daysAgo(i), { uptime: i === 0 ? 0.05 : 0.95 });
      const early = await post(`/trust-scores/${r.deviceId}/drift/recalibrate`);
      expect(early.status).toBe(409);
      expect(early.body.detail).toMatch(/19 complete day/);
      await seed.daily(a.tenantId, r.deviceId, daysAgo(20), { uptime: 0.95 });
      const res = await post(`/trust-scores/${r.deviceId}/drift/recalibrate`);
      expect(res.status).toBe(200);
      expect(res.body.baseline).toMatchObject({ window_start: daysAgo(30), window_end: daysAgo(1) });
      // Today's 0.05 is not in the baseline: every sample in bin 9.
      expect(res.body.dimensions.uptime).toEqual({ bins: [0, 0, 0, 0, 0, 0, 0, 0, 0, 1], samples: 20 });
    });

    it('recalibrate: 401, 403, 404 matrix', async () => {
      await agentMatrix('POST', '/drift/recalibrate');
    });
  });

  describe('POST /trust-scores/recompute', () => {
    it('runs the engine for the caller tenant: every agent gets a snapshot per window', async () => {
      const owner = await newOwner(t, 'Recompute');
      const r = await activeAgent(t, owner);
      const db = t.app.parley.database.db;
      const othersBefore = await db.select().from(trustSnapshots).where(eq(trustSnapshots.deviceId, otherAgent.deviceId));
      const res = await post('/trust-scores/recompute', owner.auth);
      expect(res.status).toBe(200);
      // One agent in this tenant: three windows.
      expect(res.body).toMatchObject({ agents: 1, snapshots: 3, tier_changes: 0 });
      expect(Date.parse(res.body.computed_at)).not.toBeNaN();
      expect(res.body.duration_ms).toBeGreaterThanOrEqual(0);
      const rows = await db.select().from(trustSnapshots).where(eq(trustSnapshots.deviceId, r.deviceId));
      expect(rows.map((x) => x.window).sort()).toEqual(['30d', '7d', '90d']);
      const score = await get(`/trust-scores/${r.deviceId}`, owner.auth);
      // A new agent is in its 48-hour warm-up: 0.5 everywhere, but now from a stored snapshot.
      expect(score.body).toMatchObject({ composite_score: 0.5, computed_at: rows.find((x) => x.window === '7d')!.computedAt.toISOString() });
      expect(Object.values(score.body.sources)).toEqual(TRUST_DIMENSIONS.map(() => 'warmup'));
      // Other tenants are not recomputed.
      expect(await db.select().from(trustSnapshots).where(eq(trustSnapshots.deviceId, otherAgent.deviceId))).toHaveLength(othersBefore.length);
    });

    it('401 without auth, 403 for a device token', async () => {
      expect((await post('/trust-scores/recompute', {})).status).toBe(401);
      expect((await post('/trust-scores/recompute', agent.auth)).status).toBe(403);
    });

    it('rate limit: 2 per minute per TENANT (shared by its owners), other tenants unaffected', async () => {
      const limited = await startApp({ env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000' } });
      try {
        const owner = await newOwner(limited, 'Limited');
        const other = await newOwner(limited, 'Other');
        // The same owner with a second credential: a per-principal limit would count it apart.
        const second = { authorization: `Bearer ${await limited.ownerToken(owner.sub, { nonce: 'second' })}` };
        expect(second.authorization).not.toBe(owner.auth.authorization);
        const send = (headers: Record<string, string>) => limited.request({ method: 'POST', url: '/api/v1/trust-scores/recompute', headers });
        expect((await send(owner.auth)).status).toBe(200);
        expect((await send(second)).status).toBe(200);
        const third = await send(owner.auth);
        expect(third.status).toBe(429);
        expect(third.headers['retry-after']).toBeDefined();
        expect((await send(second)).status).toBe(429);
        expect((await send(other.auth)).status).toBe(200);
        // Refused before counting: no credential → 401, not 429.
        expect((await send({})).status).toBe(401);
      } finally {
        await limited.close();
      }
    });

    it.skipIf(backend !== 'postgres')('409 while another recompute of the tenant holds its lock; the job skips that tenant', async () => {
      const owner = await newOwner(t, 'Busy');
      const busy = await activeAgent(t, owner);
      const raw = t.app.parley.database.raw;
      if (raw.kind !== 'pg') throw new Error('postgres only');
      const other = new pg.Client({ connectionString: raw.url });
      await other.connect();
      const db = t.app.parley.database.db;
      try {
        await other.query('begin');
        await other.query(`select pg_advisory_xact_lock(hashtextextended('trust:' || $1, 0))`, [owner.tenantId]);
        const res = await post('/trust-scores/recompute', owner.auth);
        expect(res.status).toBe(409);
        expect(res.body.detail).toMatch(/already running/);
        const engine = new TrustEngine({ db, log: t.app.log });
        const all = await engine.recomputeAll();
        expect(all.skippedTenants).toBe(1);
        expect(all.failedTenants).toBe(0);
        expect(await db.select().from(trustSnapshots).where(eq(trustSnapshots.deviceId, busy.deviceId))).toEqual([]);
        await other.query('commit');
        expect((await post('/trust-scores/recompute', owner.auth)).status).toBe(200);
        expect(await db.select().from(trustSnapshots).where(eq(trustSnapshots.deviceId, busy.deviceId))).toHaveLength(3);
      } finally {
        await other.end();
      }
    });
  });
});
