/**
 * bench/trust: how the trust recompute (contract §3.9; modules/trust/engine.ts) grows with the fleet,
 * on PostgreSQL, next to a baseline measured in the same run (design §9):
 *
 *   baseline   one plain `select device_id, count(*), sum(duration_us) from telemetry_spans where
 *              tenant_id = … group by device_id` over the same rows (a floor: one scan + hash
 *              aggregate of the tenant's spans);
 *   recompute  TrustEngine.recomputeTenant(tenant, now): the first run of a tenant (every day of
 *              the window is written to trust_daily_scores) and a second run 6 hours later (the
 *              steady state: only the last two days are rewritten).
 *
 * Per fleet size N (default 100, 250, 500, 1000; one tenant each) the seed is N ACTIVE agents ×
 * 7 days × 200 spans/day (generate_series: 40% `svc.task` with token attributes and 10% errors,
 * 30% `svc.tool` with 10% errors, 30% other names with 3% errors, traces of 5 spans so that some
 * errors are recovered, a `service.version` change on day 4), 20 of 24 presence hours a day,
 * 4 decisions and 10 policy evaluations per agent and day. The table prints seconds, seconds per
 * agent and the ratio to N = 100 (linear growth ⇒ ratio ≈ N/100), and the baseline likewise.
 * A fresh database is created (127.0.0.1 only) and dropped at the end.
 *
 *   npm run bench:trust -- [--agents 100,250,500,1000] [--database-url postgres://postgres@127.0.0.1:5432/postgres]
 *   (environment: BENCH_AGENTS, BENCH_DATABASE_URL)
 */
import { sql } from 'drizzle-orm';
import { runMain } from './relay/cli.js';
import { DAY_MS, SPANS_PER_DAY, insertSpans, printHeader, printTable, seedActivity, seedFleet, timed, timedRecomputes, timeCells, trustBenchArgs, withTrustBench } from './trust-common.js';

const DAYS = 7;

interface Row {
  n: number;
  spans: number;
  seedS: number;
  baselineS: number;
  firstS: number;
  steadyS: number;
}

async function main(): Promise<number> {
  const { sizes, adminUrl } = trustBenchArgs('100,250,500,1000');
  return withTrustBench(adminUrl, async (bench) => {
    const { exec, now } = bench;
    const from = new Date(now.getTime() - DAYS * DAY_MS).toISOString();
    printHeader('bench/trust', bench, `${DAYS} days × ${SPANS_PER_DAY} spans/day per agent; now = ${now.toISOString()}`);
    const results: Row[] = [];
    for (const n of sizes) {
      const seedStart = performance.now();
      const tenantId = await seedFleet(exec, n, from);
      // Spans: per agent, day and index i in 0..199; traces of 5 consecutive spans.
      await exec(sql`
        ${insertSpans(tenantId, sql`day`, sql`case when day < 4 then '1.0' else '1.1' end`)}
        from devices d
        cross join generate_series(0, ${DAYS - 1}::int) day
        cross join generate_series(0, ${SPANS_PER_DAY - 1}::int) i
        cross join lateral (select ${from}::timestamptz + day * interval '1 day' + i * interval '7 minutes' as ts) t
        where d.tenant_id = ${tenantId}`);
      await seedActivity(exec, tenantId, from, DAYS, DAYS * 24);
      await exec(sql`vacuum analyze`);
      const seedS = (performance.now() - seedStart) / 1000;

      // Baseline: best of 3 (warm cache), like the recompute's own reads after seeding.
      const baselines: number[] = [];
      for (let r = 0; r < 3; r++) {
        baselines.push((await timed(() => exec(sql`select device_id, count(*), sum(duration_us) from telemetry_spans where tenant_id = ${tenantId} group by device_id`)))[0]);
      }
      const { firstS, steadyS } = await timedRecomputes(bench, tenantId, n);
      const [{ spans }] = (await exec<{ spans: number }>(sql`select count(*)::int as spans from telemetry_spans where tenant_id = ${tenantId}`)) as [{ spans: number }];
      results.push({ n, spans, seedS, baselineS: Math.min(...baselines), firstS, steadyS });
      console.log(`  N=${n}: seeded ${spans.toLocaleString('en-US')} spans in ${seedS.toFixed(1)} s`);
    }
    const ref = results[0]!;
    printTable(
      'agents      spans   first run s  s/agent  ratio   steady run s  s/agent  ratio   baseline s  ratio   first/baseline',
      results.map((r) => [
        String(r.n).padStart(6),
        r.spans.toLocaleString('en-US').padStart(10),
        ...timeCells(r.firstS, 13, r.n, ref.firstS),
        ...timeCells(r.steadyS, 14, r.n, ref.steadyS),
        r.baselineS.toFixed(3).padStart(12),
        (r.baselineS / ref.baselineS).toFixed(2).padStart(6),
        (r.firstS / r.baselineS).toFixed(1).padStart(16),
      ]),
      ref.n,
    );
    return 0;
  });
}

runMain(main);
