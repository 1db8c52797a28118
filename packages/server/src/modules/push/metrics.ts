/**
 * Push delivery instruments (design §8.36 "Push delivery"; on `/metrics` with the instance's other
 * metrics, lib/metrics.ts), registered on the instance's registry:
 *
 * - `parley_push_sent_total{platform}`: pushes the push service accepted;
 * - `parley_push_failed_total{platform, outcome}`: failed attempts, `retry` (tried again later) or
 *   `failed` (given up);
 * - `parley_push_removed_total{platform}`: registrations removed because the push service answered
 *   404 or 410;
 * - `parley_push_send_seconds{platform}`: duration of one request to the push service.
 */
import { Counter, Histogram, type Registry } from 'prom-client';

export class PushMetrics {
  readonly sent: Counter<'platform'>;
  readonly failed: Counter<'platform' | 'outcome'>;
  readonly removed: Counter<'platform'>;
  readonly seconds: Histogram<'platform'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.sent = new Counter({ name: 'parley_push_sent_total', help: 'Pushes accepted by the push service, by platform', labelNames: ['platform'] as const, registers });
    this.failed = new Counter({
      name: 'parley_push_failed_total',
      help: 'Failed push attempts by platform and outcome (retry, failed)',
      labelNames: ['platform', 'outcome'] as const,
      registers,
    });
    this.removed = new Counter({ name: 'parley_push_removed_total', help: 'Push registrations removed after a 404 or 410 from the push service', labelNames: ['platform'] as const, registers });
    this.seconds = new Histogram({
      name: 'parley_push_send_seconds',
      help: 'Duration of one request to a push service in seconds, by platform',
      labelNames: ['platform'] as const,
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
  }
}
