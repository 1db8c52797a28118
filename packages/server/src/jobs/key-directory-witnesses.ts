/**
 * Scheduled job: send the key directory's newest checkpoint to the platform's witnesses and store
 * their cosignatures (design §8.39; modules/key-directory/witnesses.ts). Cluster-wide like the
 * audit checkpoints (jobs/cluster-schedule.ts): one instance per interval
 * (`KEY_DIRECTORY_WITNESS_INTERVAL_SECONDS`, default 60) talks to the witnesses, so two instances
 * never race each other's `old` size. The first run is due at the first poll. Not scheduled
 * without `KEY_DIRECTORY_WITNESSES`. `scheduled_jobs.last_result` records `{ witnesses, cosigned, failed }`.
 */
import type { WitnessPublisher } from '../modules/key-directory/index.js';
import { scheduleClusterJob, type PeriodicJobOptions } from './cluster-schedule.js';

/** `scheduled_jobs.name` of the witness publication. */
export const KEY_DIRECTORY_WITNESS_JOB = 'key_directory_witnesses';

/**
 * Start the cluster-wide publication to the witnesses (`intervalMs` = config.keyDirectoryWitnessIntervalMs);
 * returns `stop()`, which aborts the requests in flight and waits for the run.
 */
export function scheduleKeyDirectoryWitnesses(o: PeriodicJobOptions & { publisher: WitnessPublisher }): () => Promise<void> {
  const abort = new AbortController();
  const stop = scheduleClusterJob({
    db: o.db,
    name: KEY_DIRECTORY_WITNESS_JOB,
    intervalMs: o.intervalMs,
    pollMs: o.pollMs,
    onError: o.onError,
    ...(o.metrics ? { metrics: o.metrics } : {}),
    ...(o.instanceId ? { instanceId: o.instanceId } : {}),
    run: async () => ({ ...(await o.publisher.publish(abort.signal)) }),
  });
  return () => {
    abort.abort();
    return stop();
  };
}
