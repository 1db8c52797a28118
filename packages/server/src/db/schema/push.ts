/**
 * The push outbox (design §8.36 "Push delivery"): one row per (push registration, event kind),
 * claimed by the push worker with `FOR UPDATE SKIP LOCKED`. A row is the collapse window of its
 * registration and kind: events that arrive while it is pending add to `count` and replace
 * `payload`, and the next push of the same kind is due no sooner than 10 s after `last_sent_at`.
 */
import { sql } from 'drizzle-orm';
import { boolean, index, integer, jsonb, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { createdAt, ts } from './columns.js';
import { devices } from './devices.js';
import { pushTokens } from './attachments.js';
import { tenants } from './tenants.js';

/**
 * Push outbox rows. `status`: pending (a push is due at `next_attempt_at`) | sent (the window's
 * push went out; the row waits for the next event) | failed (given up after the last attempt).
 * `count` is the number of events collapsed since the last push; `sending_count` the part of it the
 * attempt in flight carries (events arriving meanwhile stay for the next push). `payload` is the
 * metadata of the newest event without `count` (never content).
 */
export const pushDeliveries = pgTable(
  'push_deliveries',
  {
    pushTokenId: uuid('push_token_id').notNull().references(() => pushTokens.id, { onDelete: 'cascade' }),
    kind: text('kind').notNull(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    deviceId: uuid('device_id').notNull().references(() => devices.id, { onDelete: 'cascade' }),
    payload: jsonb('payload').notNull(),
    count: integer('count').notNull().default(0),
    sendingCount: integer('sending_count').notNull().default(0),
    urgent: boolean('urgent').notNull().default(false),
    status: text('status').notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: ts('next_attempt_at').notNull().defaultNow(),
    lastSentAt: ts('last_sent_at'),
    lastStatus: integer('last_status'),
    lastError: text('last_error'),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.pushTokenId, t.kind] }), index('push_deliveries_due_idx').on(t.nextAttemptAt).where(sql`status = 'pending'`)],
);
