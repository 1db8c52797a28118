/**
 * Scheduled job: the periodic trust recompute (contract §3.9, §8: every 6 hours by default,
 * `TRUST_RECOMPUTE_INTERVAL_HOURS`). Cluster-wide: however many instances share the database,
 * one of them runs {@link TrustEngine.recomputeAll} per interval (jobs/cluster-schedule.ts), and
 * `scheduled_jobs.last_result` records its counts and duration (`skipped_tenants`: tenants whose
 * recompute was already running through `POST /trust-scores/recompute`). On a database that never ran it,
 * the first run is due one interval after the first poll (not at once: docs/decisions.md "Trust
 * engine"), so an instance that just started does not rescore the fleet straight away.
 */
import type { TrustEngine } from '../modules/trust/engine.js';
import { schedulePeriodic, type PeriodicJobOptions } from './cluster-schedule.js';

/** `scheduled_jobs.name` of the trust recompute. */
export const TRUST_RECOMPUTE_JOB = 'trust_recompute';

/** Options of {@link scheduleTrustRecompute} (`intervalMs` = config.trustRecomputeIntervalMs). */
export interface TrustRecomputeJobOptions extends PeriodicJobOptions {
  engine: Pick<TrustEngine, 'recomputeAll'>;
}

/** Start the cluster-wide trust recompute; returns `stop()` (resolves after a run in progress). */
export function scheduleTrustRecompute(o: TrustRecomputeJobOptions): () => Promise<void> {
  return schedulePeriodic(o, TRUST_RECOMPUTE_JOB, async () => {
    const s = await o.engine.recomputeAll();
    return { tenants: s.tenants, failed_tenants: s.failedTenants, skipped_tenants: s.skippedTenants, agents: s.agents, rolled_up_pairs: s.rolledUpPairs, snapshots: s.snapshots, tier_changes: s.tierChanges };
  });
}
