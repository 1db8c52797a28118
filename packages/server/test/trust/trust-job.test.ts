/**
 * The cluster-wide trust recompute job (contract §3.9 "recomputed periodically", §8; jobs/
 * cluster-schedule.ts): the `scheduled_jobs` lease, on the database clock, is won by exactly one
 * of the instances racing for a due run, so the job runs once per interval however many instances
 * poll; the run lock (session advisory lock + in-process guard) keeps a run that outlasts the
 * interval from being overlapped. On PostgreSQL the racers use separate pools (real concurrent
 * sessions); on PGlite they share the one connection.
 */
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database, type Db } from '../../src/db/client.js';
import { claimRun, scheduleClusterJob, withJobLock } from '../../src/jobs/cluster-schedule.js';
import { TRUST_RECOMPUTE_JOB } from '../../src/jobs/trust-recompute.js';
import { activeAgent, newOwner } from '../../testing/flows.js';
import { backend, startApp, type TestApp } from '../../testing/harness.js';
import { sleep, until } from '../../testing/until.js';

describe('cluster-wide trust recompute job', () => {
  let a: TestApp;
  let b: TestApp;
  /** A second database handle (its own pool on PostgreSQL; the same PGlite otherwise). */
  let second: Database | undefined;
  let db2: Db;

  const exec = async <T = Record<string, unknown>>(q: ReturnType<typeof sql>) => ((await a.app.parley.database.db.execute(q)) as unknown as { rows: T[] }).rows;

  beforeAll(async () => {
    const env = { RATE_LIMIT_ENROLL_PER_10MIN: '1000', JOB_POLL_INTERVAL_MS: '40', TRUST_RECOMPUTE_INTERVAL_HOURS: '1' };
    a = await startApp({ env });
    const raw = a.app.parley.database.raw;
    b = raw.kind === 'pg' ? await startApp({ env, databaseUrl: raw.url }) : await startApp({ env, overrides: { database: a.app.parley.database, keepDatabase: true } });
    if (raw.kind === 'pg') second = await openDatabase({ databaseUrl: raw.url, poolSize: 10 });
    db2 = second?.db ?? a.app.parley.database.db;
  });
  afterAll(async () => {
    await second?.close();
    await b?.close();
    await a?.close();
  });

  it('claimRun: exactly one of many racing callers wins a due run, on the database clock; none before the next is due', async () => {
    const dbs = [a.app.parley.database.db, db2];
    const race = () => Promise.all(Array.from({ length: 8 }, (_, i) => claimRun(dbs[i % 2]!, 'race-test', 60_000, `instance-${i}`)));
    const first = await race();
    expect(first.filter(Boolean)).toHaveLength(1);
    const [row] = await exec<{ last_run_by: string; gap_ms: number; age_ms: number }>(
      sql`select last_run_by, extract(epoch from next_run_at - last_run_at)::float8 * 1000 as gap_ms, extract(epoch from now() - last_run_at)::float8 * 1000 as age_ms
          from scheduled_jobs where name = 'race-test'`,
    );
    expect(row!.last_run_by).toBe(`instance-${first.indexOf(true)}`);
    // next_run_at = the database's now() + interval, last_run_at = the database's now().
    expect(Number(row!.gap_ms)).toBe(60_000);
    expect(Number(row!.age_ms)).toBeGreaterThanOrEqual(0);
    expect(Number(row!.age_ms)).toBeLessThan(10_000);
    expect((await race()).filter(Boolean)).toHaveLength(0);
    // Due again once the database clock passes next_run_at (moved back here instead of waiting a minute).
    await exec(sql`update scheduled_jobs set next_run_at = now() - interval '1 millisecond' where name = 'race-test'`);
    expect((await race()).filter(Boolean)).toHaveLength(1);
    // A job seen for the first time with a first delay is not due yet: its row is due one delay after the database's now().
    expect(await claimRun(db2, 'later-test', 60_000, 'x', 60_000)).toBe(false);
    const [later] = await exec<{ due_in_ms: number }>(sql`select extract(epoch from next_run_at - now())::float8 * 1000 as due_in_ms from scheduled_jobs where name = 'later-test'`);
    expect(Number(later!.due_in_ms)).toBeGreaterThan(50_000);
    expect(Number(later!.due_in_ms)).toBeLessThanOrEqual(60_000);
    await exec(sql`update scheduled_jobs set next_run_at = now() - interval '1 millisecond' where name = 'later-test'`);
    expect(await claimRun(db2, 'later-test', 60_000, 'x', 60_000)).toBe(true);
  });

  it('a run longer than the interval is never overlapped by the next one, whichever instance polls', async () => {
    const intervalMs = 100;
    let running = 0;
    let maxRunning = 0;
    const spans: { start: number; end: number }[] = [];
    const run = async () => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      const start = Date.now();
      await sleep(350);
      spans.push({ start, end: Date.now() });
      running--;
      return { runs: spans.length };
    };
    const errors: unknown[] = [];
    const stops = [
      scheduleClusterJob({ db: a.app.parley.database.db, name: 'long-test', intervalMs, pollMs: 15, run, onError: (e) => errors.push(e), instanceId: 'long-a' }),
      scheduleClusterJob({ db: db2, name: 'long-test', intervalMs, pollMs: 15, run, onError: (e) => errors.push(e), instanceId: 'long-b' }),
    ];
    await sleep(1600);
    await Promise.all(stops.map((s) => s()));
    expect(errors).toEqual([]);
    expect(maxRunning).toBe(1);
    expect(spans.length).toBeGreaterThanOrEqual(2);
    for (let i = 1; i < spans.length; i++) expect(spans[i]!.start).toBeGreaterThanOrEqual(spans[i - 1]!.end);
  });

  it.skipIf(backend !== 'postgres')('withJobLock: skipped while another session holds the job lock, run once it is released', async () => {
    const raw = a.app.parley.database.raw;
    if (raw.kind !== 'pg') throw new Error('postgres only');
    const other = new pg.Client({ connectionString: raw.url });
    await other.connect();
    try {
      await other.query(`select pg_advisory_lock(hashtextextended('job:lock-test', 0))`);
      let calls = 0;
      const fn = async () => ++calls;
      expect(await withJobLock(db2, 'lock-test', fn)).toEqual({ ran: false });
      expect(calls).toBe(0);
      await other.query(`select pg_advisory_unlock(hashtextextended('job:lock-test', 0))`);
      expect(await withJobLock(db2, 'lock-test', fn)).toEqual({ ran: true, value: 1 });
      // Released after the run: the other session can take it at once.
      expect((await other.query(`select pg_try_advisory_lock(hashtextextended('job:lock-test', 0)) as ok`)).rows[0].ok).toBe(true);
    } finally {
      await other.end();
    }
  });

  it('two polling loops on the same database run the job once per interval', async () => {
    const intervalMs = 400;
    const claims: { at: number; by: string }[] = [];
    const run = (db: Db) => async () => {
      const rows = ((await db.execute(sql`select last_run_at, last_run_by from scheduled_jobs where name = 'loop-test'`)) as unknown as { rows: { last_run_at: unknown; last_run_by: string }[] }).rows;
      claims.push({ at: new Date(rows[0]!.last_run_at as string).getTime(), by: rows[0]!.last_run_by });
      await sleep(30);
      return { runs: claims.length };
    };
    const errors: unknown[] = [];
    const started = Date.now();
    const stops = [
      scheduleClusterJob({ db: a.app.parley.database.db, name: 'loop-test', intervalMs, pollMs: 15, run: run(a.app.parley.database.db), onError: (e) => errors.push(e), instanceId: 'loop-a' }),
      scheduleClusterJob({ db: db2, name: 'loop-test', intervalMs, pollMs: 15, run: run(db2), onError: (e) => errors.push(e), instanceId: 'loop-b' }),
    ];
    await sleep(2100);
    await Promise.all(stops.map((s) => s()));
    const elapsed = Date.now() - started;
    expect(errors).toEqual([]);
    // Once per interval: no two runs closer than the interval, and about elapsed / interval runs in all.
    for (let i = 1; i < claims.length; i++) expect(claims[i]!.at - claims[i - 1]!.at).toBeGreaterThanOrEqual(intervalMs);
    expect(claims.length).toBeGreaterThanOrEqual(3);
    expect(claims.length).toBeLessThanOrEqual(Math.floor(elapsed / intervalMs) + 1);
    const [row] = await exec<{ last_result: { ok: boolean; runs: number; duration_ms: number; instance: string } }>(sql`select last_result from scheduled_jobs where name = 'loop-test'`);
    expect(row!.last_result).toMatchObject({ ok: true, runs: claims.length, instance: claims[claims.length - 1]!.by });
    expect(row!.last_result.duration_ms).toBeGreaterThanOrEqual(0);
  });

  it('two app instances: one trust recompute per due run, recorded in scheduled_jobs', async () => {
    const owner = await newOwner(a, 'Job');
    const agent = await activeAgent(a, owner);
    // Both apps poll every 40 ms; their first poll created the row due one interval (1 h) later.
    await until('the job row', async () => (await exec(sql`select 1 from scheduled_jobs where name = ${TRUST_RECOMPUTE_JOB}`))[0]);
    await sleep(300);
    const snapshotTimes = async () =>
      (await exec<{ computed_at: unknown }>(sql`select distinct computed_at from trust_snapshots where device_id = ${agent.deviceId}`)).map((r) => new Date(r.computed_at as string).getTime());
    expect(await snapshotTimes()).toEqual([]);

    for (const round of [1, 2]) {
      await exec(sql`update scheduled_jobs set next_run_at = now(), last_result = null where name = ${TRUST_RECOMPUTE_JOB}`);
      const result = await until('a recompute', async () => {
        const [r] = await exec<{ last_result: Record<string, unknown> | null; last_run_by: string }>(sql`select last_result, last_run_by from scheduled_jobs where name = ${TRUST_RECOMPUTE_JOB}`);
        return r?.last_result ? r : undefined;
      });
      expect(result.last_result).toMatchObject({ ok: true, failed_tenants: 0 });
      expect(result.last_result!.agents).toBeGreaterThanOrEqual(1);
      // Let both instances poll many more times: nothing else is due.
      await sleep(400);
      expect(await snapshotTimes()).toHaveLength(round);
      const [{ n }] = (await exec<{ n: number }>(sql`select count(*)::int as n from trust_snapshots where device_id = ${agent.deviceId}`)) as [{ n: number }];
      expect(n).toBe(3 * round);
    }
  });
});
