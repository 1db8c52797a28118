/** Telemetry span queries (tenant-scoped transactions; SPEC §2.15, §4.14). */
import { and, desc, eq, gte, lt, or, sql, type SQL } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { arrayLiteral, INTS, UUIDS, WORDS } from '../../db/array-literal.js';
import { telemetrySpans } from '../../db/schema/index.js';
import type { DecodedSpan } from './otlp.js';

export type SpanRow = typeof telemetrySpans.$inferSelect;
export type SpanInsert = DecodedSpan & { id: string; tenantId: string; deviceId: string };

/**
 * The statement inserting `rows` (one statement whatever their number; call with at least one):
 * ids, times and codes as array literals (db/array-literal.ts), the free text and JSON columns of
 * every row in ONE json parameter zipped with them by `rows from (…)`. The statement trigger
 * `telemetry_spans_mark_rollup_dirty` (migration 0025) marks the (device, UTC day) pairs touched
 * for the trust engine's roll-ups (trust/rollups.ts) in the same transaction: any faster ingest
 * path must still insert through SQL (INSERT or COPY) to fire it.
 */
export function insertSpansStatement(rows: SpanInsert[]): SQL {
  const list = <T extends string | number>(f: (r: SpanInsert) => T, pattern: RegExp) => arrayLiteral(rows.map(f), pattern);
  const free = JSON.stringify(rows.map((r) => [r.name, r.statusMessage, r.attributes, r.resource]));
  return sql`
    insert into telemetry_spans (id, tenant_id, device_id, trace_id, span_id, parent_span_id, name, kind, start_time, end_time,
                                 duration_us, status_code, status_message, attributes, resource)
    select t.id, t.tenant_id, t.device_id, t.trace_id, t.span_id, t.parent_span_id, t.free->>0, t.kind, t.start_time, t.end_time,
           t.duration_us, t.status_code, t.free->>1, (t.free->2)::jsonb, (t.free->3)::jsonb
    from rows from (
      unnest(${list((r) => r.id, UUIDS)}::uuid[], ${list((r) => r.tenantId, UUIDS)}::uuid[], ${list((r) => r.deviceId, UUIDS)}::uuid[],
             ${list((r) => r.traceId, WORDS)}::text[], ${list((r) => r.spanId, WORDS)}::text[], ${list((r) => r.parentSpanId ?? 'NULL', WORDS)}::text[],
             ${list((r) => r.kind, INTS)}::integer[], ${list((r) => r.startTime.toISOString(), WORDS)}::timestamptz[],
             ${list((r) => r.endTime.toISOString(), WORDS)}::timestamptz[], ${list((r) => r.durationUs, INTS)}::bigint[],
             ${list((r) => r.statusCode, INTS)}::integer[]),
      json_array_elements(${free}::json)
    ) as t(id, tenant_id, device_id, trace_id, span_id, parent_span_id, kind, start_time, end_time, duration_us, status_code, free)`;
}

/** Insert spans in `tx` with {@link insertSpansStatement} (no-op when empty). */
export async function insertSpans(tx: Tx, rows: SpanInsert[]): Promise<void> {
  if (rows.length > 0) await tx.execute(insertSpansStatement(rows));
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
