/**
 * Decision requests (contract §2.4 decision_request, §4.15; design §8.4, §8.19).
 */
import { sql } from 'drizzle-orm';
import { index, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { createdAt, ts } from './columns.js';
import { tenants } from './tenants.js';
import { devices } from './devices.js';

/**
 * Decision requests (contract §2.4 decision_request, §4.15; design §8.4, §8.19): `pending` ->
 * `approved` | `denied` | `deferred` | `expired` (deadline passed, auto_action fired once).
 */
export const decisions = pgTable(
  'decisions',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    deviceId: uuid('device_id').notNull().references(() => devices.id, { onDelete: 'cascade' }),
    title: text('title').notNull(),
    description: text('description'),
    options: jsonb('options').notNull(),
    deadline: ts('deadline'),
    autoAction: jsonb('auto_action'),
    status: text('status').notNull().default('pending'),
    optionId: text('option_id'),
    note: text('note'),
    createdBy: text('created_by').notNull(),
    createdAt: createdAt(),
    resolvedAt: ts('resolved_at'),
    resolvedBy: text('resolved_by'),
  },
  (t) => [index('decisions_tenant_status_idx').on(t.tenantId, t.status), index('decisions_deadline_idx').on(t.deadline).where(sql`status in ('pending', 'deferred')`)],
);
