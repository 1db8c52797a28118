/**
 * The scheduled work of the areas as one {@link Area} (design §8 "jobs"): per instance the invite,
 * held-message and decision-deadline sweeps; across the cluster the audit checkpoints, the trust
 * recompute, the span pruning, the spend alert sweep, the key directory's backfill and its witness publication
 * (jobs/cluster-schedule.ts). `start()` runs once the app is ready; `close()` stops every job and
 * waits for runs in progress.
 */
import type { Area, Platform } from '../http/area.js';
import type { AuditTransparency } from '../modules/audit/index.js';
import type { DecisionService } from '../modules/decisions/index.js';
import type { KeyDirectory, WitnessPublisher } from '../modules/key-directory/index.js';
import type { PolicyService } from '../modules/policies/index.js';
import type { SpendService } from '../modules/spend/index.js';
import type { TrustEngine } from '../modules/trust/index.js';
import { scheduleAuditCheckpoints } from './audit-checkpoints.js';
import { scheduleDecisionDeadlines } from './decision-deadlines.js';
import { scheduleHeldExpiry } from './held-expiry.js';
import { scheduleInviteExpiry } from './invite-expiry.js';
import { scheduleKeyDirectoryBackfill } from './key-directory-backfill.js';
import { scheduleKeyDirectoryWitnesses } from './key-directory-witnesses.js';
import { scheduleSpendAlerts } from './spend-alerts.js';
import { scheduleTelemetryPrune } from './telemetry-prune.js';
import { scheduleTrustRecompute } from './trust-recompute.js';

/** What the jobs run on. */
export interface JobsDeps extends Pick<Platform, 'db' | 'config' | 'metrics' | 'log'> {
  /** How often the invite and held-message expiry sweeps run on this instance (ms). */
  expiryIntervalMs: number;
  policies: PolicyService;
  decisions: DecisionService;
  transparency: AuditTransparency;
  trustEngine: Pick<TrustEngine, 'recomputeAll'>;
  spend: Pick<SpendService, 'sweepAlerts'>;
  /** The key directory, for the backfill of keys stored before it (jobs/key-directory-backfill.ts). */
  keyDirectory: KeyDirectory;
  /** The key directory's checkpoint publication to the platform's witnesses; absent without `KEY_DIRECTORY_WITNESSES`. */
  witnesses?: WitnessPublisher;
}

/** The jobs (see the module comment). */
export function createJobs(d: JobsDeps): Area {
  const { db, config, metrics } = d;
  const failed = (job: string) => (err: unknown) => d.log.warn({ err }, `${job} job failed`);
  const periodic = (job: string, intervalMs: number) => ({ db, intervalMs, pollMs: config.jobPollIntervalMs, onError: failed(job), metrics });
  let stops: (() => void | Promise<void>)[] = [];
  return {
    start() {
      stops = [
        scheduleInviteExpiry(db, d.expiryIntervalMs, failed('invite expiry'), metrics),
        scheduleHeldExpiry(d.policies, d.expiryIntervalMs, failed('held message expiry'), metrics),
        scheduleDecisionDeadlines(d.decisions, config.decisionDeadlineIntervalMs, failed('decision deadline'), metrics),
        scheduleTrustRecompute({ ...periodic('trust recompute', config.trustRecomputeIntervalMs), engine: d.trustEngine }),
        // Raw span retention (contract §4.14): old spans go once their day is rolled up for the trust engine.
        scheduleTelemetryPrune({ ...periodic('telemetry pruning', config.telemetryPruneIntervalMs), retentionDays: config.telemetryRetentionDays }),
        scheduleSpendAlerts({ ...periodic('spend alert', config.spendAlertIntervalMs), spend: d.spend }),
        scheduleAuditCheckpoints({ ...periodic('audit checkpoint', config.auditCheckpointIntervalMs), transparency: d.transparency }),
        scheduleKeyDirectoryBackfill({ db, pollMs: config.jobPollIntervalMs, onError: failed('key directory backfill'), metrics, directory: d.keyDirectory }),
        ...(d.witnesses ? [scheduleKeyDirectoryWitnesses({ ...periodic('key directory witness', config.keyDirectoryWitnessIntervalMs), publisher: d.witnesses })] : []),
      ];
    },
    async close() {
      for (const stop of stops) await stop();
      stops = [];
    },
  };
}
