/**
 * Export of a tenant's spans and audit events to its own OTLP/HTTP endpoint (
 * docs/decisions.md "Telemetry export"): the endpoint setting and the durable export outbox.
 */
import { sql } from 'drizzle-orm';
import { index, integer, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { createdAt, ts } from './columns.js';
import { tenants } from './tenants.js';

/**
 * The tenant's OTLP/HTTP endpoint (at most one). `headers` is the JSON object of header values
 * sealed with the secrets key (lib/secret-box.ts, bound to the tenant), null when there are none;
 * `header_names` their names, answered by reads. Its presence turns on the outbox triggers.
 */
export const telemetryExportSettings = pgTable('telemetry_export_settings', {
  tenantId: uuid('tenant_id').primaryKey().references(() => tenants.id, { onDelete: 'cascade' }),
  url: text('url').notNull(),
  headers: text('headers'),
  headerNames: jsonb('header_names').$type<string[]>().notNull().default([]),
  updatedAt: ts('updated_at').notNull().defaultNow(),
  updatedBy: text('updated_by'),
});

/**
 * The export outbox: one row per span (`kind` 'span') or audit event (`kind` 'audit') to forward,
 * `ref_id` its id. Rows are inserted by statement triggers on `telemetry_spans` / `audit_events`
 * (migration telemetry_export_rls) in the inserting transaction when the tenant has a setting,
 * claimed by the export worker (`FOR UPDATE SKIP LOCKED` + a lease through `next_attempt_at`) and
 * deleted once exported.
 */
export const telemetryExportOutbox = pgTable(
  'telemetry_export_outbox',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    kind: text('kind').notNull(),
    refId: uuid('ref_id').notNull(),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: ts('next_attempt_at').notNull().defaultNow(),
    lastError: text('last_error'),
    createdAt: createdAt(),
  },
  (t) => [index('telemetry_export_outbox_due_idx').on(t.nextAttemptAt), index('telemetry_export_outbox_tenant_idx').on(t.tenantId)],
);
