/**
 * Stored rows as the OpenTelemetry SDK's export objects (docs/decisions.md "Telemetry export"):
 * a `telemetry_spans` row as a `ReadableSpan` (@opentelemetry/sdk-trace-base) and an
 * `audit_events` row as a `ReadableLogRecord` (@opentelemetry/sdk-logs), handed to the official
 * OTLP exporters, which serialize them (no hand-written protocol here).
 *
 * Spans keep their trace/span/parent ids, name, kind, status, attributes and resource (plus
 * `parley.device_id`, the ingesting agent); times are the stored start (microseconds, as
 * PostgreSQL keeps them, read through a JS Date: millisecond precision) and start + duration_us.
 * Events and links are not stored at ingest, so none are exported. Nested attribute values
 * (OTLP kvlists) are exported as JSON text: the SDK's attribute values are primitives or arrays.
 *
 * An audit event becomes a LogRecord with body and `event_name` = its type, severity INFO,
 * timestamp = its `created_at`, attributes `parley.audit.{event_id,seq,type,actor,subject,data,hash,prev_hash}`
 * (`data` as JSON text), resource `service.name=parley`, `parley.tenant_id`.
 */
import type { Attributes, AttributeValue, HrTime, SpanKind } from '@opentelemetry/api';
import { SeverityNumber } from '@opentelemetry/api-logs';
import { resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { AuditRow, SpanRow } from './repo.js';

/** The instrumentation scope of everything Parley exports. */
export const EXPORT_SCOPE = { name: 'parley', version: '1' } as const;

/** Milliseconds since the epoch plus extra microseconds as an OpenTelemetry HrTime [s, ns]. */
function hrTime(ms: number, extraUs = 0): HrTime {
  const totalUs = Math.round(ms * 1000) + extraUs;
  const s = Math.floor(totalUs / 1_000_000);
  return [s, (totalUs - s * 1_000_000) * 1000];
}

const isPrimitive = (v: unknown): v is string | number | boolean => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';

/** A stored attribute value as an SDK AttributeValue (homogeneous primitive arrays kept, anything else as JSON text); undefined for null. */
function attributeValue(v: unknown): AttributeValue | undefined {
  if (v === null || v === undefined) return undefined;
  if (isPrimitive(v)) return v;
  if (Array.isArray(v) && v.every(isPrimitive) && new Set(v.map((x) => typeof x)).size <= 1) return v as AttributeValue;
  return JSON.stringify(v);
}

/** A stored attribute object (`{key: value}`) as SDK Attributes. */
export function toAttributes(obj: unknown): Attributes {
  const out: Attributes = {};
  if (obj && typeof obj === 'object' && !Array.isArray(obj)) {
    for (const [k, v] of Object.entries(obj)) {
      const a = attributeValue(v);
      if (a !== undefined) out[k] = a;
    }
  }
  return out;
}

/**
 * Builds resources once per distinct (device, resource attributes) within a batch: the
 * serializer groups spans by resource object, so equal resources must be the same object.
 */
export class ResourceCache {
  private readonly byKey = new Map<string, Resource>();

  /** The resource of a span row: its stored resource attributes plus `parley.device_id`. */
  forSpan(row: SpanRow): Resource {
    const key = `${row.deviceId}\n${JSON.stringify(row.resource)}`;
    let r = this.byKey.get(key);
    if (!r) {
      r = resourceFromAttributes({ ...toAttributes(row.resource), 'parley.device_id': row.deviceId });
      this.byKey.set(key, r);
    }
    return r;
  }

  /** The resource of a tenant's audit log records. */
  forAudit(tenantId: string): Resource {
    const key = `audit\n${tenantId}`;
    let r = this.byKey.get(key);
    if (!r) {
      r = resourceFromAttributes({ 'service.name': 'parley', 'parley.tenant_id': tenantId });
      this.byKey.set(key, r);
    }
    return r;
  }
}

/** A stored span as a ReadableSpan for the OTLP trace exporter. */
export function toReadableSpan(row: SpanRow, resources: ResourceCache): ReadableSpan {
  const start = hrTime(row.startTime.getTime());
  const end = hrTime(row.startTime.getTime(), row.durationUs);
  const context = { traceId: row.traceId, spanId: row.spanId, traceFlags: 1 };
  return {
    name: row.name,
    // Stored: OTLP's SpanKind (0 unspecified, 1 internal … 5 consumer); the SDK's is one less and
    // the serializer adds one back; unspecified stays unspecified (the serializer writes 0 for none).
    kind: (row.kind === 0 ? undefined : row.kind - 1) as SpanKind,
    spanContext: () => context,
    parentSpanContext: row.parentSpanId ? { traceId: row.traceId, spanId: row.parentSpanId, traceFlags: 1 } : undefined,
    startTime: start,
    endTime: end,
    duration: hrTime(0, row.durationUs),
    status: { code: row.statusCode, ...(row.statusMessage ? { message: row.statusMessage } : {}) },
    attributes: toAttributes(row.attributes),
    links: [],
    events: [],
    ended: true,
    resource: resources.forSpan(row),
    instrumentationScope: EXPORT_SCOPE,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}

/** A stored audit event as a ReadableLogRecord for the OTLP log exporter. */
export function toLogRecord(row: AuditRow, resources: ResourceCache): ReadableLogRecord {
  const at = hrTime(row.createdAt.getTime());
  const attributes: Attributes = {
    'parley.audit.event_id': row.id,
    'parley.audit.seq': row.seq,
    'parley.audit.type': row.type,
    'parley.audit.actor': row.actor,
    'parley.audit.data': JSON.stringify(row.data ?? {}),
    'parley.audit.hash': row.hash,
    'parley.audit.prev_hash': row.prevHash,
  };
  if (row.subject) attributes['parley.audit.subject'] = row.subject;
  return {
    hrTime: at,
    hrTimeObserved: at,
    severityNumber: SeverityNumber.INFO,
    severityText: 'INFO',
    body: row.type,
    eventName: row.type,
    resource: resources.forAudit(row.tenantId),
    instrumentationScope: EXPORT_SCOPE,
    attributes,
    droppedAttributesCount: 0,
  };
}
