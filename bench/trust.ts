/**
 * bench/trust: how the trust recompute (SPEC §3.9; modules/trust/engine.ts) grows with the fleet,
 * on PostgreSQL, next to a baseline measured in the same run (DESIGN §9):
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
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { sql } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import { openDatabase } from '../packages/server/src/db/client.js';
import { runMigrations } from '../packages/server/src/db/migrate.js';
import { TrustEngine } from '../packages/server/src/modules/trust/engine.js';
import { assertLoopback, runMain } from './relay/cli.js';
import { createDatabase } from './relay/setup.js';

const DAY_MS = 86_400_000;
const SPANS_PER_DAY = 200;
const DAYS = 7;

const { values: argv } = parseArgs({ options: { agents: { type: 'string' }, 'database-url': { type: 'string' } } });
const sizes = (argv.agents ?? process.env.BENCH_AGENTS ?? '100,250,500,1000').split(',').map((s) => Number(s.trim()));
const adminUrl = argv['database-url'] ?? process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const silent = { info: () => undefined, warn: () => undefined, error: () => undefined } as unknown as Pick<FastifyBaseLogger, 'info' | 'warn' | 'error'>;

interface Row {
  n: number;
  spans: number;
  seedS: number;
  baselineS: number;
  firstS: number;
  steadyS: number;
}

async function main(): Promise<number> {
  for (const n of sizes) if (!Number.isInteger(n) || n < 1) throw new Error(`--agents: positive integers, got ${sizes.join(',')}`);
  assertLoopback(adminUrl);
  const created = await createDatabase(adminUrl);
  const database = await openDatabase({ databaseUrl: created.url, poolSize: 4 });
  try {
    await runMigrations(database);
    const { db } = database;
    const exec = async <T>(q: ReturnType<typeof sql>) => ((await db.execute(q)) as unknown as { rows: T[] }).rows;
    const engine = new TrustEngine({ db, log: silent });
    const now = new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS + 18 * 3_600_000);
    const from = new Date(now.getTime() - DAYS * DAY_MS);
    const [{ version }] = (await exec<{ version: string }>(sql`select version()`)) as [{ version: string }];
    console.log(`bench/trust — ${os.cpus().length} CPUs, ${os.cpus()[0]?.model ?? ''}, Node ${process.version}`);
    console.log(`${version.split(' on ')[0]}; ${DAYS} days × ${SPANS_PER_DAY} spans/day per agent; now = ${now.toISOString()}`);
    const results: Row[] = [];
    for (const n of sizes) {
      const tenantId = randomUUID();
      const seedStart = performance.now();
      await exec(sql`insert into tenants (id, name) values (${tenantId}, ${`bench-${n}`})`);
      await exec(sql`
        insert into devices (id, tenant_id, kind, status, identity_public_key, ephemeral_public_key, fingerprint, name, created_at, activated_at)
        select gen_random_uuid(), ${tenantId}, 'agent', 'ACTIVE', 'k', 'k', 'f', 'agent-' || g, ${from.toISOString()}::timestamptz - interval '1 day',
               ${from.toISOString()}::timestamptz - interval '1 day'
        from generate_series(1, ${n}::int) g`);
      // Spans: per agent, day and index i in 0..199; traces of 5 consecutive spans.
      await exec(sql`
        insert into telemetry_spans (id, tenant_id, device_id, trace_id, span_id, name, kind, start_time, end_time, duration_us, status_code, attributes, resource)
        select gen_random_uuid(), ${tenantId}, d.id, md5(d.id::text || day || (i / 5)), substr(md5(d.id::text || day || i), 1, 16),
               case when i % 10 < 4 then 'svc.task' when i % 10 < 7 then 'svc.tool' when i % 10 < 9 then 'llm.call' else 'http.request' end,
               1, ts, ts + interval '5 milliseconds', 5000 + (i % 7) * 1000,
               case when i % 10 < 4 then (case when i % 50 < 2 then 2 else 0 end)
                    when i % 10 < 7 then (case when i % 100 between 4 and 6 then 2 else 0 end)
                    else (case when i % 100 = 97 then 2 else 0 end) end,
               case when i % 10 < 4 then jsonb_build_object('gen_ai.usage.input_tokens', 200 + i, 'gen_ai.usage.output_tokens', 50 + i % 13) else '{}'::jsonb end,
               jsonb_build_object('service.name', 'agent', 'service.version', case when day < 4 then '1.0' else '1.1' end)
        from devices d
        cross join generate_series(0, ${DAYS - 1}::int) day
        cross join generate_series(0, ${SPANS_PER_DAY - 1}::int) i
        cross join lateral (select ${from.toISOString()}::timestamptz + day * interval '1 day' + i * interval '7 minutes' as ts) t
        where d.tenant_id = ${tenantId}`);
      await exec(sql`
        insert into device_presence (tenant_id, device_id, hour)
        select ${tenantId}, d.id, ${from.toISOString()}::timestamptz + h * interval '1 hour'
        from devices d cross join generate_series(0, ${DAYS * 24 - 1}::int) h
        where d.tenant_id = ${tenantId} and h % 24 < 20`);
      await exec(sql`
        insert into decisions (id, tenant_id, device_id, title, options, status, created_by, created_at, resolved_at)
        select gen_random_uuid(), ${tenantId}, d.id, 'q', '[]'::jsonb, case when k = 3 then 'expired' else 'approved' end, 'bench',
               ${from.toISOString()}::timestamptz + day * interval '1 day' + k * interval '3 hours',
               ${from.toISOString()}::timestamptz + day * interval '1 day' + k * interval '3 hours' + (k + 1) * interval '4 minutes'
        from devices d cross join generate_series(0, ${DAYS - 1}::int) day cross join generate_series(0, 3) k
        where d.tenant_id = ${tenantId}`);
      await exec(sql`
        insert into policy_evaluations (id, tenant_id, subject_kind, subject_id, sender_device_id, outcome, duration_us, created_at)
        select gen_random_uuid(), ${tenantId}, 'room_envelope', gen_random_uuid(), d.id, case when k = 0 then 'hold' else 'allow' end, 4,
               ${from.toISOString()}::timestamptz + day * interval '1 day' + k * interval '1 hour'
        from devices d cross join generate_series(0, ${DAYS - 1}::int) day cross join generate_series(0, 9) k
        where d.tenant_id = ${tenantId}`);
      await exec(sql`vacuum analyze`);
      const seedS = (performance.now() - seedStart) / 1000;

      const timed = async (f: () => Promise<unknown>) => {
        const s = performance.now();
        await f();
        return (performance.now() - s) / 1000;
      };
      // Baseline: best of 3 (warm cache), like the recompute's own reads after seeding.
      const baselines: number[] = [];
      for (let r = 0; r < 3; r++) {
        baselines.push(await timed(() => exec(sql`select device_id, count(*), sum(duration_us) from telemetry_spans where tenant_id = ${tenantId} group by device_id`)));
      }
      const firstS = await timed(() => engine.recomputeTenant(tenantId, now));
      const steadyS = await timed(() => engine.recomputeTenant(tenantId, new Date(now.getTime() + 6 * 3_600_000)));
      const [{ spans }] = (await exec<{ spans: number }>(sql`select count(*)::int as spans from telemetry_spans where tenant_id = ${tenantId}`)) as [{ spans: number }];
      const snaps = (await exec<{ n: number }>(sql`select count(*)::int as n from trust_snapshots where tenant_id = ${tenantId}`))[0]!.n;
      if (snaps !== 6 * n) throw new Error(`expected ${6 * n} snapshots, found ${snaps}`);
      results.push({ n, spans, seedS, baselineS: Math.min(...baselines), firstS, steadyS });
      console.log(`  N=${n}: seeded ${spans.toLocaleString('en-US')} spans in ${seedS.toFixed(1)} s`);
    }
    const ref = results[0]!;
    console.log('');
    console.log('agents      spans   first run s  s/agent  ratio   steady run s  s/agent  ratio   baseline s  ratio   first/baseline');
    for (const r of results) {
      console.log(
        [
          String(r.n).padStart(6),
          r.spans.toLocaleString('en-US').padStart(10),
          r.firstS.toFixed(2).padStart(13),
          (r.firstS / r.n).toFixed(4).padStart(8),
          (r.firstS / ref.firstS).toFixed(2).padStart(6),
          r.steadyS.toFixed(2).padStart(14),
          (r.steadyS / r.n).toFixed(4).padStart(8),
          (r.steadyS / ref.steadyS).toFixed(2).padStart(6),
          r.baselineS.toFixed(3).padStart(12),
          (r.baselineS / ref.baselineS).toFixed(2).padStart(6),
          (r.firstS / r.baselineS).toFixed(1).padStart(16),
        ].join(' '),
      );
    }
    console.log(`(ratio = time / time at N=${ref.n}; linear growth ⇒ ratio ≈ N/${ref.n})`);
    return 0;
  } finally {
    await database.close();
    await created.drop();
  }
}

runMain(main);
