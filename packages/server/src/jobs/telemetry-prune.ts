/**
 * Scheduled job: telemetry span retention (contract §4.14; docs/decisions.md "Trust engine": roll-ups
 * and span retention). Cluster-wide like the trust recompute (jobs/cluster-schedule.ts): one
 * instance per interval (`TELEMETRY_PRUNE_INTERVAL_HOURS`, default 24) deletes, tenant by tenant
 * and in bounded batches, the raw spans that started before the UTC day `TELEMETRY_RETENTION_DAYS`
 * days before today, except those of (device, day) pairs still marked dirty (not rolled up yet:
 * the trust engine's roll-ups of a day are always built before its spans go). Roll-ups are kept.
 * The first run is due one interval after the first poll. `scheduled_jobs.last_result` records
 * `{ tenants, deleted, cutoff }`.
 */
import { crossTenant } from '../db/tenant.js';
import { addDays, dayStart, utcDay } from '../lib/days.js';
import { listTenantIds } from '../modules/trust/repo.js';
import { pruneSpans } from '../modules/trust/rollups.js';
import { schedulePeriodic, type PeriodicJobOptions } from './cluster-schedule.js';

/** `scheduled_jobs.name` of the span pruning. */
export const TELEMETRY_PRUNE_JOB = 'telemetry_prune';

/** The pruning cutoff at `now`: the start of the UTC day `retentionDays` before today (spans before it go). */
export const retentionCutoff = (now: Date, retentionDays: number): Date => dayStart(addDays(utcDay(now), -retentionDays));

/** Options of {@link scheduleTelemetryPrune}. */
export interface TelemetryPruneJobOptions extends PeriodicJobOptions {
  /** config.telemetryRetentionDays */
  retentionDays: number;
  /** Clock (tests). */
  now?: () => Date;
}

/** Start the cluster-wide span pruning (`intervalMs` = config.telemetryPruneIntervalMs); returns `stop()` (resolves after a run in progress). */
export function scheduleTelemetryPrune(o: TelemetryPruneJobOptions): () => Promise<void> {
  return schedulePeriodic(o, TELEMETRY_PRUNE_JOB, async () => {
    const cutoff = retentionCutoff(o.now?.() ?? new Date(), o.retentionDays);
    const ids = await crossTenant(o.db, 'the span pruning job visits every tenant', (tx) => listTenantIds(tx));
    const s = await pruneSpans(o.db, ids, cutoff);
    return { tenants: s.tenants, deleted: s.deleted, cutoff: cutoff.toISOString() };
  });
}
