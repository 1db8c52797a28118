/**
 * Push delivery worker (design §8.36 "Push delivery"): polls the push outbox every `pollMs` and
 * whenever the trigger enqueued pushes ({@link PushWorker.wake}), claims
 * due rows across tenants (`FOR UPDATE SKIP LOCKED` + a lease, so several instances share the work
 * and each push goes out once), and sends each through its platform's sender with the row's kind as
 * collapse key, urgency `high` for urgent rows (else `normal`) and a TTL of 24 h.
 *
 * The push service's answer decides:
 * - 2xx: sent (`parley_push_sent_total`); events that arrived during the attempt wait a collapse window;
 * - 404 or 410: the registration is gone — deleted with its outbox rows and audited
 *   (`push.registration_removed`, actor `system:push`; `parley_push_removed_total`);
 * - 429, 5xx, no answer (network error, timeout): retried after `retryBaseMs * 2^(attempts-1)`
 *   (capped at `maxBackoffMs`, ±25 % jitter; the webhook worker's backoff) until `maxAttempts`;
 * - anything else, a refused endpoint (SSRF guard) or a malformed registration: failed at once.
 * A row whose platform is off (no settings at start) fails at once too.
 * Logs carry ids, platforms and statuses only: never a token, an endpoint or a payload.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { PushPlatform } from '@parley/protocol';
import type { Db } from '../../db/client.js';
import { crossTenant, withTenant } from '../../db/tenant.js';
import { PollLoop, type OutboxTiming } from '../../lib/poll-loop.js';
import { backoffMs } from '../webhooks/index.js';
import type { PushMetrics } from './metrics.js';
import { PUSH_TTL_SECONDS, type PushPayload } from './payload.js';
import * as repo from './repo.js';
import type { PushSender, SendOutcome } from './sender.js';
import { PUSH_SYSTEM_ACTOR, removeRegistration } from './service.js';

/** Worker settings: the webhook worker's timing (`WebhookConfig`, config.ts). */
export type PushWorkerOptions = OutboxTiming;

/** Whether an unsuccessful answer is worth another attempt: 429, 5xx, or none at all. */
const retryable = (o: SendOutcome): boolean => !o.final && (o.status === null || o.status === 429 || o.status >= 500);

/** Whether the push service says the registration no longer exists. */
const gone = (o: SendOutcome): boolean => o.status === 404 || o.status === 410;

export class PushWorker {
  private readonly loop: PollLoop;
  /** The results of the previous batch being recorded while the next one is claimed and sent. */
  private recording: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly db: Db,
    private readonly senders: ReadonlyMap<PushPlatform, PushSender>,
    private readonly opts: PushWorkerOptions,
    private readonly log: FastifyBaseLogger,
    private readonly metrics?: PushMetrics,
  ) {
    this.loop = new PollLoop((signal) => this.poll(signal), opts.pollMs, this.batchSize, (err) => log.warn({ err }, 'push poll failed'));
  }

  private get batchSize(): number {
    return this.opts.batchSize ?? 50;
  }

  /** Start polling (idempotent). */
  start(): void {
    this.loop.start();
  }

  /** Stop polling, abort requests in flight (their rows are retried after the lease) and wait for the current poll and its results. */
  async stop(): Promise<void> {
    await this.loop.stop();
    await this.recording;
  }

  /** Claim and attempt one batch of due pushes, its results recorded; answers how many were claimed. Public for tests and tools; the timer calls `poll`. */
  async pollOnce(): Promise<number> {
    const n = await this.poll(this.loop.signal);
    await this.recording;
    return n;
  }

  /** New rows are due (the trigger enqueued some): poll now rather than at the next tick. */
  wake(): void {
    this.loop.wake();
  }

  private async poll(signal: AbortSignal): Promise<number> {
    const leaseMs = this.opts.timeoutMs * 2 + 10_000;
    const claimed = await crossTenant(this.db, 'platform worker: push deliveries of every tenant are claimed together', (tx) => repo.claimDue(tx, this.batchSize, leaseMs));
    const attempts = await Promise.all(claimed.map(async (row) => ({ row, outcome: await this.send(row, signal) })));
    // Sent pushes are recorded in one statement per tenant; the others one by one (removal, retry, failure).
    const sent = new Map<string, repo.SentPush[]>();
    const others: Promise<void>[] = [];
    for (const { row, outcome } of attempts) {
      if (!outcome) continue; // shutting down: the lease brings it back
      if (outcome.error === null) {
        this.metrics?.sent.inc({ platform: row.platform });
        sent.set(row.tenant_id, [...(sent.get(row.tenant_id) ?? []), { push_token_id: row.push_token_id, kind: row.kind, status: outcome.status }]);
      } else others.push(this.recordFailure(row, outcome));
    }
    const recordSent = [...sent].map(([tenantId, rows]) =>
      withTenant(this.db, tenantId, (tx) => repo.markSent(tx, rows)).catch((err: unknown) => this.log.warn({ err, tenantId, pushes: rows.length }, 'push results not recorded')),
    );
    // The next poll claims and sends while these results are written (the lease keeps the rows
    // from being claimed again meanwhile); at most one batch's results are in flight.
    await this.recording;
    this.recording = Promise.all([...recordSent, ...others]);
    return claimed.length;
  }

  /** Send one claimed row; answers its outcome, or undefined when shutting down. */
  private async send(p: repo.ClaimedPush, signal: AbortSignal): Promise<SendOutcome | undefined> {
    const platform = p.platform as PushPlatform;
    const sender = this.senders.get(platform);
    if (!sender) return { status: null, error: `${p.platform} push is not configured`, final: true };
    const payload: PushPayload = { ...p.payload, event: p.kind, tenant_id: p.tenant_id, device_id: p.device_id, count: p.count };
    const end = this.metrics?.seconds.startTimer({ platform });
    try {
      return await sender.send(p.token, { payload, collapseKey: p.kind, urgency: p.urgent ? 'high' : 'normal', ttlSeconds: PUSH_TTL_SECONDS }, signal);
    } catch (err) {
      if (signal.aborted) return undefined; // shutting down: the lease brings it back
      return { status: null, error: err instanceof Error ? err.message.slice(0, 200) : 'send failed' };
    } finally {
      end?.();
    }
  }

  /** Record an unsuccessful attempt: the registration removed when gone, else a retry or a failure. */
  private async recordFailure(p: repo.ClaimedPush, outcome: SendOutcome): Promise<void> {
    const platform = p.platform;
    const { final: _final, ...result } = outcome;
    await withTenant(this.db, p.tenant_id, async (tx) => {
      if (gone(outcome)) {
        this.metrics?.removed.inc({ platform });
        this.log.info({ pushTokenId: p.push_token_id, deviceId: p.device_id, platform, status: result.status }, 'push registration gone: removed');
        await removeRegistration(tx, p.tenant_id, p.push_token_id, PUSH_SYSTEM_ACTOR, 'gone');
        return;
      }
      const attempts = p.attempts + 1;
      const retry = retryable(outcome) && attempts < this.opts.maxAttempts ? backoffMs(attempts, this.opts.retryBaseMs, this.opts.maxBackoffMs ?? 3_600_000) : null;
      this.metrics?.failed.inc({ platform, outcome: retry === null ? 'failed' : 'retry' });
      if (retry === null) this.log.warn({ pushTokenId: p.push_token_id, deviceId: p.device_id, platform, attempts, status: result.status, error: result.error }, 'push failed for good');
      return repo.markFailed(tx, p, result, retry);
    }).catch((err: unknown) => this.log.warn({ err, pushTokenId: p.push_token_id }, 'push result not recorded'));
  }
}
