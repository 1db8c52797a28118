/** Telemetry span queries (tenant-scoped transactions; contract §2.15, §4.14). */
import { and, desc, eq, gte, lt, or, sql, type SQL } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { arrayLiteral, INTS, UUIDS, WORDS } from '../../db/array-literal.js';
import { timeOrderedId } from '../../lib/ids.js';
import { SPAN_FAILED } from '../../lib/span-attrs.js';
import { telemetrySpans } from '../../db/schema/index.js';
import type { DecodedSpan } from './otlp.js';

export type SpanRow = typeof telemetrySpans.$inferSelect;
/** The spans of one ingest request, all of them the calling agent device's (contract §4.14). */
export interface SpanBatch {
  deviceId: string;
  spans: DecodedSpan[];
}

/**
 * The statement inserting the spans of `batches` for `tenantId` (one statement whatever their
 * number; call with at least one span). Ids are time-ordered (UUID version 7, as
 * `timeOrderedId` in lib/ids.ts): this statement's millisecond prefix, the random rest drawn by
 * PostgreSQL (`gen_random_uuid()`), so the rows land on the right-most pages of the primary key
 * (random ids measured about 15% slower ingest). The tenant is one parameter, and each row names
 * its batch's device by index into one array. Span ids, kinds, times (epoch ms, added as whole
 * seconds plus milliseconds: a product of ms and `interval '1 millisecond'` is floating point and
 * drifts by microseconds after year 4000), durations and codes travel as array literals
 * (db/array-literal.ts); the name, status message, attributes and resource index of every row as
 * ONE jsonb parameter (one `JSON.stringify`, parsed once), and the distinct resources (a request's
 * spans share theirs) as another. The statement trigger
 * `telemetry_spans_mark_rollup_dirty` (migration 0025) marks the (device, UTC day) pairs touched
 * for the trust engine's roll-ups (trust/rollups.ts) in the same transaction: any faster ingest
 * path must still insert through SQL (INSERT or COPY) to fire it.
 */
export function insertSpansStatement(tenantId: string, batches: readonly SpanBatch[]): SQL {
  const device: number[] = [];
  const traceId: string[] = [];
  const spanId: string[] = [];
  const parent: string[] = [];
  const kind: number[] = [];
  const start: number[] = [];
  const end: number[] = [];
  const duration: number[] = [];
  const code: number[] = [];
  const free: [string, string | null, Record<string, unknown>, number][] = [];
  const resources = new Map<Record<string, unknown>, number>();
  batches.forEach((b, i) => {
    for (const r of b.spans) {
      device.push(i + 1);
      traceId.push(r.traceId);
      spanId.push(r.spanId);
      parent.push(r.parentSpanId ?? 'NULL');
      kind.push(r.kind);
      start.push(r.startTime.getTime());
      end.push(r.endTime.getTime());
      duration.push(r.durationUs);
      code.push(r.statusCode);
      let resource = resources.get(r.resource);
      if (resource === undefined) resources.set(r.resource, (resource = resources.size));
      free.push([r.name, r.statusMessage, r.attributes, resource]);
    }
  });
  const devices = arrayLiteral(batches.map((b) => b.deviceId), UUIDS);
  return sql`
    insert into telemetry_spans (id, tenant_id, device_id, trace_id, span_id, parent_span_id, name, kind, start_time, end_time,
                                 duration_us, status_code, status_message, attributes, resource)
    select (${timeOrderedId().slice(0, 15)} || substr(gen_random_uuid()::text, 16))::uuid, ${tenantId}::uuid, ((select ${devices}::uuid[]))[t.device], t.trace_id, t.span_id, t.parent_span_id,
           t.free->>0, t.kind, timestamptz 'epoch' + (t.start_ms / 1000) * interval '1 second' + (t.start_ms % 1000) * interval '1 millisecond',
           timestamptz 'epoch' + (t.end_ms / 1000) * interval '1 second' + (t.end_ms % 1000) * interval '1 millisecond', t.duration_us, t.status_code, t.free->>1, t.free->2,
           ((select ${JSON.stringify([...resources.keys()])}::jsonb)) -> ((t.free->>3)::integer)
    from rows from (
      unnest(${arrayLiteral(device, INTS)}::integer[], ${arrayLiteral(traceId, WORDS)}::text[], ${arrayLiteral(spanId, WORDS)}::text[],
             ${arrayLiteral(parent, WORDS)}::text[], ${arrayLiteral(kind, INTS)}::integer[], ${arrayLiteral(start, INTS)}::bigint[],
             ${arrayLiteral(end, INTS)}::bigint[], ${arrayLiteral(duration, INTS)}::bigint[], ${arrayLiteral(code, INTS)}::integer[]),
      jsonb_array_elements(${JSON.stringify(free)}::jsonb)
    ) as t(device, trace_id, span_id, parent_span_id, kind, start_ms, end_ms, duration_us, status_code, free)`;
}

/** Insert `spans` of `deviceId` in `tx` with {@link insertSpansStatement} (no-op when empty). */
export async function insertSpans(tx: Tx, tenantId: string, deviceId: string, spans: DecodedSpan[]): Promise<void> {
  if (spans.length > 0) await tx.execute(insertSpansStatement(tenantId, [{ deviceId, spans }]));
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

/** One summary row: per span name, count, failed spans (status ERROR or `error.type`: lib/span-attrs.ts) and duration percentiles (µs, continuous). */
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
      errors: sql<number>`(count(*) filter (where ${SPAN_FAILED}))::int`,
      p50: sql<number>`percentile_cont(0.5) within group (order by ${t.durationUs})::float8`,
      p95: sql<number>`percentile_cont(0.95) within group (order by ${t.durationUs})::float8`,
    })
    .from(t)
    .where(where({ deviceId, since, until }))
    .groupBy(t.name)
    .orderBy(desc(sql`count(*)`), t.name);
}
