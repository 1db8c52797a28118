/**
 * Cluster-wide periodic jobs (design §8 "jobs"; docs/decisions.md "Trust engine"): a job that must
 * run once per interval across ALL instances sharing the database (the trust recompute, contract §3.9
 * every 6 h), not once per instance. Two mechanisms, both in the database:
 *
 * 1. The run lock: a SESSION-level advisory lock `pg_try_advisory_lock(hashtextextended('job:' ||
 *    name, 0))`, taken on a dedicated connection before claiming and held until the run has
 *    finished (released with `pg_advisory_unlock`, or by PostgreSQL when the connection dies). An
 *    instance that cannot take it skips the poll, so a run that lasts longer than the interval is
 *    never overlapped by the next one; the due run starts at the first poll after it ends.
 * 2. The lease: one row of the platform table `scheduled_jobs` per job name, on the DATABASE clock
 *    (`now()`, never an instance's clock, so skewed hosts agree on what is due):
 *
 *      insert into scheduled_jobs (name, next_run_at) values (name, now() + first delay) on conflict do nothing;
 *      update scheduled_jobs set next_run_at = now() + interval, last_run_at = now(), last_run_by = instance
 *        where name = name and next_run_at <= now() returning name;
 *
 *    The UPDATE succeeds for exactly one of the instances racing for a due run (PostgreSQL
 *    re-checks `next_run_at <= now()` on the row version committed by the winner, so the others
 *    update nothing); that instance runs the job and records `last_result`.
 *
 * A crash during a run skips that run (the next one is due one interval later): at most once per
 * interval, never twice. `scheduled_jobs` is a platform table without a grant for the application
 * role, so the lease statements run through crossTenant (the connection's own privileges).
 * Advisory locks are re-entrant within one session, and PGlite has only one: the run lock is
 * therefore also kept in process (per database client and job name), so several schedulers over
 * one PGlite (or one pool) in the same process never overlap either.
 */
import type { Metrics } from '../lib/metrics.js';
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import type { Db } from '../db/client.js';
import { crossTenant } from '../db/tenant.js';

/** A default instance id: host, process id and a random suffix (`last_run_by`). */
export const defaultInstanceId = (): string => `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;

const LEASE = 'scheduled_jobs is a platform table (cluster-wide job lease)';

/**
 * Claim the run of job `name` for `instanceId` if it is due on the database clock: true for
 * exactly one of the callers racing for the same due run, which moves `next_run_at` to
 * `now() + intervalMs`. The job's row is created on first sight with `next_run_at = now() +
 * firstRunAfterMs` (default 0: due at once).
 */
export async function claimRun(db: Db, name: string, intervalMs: number, instanceId: string, firstRunAfterMs = 0): Promise<boolean> {
  return crossTenant(db, LEASE, async (tx) => {
    await tx.execute(sql`insert into scheduled_jobs (name, next_run_at) values (${name}, now() + ${firstRunAfterMs}::float8 * interval '1 millisecond') on conflict do nothing`);
    const res = (await tx.execute(sql`
      update scheduled_jobs set next_run_at = now() + ${intervalMs}::float8 * interval '1 millisecond', last_run_at = now(), last_run_by = ${instanceId}
      where name = ${name} and next_run_at <= now()
      returning name`)) as unknown as { rows: unknown[] };
    return res.rows.length === 1;
  });
}

/** Record the outcome of a run (`last_result`, JSON) of job `name`. */
export async function recordResult(db: Db, name: string, result: Record<string, unknown>): Promise<void> {
  await crossTenant(db, LEASE, (tx) => tx.execute(sql`update scheduled_jobs set last_result = ${JSON.stringify(result)}::jsonb where name = ${name}`));
}

/** One connection that can hold a session-level lock: a query function and its release. */
interface Session {
  query(text: string, params: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
  release(broken?: boolean): void;
}

/** The driver client under a drizzle database (node-postgres pool, PGlite), if drizzle exposes it. */
const driverOf = (db: Db): unknown => (db as unknown as { $client?: unknown }).$client;

/** A dedicated session of `db`'s driver (a pooled client checked out of node-postgres' pool; PGlite's only connection), or null for an unknown driver. */
async function openSession(db: Db): Promise<Session | null> {
  const client = driverOf(db);
  if (client instanceof pg.Pool) {
    const c = await client.connect();
    return { query: (text, params) => c.query(text, params), release: (broken) => c.release(broken) };
  }
  if (client instanceof PGlite) return { query: (text, params) => client.query<Record<string, unknown>>(text, params), release: () => undefined };
  return null;
}

/** Job names running in this process, per database client (the in-process half of the run lock). */
const runningHere = new WeakMap<object, Set<string>>();

/**
 * Run `fn` while holding the run lock of job `name` (module comment, 1): the in-process guard,
 * then the session-level advisory lock. `{ran: true, value}`, or `{ran: false}` without calling
 * `fn` when another scheduler holds either. A driver without a dedicated session is guarded in
 * process only (the lease still applies).
 */
export async function withJobLock<T>(db: Db, name: string, fn: () => Promise<T>): Promise<{ ran: true; value: T } | { ran: false }> {
  const owner = (driverOf(db) ?? db) as object;
  let names = runningHere.get(owner);
  if (!names) runningHere.set(owner, (names = new Set()));
  if (names.has(name)) return { ran: false };
  names.add(name);
  try {
    return await withAdvisoryLock(db, name, fn);
  } finally {
    names.delete(name);
  }
}

/** The database half of {@link withJobLock}. */
async function withAdvisoryLock<T>(db: Db, name: string, fn: () => Promise<T>): Promise<{ ran: true; value: T } | { ran: false }> {
  const session = await openSession(db);
  if (!session) return { ran: true, value: await fn() };
  const key = `job:${name}`;
  let broken = false;
  try {
    const got = await session.query('select pg_try_advisory_lock(hashtextextended($1, 0)) as ok', [key]);
    if (got.rows[0]?.ok !== true) return { ran: false };
    try {
      return { ran: true, value: await fn() };
    } finally {
      try {
        await session.query('select pg_advisory_unlock(hashtextextended($1, 0))', [key]);
      } catch {
        broken = true; // dropping the connection releases the lock
      }
    }
  } finally {
    session.release(broken);
  }
}

/** Options of {@link scheduleClusterJob}. */
export interface ClusterJobOptions<R extends Record<string, unknown> | void> {
  db: Db;
  name: string;
  /** Period of the job across the cluster (ms). */
  intervalMs: number;
  /** How often this instance checks whether a run is due (ms; config.jobPollIntervalMs). */
  pollMs: number;
  /** The job; its result (counts) is stored in `last_result` with `duration_ms`. */
  run: () => Promise<R>;
  /** Errors of a poll or a run (never thrown). */
  onError: (err: unknown) => void;
  /** Counts this instance's runs by outcome (`parley_job_runs_total`). */
  metrics?: Metrics;
  /**
   * When the job's row does not exist yet (first deployment), its first run is due this long
   * after the first poll (default 0: at once).
   */
  firstRunAfterMs?: number;
  /** `last_run_by` of this instance (default {@link defaultInstanceId}). */
  instanceId?: string;
}

/**
 * Poll every `pollMs` (first poll one `pollMs` after start); each poll takes the job's run lock
 * ({@link withJobLock}; skipped while another instance runs the job) and, holding it, runs `run()`
 * when this instance wins {@link claimRun}. Polls of one instance never overlap (the next one is
 * scheduled after the previous poll and its run finished). After a run, `last_result` = `{ok:
 * true, duration_ms, ...result}` or `{ok: false, duration_ms, error}`. Returns `stop()`, which
 * cancels the timer and resolves once a run in progress has finished.
 */
export function scheduleClusterJob<R extends Record<string, unknown> | void>(o: ClusterJobOptions<R>): () => Promise<void> {
  const instanceId = o.instanceId ?? defaultInstanceId();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> = Promise.resolve();

  const runOnce = async () => {
    if (!(await claimRun(o.db, o.name, o.intervalMs, instanceId, o.firstRunAfterMs ?? 0))) return;
    const started = performance.now();
    let result: Record<string, unknown>;
    try {
      const r = await o.run();
      result = { ok: true, ...(r ?? {}), duration_ms: Math.round(performance.now() - started) };
      o.metrics?.job(o.name, 'ok');
    } catch (err) {
      o.metrics?.job(o.name, 'failed');
      o.onError(err);
      result = { ok: false, error: err instanceof Error ? err.message : String(err), duration_ms: Math.round(performance.now() - started) };
    }
    await recordResult(o.db, o.name, { ...result, instance: instanceId });
  };
  const poll = async () => {
    await withJobLock(o.db, o.name, runOnce);
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      inFlight = poll()
        .catch(o.onError)
        .finally(schedule);
    }, o.pollMs);
    timer.unref();
  };
  schedule();
  return async () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    await inFlight;
  };
}

/** What every periodic cluster job is configured with (the trust recompute, the span pruning). */
export interface PeriodicJobOptions {
  db: Db;
  /** Period across the cluster (ms). */
  intervalMs: number;
  /** config.jobPollIntervalMs */
  pollMs: number;
  onError: (err: unknown) => void;
  instanceId?: string;
  metrics?: Metrics;
}

/**
 * {@link scheduleClusterJob} for a periodic job whose first run on a new database is due one
 * interval after the first poll (not at once: an instance that just started does not run it
 * straight away). Returns `stop()`.
 */
export function schedulePeriodic<R extends Record<string, unknown>>(o: PeriodicJobOptions, name: string, run: () => Promise<R>): () => Promise<void> {
  return scheduleClusterJob({
    db: o.db,
    name,
    intervalMs: o.intervalMs,
    pollMs: o.pollMs,
    onError: o.onError,
    ...(o.metrics ? { metrics: o.metrics } : {}),
    firstRunAfterMs: o.intervalMs,
    ...(o.instanceId ? { instanceId: o.instanceId } : {}),
    run,
  });
}
