/**
 * Telemetry spans (contract §2.15, §4.14) and their per-day roll-ups for the trust engine (contract §3.9;
 * docs/decisions.md "Trust engine": roll-ups).
 */
import { bigint, date, doublePrecision, index, integer, jsonb, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { ts } from './columns.js';
import { tenants } from './tenants.js';

/** Telemetry spans (contract §2.15, §4.14): OTLP spans of a tenant's agents, attributes as JSON. */
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

/**
 * Per-(device, UTC day) roll-ups of telemetry spans (contract §3.9; modules/trust/rollups.ts): exactly
 * what the trust engine derives from a day's spans (`svc.trust` spans excluded). Written only for
 * CLOSED days (before the recompute's day) by the recompute, from raw spans; kept after the raw
 * spans are pruned (TELEMETRY_RETENTION_DAYS). `span_names`: `{name: count}`; `versions`:
 * `{service.version: {spans, errors, firstSeenMs}}` (first start time, epoch ms).
 */
export const telemetrySpanRollups = pgTable(
  'telemetry_span_rollups',
  {
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    day: date('day', { mode: 'string' }).notNull(),
    deviceId: uuid('device_id').notNull(),
    spans: integer('spans').notNull(),
    errorSpans: integer('error_spans').notNull(),
    tasks: integer('tasks').notNull(),
    tasksOk: integer('tasks_ok').notNull(),
    tools: integer('tools').notNull(),
    toolsOk: integer('tools_ok').notNull(),
    taskTokens: doublePrecision('task_tokens').notNull(),
    taskTokensOk: doublePrecision('task_tokens_ok').notNull(),
    recoveredErrors: integer('recovered_errors').notNull(),
    spanNames: jsonb('span_names').notNull(),
    versions: jsonb('versions').notNull(),
    rolledUpAt: ts('rolled_up_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.day, t.deviceId] })],
);

/**
 * (device, UTC day) pairs whose spans changed since their roll-up (a statement trigger on
 * telemetry_spans inserts marks; migration 0025): the recompute re-rolls the closed ones and
 * deletes their marks; the pruning job never deletes spans of a marked pair.
 */
export const telemetryRollupDirty = pgTable(
  'telemetry_rollup_dirty',
  {
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    deviceId: uuid('device_id').notNull(),
    day: date('day', { mode: 'string' }).notNull(),
    markedAt: ts('marked_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.deviceId, t.day] })],
);
