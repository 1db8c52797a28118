/**
 * Telemetry export worker (docs/decisions.md "Telemetry export"), on every instance: polls the
 * export outbox every `pollMs`, claims due rows across tenants (`FOR UPDATE SKIP LOCKED` + a
 * lease, so instances sharing a database never export the same row concurrently), loads the spans
 * and audit events they point to under each tenant's RLS, and hands them to the tenant's official
 * OTLP/HTTP exporters (exporters.ts). Rows are deleted after a successful export.
 *
 * Delivery is exactly once across instances except for one window: an instance that dies (or
 * loses its database connection) between a successful export and the delete re-exports those
 * rows once their lease lapses — at-least-once there; receivers can deduplicate on span ids and
 * `parley.audit.event_id`.
 *
 * A failed export (network error, timeout, non-2xx after the exporter's own short retries, a
 * refused target, headers that do not open) keeps the rows: attempts + 1, `last_error`, next
 * attempt after `backoffMs` (the webhooks' exponential backoff with jitter, capped at
 * `maxBackoffMs`). Rows are never dropped for failing: a down endpoint loses nothing and catches
 * up; only removing the setting (or the tenant) drops the backlog. Rows whose span was pruned
 * meanwhile are deleted. Logs carry tenant ids, counts and short reasons: never the URL or headers.
 */
import type { FastifyBaseLogger } from 'fastify';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { Db } from '../../db/client.js';
import { crossTenant, withTenant } from '../../db/tenant.js';
import type { SecretBox } from '../../lib/secret-box.js';
import { backoffMs, BlockedTargetError, reason, type TargetPolicy } from '../webhooks/index.js';
import { TenantExporters } from './exporters.js';
import { ResourceCache, toLogRecord, toReadableSpan } from './records.js';
import * as repo from './repo.js';

/** Worker settings (from `WebhookConfig`: the same poll, timeout, retry and target policy). */
export interface ExportWorkerOptions extends TargetPolicy {
  /** Poll interval (ms) when the previous poll found less than a full batch. */
  pollMs: number;
  /** Per-export timeout (ms), the exporter's own retries included. */
  timeoutMs: number;
  /** First retry delay (ms); doubles per attempt. */
  retryBaseMs: number;
  /** Largest retry delay (ms). Default 5 minutes. */
  maxBackoffMs?: number;
  /** Outbox rows claimed per poll. Default 500. */
  batchSize?: number;
}

/** A tenant's exporters unused this long (ms) are shut down (their keep-alive sockets closed). */
const EXPORTER_IDLE_MS = 10 * 60_000;

/** One tenant's claimed rows split by kind. */
interface TenantBatch {
  tenantId: string;
  spans: repo.ClaimedExport[];
  audit: repo.ClaimedExport[];
}

function byTenant(rows: repo.ClaimedExport[]): TenantBatch[] {
  const m = new Map<string, TenantBatch>();
  for (const r of rows) {
    let b = m.get(r.tenant_id);
    if (!b) m.set(r.tenant_id, (b = { tenantId: r.tenant_id, spans: [], audit: [] }));
    (r.kind === 'span' ? b.spans : b.audit).push(r);
  }
  return [...m.values()];
}

/** The short reason of a failed export: `blocked url` / `blocked address` for a refused target (thrown, or handed back by the exporter), else the webhooks' {@link reason}. */
function failure(err: unknown, url: string): string {
  if (err instanceof BlockedTargetError || (err as { code?: unknown } | null)?.code === 'EBLOCKEDTARGET') return (err as Error).message;
  return reason(err, url);
}

/** What to do with a set of claimed rows after an attempt. */
interface Outcome {
  done: string[];
  retry: { ids: string[]; attempts: number; error: string }[];
}

export class TelemetryExportWorker {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;
  private readonly exporters: TenantExporters;

  /** `secrets` opens the stored export headers. */
  constructor(
    private readonly db: Db,
    private readonly opts: ExportWorkerOptions,
    secrets: SecretBox,
    private readonly log: FastifyBaseLogger,
  ) {
    this.exporters = new TenantExporters(secrets, opts);
  }

  /** Start polling (idempotent). */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(this.opts.pollMs);
  }

  /** Stop polling, wait for the current poll and shut the exporters down (rows in flight come back after their lease). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    await this.exporters.closeAll();
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.pollOnce()
        .catch((err: unknown) => {
          this.log.warn({ err }, 'telemetry export poll failed');
          return 0;
        })
        .then((n) => this.schedule(n >= this.batchSize ? 0 : this.opts.pollMs));
    }, ms);
    this.timer.unref();
  }

  private get batchSize(): number {
    return this.opts.batchSize ?? 500;
  }

  /** Claim and export one batch of due rows; answers how many were claimed. Public for tests and tools. */
  async pollOnce(): Promise<number> {
    const leaseMs = this.opts.timeoutMs * 2 + 10_000;
    const claimed = await crossTenant(this.db, 'platform worker: the telemetry export outbox of every tenant is claimed together', (tx) =>
      repo.claimDue(tx, this.batchSize, leaseMs),
    );
    await Promise.all(byTenant(claimed).map((b) => this.exportTenant(b)));
    await this.exporters.closeIdle(EXPORTER_IDLE_MS);
    return claimed.length;
  }

  /** Export one tenant's claimed rows and record the outcome. Never throws (a failure leaves the rows to their lease). */
  private async exportTenant(b: TenantBatch): Promise<void> {
    try {
      const loaded = await withTenant(this.db, b.tenantId, async (tx) => ({
        setting: await repo.getSetting(tx, b.tenantId),
        spans: await repo.spansByIds(tx, b.spans.map((r) => r.ref_id)),
        audit: await repo.auditByIds(tx, b.tenantId, b.audit.map((r) => r.ref_id)),
      }));
      let outcome: Outcome;
      if (!loaded.setting) {
        outcome = { done: [...b.spans, ...b.audit].map((r) => r.id), retry: [] }; // setting removed meanwhile
        await this.exporters.close(b.tenantId);
      } else {
        const setting = loaded.setting;
        const resources = new ResourceCache();
        const [s, a] = await Promise.all([
          this.run(b.spans, loaded.spans, setting.url, (rows) => this.exporters.exportSpans(setting, rows.map((r) => toReadableSpan(r, resources)))),
          this.run(b.audit, loaded.audit, setting.url, (rows) => this.exporters.exportLogs(setting, rows.map((r) => toLogRecord(r, resources)))),
        ]);
        outcome = { done: [...s.done, ...a.done], retry: [...s.retry, ...a.retry] };
      }
      await withTenant(this.db, b.tenantId, async (tx) => {
        await repo.deleteRows(tx, outcome.done);
        for (const r of outcome.retry) await repo.markRetry(tx, r.ids, r.error, backoffMs(r.attempts, this.opts.retryBaseMs, this.opts.maxBackoffMs ?? 300_000));
      });
      for (const r of outcome.retry) this.log.warn({ tenantId: b.tenantId, rows: r.ids.length, attempts: r.attempts, error: r.error }, 'telemetry export failed; will retry');
    } catch (err) {
      this.log.warn({ err, tenantId: b.tenantId }, 'telemetry export batch not recorded');
    }
  }

  /**
   * Export the stored `rows` of the claimed outbox rows `claimed` (rows whose span or event is gone
   * are done); answers which outbox rows are done and which retry.
   */
  private async run<R extends { id: string }>(claimed: repo.ClaimedExport[], rows: R[], url: string, send: (rows: R[]) => Promise<ExportResult>): Promise<Outcome> {
    if (claimed.length === 0) return { done: [], retry: [] };
    const present = new Set(rows.map((r) => r.id));
    const gone = claimed.filter((c) => !present.has(c.ref_id)).map((c) => c.id);
    const live = claimed.filter((c) => present.has(c.ref_id));
    if (rows.length === 0) return { done: gone, retry: [] };
    let error: string | undefined;
    try {
      const result = await send(rows);
      if (result.code !== ExportResultCode.SUCCESS) error = failure(result.error ?? new Error('export failed'), url);
    } catch (err) {
      error = failure(err, url);
    }
    if (error === undefined) return { done: [...gone, ...live.map((c) => c.id)], retry: [] };
    const attempts = Math.max(...live.map((c) => c.attempts)) + 1;
    return { done: gone, retry: [{ ids: live.map((c) => c.id), attempts, error }] };
  }
}
