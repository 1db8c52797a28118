/**
 * Webhook delivery worker (design §8.11): polls the outbox every `pollMs`, claims due deliveries
 * across tenants (`FOR UPDATE SKIP LOCKED` + a lease, so several instances share the work), and
 * POSTs each body to the device's CURRENT webhook URL, signed with its CURRENT secret in the
 * Standard Webhooks format:
 *
 * - `webhook-id`: the delivery id (stable across retries, for receiver-side deduplication);
 * - `webhook-timestamp`: Unix seconds of this attempt;
 * - `webhook-signature`: `v1,<base64 HMAC-SHA256(secret, "<id>.<timestamp>.<body>")>`;
 * - `content-type: application/json`.
 *
 * The POST goes through `http.ts` (SSRF guard: only public addresses unless `allowPrivate`, the
 * connection made to the checked addresses; `https:` only unless `allowHttp`). The secret is
 * stored sealed (`secrets.ts`) and opened just before signing.
 *
 * A 2xx answer marks the delivery `delivered`. Anything else (non-2xx, redirect, network error,
 * timeout) counts an attempt and retries after `retryBaseMs * 2^(attempts-1)` (capped at
 * `maxBackoffMs`, ±25 % jitter) until `maxAttempts`, then `failed` (last_status / last_error
 * kept). A refused target (`blocked address`, `blocked url`) or a secret that does not open
 * (`secret unreadable`) is `failed` at once: retrying cannot help. A delivery whose device cleared
 * its URL, was revoked or deleted is `cancelled`.
 * Logs carry ids and statuses only: never the URL, the secret or the body.
 */
import type { Metrics } from '../../lib/metrics.js';
import type { FastifyBaseLogger } from 'fastify';
import { Webhook } from 'standardwebhooks';
import type { Db } from '../../db/client.js';
import { crossTenant, withTenant } from '../../db/tenant.js';
import { PollLoop, type OutboxTiming } from '../../lib/poll-loop.js';
import type { SecretBox } from '../../lib/secret-box.js';
import { postWebhook } from './http.js';
import * as repo from './repo.js';
import { openWebhookSecret } from './secrets.js';
import { BlockedTargetError, type TargetPolicy } from './target.js';

/** Worker settings: `WebhookConfig` (config.ts): the outbox timing and the URL rules. */
export type WebhookWorkerOptions = OutboxTiming & TargetPolicy;

/** Delay before the next attempt after `attempts` failed ones (ms), ±25 % jitter. */
export function backoffMs(attempts: number, baseMs: number, capMs: number, random: () => number = Math.random): number {
  const d = Math.min(capMs, baseMs * 2 ** Math.max(0, attempts - 1));
  return Math.round(d * (0.75 + 0.5 * random()));
}

/** Short reason for a failed request, without the URL (it may carry a token) or any body (also the telemetry export worker's). */
export function reason(err: unknown, url: string): string {
  if (!(err instanceof Error)) return 'request failed';
  if (err.name === 'TimeoutError') return 'timeout';
  const code = (err as { code?: unknown }).code ?? (err.cause as { code?: unknown } | undefined)?.code;
  const text = typeof code === 'string' && !err.message.includes(code) ? `${err.message}: ${code}` : err.message;
  return text.replaceAll(url, '[url]').slice(0, 200);
}

/** An attempt's outcome and whether it is final whatever the attempt count. */
type Result = repo.AttemptOutcome & { final?: boolean };

export class WebhookWorker {
  private readonly loop: PollLoop;

  /** `secrets` opens the stored webhook secrets (the key they were sealed with). */
  constructor(
    private readonly db: Db,
    private readonly opts: WebhookWorkerOptions,
    private readonly secrets: SecretBox,
    private readonly log: FastifyBaseLogger,
    /** Delivery outcomes (`parley_webhook_deliveries_total`). */
    private readonly metrics?: Metrics,
  ) {
    this.loop = new PollLoop(() => this.pollOnce(), opts.pollMs, this.batchSize, (err) => log.warn({ err }, 'webhook poll failed'));
  }

  /** Start polling (idempotent). */
  start(): void {
    this.loop.start();
  }

  /** Stop polling, abort requests in flight (their rows are retried after the lease) and wait for the current poll. */
  stop(): Promise<void> {
    return this.loop.stop();
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

  /** Sign (with the freshly opened secret) and POST one delivery; answers its outcome, or undefined when shutting down. */
  private async send(d: repo.ClaimedDelivery): Promise<Result | undefined> {
    let secret: string;
    try {
      secret = openWebhookSecret(this.secrets, d.device_id, d.webhook_secret!);
    } catch {
      this.log.warn({ deliveryId: d.id, deviceId: d.device_id }, 'webhook secret does not open (SECRETS_KEY changed?)');
      return { status: null, error: 'secret unreadable', final: true };
    }
    const body = JSON.stringify(d.payload);
    const now = new Date();
    const headers = {
      'content-type': 'application/json',
      'webhook-id': d.id,
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign(d.id, now, body),
    };
    try {
      const status = await postWebhook(d.webhook_url!, headers, body, { ...this.opts, signal: this.loop.signal });
      return { status, error: status >= 200 && status < 300 ? null : `HTTP ${status}` };
    } catch (err) {
      if (this.loop.signal.aborted) return undefined; // shutting down: the lease brings it back
      if (err instanceof BlockedTargetError) return { status: null, error: err.message, final: true };
      return { status: null, error: reason(err, d.webhook_url!) };
    }
  }

  private async attempt(d: repo.ClaimedDelivery): Promise<void> {
    const result = await this.send(d);
    if (!result) return;
    const { final, ...outcome } = result;
    await withTenant(this.db, d.tenant_id, async (tx) => {
      if (outcome.error === null) {
        this.metrics?.webhookDeliveries.inc({ outcome: 'delivered' });
        return repo.markDelivered(tx, d.id, outcome);
      }
      const attempts = d.attempts + 1;
      const retry = final || attempts >= this.opts.maxAttempts ? null : backoffMs(attempts, this.opts.retryBaseMs, this.opts.maxBackoffMs ?? 3_600_000);
      this.metrics?.webhookDeliveries.inc({ outcome: retry === null ? 'failed' : 'retry' });
      if (retry === null) this.log.warn({ deliveryId: d.id, deviceId: d.device_id, attempts, status: outcome.status }, 'webhook delivery failed for good');
      return repo.markFailed(tx, d.id, outcome, retry);
    }).catch((err: unknown) => this.log.warn({ err, deliveryId: d.id }, 'webhook delivery result not recorded'));
  }
}
