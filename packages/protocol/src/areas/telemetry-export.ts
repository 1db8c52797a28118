/**
 * Telemetry and audit export to the tenant's own observability backend (
 * docs/decisions.md "Telemetry export"): one OTLP/HTTP endpoint per tenant. Every span ingested
 * for the tenant's agents and every audit event (as an OpenTelemetry LogRecord) is forwarded there
 * through a durable outbox. Header values (API keys) are write-only: reads answer their names.
 */
import { Type, type Static } from '@sinclair/typebox';
import { defineRoute } from '../contract.js';
import { refuseUnknownKeys, Timestamp } from '../common.js';
import { MAX_WEBHOOK_URL_LENGTH } from './devices.js';

/** Most headers of an export endpoint. */
export const MAX_EXPORT_HEADERS = 20;

/** `PUT /settings/telemetry-export` body. */
export const TelemetryExportRequest = refuseUnknownKeys(
  Type.Object(
    {
      url: Type.String({
        minLength: 1,
        maxLength: MAX_WEBHOOK_URL_LENGTH,
        description: 'OTLP/HTTP base URL (e.g. https://otlp.example.com or https://host:4318); spans go to <url>/v1/traces and audit events to <url>/v1/logs, as OTLP JSON. https only and a public address, like webhook URLs',
      }),
      headers: Type.Optional(
        Type.Unsafe<Record<string, string>>({
          type: 'object',
          propertyNames: { pattern: "^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$" },
          additionalProperties: { type: 'string', maxLength: 4096, pattern: '^[^\\r\\n]*$' },
          maxProperties: MAX_EXPORT_HEADERS,
          description: 'HTTP headers sent with every export (e.g. an API key); stored sealed, never answered back',
        }),
      ),
    },
    { additionalProperties: false },
  ),
);
export type TelemetryExportRequest = Static<typeof TelemetryExportRequest>;

/** The tenant's export endpoint as answered by the API: header values are never returned. */
export const TelemetryExportSetting = Type.Object({
  url: Type.String(),
  header_names: Type.Array(Type.String(), { description: 'names of the configured headers (values are write-only)' }),
  updated_at: Timestamp,
  pending: Type.Integer({ minimum: 0, description: 'spans and audit events waiting in the export outbox' }),
  last_error: Type.Union([Type.String(), Type.Null()], { description: 'reason of the most recent failed export attempt still pending, or null' }),
});
export type TelemetryExportSetting = Static<typeof TelemetryExportSetting>;

const tags = ['settings'];

export const telemetryExportRoutes = {
  getTelemetryExport: defineRoute({
    method: 'GET',
    path: '/api/v1/settings/telemetry-export',
    auth: 'owner',
    tags,
    summary: 'The OTLP/HTTP export endpoint (header names only) and the export backlog; 404 when none is set',
    description:
      'The tenant\'s OTLP/HTTP export endpoint: its URL, the names of its headers (values are write-only), when it was set, how many spans and audit events wait in the export outbox and the reason of the latest failed attempt still pending. 404 when no endpoint is set.',
    responses: { 200: TelemetryExportSetting },
    errors: [401, 403, 404],
  }),
  setTelemetryExport: defineRoute({
    method: 'PUT',
    path: '/api/v1/settings/telemetry-export',
    auth: 'owner',
    tags,
    summary: 'Set (replace) the OTLP/HTTP endpoint receiving the tenant\'s spans and audit events',
    description:
      'Sets (replaces) the OTLP/HTTP endpoint that receives the tenant\'s agent spans and audit events, with optional headers (e.g. an API token), sealed at rest and never answered back. Audited without header values; answers the setting. 400 when the URL is refused (not https unless `WEBHOOK_ALLOW_HTTP`, user info, too long, or an IP literal that is not public unless `WEBHOOK_ALLOW_PRIVATE`), or a header is reserved (`Content-Type`, `Host`, …) or given twice.',
    body: TelemetryExportRequest,
    responses: { 200: TelemetryExportSetting },
    errors: [400, 401, 403],
  }),
  deleteTelemetryExport: defineRoute({
    method: 'DELETE',
    path: '/api/v1/settings/telemetry-export',
    auth: 'owner',
    tags,
    summary: 'Stop exporting: remove the endpoint and drop the export backlog',
    description: 'Stops exporting: removes the endpoint and drops the export backlog in one transaction; audited. Answers 204. 404 when no endpoint is set.',
    responses: { 204: null },
    errors: [401, 403, 404],
  }),
};
