/**
 * Prometheus metrics of one instance (design §8.32), on prom-client. One
 * {@link Metrics} per app, passed to what it measures (never a global registry, so several apps
 * in one process — tests, the cluster tests — keep their own numbers). Names follow Prometheus
 * conventions: `parley_` prefix, base units (seconds, bytes), `_total` for counters.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** What a job run reports (`outcome`: ok | failed). */
export type JobOutcome = 'ok' | 'failed';

/** Webhook delivery outcomes: delivered, retry (failed, will be retried), failed (given up). */
export type WebhookOutcome = 'delivered' | 'retry' | 'failed';

/** Database pool state read at scrape time (PostgreSQL `pg.Pool`; absent on PGlite). */
export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
}

/** The instance's instruments and their registry. */
export class Metrics {
  readonly registry = new Registry();
  /** HTTP request duration by method, route pattern (`unmatched` for 404s) and status code. */
  readonly httpDuration = new Histogram({
    name: 'parley_http_request_duration_seconds',
    help: 'HTTP request duration in seconds, by method, route pattern and status code',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly wsConnections = new Gauge({ name: 'parley_ws_connections', help: 'Open authenticated WebSocket connections', registers: [this.registry] });
  readonly wsFramesIn = new Counter({ name: 'parley_ws_frames_in_total', help: 'WebSocket frames received', registers: [this.registry] });
  readonly wsFramesOut = new Counter({ name: 'parley_ws_frames_out_total', help: 'WebSocket frames sent', registers: [this.registry] });
  readonly messagesCommitted = new Counter({ name: 'parley_messages_committed_total', help: 'Messages committed by group commit', registers: [this.registry] });
  readonly commitBatchSize = new Histogram({
    name: 'parley_group_commit_batch_size',
    help: 'Messages per group-commit flush',
    buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000],
    registers: [this.registry],
  });
  readonly commitFlushSeconds = new Histogram({
    name: 'parley_group_commit_flush_seconds',
    help: 'Duration of one group-commit flush (one transaction) in seconds',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
    registers: [this.registry],
  });
  readonly busPublishSeconds = new Histogram({
    name: 'parley_bus_publish_seconds',
    help: 'Time to hand an event to the bus (Redis or in-process) in seconds',
    buckets: [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5],
    registers: [this.registry],
  });
  readonly jobRuns = new Counter({ name: 'parley_job_runs_total', help: 'Scheduled job runs by job and outcome', labelNames: ['job', 'outcome'] as const, registers: [this.registry] });
  readonly webhookDeliveries = new Counter({
    name: 'parley_webhook_deliveries_total',
    help: 'Webhook delivery attempts by outcome (delivered, retry, failed)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  /** @param pool read at scrape time: the database pool's state (PostgreSQL only). */
  constructor(pool?: () => PoolStats | undefined) {
    collectDefaultMetrics({ register: this.registry, prefix: 'parley_' });
    new Gauge({
      name: 'parley_db_pool_connections',
      help: 'Database pool connections by state (total, idle, waiting clients); PostgreSQL only',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect() {
        const s = pool?.();
        if (!s) return;
        this.set({ state: 'total' }, s.total);
        this.set({ state: 'idle' }, s.idle);
        this.set({ state: 'waiting' }, s.waiting);
      },
    });
  }

  /** Count a job run. */
  job(name: string, outcome: JobOutcome): void {
    this.jobRuns.inc({ job: name, outcome });
  }

  /** Record one group-commit flush of `size` messages that took `seconds`. */
  commit(size: number, seconds: number): void {
    this.messagesCommitted.inc(size);
    this.commitBatchSize.observe(size);
    this.commitFlushSeconds.observe(seconds);
  }

  /** The exposition text and its content type. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

/**
 * Run `work` as job `name`, counting the run as ok or failed; failures go to `onError` (the
 * jobs' existing reporting) and do not propagate.
 */
export async function runJob(metrics: Metrics | undefined, name: string, work: () => Promise<unknown>, onError: (err: unknown) => void): Promise<void> {
  try {
    await work();
    metrics?.job(name, 'ok');
  } catch (err) {
    metrics?.job(name, 'failed');
    onError(err);
  }
}
