/**
 * bench/trust-scale: the trust recompute at fleet scale with daily span roll-ups (issue 15 item 4;
 * SPEC §3.9; modules/trust/rollups.ts), on PostgreSQL. Target: 10,000 agents × 30 days × 200
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
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { sql } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import { openDatabase } from '../packages/server/src/db/client.js';
import { runMigrations } from '../packages/server/src/db/migrate.js';
import { addDays, dayStart, utcDay } from '../packages/server/src/modules/trust/days.js';
import { TrustEngine } from '../packages/server/src/modules/trust/engine.js';
import { pruneSpans, rollUpDirtyDays } from '../packages/server/src/modules/trust/rollups.js';
import { assertLoopback, runMain } from './relay/cli.js';
import { createDatabase } from './relay/setup.js';

const DAY_MS = 86_400_000;
const SPANS_PER_DAY = 200;
const DAYS = 30;
const CHECKED_AGENTS = 50;
const AGENT_CHUNK = 1000;

const { values: argv } = parseArgs({ options: { agents: { type: 'string' }, 'database-url': { type: 'string' } } });
const sizes = (argv.agents ?? process.env.BENCH_AGENTS ?? '1000,3000,10000').split(',').map((s) => Number(s.trim()));
/** BENCH_PRUNE=0: keep the template's raw spans (step 3 skipped; see docs/performance.md). */
const skipPrune = process.env.BENCH_PRUNE === '0';
const adminUrl = argv['database-url'] ?? process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const silent = { info: () => undefined, warn: () => undefined, error: () => undefined } as unknown as Pick<FastifyBaseLogger, 'info' | 'warn' | 'error'>;

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
    const today = utcDay(now);
    const template = addDays(today, -DAYS);
    const yesterday = addDays(today, -1);
    const [{ version }] = (await exec<{ version: string }>(sql`select version()`)) as [{ version: string }];
    console.log(`bench/trust-scale — ${os.cpus().length} CPUs, ${os.cpus()[0]?.model ?? ''}, Node ${process.version}`);
    console.log(`${version.split(' on ')[0]}; ${DAYS} closed days + today × ${SPANS_PER_DAY} spans/day per agent; now = ${now.toISOString()}`);
    const timed = async <T>(f: () => Promise<T>): Promise<[number, T]> => {
      const s = performance.now();
      const r = await f();
      return [(performance.now() - s) / 1000, r];
    };
    const results: Row[] = [];
    for (const n of sizes) {
      const tenantId = randomUUID();
      const seedStart = performance.now();
      const since = dayStart(addDays(template, -1)).toISOString();
      await exec(sql`insert into tenants (id, name) values (${tenantId}, ${`bench-${n}`})`);
      await exec(sql`
        insert into devices (id, tenant_id, kind, status, identity_public_key, ephemeral_public_key, fingerprint, name, created_at, activated_at)
        select gen_random_uuid(), ${tenantId}, 'agent', 'ACTIVE', 'k', 'k', 'f', 'agent-' || g, ${since}::timestamptz, ${since}::timestamptz
        from generate_series(1, ${n}::int) g`);
      const ids = (await exec<{ id: string }>(sql`select id from devices where tenant_id = ${tenantId} order by id`)).map((r) => r.id);
      /** Raw spans of `day` for `devices` (indices i < maxI), `service.version` = ver; one statement per chunk of agents. */
      const spans = async (day: string, devices: readonly string[], ver: string, maxI = SPANS_PER_DAY) => {
        for (let c = 0; c < devices.length; c += AGENT_CHUNK) {
          await exec(sql`
            insert into telemetry_spans (id, tenant_id, device_id, trace_id, span_id, name, kind, start_time, end_time, duration_us, status_code, attributes, resource)
            select gen_random_uuid(), ${tenantId}, d.id, md5(d.id::text || ${day} || (i / 5)), substr(md5(d.id::text || ${day} || i), 1, 16),
                   case when i % 10 < 4 then 'svc.task' when i % 10 < 7 then 'svc.tool' when i % 10 < 9 then 'llm.call' else 'http.request' end,
                   1, ts, ts + interval '5 milliseconds', 5000 + (i % 7) * 1000,
                   case when i % 10 < 4 then (case when i % 50 < 2 then 2 else 0 end)
                        when i % 10 < 7 then (case when i % 100 between 4 and 6 then 2 else 0 end)
                        else (case when i % 100 = 97 then 2 else 0 end) end,
                   case when i % 10 < 4 then jsonb_build_object('gen_ai.usage.input_tokens', 200 + i, 'gen_ai.usage.output_tokens', 50 + i % 13) else '{}'::jsonb end,
                   jsonb_build_object('service.name', 'agent', 'service.version', ${ver}::text)
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
      const from = dayStart(template).toISOString();
      await exec(sql`
        insert into device_presence (tenant_id, device_id, hour)
        select ${tenantId}, d.id, ${from}::timestamptz + h * interval '1 hour'
        from devices d cross join generate_series(0, ${DAYS * 24 + 17}::int) h
        where d.tenant_id = ${tenantId} and h % 24 < 20`);
      await exec(sql`
        insert into decisions (id, tenant_id, device_id, title, options, status, created_by, created_at, resolved_at)
        select gen_random_uuid(), ${tenantId}, d.id, 'q', '[]'::jsonb, case when k = 3 then 'expired' else 'approved' end, 'bench',
               ${from}::timestamptz + day * interval '1 day' + k * interval '3 hours',
               ${from}::timestamptz + day * interval '1 day' + k * interval '3 hours' + (k + 1) * interval '4 minutes'
        from devices d cross join generate_series(0, ${DAYS - 1}::int) day cross join generate_series(0, 3) k
        where d.tenant_id = ${tenantId}`);
      await exec(sql`
        insert into policy_evaluations (id, tenant_id, subject_kind, subject_id, sender_device_id, outcome, duration_us, created_at)
        select gen_random_uuid(), ${tenantId}, 'room_envelope', gen_random_uuid(), d.id, case when k = 0 then 'hold' else 'allow' end, 4,
               ${from}::timestamptz + day * interval '1 day' + k * interval '1 hour'
        from devices d cross join generate_series(0, ${DAYS - 1}::int) day cross join generate_series(0, 9) k
        where d.tenant_id = ${tenantId}`);
      await exec(sql`vacuum analyze`);
      const seedS = (performance.now() - seedStart) / 1000;
      const [{ rollups }] = (await exec<{ rollups: number }>(sql`select count(*)::int as rollups from telemetry_span_rollups where tenant_id = ${tenantId}`)) as [{ rollups: number }];
      const [{ raw }] = (await exec<{ raw: number }>(sql`select count(*)::int as raw from telemetry_spans where tenant_id = ${tenantId}`)) as [{ raw: number }];
      // 5. The recompute (re-rolls yesterday) and a steady run 6 h later.
      const [firstS, first] = await timed(() => engine.recomputeTenant(tenantId, now));
      const [steadyS] = await timed(() => engine.recomputeTenant(tenantId, new Date(now.getTime() + 6 * 3_600_000)));
      const snaps = (await exec<{ n: number }>(sql`select count(*)::int as n from trust_snapshots where tenant_id = ${tenantId}`))[0]!.n;
      if (snaps !== 6 * n) throw new Error(`expected ${6 * n} snapshots, found ${snaps}`);
      results.push({ n, seedS, rollupS, pruneS, rollups, rawSpans: raw, firstS, steadyS, rolledUp: first.rolledUpPairs });
      console.log(`  N=${n}: seeded in ${seedS.toFixed(1)} s (roll-up of one day ${rollupS.toFixed(2)} s, prune of one day ${pruneS.toFixed(2)} s; ${rollups.toLocaleString('en-US')} roll-up rows, ${raw.toLocaleString('en-US')} raw spans); recompute ${firstS.toFixed(2)} s (${first.rolledUpPairs} pairs re-rolled), steady ${steadyS.toFixed(2)} s`);
    }
    const ref = results[0]!;
    console.log('');
    console.log('agents  roll-up rows  raw spans  roll-up 1 day s  prune 1 day s  recompute s  s/agent  ratio  steady s  s/agent  ratio');
    for (const r of results) {
      console.log(
        [
          String(r.n).padStart(6),
          r.rollups.toLocaleString('en-US').padStart(13),
          r.rawSpans.toLocaleString('en-US').padStart(10),
          r.rollupS.toFixed(2).padStart(16),
          r.pruneS.toFixed(2).padStart(14),
          r.firstS.toFixed(2).padStart(12),
          (r.firstS / r.n).toFixed(4).padStart(8),
          (r.firstS / ref.firstS).toFixed(2).padStart(6),
          r.steadyS.toFixed(2).padStart(9),
          (r.steadyS / r.n).toFixed(4).padStart(8),
          (r.steadyS / ref.steadyS).toFixed(2).padStart(6),
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
