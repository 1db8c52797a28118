/**
 * Daily span roll-ups of the trust engine (contract §3.9, §4.14; trust/rollups.ts):
 *
 * - property (fast-check): random spans over several devices, UTC days, traces, names, versions,
 *   statuses and token attributes, inserted in random batches (later batches carry spans of past
 *   days: late arrivals) with roll-ups of the dirty days between batches at advancing clocks; the
 *   span fields of extractSignals (roll-ups + today's live part) equal a reference computed here
 *   from the generated rows (same-UTC-day recovery; events after `now` ignored);
 * - a late span for a past day is counted after the next recompute (its day is re-rolled);
 * - pruning deletes only spans older than the cutoff whose day is rolled up (not dirty), keeps the
 *   roll-ups, and the signals read after pruning are unchanged.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTenant } from '../../src/db/tenant.js';
import { addDays, dayStart, utcDay } from '../../src/lib/days.js';
import { TrustEngine } from '../../src/modules/trust/engine.js';
import { extractSignals, type TrustAgent } from '../../src/modules/trust/repo.js';
import { pruneSpans, rollUpDirtyDays } from '../../src/modules/trust/rollups.js';
import { retentionCutoff, scheduleTelemetryPrune, TELEMETRY_PRUNE_JOB } from '../../src/jobs/telemetry-prune.js';
import type { DailySignals } from '../../src/modules/trust/types.js';
import { startApp, type TestApp } from '../../testing/harness.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const BASE_DAY = '2026-03-01';
const NAMES = ['svc.task', 'svc.tool', 'llm.call', 'svc.trust'] as const;
const VERSIONS = [null, '1.0', '1.1'] as const;

interface GenSpan {
  device: number;
  atMs: number;
  trace: number;
  name: (typeof NAMES)[number];
  status: 0 | 1 | 2;
  version: (typeof VERSIONS)[number];
  tokens: { kind: 'none' } | { kind: 'gen_ai'; input?: number; output?: number } | { kind: 'svc'; n: number };
  batch: number;
}

/** Tokens of a generated span, as TOKENS in trust/rollups.ts defines them. */
const tokensOf = (s: GenSpan): number =>
  s.tokens.kind === 'gen_ai' ? (s.tokens.input ?? 0) + (s.tokens.output ?? 0) : s.tokens.kind === 'svc' ? s.tokens.n : 0;

const attributesOf = (s: GenSpan): Record<string, unknown> => {
  if (s.tokens.kind === 'svc') return { 'svc.tokens': s.tokens.n };
  if (s.tokens.kind === 'gen_ai') {
    const a: Record<string, unknown> = {};
    if (s.tokens.input !== undefined) a['gen_ai.usage.input_tokens'] = s.tokens.input;
    if (s.tokens.output !== undefined) a['gen_ai.usage.output_tokens'] = s.tokens.output;
    if (s.tokens.input === undefined && s.tokens.output === undefined) a['gen_ai.usage.input_tokens'] = 'n/a';
    return a;
  }
  return {};
};

type SpanFields = Pick<DailySignals, 'spans' | 'errorSpans' | 'tasks' | 'tasksOk' | 'tools' | 'toolsOk' | 'taskTokens' | 'taskTokensOk' | 'recoveredErrors' | 'spanNames' | 'versions'>;
const spanFields = (s: SpanFields): SpanFields => ({
  spans: s.spans,
  errorSpans: s.errorSpans,
  tasks: s.tasks,
  tasksOk: s.tasksOk,
  tools: s.tools,
  toolsOk: s.toolsOk,
  taskTokens: s.taskTokens,
  taskTokensOk: s.taskTokensOk,
  recoveredErrors: s.recoveredErrors,
  spanNames: s.spanNames,
  versions: s.versions,
});

/** The reference: span fields of (device, day) computed from the generated rows (start ≤ now, `svc.trust` excluded). */
function reference(spans: readonly GenSpan[], device: number, day: string, now: Date): SpanFields {
  const own = spans.filter((s) => s.device === device && utcDay(s.atMs) === day && s.atMs <= now.getTime() && s.name !== 'svc.trust');
  const out: SpanFields = { spans: 0, errorSpans: 0, tasks: 0, tasksOk: 0, tools: 0, toolsOk: 0, taskTokens: 0, taskTokensOk: 0, recoveredErrors: 0, spanNames: {}, versions: {} };
  for (const s of own) {
    const err = s.status === 2;
    out.spans++;
    if (err) out.errorSpans++;
    out.spanNames[s.name] = (out.spanNames[s.name] ?? 0) + 1;
    if (s.name === 'svc.task') {
      out.tasks++;
      if (!err) out.tasksOk++;
      out.taskTokens += tokensOf(s);
      if (!err) out.taskTokensOk += tokensOf(s);
    }
    if (s.name === 'svc.tool') {
      out.tools++;
      if (!err) out.toolsOk++;
    }
    if (s.version !== null) {
      const v = (out.versions[s.version] ??= { spans: 0, errors: 0, firstSeen: new Date(s.atMs).toISOString() });
      v.spans++;
      if (err) v.errors++;
      if (new Date(s.atMs).toISOString() < v.firstSeen) v.firstSeen = new Date(s.atMs).toISOString();
    }
    if (err && own.some((o) => o.trace === s.trace && o.name === s.name && o.status !== 2 && o.atMs > s.atMs)) out.recoveredErrors++;
  }
  return out;
}

describe('trust span roll-ups', () => {
  let t: TestApp;
  const db = () => t.app.parley.database.db;
  const exec = async <T = Record<string, unknown>>(q: ReturnType<typeof sql>) => ((await db().execute(q)) as unknown as { rows: T[] }).rows;

  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  /** A tenant with `n` ACTIVE agents activated before BASE_DAY. */
  async function fleet(n: number): Promise<{ tenantId: string; agents: TrustAgent[] }> {
    const tenantId = randomUUID();
    await exec(sql`insert into tenants (id, name) values (${tenantId}, 'rollups')`);
    const since = new Date(dayStart(BASE_DAY).getTime() - DAY);
    const agents: TrustAgent[] = [];
    for (let i = 0; i < n; i++) {
      const id = randomUUID();
      await exec(sql`
        insert into devices (id, tenant_id, kind, status, identity_public_key, ephemeral_public_key, fingerprint, name, created_at, activated_at)
        values (${id}, ${tenantId}, 'agent', 'ACTIVE', 'k', 'k', ${'f' + id}, ${'agent-' + i}, ${since.toISOString()}::timestamptz, ${since.toISOString()}::timestamptz)`);
      agents.push({ deviceId: id, since, identityId: null });
    }
    agents.sort((a, b) => (a.deviceId < b.deviceId ? -1 : 1));
    return { tenantId, agents };
  }

  async function insert(tenantId: string, agents: readonly TrustAgent[], spans: readonly GenSpan[]): Promise<void> {
    if (spans.length === 0) return;
    const col = <T>(f: (s: GenSpan) => T) => sql.param(spans.map(f));
    // One INSERT statement per batch, like an ingest request (the trigger marks the pairs).
    await withTenant(db(), tenantId, (tx) =>
      tx.execute(sql`
        insert into telemetry_spans (id, tenant_id, device_id, trace_id, span_id, name, kind, start_time, end_time, duration_us, status_code, attributes, resource)
        select gen_random_uuid(), ${tenantId}::uuid, u.device_id, u.trace_id, substr(md5(random()::text), 1, 16), u.name, 1, u.at, u.at, 10, u.status, u.attributes, u.resource
        from unnest(${col((s) => agents[s.device]!.deviceId)}::uuid[], ${col((s) => 't' + s.trace)}::text[], ${col((s) => s.name)}::text[],
                    ${col((s) => new Date(s.atMs).toISOString())}::timestamptz[], ${col((s) => s.status)}::int[],
                    ${col((s) => JSON.stringify(attributesOf(s)))}::jsonb[],
                    ${col((s) => JSON.stringify(s.version === null ? { 'service.name': 'a' } : { 'service.name': 'a', 'service.version': s.version }))}::jsonb[])
          as u(device_id, trace_id, name, at, status, attributes, resource)`),
    );
  }

  const signalsAt = (tenantId: string, agents: readonly TrustAgent[], now: Date) =>
    withTenant(db(), tenantId, (tx) => extractSignals(tx, tenantId, agents, BASE_DAY, now));

  const DAYS = 5;
  const spanArb = (devices: number, batches: number): fc.Arbitrary<GenSpan> =>
    fc.record({
      device: fc.integer({ min: 0, max: devices - 1 }),
      // Days 0..DAYS (DAYS = the final "today": spans after now are not read), on a coarse grid so
      // that equal start times and spans around midnight are frequent.
      atMs: fc
        .tuple(fc.integer({ min: 0, max: DAYS }), fc.constantFrom(0, 1, 6, 12, 23), fc.constantFrom(0, 59), fc.constantFrom(0, 0, 59_999))
        .map(([d, h, m, ms]) => dayStart(BASE_DAY).getTime() + d * DAY + h * HOUR + m * 60_000 + ms),
      trace: fc.integer({ min: 0, max: 1 }),
      name: fc.constantFrom(...NAMES),
      status: fc.constantFrom(0 as const, 1 as const, 2 as const, 2 as const),
      version: fc.constantFrom(...VERSIONS),
      tokens: fc.oneof(
        fc.constant({ kind: 'none' as const }),
        fc.record({ kind: fc.constant('gen_ai' as const), input: fc.option(fc.integer({ min: 0, max: 5000 }), { nil: undefined }), output: fc.option(fc.integer({ min: 0, max: 500 }), { nil: undefined }) }),
        fc.record({ kind: fc.constant('svc' as const), n: fc.integer({ min: 0, max: 9000 }) }),
      ),
      batch: fc.integer({ min: 0, max: batches - 1 }),
    });

  it('roll-ups equal a full recompute from raw spans on random data, late arrivals included (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 3 }).chain((devices) =>
          fc.tuple(fc.constant(devices), fc.array(spanArb(devices, 3), { minLength: 0, maxLength: 120 }), fc.constantFrom(0, HOUR, 6 * HOUR + 59 * 60_000 + 59_999, 12 * HOUR, 23 * HOUR + 30 * 60_000)),
        ),
        async ([devices, spans, nowOffset]) => {
          const { tenantId, agents } = await fleet(devices);
          const now = new Date(dayStart(addDays(BASE_DAY, DAYS)).getTime() + nowOffset);
          // Batch b is ingested, then the dirty days before an advancing "today" are rolled up.
          for (let b = 0; b < 3; b++) {
            await insert(tenantId, agents, spans.filter((s) => s.batch === b));
            await rollUpDirtyDays(db(), tenantId, addDays(BASE_DAY, 2 + b));
          }
          await rollUpDirtyDays(db(), tenantId, utcDay(now));
          const got = await signalsAt(tenantId, agents, now);
          for (let d = 0; d < devices; d++) {
            const days = got.get(agents[d]!.deviceId)!;
            expect(days.map((x) => x.day)).toEqual(Array.from({ length: DAYS + 1 }, (_, i) => addDays(BASE_DAY, i)));
            for (const x of days) expect(spanFields(x)).toEqual(reference(spans, d, x.day, now));
          }
        },
      ),
      { numRuns: 100 },
    );
  }, 240_000);

  it('counts a late span of a past day after the next recompute', async () => {
    const { tenantId, agents } = await fleet(1);
    const engine = new TrustEngine({ db: db(), log: { info: () => undefined, warn: () => undefined, error: () => undefined } });
    const day1 = dayStart(addDays(BASE_DAY, 1)).getTime();
    const span = (atMs: number, status: 0 | 2, trace = 1): GenSpan => ({ device: 0, atMs, trace, name: 'svc.task', status, version: '1.0', tokens: { kind: 'svc', n: 10 }, batch: 0 });
    await insert(tenantId, agents, [span(day1 + HOUR, 0), span(day1 + 2 * HOUR, 2)]);
    const now1 = new Date(day1 + 2 * DAY + HOUR);
    const s1 = await engine.recomputeTenant(tenantId, now1);
    expect(s1.rolledUpPairs).toBe(1);
    const before = (await signalsAt(tenantId, agents, now1)).get(agents[0]!.deviceId)!.find((x) => x.day === addDays(BASE_DAY, 1))!;
    expect([before.spans, before.errorSpans, before.recoveredErrors]).toEqual([2, 1, 0]);
    // A late span of day 1 recovers the error: dirty again, re-rolled by the next recompute.
    await insert(tenantId, agents, [span(day1 + 3 * HOUR, 0)]);
    expect(await exec(sql`select to_char(day, 'YYYY-MM-DD') as day from telemetry_rollup_dirty where tenant_id = ${tenantId}`)).toEqual([{ day: addDays(BASE_DAY, 1) }]);
    const now2 = new Date(now1.getTime() + 6 * HOUR);
    const s2 = await engine.recomputeTenant(tenantId, now2);
    expect(s2.rolledUpPairs).toBe(1);
    const after = (await signalsAt(tenantId, agents, now2)).get(agents[0]!.deviceId)!.find((x) => x.day === addDays(BASE_DAY, 1))!;
    expect([after.spans, after.errorSpans, after.recoveredErrors, after.tasksOk, after.taskTokens]).toEqual([3, 1, 1, 2, 30]);
    expect(await exec(sql`select count(*)::int as n from telemetry_rollup_dirty where tenant_id = ${tenantId}`)).toEqual([{ n: 0 }]);
  });

  it('prunes only spans older than the cutoff whose day is rolled up; roll-ups stay and the signals do not change', async () => {
    const { tenantId, agents } = await fleet(2);
    const at = (day: number, h: number) => dayStart(addDays(BASE_DAY, day)).getTime() + h * HOUR;
    const mk = (device: number, atMs: number, status: 0 | 2 = 0): GenSpan => ({ device, atMs, trace: 1, name: 'svc.tool', status, version: null, tokens: { kind: 'none' }, batch: 0 });
    await insert(tenantId, agents, [mk(0, at(0, 1)), mk(0, at(0, 2), 2), mk(1, at(0, 3)), mk(0, at(1, 1)), mk(1, at(2, 1)), mk(0, at(3, 1))]);
    const now = new Date(at(4, 6));
    await rollUpDirtyDays(db(), tenantId, utcDay(now));
    const signals = await signalsAt(tenantId, agents, now);
    // A late span of (device 1, day 0) after the roll-up: that pair is dirty, so its spans stay.
    await insert(tenantId, agents, [mk(1, at(0, 5))]);
    const cutoff = dayStart(addDays(BASE_DAY, 2));
    const pruned = await pruneSpans(db(), [tenantId], cutoff, 1);
    expect(pruned.deleted).toBe(3); // device 0: days 0 (2 spans) and 1
    const left = await exec<{ device_id: string; day: string; n: number }>(
      sql`select device_id, to_char(start_time at time zone 'UTC', 'YYYY-MM-DD') as day, count(*)::int as n from telemetry_spans
          where tenant_id = ${tenantId} group by 1, 2 order by 2, 1`,
    );
    expect(left).toEqual(
      [
        { device_id: agents[1]!.deviceId, day: addDays(BASE_DAY, 0), n: 2 },
        { device_id: agents[1]!.deviceId, day: addDays(BASE_DAY, 2), n: 1 },
        { device_id: agents[0]!.deviceId, day: addDays(BASE_DAY, 3), n: 1 },
      ].sort((a, b) => (a.day === b.day ? (a.device_id < b.device_id ? -1 : 1) : a.day < b.day ? -1 : 1)),
    );
    expect(await exec(sql`select count(*)::int as n from telemetry_span_rollups where tenant_id = ${tenantId}`)).toEqual([{ n: 5 }]);
    // The remaining dirty pair is rolled up by the next roll-up; signals equal the reference from all spans ever ingested.
    await rollUpDirtyDays(db(), tenantId, utcDay(now));
    const after = await signalsAt(tenantId, agents, now);
    expect(after.get(agents[0]!.deviceId)).toEqual(signals.get(agents[0]!.deviceId));
    const d1 = after.get(agents[1]!.deviceId)!.find((x) => x.day === BASE_DAY)!;
    expect([d1.spans, d1.tools, d1.toolsOk]).toEqual([2, 2, 2]);
    // Once rolled up, that pair is pruned too.
    expect((await pruneSpans(db(), [tenantId], cutoff)).deleted).toBe(2);
  });

  it('the cluster-wide pruning job deletes rolled-up spans older than the retention and records its counts', async () => {
    const { tenantId, agents } = await fleet(1);
    const mk = (atMs: number): GenSpan => ({ device: 0, atMs, trace: 1, name: 'svc.task', status: 0, version: null, tokens: { kind: 'none' }, batch: 0 });
    const now = new Date(dayStart(addDays(BASE_DAY, 40)).getTime() + 5 * HOUR);
    expect(retentionCutoff(now, 30).toISOString()).toBe(`${addDays(BASE_DAY, 10)}T00:00:00.000Z`);
    await insert(tenantId, agents, [mk(dayStart(addDays(BASE_DAY, 9)).getTime() + HOUR), mk(dayStart(addDays(BASE_DAY, 10)).getTime())]);
    await rollUpDirtyDays(db(), tenantId, utcDay(now));
    const errors: unknown[] = [];
    const stop = scheduleTelemetryPrune({ db: db(), retentionDays: 30, intervalMs: 50, pollMs: 20, onError: (e) => errors.push(e), now: () => now });
    let result: Record<string, unknown> | undefined;
    for (let i = 0; i < 200 && !result; i++) {
      await new Promise((r) => setTimeout(r, 25));
      result = (await exec<{ last_result: Record<string, unknown> | null }>(sql`select last_result from scheduled_jobs where name = ${TELEMETRY_PRUNE_JOB}`))[0]?.last_result ?? undefined;
    }
    await stop();
    expect(errors).toEqual([]);
    // Every tenant is visited (the earlier tests' old rolled-up spans go too).
    expect(result).toMatchObject({ ok: true, cutoff: retentionCutoff(now, 30).toISOString() });
    expect(result!.deleted).toBeGreaterThanOrEqual(1);
    expect(await exec(sql`select count(*)::int as n from telemetry_spans where tenant_id = ${tenantId}`)).toEqual([{ n: 1 }]);
    expect(await exec(sql`select count(*)::int as n from telemetry_span_rollups where tenant_id = ${tenantId}`)).toEqual([{ n: 2 }]);
  });
});
