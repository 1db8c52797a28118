/**
 * Spend caps per agent (docs/decisions.md "Spend caps"): the cap routes, spend
 * read from raw spans and from the token roll-ups alike, caps in tokens and in cents (price table
 * setting), UTC period boundaries, the pipeline's `budget` stage (refuses over the cap, allows again
 * in the next period), and alerts that fire once per (agent, period, threshold).
 */
import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SpendAlertEvent } from '@parley/protocol';
import { agentSpendAlerts, auditEvents, devices, telemetrySpans, telemetryTokenRollups, webhookDeliveries } from '../../src/db/schema/index.js';
import { withTenant } from '../../src/db/tenant.js';
import { SettingsService, defaultSettings } from '../../src/modules/settings/service.js';
import { SpendService } from '../../src/modules/spend/service.js';
import { periodOf, priceUsage } from '../../src/modules/spend/periods.js';
import { rollUpDirtyDays } from '../../src/modules/trust/rollups.js';
import { newOwner, registerOwnerDevice, type Owner } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { skillFixtures } from './skill-fixtures.js';

describe('spend caps', () => {
  let t: TestApp;
  let a: Owner;
  let b: Owner;
  const db = () => t.app.parley.database.db;
  const { subject, grant, skillName } = skillFixtures(() => ({ t, owner: a }), 'spd');

  /** One span of `deviceId` at `at` with GenAI usage. */
  const span = (owner: Owner, deviceId: string, at: Date, usage: { model?: string; input?: number | string; output?: number }) =>
    db()
      .insert(telemetrySpans)
      .values({
        id: randomUUID(),
        tenantId: owner.tenantId,
        deviceId,
        traceId: randomUUID().replace(/-/g, ''),
        spanId: randomUUID().replace(/-/g, '').slice(0, 16),
        name: 'chat',
        startTime: at,
        endTime: at,
        durationUs: 1,
        attributes: {
          ...(usage.model !== undefined ? { 'gen_ai.request.model': usage.model } : {}),
          ...(usage.input !== undefined ? { 'gen_ai.usage.input_tokens': usage.input } : {}),
          ...(usage.output !== undefined ? { 'gen_ai.usage.output_tokens': usage.output } : {}),
        },
      });
  const putCap = (owner: Owner, hubId: string, payload: unknown) => t.request({ method: 'PUT', url: `/api/v1/agents/${hubId}/spend-cap`, headers: owner.auth, payload: payload as object });
  const check = (auth: Record<string, string>, skill: string) => t.request({ method: 'POST', url: '/api/v1/skills/check', headers: auth, payload: { skill } });
  const auditCount = async (tenantId: string, type: string, subject: string) =>
    (await db().select().from(auditEvents).where(and(eq(auditEvents.tenantId, tenantId), eq(auditEvents.type, type), eq(auditEvents.subject, subject)))).length;

  /** A SpendService on the test database with a fixed clock and a recording notifier. */
  const service = (now: Date) => {
    const sent: SpendAlertEvent[] = [];
    const settings = new SettingsService(db(), defaultSettings(72 * 3_600_000));
    const s = new SpendService({ db: db(), settings, notifier: { toOwners: async (_t: string, _e: string, d: unknown) => void sent.push(d as SpendAlertEvent) }, now: () => now });
    return { s, sent };
  };

  beforeAll(async () => {
    t = await startApp({ env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000', SKILL_CHECKS_PER_MIN: '1000' } });
    a = await newOwner(t, 'Spend A');
    b = await newOwner(t, 'Spend B');
  });
  afterAll(() => t.close());

  it('UTC periods: the day and the month containing an instant, and their resets', () => {
    const p = periodOf('day', new Date('2026-03-31T23:59:59.999Z'));
    expect(p).toEqual({ period: 'day', start: '2026-03-31', resetsAt: new Date('2026-04-01T00:00:00Z') });
    expect(periodOf('month', new Date('2026-03-31T23:59:59.999Z'))).toEqual({ period: 'month', start: '2026-03-01', resetsAt: new Date('2026-04-01T00:00:00Z') });
    expect(periodOf('month', new Date('2026-12-15T10:00:00Z')).resetsAt).toEqual(new Date('2027-01-01T00:00:00Z'));
    expect(periodOf('day', new Date('2026-04-01T00:00:00Z')).start).toBe('2026-04-01');
  });

  it('prices usage per model, `*` for the rest, unpriced tokens apart', () => {
    const usage = [
      { model: 'big', inputTokens: 2_000_000, outputTokens: 500_000 },
      { model: 'small', inputTokens: 1000, outputTokens: 0 },
    ];
    const priced = priceUsage(usage, { big: { input_cents_per_mtok: 300, output_cents_per_mtok: 1500 } });
    expect(priced).toMatchObject({ tokens: 2_501_000, cents: 1350, unpricedTokens: 1000 });
    expect(priced.models.map((m) => m.cents)).toEqual([1350, null]);
    expect(priceUsage(usage, { big: { input_cents_per_mtok: 300, output_cents_per_mtok: 1500 }, '*': { input_cents_per_mtok: 100, output_cents_per_mtok: 0 } })).toMatchObject({ cents: 1350.1, unpricedTokens: 0 });
  });

  it('sets, reads and removes caps; refuses bad bodies (400) and other tenants’ agents (404); audits the change', async () => {
    const s = await subject();
    expect((await t.request({ method: 'GET', url: `/api/v1/agents/${s.address}/spend-cap`, headers: a.auth })).body).toMatchObject({ agent_id: s.agent.deviceId, unit: 'tokens', daily_limit: null, monthly_limit: null });
    const put = await putCap(a, s.address, { unit: 'cents', daily_limit: 500, monthly_limit: 10_000 });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ agent_id: s.agent.deviceId, unit: 'cents', daily_limit: 500, monthly_limit: 10_000, updated_by: a.sub });
    expect((await t.request({ method: 'GET', url: `/api/v1/agents/${s.agent.deviceId}/spend-cap`, headers: a.auth })).body).toMatchObject({ unit: 'cents', daily_limit: 500 });
    for (const bad of [{ unit: 'dollars', daily_limit: 1 }, { unit: 'tokens', daily_limit: 0 }, { unit: 'tokens', daily_limit: 1.5 }, { unit: 'tokens', weekly_limit: 3 }, {}]) {
      const res = await putCap(a, s.address, bad);
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(typeof res.body.detail).toBe('string');
    }
    expect((await putCap(b, s.address, { unit: 'tokens', daily_limit: 5 })).status).toBe(404);
    expect((await t.request({ method: 'GET', url: `/api/v1/agents/${s.agent.deviceId}/spend`, headers: b.auth })).status).toBe(404);
    expect((await putCap(a, s.address, { unit: 'tokens', daily_limit: null })).body).toMatchObject({ daily_limit: null, monthly_limit: null, updated_at: null });
    expect(await auditCount(a.tenantId, 'spend.cap_set', s.agent.deviceId)).toBe(2);
  });

  it('tokens cap: spend today and this month from spans, the budget stage refuses at the cap, alerts fire once (audit, webhook)', async () => {
    const s = await subject();
    const skill = skillName('spend');
    await grant(s, skill);
    const owner = await registerOwnerDevice(t, a);
    await db().update(devices).set({ webhookUrl: 'https://example.com/hook' }).where(eq(devices.id, owner.deviceId));
    const now = new Date();
    await span(a, s.agent.deviceId, new Date(now.getTime() - 1000), { model: 'm1', input: 600, output: 200 });
    await span(a, s.agent.deviceId, new Date(now.getTime() - 2000), { input: '100' }); // digits as a string (int64), model unknown
    await span(a, s.agent.deviceId, new Date(now.getTime() - 3000), {}); // no usage: spends nothing
    await putCap(a, s.address, { unit: 'tokens', daily_limit: 1000, monthly_limit: 100_000 });

    const spend = (await t.request({ method: 'GET', url: `/api/v1/agents/${s.address}/spend`, headers: a.auth })).body;
    expect(spend.day).toMatchObject({ period: 'day', tokens: 900, limit: 1000, used: 900, percent: 90, over: false, unpriced_tokens: 900 });
    expect(spend.day.models).toEqual([
      { model: 'm1', input_tokens: 600, output_tokens: 200, cents: null },
      { model: 'unknown', input_tokens: 100, output_tokens: 0, cents: null },
    ]);
    expect(spend.month.tokens).toBeGreaterThanOrEqual(900);

    // 90 %: allowed, the 80 % alert fires once
    const ok = await check(s.agent.auth, skill);
    expect(ok.body.allowed).toBe(true);
    expect(ok.body.stages.find((x: any) => x.stage === 'budget')).toMatchObject({ passed: true, detail: expect.stringMatching(/today 900 tokens of 1000 tokens/) });
    expect(await auditCount(a.tenantId, 'spend.alert', s.agent.deviceId)).toBe(1);

    await span(a, s.agent.deviceId, new Date(now.getTime() - 500), { model: 'm1', output: 100 });
    const refused = await check(s.agent.auth, skill);
    expect(refused.body).toMatchObject({ allowed: false, decided_by: 'budget' });
    expect(refused.body.reason).toMatch(new RegExp(`did:hub:${s.address} is over its daily spend cap of 1000 tokens: 1000 tokens spent in the UTC day ${now.toISOString().slice(0, 10)}`));
    expect(refused.body.stages.map((x: any) => x.stage)).toEqual(['identity', 'trust_floor', 'grant', 'rate', 'budget']);
    const delegated = await t.request({ method: 'POST', url: '/api/v1/skills/delegate', headers: s.agent.auth, payload: { skill, target: (await subject()).address } });
    expect(delegated.body).toMatchObject({ allowed: false, decided_by: 'budget' });
    expect(delegated.body.reason).toMatch(/daily spend cap of 1000 tokens/);

    // 80 and 100 fired once each, whatever the number of checks and sweeps
    await check(s.agent.auth, skill);
    expect(await service(new Date()).s.sweepAlerts(a.tenantId)).toBe(0);
    const rows = await db().select().from(agentSpendAlerts).where(eq(agentSpendAlerts.deviceId, s.agent.deviceId));
    expect(rows.map((r) => `${r.period}:${r.threshold}`).sort()).toEqual(['day:100', 'day:80']);
    expect(await auditCount(a.tenantId, 'spend.alert', s.agent.deviceId)).toBe(2);
    const hooks = await db().select().from(webhookDeliveries).where(and(eq(webhookDeliveries.deviceId, owner.deviceId), eq(webhookDeliveries.eventType, 'spend.alert')));
    expect(hooks.map((h) => (h.payload as any).data.threshold).sort()).toEqual([100, 80]);
    expect((hooks[0]!.payload as any).data).toMatchObject({ agent_id: s.agent.deviceId, period: 'day', unit: 'tokens', limit: 1000 });
    expect((hooks[0]!.payload as any).data.title).toBeUndefined();
    expect(await auditCount(a.tenantId, 'skill.check_denied', s.agent.deviceId)).toBeGreaterThanOrEqual(2);

    const fleet = (await t.request({ method: 'GET', url: '/api/v1/spend', headers: a.auth })).body;
    const mine = fleet.agents.find((x: any) => x.agent_id === s.agent.deviceId);
    expect(mine.day).toMatchObject({ tokens: 1000, over: true });
    expect(fleet.totals.day.tokens).toBeGreaterThanOrEqual(1000);
    expect(fleet.totals.day.agents_over).toBeGreaterThanOrEqual(1);
    expect((await t.request({ method: 'GET', url: '/api/v1/spend', headers: b.auth })).body.agents.some((x: any) => x.agent_id === s.agent.deviceId)).toBe(false);
  });

  it('the sweep alerts an agent that never calls the pipeline, once, even when two sweeps race; the owner sockets get the event', async () => {
    const s = await subject();
    await putCap(a, s.address, { unit: 'tokens', daily_limit: 100 });
    const now = new Date();
    await span(a, s.agent.deviceId, new Date(now.getTime() - 1000), { model: 'm', input: 85 });
    const one = service(now);
    const two = service(now);
    const fired = await Promise.all([one.s.sweepAlerts(a.tenantId), two.s.sweepAlerts(a.tenantId)]);
    const mine = [...one.sent, ...two.sent].filter((e) => e.agent_id === s.agent.deviceId);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ period: 'day', threshold: 80, unit: 'tokens', limit: 100, used: 85, severity: 'warning', category: 'performance' });
    expect(mine[0]!.title).toMatch(/reached 80% of its daily spend cap/);
    expect(fired[0] + fired[1]).toBeGreaterThanOrEqual(1);
    expect(await service(now).s.sweepAlerts(a.tenantId)).toBe(0);
    expect(await auditCount(a.tenantId, 'spend.alert', s.agent.deviceId)).toBe(1);
  });

  it('cents cap with the price table; UTC boundaries: refused on the last instant of a month, allowed again at the next UTC midnight; the same spend from roll-ups', async () => {
    const s = await subject();
    const patch = await t.request({ method: 'PATCH', url: '/api/v1/settings', headers: a.auth, payload: { model_prices: { big: { input_cents_per_mtok: 300, output_cents_per_mtok: 1500 } } } });
    expect(patch.status).toBe(200);
    expect((await t.request({ method: 'PATCH', url: '/api/v1/settings', headers: a.auth, payload: { model_prices: { big: { input_cents_per_mtok: -1, output_cents_per_mtok: 0 } } } })).status).toBe(400);
    await putCap(a, s.address, { unit: 'cents', daily_limit: 300, monthly_limit: 1000 });
    // 2026-03-30: 600 cents (month 60 %); 2026-03-31 23:00: 300 cents (day 100 %, month 90 %)
    await span(a, s.agent.deviceId, new Date('2026-03-30T12:00:00Z'), { model: 'big', input: 2_000_000 });
    await span(a, s.agent.deviceId, new Date('2026-03-31T23:00:00Z'), { model: 'big', input: 1_000_000 });
    await span(a, s.agent.deviceId, new Date('2026-03-31T23:30:00Z'), { model: 'cheap', input: 5000 });
    await span(a, s.agent.deviceId, new Date('2026-04-01T00:00:00Z'), { model: 'big', output: 1000 }); // after the instants below

    const budget = (now: Date) => {
      const { s: svc, sent } = service(now);
      return withTenant(db(), a.tenantId, (tx) => svc.budget(tx, a.tenantId, s.agent.deviceId, 'the agent', now)).then((r) => ({ ...r, sent, svc }));
    };
    const last = new Date('2026-03-31T23:59:59.999Z');
    const over = await budget(last);
    expect(over.outcome).toEqual({ stage: 'budget', passed: false, detail: 'the agent is over its daily spend cap of 300 cents: 300 cents spent in the UTC day 2026-03-31; the cap resets at 2026-04-01T00:00:00.000Z' });
    expect(over.alerts.map((x) => `${x.period}:${x.threshold}`).sort()).toEqual(['day:100', 'day:80', 'month:80']);
    expect(over.alerts.find((x) => x.threshold === 100)).toMatchObject({ severity: 'critical', unit: 'cents', limit: 300, used: 300 });

    const spendMarch = await over.svc.agentSpend(a.tenantId, s.agent.deviceId);
    expect(spendMarch.month).toMatchObject({ start: '2026-03-01', cents: 900, tokens: 3_005_000, unpriced_tokens: 5000, percent: 90, over: false });
    expect(spendMarch.day).toMatchObject({ start: '2026-03-31', cents: 300, over: true });

    const next = await budget(new Date('2026-04-01T00:00:00.000Z'));
    expect(next.outcome.passed).toBe(true);
    expect(next.outcome.detail).toMatch(/today 1\.5000 cents of 300 cents, this month 1\.5000 cents of 1000 cents/);
    expect(next.alerts).toEqual([]);
    // the 80 % alert of March fired once: a second look at the last instant fires nothing
    expect((await budget(last)).alerts).toEqual([]);

    // the roll-up of the closed days gives the same spend, from telemetry_token_rollups
    await rollUpDirtyDays(db(), a.tenantId, '2026-04-02');
    const rolled = await db().select().from(telemetryTokenRollups).where(eq(telemetryTokenRollups.deviceId, s.agent.deviceId));
    expect(rolled.map((r) => `${r.day}:${r.model}:${r.inputTokens}:${r.outputTokens}`).sort()).toEqual([
      '2026-03-30:big:2000000:0',
      '2026-03-31:big:1000000:0',
      '2026-03-31:cheap:5000:0',
      '2026-04-01:big:0:1000',
    ]);
    // a late span of a rolled-up day marks it dirty again: read raw until the next roll-up
    await span(a, s.agent.deviceId, new Date('2026-03-30T13:00:00Z'), { model: 'big', input: 10 });
    const after = await service(last).s.agentSpend(a.tenantId, s.agent.deviceId);
    expect(after.month).toMatchObject({ cents: 900.003, tokens: 3_005_010 });
    await rollUpDirtyDays(db(), a.tenantId, '2026-04-02');
    expect((await service(last).s.agentSpend(a.tenantId, s.agent.deviceId)).month).toMatchObject({ cents: 900.003, tokens: 3_005_010 });
  });
});
