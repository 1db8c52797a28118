/**
 * What the two trust recompute benchmarks (bench/trust.ts, bench/trust-scale.ts) share: their
 * command line, the fresh PostgreSQL database with the TrustEngine on it, the seed of a fleet
 * (tenant, agents, the span mix, presence, decisions, policy evaluations), the two timed
 * recomputes and the results table.
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { sql, type SQL } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import { openDatabase, type Db } from '../packages/server/src/db/client.js';
import { runMigrations } from '../packages/server/src/db/migrate.js';
import { TrustEngine } from '../packages/server/src/modules/trust/engine.js';
import { assertLoopback } from './relay/cli.js';
import { createDatabase } from './relay/setup.js';

export const DAY_MS = 86_400_000;
export const SPANS_PER_DAY = 200;

/**
 * `--agents a,b,c` (else BENCH_AGENTS, else `defaultAgents`): the fleet sizes, positive integers;
 * `--database-url` (else BENCH_DATABASE_URL): the admin URL, loopback only. Throws on a bad value.
 */
export function trustBenchArgs(defaultAgents: string): { sizes: number[]; adminUrl: string } {
  const { values: argv } = parseArgs({ options: { agents: { type: 'string' }, 'database-url': { type: 'string' } } });
  const sizes = (argv.agents ?? process.env.BENCH_AGENTS ?? defaultAgents).split(',').map((s) => Number(s.trim()));
  const adminUrl = argv['database-url'] ?? process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  for (const n of sizes) if (!Number.isInteger(n) || n < 1) throw new Error(`--agents: positive integers, got ${sizes.join(',')}`);
  assertLoopback(adminUrl);
  return { sizes, adminUrl };
}

/** Run `q` on the bench database and return its rows. */
export type Exec = <T>(q: SQL) => Promise<T[]>;

export interface TrustBench {
  db: Db;
  exec: Exec;
  engine: TrustEngine;
  /** Today 18:00 UTC. */
  now: Date;
  /** `PostgreSQL x.y (…)`, without the platform. */
  pgVersion: string;
}

const silent = { info: () => undefined, warn: () => undefined, error: () => undefined } as unknown as Pick<FastifyBaseLogger, 'info' | 'warn' | 'error'>;

/** A fresh migrated database under `adminUrl` and a TrustEngine on it for `body`; closed and dropped after it. */
export async function withTrustBench<T>(adminUrl: string, body: (bench: TrustBench) => Promise<T>): Promise<T> {
  const created = await createDatabase(adminUrl);
  const database = await openDatabase({ databaseUrl: created.url, poolSize: 4 });
  try {
    await runMigrations(database);
    const { db } = database;
    const exec: Exec = async <T>(q: SQL) => ((await db.execute(q)) as unknown as { rows: T[] }).rows;
    const [{ version }] = (await exec<{ version: string }>(sql`select version()`)) as [{ version: string }];
    return await body({
      db,
      exec,
      engine: new TrustEngine({ db, log: silent }),
      now: new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS + 18 * 3_600_000),
      pgVersion: version.split(' on ')[0]!,
    });
  } finally {
    await database.close();
    await created.drop();
  }
}

/** Print the bench's header: `name`, the machine, then the PostgreSQL version and `detail`. */
export function printHeader(name: string, bench: TrustBench, detail: string): void {
  console.log(`${name} — ${os.cpus().length} CPUs, ${os.cpus()[0]?.model ?? ''}, Node ${process.version}`);
  console.log(`${bench.pgVersion}; ${detail}`);
}

/** Seconds `f` took, and its result. */
export async function timed<T>(f: () => Promise<T>): Promise<[number, T]> {
  const s = performance.now();
  const r = await f();
  return [(performance.now() - s) / 1000, r];
}

/** A new tenant `bench-<n>` with `n` ACTIVE agents created and activated one day before `from`; its id. */
export async function seedFleet(exec: Exec, n: number, from: string): Promise<string> {
  const tenantId = randomUUID();
  await exec(sql`insert into tenants (id, name) values (${tenantId}, ${`bench-${n}`})`);
  await exec(sql`
    insert into devices (id, tenant_id, kind, status, identity_public_key, ephemeral_public_key, fingerprint, name, created_at, activated_at)
    select gen_random_uuid(), ${tenantId}, 'agent', 'ACTIVE', 'k', 'k', 'f', 'agent-' || g, ${from}::timestamptz - interval '1 day',
           ${from}::timestamptz - interval '1 day'
    from generate_series(1, ${n}::int) g`);
  return tenantId;
}

/**
 * The head of the span insert, up to and including the select list: span `i` (0 … SPANS_PER_DAY − 1)
 * of agent `d.id` starting at `ts`, traces of 5 consecutive spans per agent and `day`; 40%
 * `svc.task` with token attributes and 10% errors, 30% `svc.tool` with 10% errors, 30% other names
 * with 3% errors. The caller appends the FROM that binds `d.id`, `i` and `ts`.
 */
export function insertSpans(tenantId: string, day: SQL, serviceVersion: SQL): SQL {
  return sql`
    insert into telemetry_spans (id, tenant_id, device_id, trace_id, span_id, name, kind, start_time, end_time, duration_us, status_code, attributes, resource)
    select gen_random_uuid(), ${tenantId}, d.id, md5(d.id::text || ${day} || (i / 5)), substr(md5(d.id::text || ${day} || i), 1, 16),
           case when i % 10 < 4 then 'svc.task' when i % 10 < 7 then 'svc.tool' when i % 10 < 9 then 'llm.call' else 'http.request' end,
           1, ts, ts + interval '5 milliseconds', 5000 + (i % 7) * 1000,
           case when i % 10 < 4 then (case when i % 50 < 2 then 2 else 0 end)
                when i % 10 < 7 then (case when i % 100 between 4 and 6 then 2 else 0 end)
                else (case when i % 100 = 97 then 2 else 0 end) end,
           case when i % 10 < 4 then jsonb_build_object('gen_ai.usage.input_tokens', 200 + i, 'gen_ai.usage.output_tokens', 50 + i % 13) else '{}'::jsonb end,
           jsonb_build_object('service.name', 'agent', 'service.version', ${serviceVersion})`;
}

/**
 * The tenant's other trust sources from `from` on: presence in the first 20 of every 24 of
 * `presenceHours` hours, and per agent and each of `days` days 4 decisions (one expired) and 10
 * policy evaluations (one held).
 */
export async function seedActivity(exec: Exec, tenantId: string, from: string, days: number, presenceHours: number): Promise<void> {
  await exec(sql`
    insert into device_presence (tenant_id, device_id, hour)
    select ${tenantId}, d.id, ${from}::timestamptz + h * interval '1 hour'
    from devices d cross join generate_series(0, ${presenceHours - 1}::int) h
    where d.tenant_id = ${tenantId} and h % 24 < 20`);
  await exec(sql`
    insert into decisions (id, tenant_id, device_id, title, options, status, created_by, created_at, resolved_at)
    select gen_random_uuid(), ${tenantId}, d.id, 'q', '[]'::jsonb, case when k = 3 then 'expired' else 'approved' end, 'bench',
           ${from}::timestamptz + day * interval '1 day' + k * interval '3 hours',
           ${from}::timestamptz + day * interval '1 day' + k * interval '3 hours' + (k + 1) * interval '4 minutes'
    from devices d cross join generate_series(0, ${days - 1}::int) day cross join generate_series(0, 3) k
    where d.tenant_id = ${tenantId}`);
  await exec(sql`
    insert into policy_evaluations (id, tenant_id, subject_kind, subject_id, sender_device_id, outcome, duration_us, created_at)
    select gen_random_uuid(), ${tenantId}, 'room_envelope', gen_random_uuid(), d.id, case when k = 0 then 'hold' else 'allow' end, 4,
           ${from}::timestamptz + day * interval '1 day' + k * interval '1 hour'
    from devices d cross join generate_series(0, ${days - 1}::int) day cross join generate_series(0, 9) k
    where d.tenant_id = ${tenantId}`);
}

/**
 * Timed: the tenant's first recompute at `bench.now` and a steady one 6 hours later; throws
 * unless the tenant of `n` agents then has 6 snapshots per agent.
 */
export async function timedRecomputes(
  bench: TrustBench,
  tenantId: string,
  n: number,
): Promise<{ firstS: number; steadyS: number; first: Awaited<ReturnType<TrustEngine['recomputeTenant']>> }> {
  const [firstS, first] = await timed(() => bench.engine.recomputeTenant(tenantId, bench.now));
  const [steadyS] = await timed(() => bench.engine.recomputeTenant(tenantId, new Date(bench.now.getTime() + 6 * 3_600_000)));
  const snaps = (await bench.exec<{ n: number }>(sql`select count(*)::int as n from trust_snapshots where tenant_id = ${tenantId}`))[0]!.n;
  if (snaps !== 6 * n) throw new Error(`expected ${6 * n} snapshots, found ${snaps}`);
  return { firstS, steadyS, first };
}

/** The cells `seconds` (`width` wide), seconds per agent of `n`, and the ratio to `refSeconds` (the first size's). */
export function timeCells(seconds: number, width: number, n: number, refSeconds: number): string[] {
  return [seconds.toFixed(2).padStart(width), (seconds / n).toFixed(4).padStart(8), (seconds / refSeconds).toFixed(2).padStart(6)];
}

/** Print the results table: a blank line, `header`, one line per row of cells, the note on ratios to the first size `refN`. */
export function printTable(header: string, rows: string[][], refN: number): void {
  console.log('');
  console.log(header);
  for (const cells of rows) console.log(cells.join(' '));
  console.log(`(ratio = time / time at N=${refN}; linear growth ⇒ ratio ≈ N/${refN})`);
}
