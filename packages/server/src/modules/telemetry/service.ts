/**
 * Telemetry (contract §2.15, §4.14; design §8.18): OTLP span ingest by an agent (device JWT or API
 * key; the spans belong to the calling device) and owner queries — an agent's spans, a per-name
 * summary and the tenant-wide recent activity. Everything runs under the tenant's RLS; another
 * tenant's agent is invisible (404).
 */
import { SPAN_STATUSES, type DashboardActivityQuery, type TelemetryQuery, type TelemetrySpan, type TelemetrySpanPage, type TelemetrySummary, type TelemetrySummaryQuery } from '@parley/protocol';
import type { Db, Tx } from '../../db/client.js';
import { withTenant } from '../../db/tenant.js';
import { TenantBatcher } from '../../db/batcher.js';
import { isDataException } from '../../db/errors.js';
import { drizzleTenantWriter, type TenantWriter } from '../../db/tenant-writer.js';
import { badRequest } from '../../lib/errors.js';
import { resolveAgentId } from '../hub/index.js';
import type { ExportRequestJson } from './otlp.js';
import { toSpans } from './otlp.js';
import * as repo from './repo.js';
import { decodeKeyset, encodeKeyset, pageLimit, parseTimestamp } from '../../lib/paging.js';

const toOut = (s: repo.SpanRow): TelemetrySpan => ({
  id: s.id,
  device_id: s.deviceId,
  trace_id: s.traceId,
  span_id: s.spanId,
  parent_span_id: s.parentSpanId,
  name: s.name,
  kind: s.kind,
  start_time: s.startTime.toISOString(),
  end_time: s.endTime.toISOString(),
  duration_us: s.durationUs,
  status: SPAN_STATUSES[s.statusCode] ?? 'unset',
  status_message: s.statusMessage,
  attributes: s.attributes as Record<string, unknown>,
  resource: s.resource as Record<string, unknown>,
  received_at: s.receivedAt.toISOString(),
});

/** A `since` / `until` query value. @throws 400 when not an ISO 8601 date-time. */
const time = (v: string | undefined, name: string): Date | undefined => (v === undefined ? undefined : parseTimestamp(v, name));

const DAY_MS = 24 * 3600 * 1000;
/** Most ingest requests sharing one statement (each holds at most 5,000 spans). */
const INGEST_BATCH = 16;

/**
 * Store the spans of several ingest requests of one tenant (`requests`: none without spans) in
 * ONE statement and transaction, a chained write (db/tenant-writer.ts); one outcome per request,
 * in order (`undefined` once committed).
 * A data exception (SQLSTATE class 22, e.g. a NUL character in a text value) rolls the whole
 * statement back, so each request is then written alone and only the offending one fails with
 * that error (400). Any other error fails every request of the batch.
 */
async function storeIngestBatch(writer: TenantWriter, tenantId: string, requests: repo.SpanBatch[]): Promise<unknown[]> {
  const write = (batches: repo.SpanBatch[]) => writer.write({ tenantId, name: 'parley_spans_insert', statement: repo.insertSpansStatement(tenantId, batches), chain: true });
  try {
    await write(requests);
    return requests.map(() => undefined);
  } catch (err) {
    if (requests.length === 1 || !isDataException(err)) throw err;
    return Promise.all(requests.map((r) => write([r]).then(() => undefined, (e: unknown) => e)));
  }
}

export class TelemetryService {
  /** Ingest requests of a tenant arriving together share one INSERT and one commit. */
  private readonly ingestBatcher: TenantBatcher<repo.SpanBatch, unknown>;

  /**
   * `writer` stores ingested spans (db/tenant-writer.ts); default: drizzle transactions on `db`.
   */
  constructor(private readonly opts: { db: Db; listDefault: number; listMax: number; writer?: TenantWriter }) {
    const writer = opts.writer ?? drizzleTenantWriter(opts.db);
    // Group commit: requests queued while a flush runs go out together in the
    // next one; two flushes in flight (spans have no order to keep, so no lock and no overlap rule),
    // chained on the tenant's writer connection (db/tenant-writer.ts): COMMIT goes with the INSERT
    // and the second flush right behind the first, so PostgreSQL runs them back to back. A request
    // is still answered only after its COMMIT (docs/decisions.md, "Ingest group commit").
    this.ingestBatcher = new TenantBatcher((tenantId, requests) => storeIngestBatch(writer, tenantId, requests), { maxInFlight: 2, maxBatch: INGEST_BATCH });
  }

  /**
   * Validate and store every span of one export request for the calling agent device, answered
   * after COMMIT. The request's rows go in one multi-row INSERT in the tenant's transaction, shared
   * with the tenant's other requests of the moment (group commit). All or nothing per request: 400
   * on any invalid span (see `toSpans`) or on a value PostgreSQL refuses. Returns the count.
   */
  async ingest(tenantId: string, deviceId: string, body: ExportRequestJson): Promise<number> {
    const spans = toSpans(body);
    if (spans.length === 0) return 0;
    const failed = await this.ingestBatcher.submit(tenantId, { deviceId, spans });
    if (failed !== undefined) throw failed;
    return spans.length;
  }

  /** Resolves once no ingest write is queued or in flight (graceful shutdown). */
  drain(): Promise<void> {
    return this.ingestBatcher.drain();
  }

  /** An agent's spans, newest first, keyset-paginated (`next_cursor`). 404 for an unknown agent. */
  async list(tenantId: string, hubId: string, q: TelemetryQuery): Promise<TelemetrySpanPage> {
    return withTenant(this.opts.db, tenantId, async (tx) => {
      const deviceId = await this.agentOf(tx, hubId);
      return this.page(tx, { deviceId, name: q.name, traceId: q.trace_id?.toLowerCase(), statusCode: q.status ? SPAN_STATUSES.indexOf(q.status) : undefined, ...this.window(q) }, q);
    });
  }

  /** Recent spans across the tenant's agents (`GET /dashboard/activity`), newest first. */
  activity(tenantId: string, q: DashboardActivityQuery): Promise<TelemetrySpanPage> {
    return withTenant(this.opts.db, tenantId, (tx) => this.page(tx, {}, q));
  }

  /** Per-name count, error rate and p50/p95 duration over [since, until) (default: the last 24 h). */
  async summary(tenantId: string, hubId: string, q: TelemetrySummaryQuery): Promise<TelemetrySummary> {
    const until = time(q.until, 'until') ?? new Date();
    const since = time(q.since, 'since') ?? new Date(until.getTime() - DAY_MS);
    if (since >= until) throw badRequest('since must be before until');
    return withTenant(this.opts.db, tenantId, async (tx) => {
      const deviceId = await this.agentOf(tx, hubId);
      const rows = await repo.summarize(tx, deviceId, since, until);
      return {
        device_id: deviceId,
        since: since.toISOString(),
        until: until.toISOString(),
        spans: rows.map((r) => ({ name: r.name, count: r.count, error_count: r.errors, error_rate: r.count ? r.errors / r.count : 0, p50_duration_us: Math.round(r.p50), p95_duration_us: Math.round(r.p95) })),
      };
    });
  }

  private window(q: { since?: string; until?: string }) {
    return { since: time(q.since, 'since'), until: time(q.until, 'until') };
  }

  private async page(tx: Tx, f: repo.SpanFilter, q: DashboardActivityQuery): Promise<TelemetrySpanPage> {
    const limit = pageLimit(q.limit, this.opts);
    const before = q.cursor ? decodeKeyset(q.cursor) : undefined;
    const rows = await repo.listSpans(tx, { ...f, before: before && { startTime: before.at, id: before.id } }, limit + 1);
    const more = rows.length > limit;
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return { spans: page.map(toOut), next_cursor: more && last ? encodeKeyset(last.startTime, last.id) : null };
  }

  /** `{hub_id}` = an agent device id or its hub address (design §8.18, hub/agent-ref.ts); 404 when not this tenant's agent. */
  private agentOf(tx: Tx, hubId: string): Promise<string> {
    return resolveAgentId(tx, hubId);
  }
}
