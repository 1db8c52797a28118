/** Telemetry span queries (tenant-scoped transactions; SPEC §2.15, §4.14). */
import { and, desc, eq, gte, lt, or, sql, type SQL } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { telemetrySpans } from '../../db/schema/index.js';
import type { DecodedSpan } from './otlp.js';

export type SpanRow = typeof telemetrySpans.$inferSelect;
export type SpanInsert = DecodedSpan & { id: string; tenantId: string; deviceId: string };

/**
 * Insert spans with ONE statement of array parameters (`unnest`), whatever their number (no-op when
 * empty). The statement trigger `telemetry_spans_mark_rollup_dirty` (migration 0025) marks the
 * (device, UTC day) pairs touched for the trust engine's roll-ups (trust/rollups.ts) in the same
 * transaction: any faster ingest path must still insert through SQL (INSERT or COPY) to fire it.
 */
export async function insertSpans(tx: Tx, rows: SpanInsert[]): Promise<void> {
  if (rows.length === 0) return;
  const col = <T>(f: (r: SpanInsert) => T) => sql.param(rows.map(f));
  await tx.execute(sql`
    insert into telemetry_spans (id, tenant_id, device_id, trace_id, span_id, parent_span_id, name, kind, start_time, end_time,
                                 duration_us, status_code, status_message, attributes, resource)
    select * from unnest(${col((r) => r.id)}::uuid[], ${col((r) => r.tenantId)}::uuid[], ${col((r) => r.deviceId)}::uuid[],
                         ${col((r) => r.traceId)}::text[], ${col((r) => r.spanId)}::text[], ${col((r) => r.parentSpanId)}::text[],
                         ${col((r) => r.name)}::text[], ${col((r) => r.kind)}::integer[], ${col((r) => r.startTime.toISOString())}::timestamptz[],
                         ${col((r) => r.endTime.toISOString())}::timestamptz[], ${col((r) => r.durationUs)}::bigint[],
                         ${col((r) => r.statusCode)}::integer[], ${col((r) => r.statusMessage)}::text[],
                         ${col((r) => JSON.stringify(r.attributes))}::jsonb[], ${col((r) => JSON.stringify(r.resource))}::jsonb[])`);
}

/** Span filters; `before` is the keyset position (start_time, id) of a cursor, exclusive. */
export interface SpanFilter {
  deviceId?: string;
  name?: string;
  traceId?: string;
  statusCode?: number;
  since?: Date;
  until?: Date;
  before?: { startTime: Date; id: string };
}

function where(f: SpanFilter): SQL | undefined {
  const t = telemetrySpans;
  return and(
    f.deviceId ? eq(t.deviceId, f.deviceId) : undefined,
    f.name ? eq(t.name, f.name) : undefined,
    f.traceId ? eq(t.traceId, f.traceId) : undefined,
    f.statusCode !== undefined ? eq(t.statusCode, f.statusCode) : undefined,
    f.since ? gte(t.startTime, f.since) : undefined,
    f.until ? lt(t.startTime, f.until) : undefined,
    f.before ? or(lt(t.startTime, f.before.startTime), and(eq(t.startTime, f.before.startTime), lt(t.id, f.before.id))) : undefined,
  );
}

/** Spans newest first (start_time desc, id desc), at most `limit`. */
export const listSpans = (tx: Tx, f: SpanFilter, limit: number) =>
  tx
    .select()
    .from(telemetrySpans)
    .where(where(f))
    .orderBy(desc(telemetrySpans.startTime), desc(telemetrySpans.id))
    .limit(limit);

/** One summary row: per span name, count, errors and duration percentiles (µs, continuous). */
export interface SummaryRow {
  name: string;
  count: number;
  errors: number;
  p50: number;
  p95: number;
}

/** Per-name aggregates of an agent's spans started in [since, until) (percentile_cont in SQL). */
export async function summarize(tx: Tx, deviceId: string, since: Date, until: Date): Promise<SummaryRow[]> {
  const t = telemetrySpans;
  return tx
    .select({
      name: t.name,
      count: sql<number>`count(*)::int`,
      errors: sql<number>`(count(*) filter (where ${t.statusCode} = 2))::int`,
      p50: sql<number>`percentile_cont(0.5) within group (order by ${t.durationUs})::float8`,
      p95: sql<number>`percentile_cont(0.95) within group (order by ${t.durationUs})::float8`,
    })
    .from(t)
    .where(where({ deviceId, since, until }))
    .groupBy(t.name)
    .orderBy(desc(sql`count(*)`), t.name);
}
