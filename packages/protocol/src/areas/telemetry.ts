/**
 * Telemetry: OTLP/HTTP ingest, span queries, summary, dashboard (contract §2.15, §4.14; design §8.18).
 * An agent exports its trace spans (device JWT or API key; the spans belong to the calling device);
 * the owner reads an agent's spans, a per-name summary and the tenant-wide recent activity.
 */
import { Type, type Static } from '@sinclair/typebox';
import { defineRoute } from '../contract.js';
import { lit, Nullable, Timestamp, Uuid } from '../common.js';
import { CursorPaging, Page } from '../paging.js';

/** Span statuses on the wire (OTLP status codes 0, 1, 2). */
export const SPAN_STATUSES = ['unset', 'ok', 'error'] as const;
export type SpanStatus = (typeof SPAN_STATUSES)[number];

/** The OTLP/HTTP protobuf media type (the JSON mapping is `application/json`). */
export const OTLP_PROTOBUF_MEDIA_TYPE = 'application/x-protobuf';

const Loose = { additionalProperties: true };
const OtlpSpan = Type.Object({ traceId: Type.Optional(Type.String()), spanId: Type.Optional(Type.String()), name: Type.Optional(Type.String()) }, Loose);

/** `POST /api/v1/telemetry/ingest` body: an OTLP ExportTraceServiceRequest (only the outline is checked here; the service validates every span). */
export const OtlpExportRequest = Type.Object(
  {
    resourceSpans: Type.Optional(
      Type.Array(
        Type.Object(
          {
            resource: Type.Optional(Type.Object({ attributes: Type.Optional(Type.Array(Type.Object({}, Loose))) }, Loose)),
            scopeSpans: Type.Optional(Type.Array(Type.Object({ spans: Type.Optional(Type.Array(OtlpSpan)) }, Loose))),
          },
          Loose,
        ),
      ),
    ),
  },
  { ...Loose, description: 'OTLP ExportTraceServiceRequest (JSON mapping), or its protobuf encoding with Content-Type application/x-protobuf' },
);
export type OtlpExportRequest = Static<typeof OtlpExportRequest>;

/** `POST /api/v1/telemetry/ingest` answer (OTLP ExportTraceServiceResponse; protobuf-encoded when the request was). */
export const OtlpExportResponse = Type.Object({ partialSuccess: Type.Object({ rejectedSpans: Type.Integer(), errorMessage: Type.String() }) });
export type OtlpExportResponse = Static<typeof OtlpExportResponse>;

/**
 * Flattened OTLP attributes: any string key. (Not `Type.Record(Type.String(), …)`: its key pattern
 * `^(.*)$` does not match a key with a line break, and the response serializer dropped such keys.)
 */
const Attributes = Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true });

/** A stored telemetry span (contract §2.15): times ISO 8601, `duration_us` microseconds, attributes flattened from OTLP. */
export const TelemetrySpan = Type.Object({
  id: Uuid,
  device_id: Uuid,
  trace_id: Type.String(),
  span_id: Type.String(),
  parent_span_id: Nullable(Type.String()),
  name: Type.String(),
  kind: Type.Integer({ description: 'OTLP SpanKind' }),
  start_time: Timestamp,
  end_time: Timestamp,
  duration_us: Type.Integer(),
  status: lit(SPAN_STATUSES),
  status_message: Nullable(Type.String()),
  attributes: Attributes,
  resource: Attributes,
  received_at: Timestamp,
});
export type TelemetrySpan = Static<typeof TelemetrySpan>;

/** A page of spans, newest first; pass `next_cursor` as `cursor`. */
export const TelemetrySpanPage = Page('spans', TelemetrySpan);
export type TelemetrySpanPage = Static<typeof TelemetrySpanPage>;

const PageFields = CursorPaging({ description: 'a next_cursor value' });
const WindowFields = {
  since: Type.Optional(Type.String({ format: 'date-time', description: 'spans started at or after (ISO 8601)' })),
  until: Type.Optional(Type.String({ format: 'date-time', description: 'spans started before (ISO 8601)' })),
};

/** `{hub_id}`: the agent's device id or hub address (design §8.18). */
export const TelemetryHubParams = Type.Object({ hub_id: Type.String({ minLength: 1, maxLength: 255, description: 'agent device_id or hub address' }) });
export type TelemetryHubParams = Static<typeof TelemetryHubParams>;

/** `GET /api/v1/telemetry/{hub_id}` filters (`since` inclusive, `until` exclusive, on start_time). */
export const TelemetryQuery = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  trace_id: Type.Optional(Type.String({ pattern: '^[0-9a-fA-F]{32}$' })),
  status: Type.Optional(lit(SPAN_STATUSES)),
  ...WindowFields,
  ...PageFields,
});
export type TelemetryQuery = Static<typeof TelemetryQuery>;

/** `GET /api/v1/telemetry/{hub_id}/summary` query: the window [since, until) (default the last 24 h). */
export const TelemetrySummaryQuery = Type.Object(WindowFields);
export type TelemetrySummaryQuery = Static<typeof TelemetrySummaryQuery>;

/** `GET /api/v1/dashboard/activity` query: paging (`cursor` = the previous `next_cursor`). */
export const DashboardActivityQuery = Type.Object(PageFields);
export type DashboardActivityQuery = Static<typeof DashboardActivityQuery>;

/** Per-name summary entry (`error_rate` in [0, 1]; durations in whole µs, continuous percentiles rounded). */
export const TelemetrySummaryEntry = Type.Object({
  name: Type.String(),
  count: Type.Integer(),
  error_count: Type.Integer(),
  error_rate: Type.Number(),
  p50_duration_us: Type.Number(),
  p95_duration_us: Type.Number(),
});
export type TelemetrySummaryEntry = Static<typeof TelemetrySummaryEntry>;

/** `GET /api/v1/telemetry/{hub_id}/summary`: per span name over [since, until) (durations µs). */
export const TelemetrySummary = Type.Object({ device_id: Uuid, since: Timestamp, until: Timestamp, spans: Type.Array(TelemetrySummaryEntry) });
export type TelemetrySummary = Static<typeof TelemetrySummary>;

const tags = ['telemetry'];

/** Route rows of this area. */
export const telemetryRoutes = {
  ingestTelemetry: defineRoute({
    method: 'POST',
    path: '/api/v1/telemetry/ingest',
    auth: 'device-or-apikey',
    tags,
    summary: 'Ingest OTLP/HTTP trace spans (JSON or protobuf, optionally Content-Encoding: gzip) for the calling agent; all or nothing',
    description:
      'The calling agent exports OpenTelemetry trace spans over OTLP/HTTP (an `ExportTraceServiceRequest` as JSON or protobuf, optionally `Content-Encoding: gzip`); the spans are stored for the agent and feed its trust score. All or nothing: one invalid span refuses the whole request. Answers an `ExportTraceServiceResponse` in the request\'s encoding. 400 when the body is not a valid request, has more than 5000 spans, or a span is invalid (ids not hex or all zero, end before start, name not 1 to 256 characters, unknown kind or status code); the detail names the span. 403 when the caller is an owner device or an API key without registered key material. 413 when the body, after decompression, is larger than 4 MiB. 415 for another content type or a `Content-Encoding` other than gzip or identity.',
    body: OtlpExportRequest,
    contentTypes: ['application/json', OTLP_PROTOBUF_MEDIA_TYPE],
    responses: { 200: OtlpExportResponse },
    errors: [400, 401, 403, 413, 415],
  }),
  listTelemetry: defineRoute({
    method: 'GET',
    path: '/api/v1/telemetry/{hub_id}',
    auth: 'owner',
    tags,
    summary: "An agent's spans, newest first",
    description:
      'An agent\'s stored spans, newest first, filtered by span name, trace id, status and a `since`/`until` window, paged by `cursor` (the previous page\'s `next_cursor`) and `limit`. 400 when `since`, `until` or `cursor` is malformed. 404 when `{agent_id}` (a device id or hub address) names no agent of the tenant.',
    params: TelemetryHubParams,
    query: TelemetryQuery,
    responses: { 200: TelemetrySpanPage },
    errors: [400, 401, 403, 404],
  }),
  getTelemetrySummary: defineRoute({
    method: 'GET',
    path: '/api/v1/telemetry/{hub_id}/summary',
    auth: 'owner',
    tags,
    summary: 'Per span name: count, error rate, p50/p95 duration over a window (default the last 24 h)',
    description:
      'Per span name of an agent: count, error count and rate, and p50/p95 duration in microseconds over [`since`, `until`) (default: the 24 hours before now). 400 when a bound is not an ISO 8601 timestamp or `since` is not before `until`. 404 when `{agent_id}` (a device id or hub address) names no agent of the tenant.',
    params: TelemetryHubParams,
    query: TelemetrySummaryQuery,
    responses: { 200: TelemetrySummary },
    errors: [400, 401, 403, 404],
  }),
  getDashboardActivity: defineRoute({
    method: 'GET',
    path: '/api/v1/dashboard/activity',
    auth: 'owner',
    tags,
    summary: "Recent spans across the tenant's agents, newest first",
    description:
      'The most recent spans across every agent of the tenant, newest first, paged by `cursor` and `limit`, for the web app\'s activity feed. 400 when `cursor` is malformed.',
    query: DashboardActivityQuery,
    responses: { 200: TelemetrySpanPage },
    errors: [400, 401, 403],
  }),
};
