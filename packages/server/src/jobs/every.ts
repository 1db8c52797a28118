/**
 * The per-instance interval jobs (invite expiry, held-message expiry, decision deadlines): run
 * `work` every `intervalMs` (the timer does not keep the process alive), count each run in
 * `parley_job_runs_total{job, outcome}` and hand failures to `onError`. Answers the stop function.
 * (Jobs that must run once across instances use `scheduleClusterJob` instead.)
 */
import { runJob, type Metrics } from '../lib/metrics.js';

export function every(name: string, intervalMs: number, work: () => Promise<unknown>, onError: (err: unknown) => void, metrics?: Metrics): () => void {
  const timer = setInterval(() => void runJob(metrics, name, work, onError), intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
