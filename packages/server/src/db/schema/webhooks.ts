/**
 * The webhook outbox (contract §2.3, §6.2; design §8.11).
 */
import { sql } from 'drizzle-orm';
import { index, integer, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { createdAt, ts } from './columns.js';
import { tenants } from './tenants.js';
import { devices } from './devices.js';

/**
 * Webhook outbox (design §8.11): one row per (device, event), claimed by the delivery worker with
 * `FOR UPDATE SKIP LOCKED`; status pending | delivered | failed | cancelled, exponential backoff via
 * `next_attempt_at`.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    deviceId: uuid('device_id').notNull().references(() => devices.id, { onDelete: 'cascade' }),
    eventType: text('event_type').notNull(),
    payload: jsonb('payload').notNull(),
    status: text('status').notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: ts('next_attempt_at').notNull().defaultNow(),
    lastStatus: integer('last_status'),
    lastError: text('last_error'),
    createdAt: createdAt(),
    deliveredAt: ts('delivered_at'),
  },
  (t) => [index('webhook_deliveries_due_idx').on(t.nextAttemptAt).where(sql`status = 'pending'`)],
);
