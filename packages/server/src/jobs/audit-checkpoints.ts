/**
 * Scheduled job: publish the audit logs' checkpoints (design §8.33). Cluster-wide like the trust
 * recompute (jobs/cluster-schedule.ts): one instance per interval (`AUDIT_CHECKPOINT_INTERVAL_MINUTES`,
 * default 60) signs and keeps a checkpoint for every tenant whose audit log grew since its newest
 * kept one, so a tenant's log is committed to at least once an interval whether or not its owner
 * asks. The first run is due one interval after the first poll. `scheduled_jobs.last_result`
 * records `{ tenants, signed }`.
 */
import type { AuditTransparency } from '../modules/audit/transparency.js';
import { schedulePeriodic, type PeriodicJobOptions } from './cluster-schedule.js';

/** `scheduled_jobs.name` of the checkpoint publication. */
export const AUDIT_CHECKPOINT_JOB = 'audit_checkpoints';

/** Start the cluster-wide checkpoint publication (`intervalMs` = config.auditCheckpointIntervalMs); returns `stop()`. */
export function scheduleAuditCheckpoints(o: PeriodicJobOptions & { transparency: AuditTransparency }): () => Promise<void> {
  return schedulePeriodic(o, AUDIT_CHECKPOINT_JOB, () => o.transparency.publishCheckpoints());
}
