/**
 * Telemetry spans (SPEC §2.15, §4.14).
 */
import { bigint, index, integer, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { ts } from './columns.js';
import { tenants } from './tenants.js';

/** Telemetry spans (SPEC §2.15, §4.14): OTLP spans of a tenant's agents, attributes as JSON. */
export const telemetrySpans = pgTable(
  'telemetry_spans',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    deviceId: uuid('device_id').notNull(),
    traceId: text('trace_id').notNull(),
    spanId: text('span_id').notNull(),
    parentSpanId: text('parent_span_id'),
    name: text('name').notNull(),
    kind: integer('kind').notNull().default(0),
    startTime: ts('start_time').notNull(),
    endTime: ts('end_time').notNull(),
    durationUs: bigint('duration_us', { mode: 'number' }).notNull(),
    statusCode: integer('status_code').notNull().default(0),
    statusMessage: text('status_message'),
    attributes: jsonb('attributes').notNull().default({}),
    resource: jsonb('resource').notNull().default({}),
    receivedAt: ts('received_at').notNull().defaultNow(),
  },
  (t) => [index('telemetry_spans_device_time_idx').on(t.tenantId, t.deviceId, t.startTime), index('telemetry_spans_name_idx').on(t.tenantId, t.name, t.startTime)],
);
