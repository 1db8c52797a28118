/**
 * bench/trust-scale: the trust recompute at fleet scale with daily span roll-ups (
 * contract §3.9; modules/trust/rollups.ts), on PostgreSQL. Target: 10,000 agents × 30 days × 200
 * spans a day in under 60 s, linear in agents.
 *
 * Per fleet size N (one tenant each), "now" = today 18:00 UTC, N ACTIVE agents activated 31 days
 * ago, and the spans of bench/trust.ts (200 a day per agent: 40% `svc.task` with tokens, 30%
 * `svc.tool`, 30% other names, traces of 5 spans, errors, some recovered):
 *
 * 1. template day (today − 30): raw spans inserted (the insert trigger marks the pairs dirty), then
 *    rolled up by `rollUpDirtyDays` — the production roll-up SQL (timed: "roll-up s");
 * 2. days today − 29 … today − 2: the template roll-up rows copied with the day and the versions'
 *    `firstSeenMs` shifted (the generator of day d is the template's shifted by d days, traces are
 *    per day, so the roll-up of day d IS the shifted template roll-up). Checked in the run: for
 *    the first 50 agents, raw spans of day today − 29 are inserted and rolled up by the production
 *    code, and the rows must equal the copies (else the bench fails);
 * 3. the template's raw spans pruned by `pruneSpans` (timed: "prune s"), as the retention would;
 * 4. raw spans of yesterday (full day, dirty: spans arrived since the last recompute) and of today
 *    up to now; presence 20 h/day, 4 decisions and 10 policy evaluations per agent and day over
 *    the 31 days;
 * 5. timed: `TrustEngine.recomputeTenant(tenant, now)` (re-rolls yesterday from raw spans, reads
 *    30 days of roll-ups, today live) and a steady run 6 h later (nothing closed is dirty).
 *
 * A fresh database is created (127.0.0.1 only) and dropped at the end.
 *
 *   npm run bench:trust-scale -- [--agents 1000,3000,10000] [--database-url postgres://postgres@127.0.0.1:5432/postgres]
 *   (environment: BENCH_AGENTS, BENCH_DATABASE_URL; BENCH_PRUNE=0 skips step 3)
 */
import { sql } from 'drizzle-orm';
import { addDays, dayStart, utcDay } from '../packages/server/src/lib/days.js';
import { pruneSpans, rollUpDirtyDays } from '../packages/server/src/modules/trust/rollups.js';
import { runMain } from './relay/cli.js';
import { DAY_MS, SPANS_PER_DAY, insertSpans, printHeader, printTable, seedActivity, seedFleet, timed, timedRecomputes, timeCells, trustBenchArgs, withTrustBench } from './trust-common.js';

const DAYS = 30;
const CHECKED_AGENTS = 50;
const AGENT_CHUNK = 1000;

/** BENCH_PRUNE=0: keep the template's raw spans (step 3 skipped; see docs/performance.md). */
const skipPrune = process.env.BENCH_PRUNE === '0';

interface Row {
  n: number;
  seedS: number;
  rollupS: number;
  pruneS: number;
  rollups: number;
  rawSpans: number;
  firstS: number;
  steadyS: number;
  rolledUp: number;
}

async function main(): Promise<number> {
  const { sizes, adminUrl } = trustBenchArgs('1000,3000,10000');
  return withTrustBench(adminUrl, async (bench) => {
    const { db, exec, now } = bench;
    const today = utcDay(now);
    const template = addDays(today, -DAYS);
    const yesterday = addDays(today, -1);
    const from = dayStart(template).toISOString();
    printHeader('bench/trust-scale', bench, `${DAYS} closed days + today × ${SPANS_PER_DAY} spans/day per agent; now = ${now.toISOString()}`);
    const results: Row[] = [];
    for (const n of sizes) {
      const seedStart = performance.now();
      const tenantId = await seedFleet(exec, n, from);
      const ids = (await exec<{ id: string }>(sql`select id from devices where tenant_id = ${tenantId} order by id`)).map((r) => r.id);
      /** Raw spans of `day` for `devices` (indices i < maxI), `service.version` = ver; one statement per chunk of agents. */
      const spans = async (day: string, devices: readonly string[], ver: string, maxI = SPANS_PER_DAY) => {
        for (let c = 0; c < devices.length; c += AGENT_CHUNK) {
          await exec(sql`
            ${insertSpans(tenantId, sql`${day}`, sql`${ver}::text`)}
            from unnest(${sql.param(devices.slice(c, c + AGENT_CHUNK))}::uuid[]) as d(id)
            cross join generate_series(0, ${maxI - 1}::int) i
            cross join lateral (select ${dayStart(day).toISOString()}::timestamptz + i * interval '7 minutes' as ts) t`);
        }
      };
      // 1. The template day, rolled up by the production code.
      await spans(template, ids, '1.0');
      const [rollupS] = await timed(() => rollUpDirtyDays(db, tenantId, addDays(template, 1)));
      // 2. Copies for the days after it up to the day before yesterday.
      await exec(sql`
        insert into telemetry_span_rollups (tenant_id, day, device_id, spans, error_spans, tasks, tasks_ok, tools, tools_ok, task_tokens, task_tokens_ok, recovered_errors, span_names, versions)
        select r.tenant_id, r.day + k, r.device_id, r.spans, r.error_spans, r.tasks, r.tasks_ok, r.tools, r.tools_ok, r.task_tokens, r.task_tokens_ok, r.recovered_errors, r.span_names,
               (select coalesce(jsonb_object_agg(key, jsonb_set(value, '{firstSeenMs}', to_jsonb((value->>'firstSeenMs')::float8 + k * ${DAY_MS}::float8))), '{}'::jsonb)
                from jsonb_each(r.versions))
        from telemetry_span_rollups r cross join generate_series(1, ${DAYS - 2}::int) k
        where r.tenant_id = ${tenantId} and r.day = ${template}::date`);
      // The copies are what the roll-up code produces: check the first agents of the first copied day.
      const checkDay = addDays(template, 1);
      const checked = ids.slice(0, CHECKED_AGENTS);
      const cols = sql`device_id, spans, error_spans, tasks, tasks_ok, tools, tools_ok, task_tokens, task_tokens_ok, recovered_errors, span_names, versions`;
      const copies = await exec(sql`select ${cols} from telemetry_span_rollups where tenant_id = ${tenantId} and day = ${checkDay}::date and device_id = any(${sql.param(checked)}::uuid[]) order by device_id`);
      await spans(checkDay, checked, '1.0');
      await rollUpDirtyDays(db, tenantId, addDays(checkDay, 1));
      const real = await exec(sql`select ${cols} from telemetry_span_rollups where tenant_id = ${tenantId} and day = ${checkDay}::date and device_id = any(${sql.param(checked)}::uuid[]) order by device_id`);
      if (copies.length !== checked.length || JSON.stringify(copies) !== JSON.stringify(real)) throw new Error('copied roll-ups differ from the rolled-up day');
      // 3. Retention: the raw spans of the rolled-up days go.
      const [pruneS] = skipPrune ? [0] : await timed(() => pruneSpans(db, [tenantId], dayStart(addDays(checkDay, 1))));
      // 4. Yesterday (dirty) and today up to now, raw; the other sources over every day.
      await spans(yesterday, ids, '1.1');
      await spans(today, ids, '1.1', Math.floor((now.getTime() - dayStart(today).getTime()) / 420_000) + 1);
      await seedActivity(exec, tenantId, from, DAYS, DAYS * 24 + 18);
      await exec(sql`vacuum analyze`);
      const seedS = (performance.now() - seedStart) / 1000;
      const [{ rollups }] = (await exec<{ rollups: number }>(sql`select count(*)::int as rollups from telemetry_span_rollups where tenant_id = ${tenantId}`)) as [{ rollups: number }];
      const [{ raw }] = (await exec<{ raw: number }>(sql`select count(*)::int as raw from telemetry_spans where tenant_id = ${tenantId}`)) as [{ raw: number }];
      // 5. The recompute (re-rolls yesterday) and a steady run 6 h later.
      const { firstS, steadyS, first } = await timedRecomputes(bench, tenantId, n);
      results.push({ n, seedS, rollupS, pruneS, rollups, rawSpans: raw, firstS, steadyS, rolledUp: first.rolledUpPairs });
      console.log(`  N=${n}: seeded in ${seedS.toFixed(1)} s (roll-up of one day ${rollupS.toFixed(2)} s, prune of one day ${pruneS.toFixed(2)} s; ${rollups.toLocaleString('en-US')} roll-up rows, ${raw.toLocaleString('en-US')} raw spans); recompute ${firstS.toFixed(2)} s (${first.rolledUpPairs} pairs re-rolled), steady ${steadyS.toFixed(2)} s`);
    }
    const ref = results[0]!;
    printTable(
      'agents  roll-up rows  raw spans  roll-up 1 day s  prune 1 day s  recompute s  s/agent  ratio  steady s  s/agent  ratio',
      results.map((r) => [
        String(r.n).padStart(6),
        r.rollups.toLocaleString('en-US').padStart(13),
        r.rawSpans.toLocaleString('en-US').padStart(10),
        r.rollupS.toFixed(2).padStart(16),
        r.pruneS.toFixed(2).padStart(14),
        ...timeCells(r.firstS, 12, r.n, ref.firstS),
        ...timeCells(r.steadyS, 9, r.n, ref.steadyS),
      ]),
      ref.n,
    );
    return 0;
  });
}

runMain(main);
