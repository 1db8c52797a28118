/** Telemetry routes (SPEC §4.14): OTLP/HTTP ingest (JSON or protobuf), span queries, summary, dashboard activity. */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { agentDeviceOf, ownerOf } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import { Nullable, Timestamp, Uuid } from '../../http/schemas.js';
import { decodeProtobufRequest, exportResponse, exportResponseProtobuf, MAX_OTLP_BODY_BYTES, OTLP_PROTOBUF, type ExportRequestJson } from './otlp.js';
import { decodeContentEncoding } from './gzip.js';
import { SPAN_STATUSES, type TelemetryService } from './service.js';

const Loose = { additionalProperties: true };
const Span = Type.Object({ traceId: Type.Optional(Type.String()), spanId: Type.Optional(Type.String()), name: Type.Optional(Type.String()) }, Loose);
const ExportRequest = Type.Object(
  {
    resourceSpans: Type.Optional(
      Type.Array(
        Type.Object(
          {
            resource: Type.Optional(Type.Object({ attributes: Type.Optional(Type.Array(Type.Object({}, Loose))) }, Loose)),
            scopeSpans: Type.Optional(Type.Array(Type.Object({ spans: Type.Optional(Type.Array(Span)) }, Loose))),
          },
          Loose,
        ),
      ),
    ),
  },
  { ...Loose, description: 'OTLP ExportTraceServiceRequest (JSON mapping), or its protobuf encoding with Content-Type application/x-protobuf' },
);
const ExportResponse = Type.Object({ partialSuccess: Type.Object({ rejectedSpans: Type.Integer(), errorMessage: Type.String() }) });

const SpanOut = Type.Object({
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
  status: Type.Union(SPAN_STATUSES.map((s) => Type.Literal(s))),
  status_message: Nullable(Type.String()),
  attributes: Type.Record(Type.String(), Type.Unknown()),
  resource: Type.Record(Type.String(), Type.Unknown()),
  received_at: Timestamp,
});
const SpanPage = Type.Object({ spans: Type.Array(SpanOut), next_cursor: Nullable(Type.String()) });
const Page = {
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'a next_cursor value' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
};
const Window = {
  since: Type.Optional(Type.String({ format: 'date-time', description: 'spans started at or after (ISO 8601)' })),
  until: Type.Optional(Type.String({ format: 'date-time', description: 'spans started before (ISO 8601)' })),
};
const HubParams = Type.Object({ hub_id: Type.String({ minLength: 1, maxLength: 255, description: 'agent device_id or hub address' }) });
const tags = ['telemetry'];
const ownerSecurity = [{ ownerJwt: [] }];
const owner = { auth: 'owner' as const };

export const telemetryRoutes: FastifyPluginAsyncTypebox<{ telemetry: TelemetryService }> = async (app, { telemetry }) => {
  app.addContentTypeParser(OTLP_PROTOBUF, { parseAs: 'buffer', bodyLimit: MAX_OTLP_BODY_BYTES }, (_req, body, done) => {
    try {
      done(null, decodeProtobufRequest(body as Buffer));
    } catch (err) {
      done(err as Error, undefined);
    }
  });

  app.post(
    '/telemetry/ingest',
    {
      config: { auth: 'device-or-apikey' },
      bodyLimit: MAX_OTLP_BODY_BYTES,
      // Content-Encoding: gzip (OTLP exporters' `compression: gzip`); the body limit applies after decompression.
      preParsing: decodeContentEncoding,
      schema: {
        tags,
        security: [{ deviceJwt: [] }, { apiKey: [] }],
        summary: 'Ingest OTLP/HTTP trace spans (JSON or protobuf, optionally Content-Encoding: gzip) for the calling agent; all or nothing',
        body: ExportRequest,
        response: { 200: ExportResponse, ...errorResponses(400, 401, 403, 413, 415) },
      },
    },
    async (req, reply) => {
      const agent = agentDeviceOf(req);
      await telemetry.ingest(agent.tenantId, agent.deviceId, req.body as ExportRequestJson);
      const proto = req.headers['content-type']?.startsWith(OTLP_PROTOBUF) ?? false;
      // OTLP/HTTP: the response uses the request's encoding (a Buffer bypasses the JSON serializer).
      if (proto) return reply.type(OTLP_PROTOBUF).send(exportResponseProtobuf(0, '') as never);
      return exportResponse(0, '');
    },
  );

  app.get(
    '/telemetry/:hub_id',
    {
      config: owner,
      schema: {
        tags,
        security: ownerSecurity,
        summary: "An agent's spans, newest first",
        params: HubParams,
        querystring: Type.Object({
          name: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
          trace_id: Type.Optional(Type.String({ pattern: '^[0-9a-fA-F]{32}$' })),
          status: Type.Optional(Type.Union(SPAN_STATUSES.map((s) => Type.Literal(s)))),
          ...Window,
          ...Page,
        }),
        response: { 200: SpanPage, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => telemetry.list(ownerOf(req).tenantId, req.params.hub_id, req.query),
  );

  app.get(
    '/telemetry/:hub_id/summary',
    {
      config: owner,
      schema: {
        tags,
        security: ownerSecurity,
        summary: 'Per span name: count, error rate, p50/p95 duration over a window (default the last 24 h)',
        params: HubParams,
        querystring: Type.Object(Window),
        response: {
          200: Type.Object({
            device_id: Uuid,
            since: Timestamp,
            until: Timestamp,
            spans: Type.Array(
              Type.Object({ name: Type.String(), count: Type.Integer(), error_count: Type.Integer(), error_rate: Type.Number(), p50_duration_us: Type.Number(), p95_duration_us: Type.Number() }),
            ),
          }),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (req) => telemetry.summary(ownerOf(req).tenantId, req.params.hub_id, req.query),
  );

  app.get(
    '/dashboard/activity',
    {
      config: owner,
      schema: { tags, security: ownerSecurity, summary: "Recent spans across the tenant's agents, newest first", querystring: Type.Object(Page), response: { 200: SpanPage, ...errorResponses(400, 401, 403) } },
    },
    async (req) => telemetry.activity(ownerOf(req).tenantId, req.query),
  );
};
