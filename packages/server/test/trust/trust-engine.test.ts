/**
 * The trust engine (contract §2.9, §3.3, §3.9, §4.12; design §8.14): signals seeded with SQL at chosen
 * timestamps (presence, spans, decisions, messages, policy evaluations), then
 * `recomputeTenant(tenantId, now)` with an injected clock over simulated days. Checked: 3 windows ×
 * 12 dimensions per agent with values extracted from the seeded rows; the 48-hour warm-up; fleet
 * median substitution and percentile rank in a fleet of 3; per-day values and the initial PSI
 * baseline (complete days only: never today's partial day); tier hysteresis (no upgrade before 7 days of held 7d snapshots, upgrade on day 7 with
 * recomputes every 6 h, immediate downgrade on one bad window with grant revocation, tier change
 * record, audit event and `svc.trust` span).
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compositeScore } from '../../src/modules/trust/dimensions.js';
import { TrustEngine } from '../../src/modules/trust/engine.js';
import { TRUST_DIMENSIONS, type DimensionScores } from '../../src/modules/trust/types.js';
import { activeAgent, newOwner, registerOwnerDevice, type Agent, type Owner } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { newDeviceKeys } from '../../testing/keys.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** Simulated "now" of most tests: a date in the past, so rows the app writes at real time (presence at enrolment) lie after it and are not read. */
const NOW = new Date('2026-06-10T12:30:00Z');
const at = (iso: string) => new Date(iso);
const plus = (d: Date, ms: number) => new Date(d.getTime() + ms);

interface SnapshotRow {
  device_id: string;
  window: string;
  composite: number;
  dimensions: DimensionScores;
  sources: Record<string, string>;
  percentile: number;
  tier: string;
}

describe('trust engine', () => {
  let t: TestApp;
  let engine: TrustEngine;

  const exec = async <T = Record<string, unknown>>(q: ReturnType<typeof sql>) => ((await t.app.parley.database.db.execute(q)) as unknown as { rows: T[] }).rows;

  /** An ACTIVE agent of `owner` whose activation time is `activatedAt`. */
  async function agentActivatedAt(owner: Owner, activatedAt: Date): Promise<Agent> {
    const a = await activeAgent(t, owner);
    await exec(sql`update devices set activated_at = ${activatedAt.toISOString()}::timestamptz where id = ${a.deviceId}`);
    return a;
  }

  /** `n` spans named `name` of `deviceId`, one second apart from `start`; the first `errors` fail (status 2); each in its own trace. */
  async function spans(
    owner: Owner,
    deviceId: string,
    start: Date,
    o: { name: string; n: number; errors?: number; attributes?: Record<string, unknown>; resource?: Record<string, unknown>; errorAttributes?: Record<string, unknown> },
  ) {
    const attrs = JSON.stringify(o.attributes ?? {});
    const errAttrs = JSON.stringify(o.errorAttributes ?? o.attributes ?? {});
    await exec(sql`
      insert into telemetry_spans (id, tenant_id, device_id, trace_id, span_id, name, kind, start_time, end_time, duration_us, status_code, attributes, resource)
      select gen_random_uuid(), ${owner.tenantId}, ${deviceId}, md5(random()::text || g::text), substr(md5(random()::text), 1, 16), ${o.name}, 1,
             ${start.toISOString()}::timestamptz + g * interval '1 second', ${start.toISOString()}::timestamptz + g * interval '1 second', 1000,
             case when g <= ${o.errors ?? 0} then 2 else 0 end,
             case when g <= ${o.errors ?? 0} then ${errAttrs}::jsonb else ${attrs}::jsonb end, ${JSON.stringify(o.resource ?? {})}::jsonb
      from generate_series(1, ${o.n}::int) g`);
  }

  /** One span with an explicit trace id and status (for recovered errors). */
  const span = (owner: Owner, deviceId: string, o: { trace: string; name: string; at: Date; status: number }) =>
    exec(sql`
      insert into telemetry_spans (id, tenant_id, device_id, trace_id, span_id, name, kind, start_time, end_time, duration_us, status_code)
      values (${randomUUID()}, ${owner.tenantId}, ${deviceId}, ${o.trace}, substr(md5(random()::text), 1, 16), ${o.name}, 1, ${o.at.toISOString()}::timestamptz, ${o.at.toISOString()}::timestamptz, 10, ${o.status})`);

  /** Presence in each UTC hour of [from, from + hours). */
  const presence = (owner: Owner, deviceId: string, from: Date, hours: number) =>
    exec(sql`
      insert into device_presence (tenant_id, device_id, hour)
      select ${owner.tenantId}, ${deviceId}, ${from.toISOString()}::timestamptz + g * interval '1 hour' from generate_series(0, ${hours - 1}::int) g
      on conflict do nothing`);

  const decision = (owner: Owner, deviceId: string, o: { created: Date; resolved: Date; status: string }) =>
    exec(sql`
      insert into decisions (id, tenant_id, device_id, title, options, status, created_by, created_at, resolved_at, resolved_by)
      values (${randomUUID()}, ${owner.tenantId}, ${deviceId}, 'Ship?', '[]'::jsonb, ${o.status}, 'device', ${o.created.toISOString()}::timestamptz,
              ${o.resolved.toISOString()}::timestamptz, 'owner')`);

  const evaluations = (owner: Owner, deviceId: string, when: Date, outcomes: string[]) =>
    Promise.all(
      outcomes.map((outcome) =>
        exec(sql`
          insert into policy_evaluations (id, tenant_id, subject_kind, subject_id, sender_device_id, outcome, duration_us, created_at)
          values (${randomUUID()}, ${owner.tenantId}, 'room_envelope', ${randomUUID()}, ${deviceId}, ${outcome}, 5, ${when.toISOString()}::timestamptz)`),
      ),
    );

  const messages = (owner: Owner, a: Agent, recipient: string, when: Date, n: number) =>
    exec(sql`
      insert into messages (id, tenant_id, conversation_id, group_id, topic_id, sender_device_id, recipient_device_id, header_blob, ciphertext, message_type, priority, created_at)
      select gen_random_uuid(), ${owner.tenantId}, ${a.conversationId}, ${a.groupId}, ${a.defaultTopicId}, ${a.deviceId}, ${recipient}, '\\x00'::bytea, '\\x00'::bytea,
             'text', 'normal', ${when.toISOString()}::timestamptz + g * interval '1 second'
      from generate_series(1, ${n}::int) g`);

  const snapshots = (deviceId: string, computedAt?: Date) =>
    exec<SnapshotRow>(sql`
      select device_id, "window", composite, dimensions, sources, percentile, tier from trust_snapshots
      where device_id = ${deviceId} ${computedAt ? sql`and computed_at = ${computedAt.toISOString()}::timestamptz` : sql``}
      order by computed_at, "window"`);
  const latest7d = async (deviceId: string, computedAt: Date) => (await snapshots(deviceId, computedAt)).find((s) => s.window === '7d')!;

  beforeAll(async () => {
    t = await startApp({ env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000' } });
    engine = new TrustEngine({ db: t.app.parley.database.db, log: t.app.log });
  });
  afterAll(() => t.close());

  it('extracts every source and writes 3 windows × 12 dimensions and per-day values', async () => {
    const owner = await newOwner(t, 'Signals');
    const od = await registerOwnerDevice(t, owner);
    const a = await agentActivatedAt(owner, at('2026-06-01T00:00:00Z'));
    const id = a.deviceId;
    const y = at('2026-06-09T10:00:00Z');
    // Presence: 12 hours yesterday, the running hour today, and one hour before activation (not counted).
    await presence(owner, id, at('2026-06-09T00:00:00Z'), 12);
    await presence(owner, id, at('2026-06-10T12:00:00Z'), 1);
    await presence(owner, id, at('2026-05-31T23:00:00Z'), 1);
    // 10 svc.task (2 errors) of 60+40 tokens, 1 svc.task of svc.tokens 200, 5 svc.tool (1 error), version 1.0.
    const res = { 'service.version': '1.0' };
    await spans(owner, id, y, { name: 'svc.task', n: 10, errors: 2, attributes: { 'gen_ai.usage.input_tokens': 60, 'gen_ai.usage.output_tokens': 40 }, resource: res });
    await spans(owner, id, plus(y, 60_000), { name: 'svc.task', n: 1, attributes: { 'svc.tokens': 200 }, resource: res });
    await spans(owner, id, plus(y, 120_000), { name: 'svc.tool', n: 5, errors: 1, resource: res });
    // A recovered error: `fetch` fails, then succeeds later in the same trace.
    const trace = 'ab'.repeat(16);
    await span(owner, id, { trace, name: 'fetch', at: plus(y, 200_000), status: 2 });
    await span(owner, id, { trace, name: 'fetch', at: plus(y, 201_000), status: 1 });
    // Not read: a service-written svc.trust span, and a span after `now`.
    await spans(owner, id, y, { name: 'svc.trust', n: 1, errors: 1 });
    await spans(owner, id, at('2026-06-10T13:00:00Z'), { name: 'svc.tool', n: 3, errors: 3 });
    // Decisions: answered in 60 s (latency score 1), one expired (0).
    await decision(owner, id, { created: at('2026-06-09T09:00:00Z'), resolved: at('2026-06-09T09:01:00Z'), status: 'approved' });
    await decision(owner, id, { created: at('2026-06-08T09:00:00Z'), resolved: at('2026-06-09T09:00:00Z'), status: 'expired' });
    await evaluations(owner, id, y, ['allow', 'allow', 'notify', 'block']);
    await messages(owner, a, od.deviceId, y, 3);

    const summary = await engine.recomputeTenant(owner.tenantId, NOW);
    expect(summary).toMatchObject({ tenants: 1, agents: 1, snapshots: 3, tierChanges: 0 });

    const rows = await snapshots(id);
    expect(rows.map((r) => r.window).sort()).toEqual(['30d', '7d', '90d']);
    for (const r of rows) {
      expect(Object.keys(r.dimensions).sort()).toEqual([...TRUST_DIMENSIONS].sort());
      for (const v of Object.values(r.dimensions)) {
        expect(v).toBeGreaterThanOrEqual(0);
        expect(v).toBeLessThanOrEqual(1);
      }
      expect(r.percentile).toBe(50); // a fleet of one: round(100 × 0.5 / 1)
      expect(r.tier).toBe('unverified');
    }
    const w7 = rows.find((r) => r.window === '7d')!;
    // 7d = 06-04 … 06-10: observed 6 × 24 + 12 full hours today + the running hour (seen) = 157; present 12 + 1.
    const expected: DimensionScores = {
      uptime: 13 / 157,
      responsiveness: (1 + 0) / 2,
      reliability: 1 - 4 / 18, // 18 spans (11 task, 5 tool, 2 fetch), 4 errors
      task_success: 9 / 11,
      efficiency: 1000 / 1200, // tokens of successful tasks / all task tokens
      volume: 1,
      tool_accuracy: 4 / 5,
      error_discipline: 1 / 4,
      compliance: 3 / 4,
      token_efficiency: 1, // the fleet median is its own
      behavioral_consistency: 0.5, // the earlier half (06-04 … 06-06) has no span: fleet median, none → neutral
      version_health: 1,
    };
    for (const dim of TRUST_DIMENSIONS) expect(w7.dimensions[dim], dim).toBeCloseTo(expected[dim], 10);
    expect(w7.composite).toBeCloseTo(compositeScore(expected), 10);
    expect(w7.sources).toMatchObject({ uptime: 'telemetry', task_success: 'telemetry', behavioral_consistency: 'fleet_median' });
    // 30d and 90d start before activation: observed from 06-01 00:00 = 9 × 24 + 13.
    expect(rows.find((r) => r.window === '30d')!.dimensions.uptime).toBeCloseTo(13 / 229, 10);
    expect(rows.find((r) => r.window === '90d')!.dimensions.uptime).toBeCloseTo(13 / 229, 10);

    // Per-day values: one row per day since activation, only the dimensions with data that day.
    const daily = await exec<{ day: string; dimensions: Partial<DimensionScores> }>(sql`select day, dimensions from trust_daily_scores where device_id = ${id} order by day`);
    expect(daily.map((d) => d.day)).toEqual(['2026-06-01', '2026-06-02', '2026-06-03', '2026-06-04', '2026-06-05', '2026-06-06', '2026-06-07', '2026-06-08', '2026-06-09', '2026-06-10']);
    const d9 = daily.find((d) => d.day === '2026-06-09')!.dimensions;
    expect(d9.task_success).toBeCloseTo(9 / 11, 10);
    expect(d9.uptime).toBeCloseTo(12 / 24, 10);
    expect(daily.find((d) => d.day === '2026-06-05')!.dimensions).toEqual({ uptime: 0 });
    // No identity is bound: no baseline yet (10 days of data), no tier.
    expect(await exec(sql`select 1 from trust_baselines where device_id = ${id}`)).toEqual([]);
    // The owner's device is not an agent: never scored.
    expect(await snapshots(od.deviceId)).toEqual([]);
  });

  it('reads resource service.version across span names for version_health', async () => {
    const owner = await newOwner(t, 'Versions');
    const a = await agentActivatedAt(owner, at('2026-06-01T00:00:00Z'));
    // 1.0 on 06-08: 10 spans over two names, 1 error; 1.1 on 06-09: 10 spans over two names, 5 errors.
    await spans(owner, a.deviceId, at('2026-06-08T10:00:00Z'), { name: 'svc.task', n: 6, errors: 1, resource: { 'service.version': '1.0' } });
    await spans(owner, a.deviceId, at('2026-06-08T11:00:00Z'), { name: 'svc.tool', n: 4, resource: { 'service.version': '1.0' } });
    await spans(owner, a.deviceId, at('2026-06-09T10:00:00Z'), { name: 'svc.task', n: 5, errors: 3, resource: { 'service.version': '1.1' } });
    await spans(owner, a.deviceId, at('2026-06-09T11:00:00Z'), { name: 'svc.tool', n: 5, errors: 2, resource: { 'service.version': '1.1' } });
    await engine.recomputeTenant(owner.tenantId, NOW);
    const w7 = await latest7d(a.deviceId, NOW);
    // before = 1/10, after = 5/10: 1 − (0.5 − 0.1) / (1 − 0.1)
    expect(w7.dimensions.version_health).toBeCloseTo(1 - 0.4 / 0.9, 12);
    expect(w7.dimensions.task_success).toBeCloseTo(7 / 11, 12);
    expect(w7.dimensions.tool_accuracy).toBeCloseTo(7 / 9, 12);
  });

  it('scores every dimension 0.5 during the first 48 hours, real data afterwards', async () => {
    const owner = await newOwner(t, 'Warm-up');
    const activated = plus(NOW, -47 * HOUR);
    const a = await agentActivatedAt(owner, activated);
    await presence(owner, a.deviceId, activated, 40);
    await spans(owner, a.deviceId, plus(activated, HOUR), { name: 'svc.task', n: 20, errors: 1 });

    await engine.recomputeTenant(owner.tenantId, NOW);
    for (const r of await snapshots(a.deviceId, NOW)) {
      expect(Object.values(r.dimensions)).toEqual(TRUST_DIMENSIONS.map(() => 0.5));
      expect(new Set(Object.values(r.sources))).toEqual(new Set(['warmup']));
      expect(r.composite).toBeCloseTo(0.5, 12);
    }
    const later = plus(NOW, 2 * HOUR); // 49 h after activation
    await engine.recomputeTenant(owner.tenantId, later);
    const w7 = await latest7d(a.deviceId, later);
    expect(w7.sources.task_success).toBe('telemetry');
    expect(w7.dimensions.task_success).toBeCloseTo(19 / 20, 12);
    expect(w7.sources.responsiveness).toBe('fleet_median'); // no decision anywhere in the fleet
    expect(w7.dimensions.responsiveness).toBe(0.5);
  });

  it('substitutes the fleet median for a missing dimension and ranks 3 agents by percentile', async () => {
    const owner = await newOwner(t, 'Fleet');
    const since = at('2026-06-01T00:00:00Z');
    const [x, y, z] = [await agentActivatedAt(owner, since), await agentActivatedAt(owner, since), await agentActivatedAt(owner, since)];
    const when = at('2026-06-09T08:00:00Z');
    // x answers in 60 s (1.0); y answers one and lets one expire (0.5); z asks nothing.
    await decision(owner, x!.deviceId, { created: when, resolved: plus(when, 60_000), status: 'approved' });
    await decision(owner, y!.deviceId, { created: when, resolved: plus(when, 60_000), status: 'denied' });
    await decision(owner, y!.deviceId, { created: when, resolved: plus(when, 3_600_000), status: 'expired' });
    await spans(owner, x!.deviceId, when, { name: 'svc.task', n: 10 });
    await spans(owner, y!.deviceId, when, { name: 'svc.task', n: 10, errors: 5 });
    await spans(owner, z!.deviceId, when, { name: 'svc.task', n: 10, errors: 2 });

    await engine.recomputeTenant(owner.tenantId, NOW);
    const [sx, sy, sz] = await Promise.all([x, y, z].map((a) => latest7d(a!.deviceId, NOW)));
    expect(sx!.dimensions.responsiveness).toBe(1);
    expect(sy!.dimensions.responsiveness).toBe(0.5);
    expect(sz!.sources.responsiveness).toBe('fleet_median');
    expect(sz!.dimensions.responsiveness).toBeCloseTo(0.75, 12); // median(1, 0.5)
    expect(sz!.sources.task_success).toBe('telemetry');
    // Percentile: round(100 × (below + 0.5 × equal) / 3) → 17, 50, 83 in composite order.
    const ranked = [sx!, sy!, sz!].sort((p, q) => p.composite - q.composite);
    expect(ranked.map((s) => s.percentile)).toEqual([17, 50, 83]);
    expect(new Set([sx!.composite, sy!.composite, sz!.composite]).size).toBe(3);
  });

  it('stores the initial baseline from the first stable 30-day window (activation day + 2) and rewrites only recent days afterwards', async () => {
    const owner = await newOwner(t, 'Baseline');
    const since = at('2026-05-01T00:00:00Z');
    const a = await agentActivatedAt(owner, since);
    await presence(owner, a.deviceId, since, 40 * 24);
    for (let d = 0; d < 41; d++) await spans(owner, a.deviceId, plus(since, d * DAY + 3600_000), { name: 'svc.task', n: 4, errors: d % 4 === 0 ? 1 : 0 });

    const first = await engine.recomputeTenant(owner.tenantId, NOW);
    expect(first.dailyScores).toBe(41); // 05-01 … 06-10
    const base = await exec<{ dimension: string; samples: number; window_start: string; window_end: string; reason: string; established_by: string; bins: number[] }>(
      sql`select dimension, samples, window_start, window_end, reason, established_by, bins from trust_baselines where device_id = ${a.deviceId} order by dimension`,
    );
    expect(base.map((b) => b.dimension)).toContain('task_success');
    for (const b of base) {
      expect(b).toMatchObject({ window_start: '2026-05-03', window_end: '2026-06-01', reason: 'initial', established_by: 'system' });
      expect(b.bins.reduce((s, v) => s + v, 0)).toBeCloseTo(1, 9);
    }
    const ts = base.find((b) => b.dimension === 'task_success')!;
    expect(ts.samples).toBe(30);

    // 6 hours later: the baseline stays; only the days since the previous run (one back) are rewritten.
    const second = await engine.recomputeTenant(owner.tenantId, plus(NOW, 6 * HOUR));
    expect(second.baselines).toBe(0);
    expect(second.dailyScores).toBe(2); // 06-09, 06-10
    expect((await exec(sql`select 1 from trust_baselines where device_id = ${a.deviceId}`)).length).toBe(base.length);
  });

  it('builds the initial baseline from complete days only: not while its 30-day window would end today', async () => {
    const owner = await newOwner(t, 'Complete days');
    // Activation day + 31 = today (06-10): the first window after the warm-up is 05-12 … 06-10.
    const since = at('2026-05-10T00:00:00Z');
    const a = await agentActivatedAt(owner, since);
    await presence(owner, a.deviceId, since, 32 * 24);
    for (let d = 0; d < 32; d++) await spans(owner, a.deviceId, plus(since, d * DAY + 3600_000), { name: 'svc.task', n: 4, errors: d % 4 === 0 ? 1 : 0 });
    const first = await engine.recomputeTenant(owner.tenantId, NOW);
    expect(first.baselines).toBe(0);
    expect(await exec(sql`select 1 from trust_baselines where device_id = ${a.deviceId}`)).toEqual([]);
    // The next day, 06-10 is complete: the window 05-12 … 06-10 becomes the baseline.
    const tomorrow = plus(NOW, DAY);
    const second = await engine.recomputeTenant(owner.tenantId, tomorrow);
    expect(second.baselines).toBeGreaterThan(0);
    const base = await exec<{ window_start: string; window_end: string }>(sql`select distinct window_start, window_end from trust_baselines where device_id = ${a.deviceId}`);
    expect(base).toEqual([{ window_start: '2026-05-12', window_end: '2026-06-10' }]);
  });

  it('tier hysteresis: no upgrade before 7 days of held snapshots, upgrade on day 7, one bad window demotes at once with side effects', async () => {
    const owner = await newOwner(t, 'Tiers');
    const t0 = at('2026-06-10T12:00:00Z');
    const activated = plus(t0, -3 * DAY);
    const a = await agentActivatedAt(owner, activated);
    const reg = await t.request({
      method: 'POST',
      url: '/api/v1/hub/identities',
      headers: owner.auth,
      payload: { hub_address: `tiers-${Date.now().toString(36)}`, display_name: 'Tiers', device_id: a.deviceId, public_key: Buffer.from(newDeviceKeys().identityPublicKey, 'hex').toString('base64') },
    });
    expect(reg.status).toBe(201);
    const identityId = reg.body.id as string;
    const cap = { name: 'translate', version: '1.0.0', input_schema: { type: 'object' }, sla: { latency_p95_ms: 500, uptime_sla: 0.99 } };
    expect((await t.request({ method: 'POST', url: `/api/v1/hub/${reg.body.hub_address}/capabilities`, headers: owner.auth, payload: cap })).status).toBe(201);
    // Every day from activation to t0 + 9 d: 10 tasks (3 fail) of 100 tokens each, 10 tools (all ok). Composite ≈ 0.65.
    for (let d = -3; d <= 9; d++) {
      const day = plus(at('2026-06-10T00:30:00Z'), d * DAY);
      await spans(owner, a.deviceId, day, { name: 'svc.task', n: 10, errors: 3, attributes: { 'svc.tokens': 100 } });
      await spans(owner, a.deviceId, plus(day, 60_000), { name: 'svc.tool', n: 10 });
    }
    const tierOf = async () => (await exec<{ trust_tier: string; trust_score: number }>(sql`select trust_tier, trust_score from hub_identities where id = ${identityId}`))[0]!;
    const changes = () => exec<{ from_tier: string; to_tier: string; reason: string }>(sql`select from_tier, to_tier, reason from hub_tier_changes where identity_id = ${identityId} order by created_at`);

    // Recompute every 6 h from t0 to t0 + 6 d 18 h: the score holds, but the hold is not complete.
    for (let k = 0; k < 28; k++) {
      const now = plus(t0, k * 6 * HOUR);
      const s = await engine.recomputeTenant(owner.tenantId, now);
      expect(s.tierChanges, `run ${k}`).toBe(0);
      const w7 = await latest7d(a.deviceId, now);
      expect(w7.composite).toBeGreaterThanOrEqual(0.6);
      expect(w7.composite).toBeLessThan(0.8);
      expect(w7.tier).toBe('unverified');
    }
    expect((await tierOf()).trust_tier).toBe('unverified');

    // Day 7: the 7d snapshots cover [t0, t0 + 7 d] at ≥ 0.6 → certified.
    const day7 = plus(t0, 7 * DAY);
    expect((await engine.recomputeTenant(owner.tenantId, day7)).tierChanges).toBe(1);
    const up = await latest7d(a.deviceId, day7);
    expect(up.tier).toBe('certified');
    expect(await tierOf()).toEqual({ trust_tier: 'certified', trust_score: up.composite });
    expect(await changes()).toEqual([{ from_tier: 'unverified', to_tier: 'certified', reason: 'trust_recompute' }]);
    expect((await exec<{ certification_tier: string }>(sql`select certification_tier from hub_capabilities where identity_id = ${identityId}`))[0]!.certification_tier).toBe('certified');
    // The next run keeps it.
    expect((await engine.recomputeTenant(owner.tenantId, plus(day7, 6 * HOUR))).tierChanges).toBe(0);

    // An active SPT issued under the certified tier, then one bad window: 300 failing tasks of 1000 tokens.
    const jti = randomUUID();
    const bad = plus(day7, 7 * HOUR);
    await exec(sql`
      insert into skill_grants (jti, tenant_id, device_id, subject, skill, tier, audience, issued_by, issued_at, expires_at)
      values (${jti}, ${owner.tenantId}, ${a.deviceId}, 'did:hub:x', 'translate', 'certified', 'parley', 'system', ${bad.toISOString()}::timestamptz, ${plus(bad, DAY).toISOString()}::timestamptz)`);
    await spans(owner, a.deviceId, bad, { name: 'svc.task', n: 300, errors: 300, attributes: { 'svc.tokens': 1000 } });
    const down = plus(day7, 12 * HOUR);
    expect((await engine.recomputeTenant(owner.tenantId, down)).tierChanges).toBe(1);
    const low = await latest7d(a.deviceId, down);
    expect(low.composite).toBeLessThan(0.6);
    expect(low.tier).toBe('unverified');
    expect((await tierOf()).trust_tier).toBe('unverified');
    expect(await changes()).toEqual([
      { from_tier: 'unverified', to_tier: 'certified', reason: 'trust_recompute' },
      { from_tier: 'certified', to_tier: 'unverified', reason: 'trust_recompute' },
    ]);
    expect((await exec<{ revoked_at: unknown; revoked_reason: string }>(sql`select revoked_at, revoked_reason from skill_grants where jti = ${jti}`))[0]).toMatchObject({ revoked_reason: 'tier_downgrade' });
    expect((await exec<{ revoked_at: unknown }>(sql`select revoked_at from skill_grants where jti = ${jti}`))[0]!.revoked_at).not.toBeNull();
    expect((await exec<{ certification_tier: string }>(sql`select certification_tier from hub_capabilities where identity_id = ${identityId}`))[0]!.certification_tier).toBe('unverified');
    const audit = await exec<{ actor: string; data: { from: string; to: string; score: number; reason: string } }>(
      sql`select actor, data from audit_events where tenant_id = ${owner.tenantId} and type = 'hub.tier_changed' and subject = ${identityId} order by seq`,
    );
    expect(audit.map((e) => [e.actor, e.data.from, e.data.to, e.data.reason])).toEqual([
      ['system', 'unverified', 'certified', 'trust_recompute'],
      ['system', 'certified', 'unverified', 'trust_recompute'],
    ]);
    expect(audit[1]!.data.score).toBeCloseTo(low.composite, 4);
    const trustSpans = await exec<{ attributes: Record<string, unknown>; start_time: unknown }>(
      sql`select attributes, start_time from telemetry_spans where device_id = ${a.deviceId} and name = 'svc.trust' order by start_time`,
    );
    expect(trustSpans.map((s) => s.attributes)).toEqual([
      expect.objectContaining({ operation: 'tier_change', 'svc.trust.from_tier': 'unverified', 'svc.trust.to_tier': 'certified', 'svc.trust.reason': 'trust_recompute' }),
      expect.objectContaining({ operation: 'tier_change', 'svc.trust.from_tier': 'certified', 'svc.trust.to_tier': 'unverified', 'svc.trust.score': Math.round(low.composite * 10_000) / 10_000 }),
    ]);
    expect(new Date(trustSpans[1]!.start_time as string).getTime()).toBe(down.getTime());
  });
});
