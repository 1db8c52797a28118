/**
 * Telemetry routes (contract §4.14; design §8.18): OTLP/HTTP ingest (JSON or protobuf, optionally
 * gzip-compressed), span queries, summary, dashboard activity. The protobuf content-type parser
 * and the gzip `preParsing` hook are the ingest route's own; the schemas are the contract's.
 */
import { ROUTES } from '@parley/protocol';
import type { FastifyPluginAsync } from 'fastify';
import { agentDeviceOf, ownerOf } from '../../http/auth.js';
import { serve } from '../../http/contract.js';
import { decodeProtobufRequest, exportResponse, exportResponseProtobuf, MAX_OTLP_BODY_BYTES, OTLP_PROTOBUF, type ExportRequestJson } from './otlp.js';
import { decodeContentEncoding } from './gzip.js';
import type { TelemetryService } from './service.js';

export const telemetryRoutes: FastifyPluginAsync<{ telemetry: TelemetryService }> = async (app, { telemetry }) => {
  app.addContentTypeParser(OTLP_PROTOBUF, { parseAs: 'buffer', bodyLimit: MAX_OTLP_BODY_BYTES }, (_req, body, done) => {
    try {
      done(null, decodeProtobufRequest(body as Buffer));
    } catch (err) {
      done(err as Error, undefined);
    }
  });

  serve(
    app,
    ROUTES.ingestTelemetry,
    async (req, reply) => {
      const agent = agentDeviceOf(req);
      await telemetry.ingest(agent.tenantId, agent.deviceId, req.body as ExportRequestJson);
      const proto = req.headers['content-type']?.startsWith(OTLP_PROTOBUF) ?? false;
      // OTLP/HTTP: the response uses the request's encoding (a Buffer bypasses the JSON serializer).
      if (proto) return reply.type(OTLP_PROTOBUF).send(exportResponseProtobuf(0, '') as never);
      return exportResponse(0, '');
    },
    // Content-Encoding: gzip (OTLP exporters' `compression: gzip`); the body limit applies after decompression.
    { bodyLimit: MAX_OTLP_BODY_BYTES, preParsing: decodeContentEncoding },
  );

  serve(app, ROUTES.listTelemetry, async (req) => telemetry.list(ownerOf(req).tenantId, req.params.hub_id, req.query));
  serve(app, ROUTES.getTelemetrySummary, async (req) => telemetry.summary(ownerOf(req).tenantId, req.params.hub_id, req.query));
  serve(app, ROUTES.getDashboardActivity, async (req) => telemetry.activity(ownerOf(req).tenantId, req.query));
};
