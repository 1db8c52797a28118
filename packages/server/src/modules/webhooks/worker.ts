/**
 * Webhook delivery worker (DESIGN §8.11): polls the outbox every `pollMs`, claims due deliveries
 * across tenants (`FOR UPDATE SKIP LOCKED` + a lease, so several instances share the work), and
 * POSTs each body to the device's CURRENT webhook URL, signed with its CURRENT secret in the
 * Standard Webhooks format:
 *
 * - `webhook-id`: the delivery id (stable across retries, for receiver-side deduplication);
 * - `webhook-timestamp`: Unix seconds of this attempt;
 * - `webhook-signature`: `v1,<base64 HMAC-SHA256(secret, "<id>.<timestamp>.<body>")>`;
 * - `content-type: application/json`.
 *
 * A 2xx answer marks the delivery `delivered`. Anything else (non-2xx, redirect, network error,
 * timeout) counts an attempt and retries after `retryBaseMs * 2^(attempts-1)` (capped at
 * `maxBackoffMs`, ±25 % jitter) until `maxAttempts`, then `failed` (last_status / last_error
 * kept). A delivery whose device cleared its URL, was revoked or deleted is `cancelled`.
 * Logs carry ids and statuses only: never the URL, the secret or the body.
 */
import type { FastifyBaseLogger } from 'fastify';
import { Webhook } from 'standardwebhooks';
import type { Db } from '../../db/client.js';
import { crossTenant, withTenant } from '../../db/tenant.js';
import * as repo from './repo.js';

export interface WebhookWorkerOptions {
  /** Poll interval (ms) when the previous poll found less than a full batch. */
  pollMs: number;
  /** Per-request timeout (ms). */
  timeoutMs: number;
  /** First retry delay (ms); doubles per attempt. */
  retryBaseMs: number;
  /** Attempts before a delivery is `failed`. */
  maxAttempts: number;
  /** Largest retry delay (ms). Default one hour. */
  maxBackoffMs?: number;
  /** Deliveries claimed (and sent concurrently) per poll. Default 50. */
  batchSize?: number;
}

/** Delay before the next attempt after `attempts` failed ones (ms), ±25 % jitter. */
export function backoffMs(attempts: number, baseMs: number, capMs: number, random: () => number = Math.random): number {
  const d = Math.min(capMs, baseMs * 2 ** Math.max(0, attempts - 1));
  return Math.round(d * (0.75 + 0.5 * random()));
}

/** Short reason for a failed request, without the URL (it may carry a token) or any body. */
function reason(err: unknown, url: string): string {
  if (!(err instanceof Error)) return 'request failed';
  if (err.name === 'TimeoutError') return 'timeout';
  const code = (err.cause as { code?: unknown } | undefined)?.code;
  return (typeof code === 'string' ? `${err.message}: ${code}` : err.message).replaceAll(url, '[url]').slice(0, 200);
}

export class WebhookWorker {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;
  private abort = new AbortController();

  constructor(
    private readonly db: Db,
    private readonly opts: WebhookWorkerOptions,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** Start polling (idempotent). */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.abort = new AbortController();
    this.schedule(this.opts.pollMs);
  }

  /** Stop polling, abort requests in flight (their rows are retried after the lease) and wait for the current poll. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.abort.abort();
    await this.running;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.pollOnce()
        .catch((err: unknown) => {
          this.log.warn({ err }, 'webhook poll failed');
          return 0;
        })
        .then((n) => this.schedule(n >= this.batchSize ? 0 : this.opts.pollMs));
    }, ms);
    this.timer.unref();
  }

  private get batchSize(): number {
    return this.opts.batchSize ?? 50;
  }

  /**
   * Claim and attempt one batch of due deliveries; answers how many were claimed. Public for
   * tests and tools; the timer calls it.
   */
  async pollOnce(): Promise<number> {
    const leaseMs = this.opts.timeoutMs * 2 + 10_000;
    const claimed = await crossTenant(this.db, 'platform worker: webhook deliveries of every tenant are claimed together', async (tx) => {
      const rows = await repo.claimDue(tx, this.batchSize, leaseMs);
      const gone = rows.filter((r) => !r.webhook_url || !r.webhook_secret).map((r) => r.id);
      if (gone.length > 0) await repo.cancel(tx, gone);
      return rows;
    });
    await Promise.all(claimed.filter((r) => r.webhook_url && r.webhook_secret).map((r) => this.attempt(r)));
    return claimed.length;
  }

  private async attempt(d: repo.ClaimedDelivery): Promise<void> {
    const body = JSON.stringify(d.payload);
    const now = new Date();
    let outcome: repo.AttemptOutcome;
    try {
      const res = await fetch(d.webhook_url!, {
        method: 'POST',
        redirect: 'manual',
        headers: {
          'content-type': 'application/json',
          'webhook-id': d.id,
          'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
          'webhook-signature': new Webhook(d.webhook_secret!).sign(d.id, now, body),
        },
        body,
        signal: AbortSignal.any([AbortSignal.timeout(this.opts.timeoutMs), this.abort.signal]),
      });
      await res.body?.cancel().catch(() => undefined);
      outcome = { status: res.status, error: res.ok ? null : `HTTP ${res.status}` };
    } catch (err) {
      if (this.abort.signal.aborted) return; // shutting down: the lease brings it back
      outcome = { status: null, error: reason(err, d.webhook_url!) };
    }
    await withTenant(this.db, d.tenant_id, async (tx) => {
      if (outcome.error === null) return repo.markDelivered(tx, d.id, outcome);
      const attempts = d.attempts + 1;
      const retry = attempts >= this.opts.maxAttempts ? null : backoffMs(attempts, this.opts.retryBaseMs, this.opts.maxBackoffMs ?? 3_600_000);
      if (retry === null) this.log.warn({ deliveryId: d.id, deviceId: d.device_id, attempts, status: outcome.status }, 'webhook delivery failed for good');
      return repo.markFailed(tx, d.id, outcome, retry);
    }).catch((err: unknown) => this.log.warn({ err, deliveryId: d.id }, 'webhook delivery result not recorded'));
  }
}
