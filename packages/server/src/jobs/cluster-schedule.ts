/**
 * Cluster-wide periodic jobs (DESIGN §8 "jobs"; docs/decisions.md "Trust engine"): a job that must
 * run once per interval across ALL instances sharing the database (the trust recompute, SPEC §3.9
 * every 6 h), not once per instance. The lease is one row of the platform table `scheduled_jobs`
 * per job name:
 *
 *   insert into scheduled_jobs (name, next_run_at) values (name, now) on conflict do nothing;
 *   update scheduled_jobs set next_run_at = now + interval, last_run_at = now, last_run_by = instance
 *     where name = name and next_run_at <= now returning name;
 *
 * The UPDATE succeeds for exactly one of the instances racing for a due run (PostgreSQL re-checks
 * `next_run_at <= now` on the row version committed by the winner, so the others update nothing);
 * that instance runs the job and records `last_result`. A crash during a run skips that run (the
 * next one is due one interval later): at most once per interval, never twice. `scheduled_jobs` is a
 * platform table without a grant for the application role, so both statements run through
 * crossTenant (the connection's own privileges).
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { crossTenant } from '../db/tenant.js';

/** A default instance id: host, process id and a random suffix (`last_run_by`). */
export const defaultInstanceId = (): string => `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;

/**
 * Claim the run of job `name` due at `now` for `instanceId`: true for exactly one of the callers
 * racing for the same due run, which moves `next_run_at` to `now + intervalMs`. The job's row is
 * created on first sight with `next_run_at = firstDueAt` (default `now`: due at once).
 */
export async function claimRun(db: Db, name: string, intervalMs: number, now: Date, instanceId: string, firstDueAt: Date = now): Promise<boolean> {
  const at = now.toISOString();
  const next = new Date(now.getTime() + intervalMs).toISOString();
  return crossTenant(db, 'scheduled_jobs is a platform table (cluster-wide job lease)', async (tx) => {
    await tx.execute(sql`insert into scheduled_jobs (name, next_run_at) values (${name}, ${firstDueAt.toISOString()}::timestamptz) on conflict do nothing`);
    const res = (await tx.execute(sql`
      update scheduled_jobs set next_run_at = ${next}::timestamptz, last_run_at = ${at}::timestamptz, last_run_by = ${instanceId}
      where name = ${name} and next_run_at <= ${at}::timestamptz
      returning name`)) as unknown as { rows: unknown[] };
    return res.rows.length === 1;
  });
}

/** Record the outcome of a run (`last_result`, JSON) of job `name`. */
export async function recordResult(db: Db, name: string, result: Record<string, unknown>): Promise<void> {
  await crossTenant(db, 'scheduled_jobs is a platform table (cluster-wide job lease)', (tx) =>
    tx.execute(sql`update scheduled_jobs set last_result = ${JSON.stringify(result)}::jsonb where name = ${name}`),
  );
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
  /**
   * When the job's row does not exist yet (first deployment), its first run is due this long
   * after the first poll (default 0: at once).
   */
  firstRunAfterMs?: number;
  /** `last_run_by` of this instance (default {@link defaultInstanceId}). */
  instanceId?: string;
  /** The clock (tests). */
  clock?: () => Date;
}

/**
 * Poll every `pollMs` (first poll one `pollMs` after start) and run `run()` whenever this
 * instance wins {@link claimRun}. Polls never overlap (the next one is scheduled after the
 * previous poll and its run finished). After a run, `last_result` = `{ok: true, duration_ms,
 * ...result}` or `{ok: false, duration_ms, error}`. Returns `stop()`, which cancels the timer and
 * resolves once a run in progress has finished.
 */
export function scheduleClusterJob<R extends Record<string, unknown> | void>(o: ClusterJobOptions<R>): () => Promise<void> {
  const instanceId = o.instanceId ?? defaultInstanceId();
  const clock = o.clock ?? (() => new Date());
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> = Promise.resolve();

  const poll = async () => {
    const now = clock();
    if (!(await claimRun(o.db, o.name, o.intervalMs, now, instanceId, new Date(now.getTime() + (o.firstRunAfterMs ?? 0))))) return;
    const started = performance.now();
    let result: Record<string, unknown>;
    try {
      const r = await o.run();
      result = { ok: true, ...(r ?? {}), duration_ms: Math.round(performance.now() - started) };
    } catch (err) {
      o.onError(err);
      result = { ok: false, error: err instanceof Error ? err.message : String(err), duration_ms: Math.round(performance.now() - started) };
    }
    await recordResult(o.db, o.name, { ...result, instance: instanceId });
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
