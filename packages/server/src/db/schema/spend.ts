/**
 * Spend caps per agent (modules/spend; docs/decisions.md "Spend caps"): the
 * owner-set caps, the once-per-period alert marks, and the per-(device, UTC day, model) token
 * roll-ups refreshed with the trust engine's span roll-ups from the same dirty marks.
 */
import { bigint, check, date, pgTable, primaryKey, smallint, text, uuid } from 'drizzle-orm/pg-core';
import { sql } from 'drizzle-orm';
import { ts } from './columns.js';
import { devices } from './devices.js';
import { tenants } from './tenants.js';

/**
 * An agent's caps: `unit` `tokens` | `cents`; `daily_limit` / `monthly_limit` in that unit, null =
 * no cap for the period (a row with both null is deleted instead). One row per agent device.
 */
export const agentSpendCaps = pgTable(
  'agent_spend_caps',
  {
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    deviceId: uuid('device_id').notNull().references(() => devices.id, { onDelete: 'cascade' }),
    unit: text('unit').notNull(),
    dailyLimit: bigint('daily_limit', { mode: 'number' }),
    monthlyLimit: bigint('monthly_limit', { mode: 'number' }),
    updatedBy: text('updated_by').notNull(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.deviceId] }), check('agent_spend_caps_unit_check', sql`${t.unit} in ('tokens', 'cents')`)],
);

/**
 * One row per alert that fired: (agent, period `day` | `month`, the period's first UTC day,
 * threshold 80 | 100). The primary key makes an alert fire once across instances: only the
 * transaction whose insert wins notifies and audits.
 */
export const agentSpendAlerts = pgTable(
  'agent_spend_alerts',
  {
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    deviceId: uuid('device_id').notNull().references(() => devices.id, { onDelete: 'cascade' }),
    period: text('period').notNull(),
    periodStart: date('period_start', { mode: 'string' }).notNull(),
    threshold: smallint('threshold').notNull(),
    firedAt: ts('fired_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.deviceId, t.period, t.periodStart, t.threshold] })],
);

/**
 * Token usage per (device, closed UTC day, model): sums of `gen_ai.usage.input_tokens` and
 * `output_tokens` of the day's spans. Rebuilt for exactly the pairs the trust roll-up re-rolls
 * (trust/rollups.ts `rollUpDirtyDays`, same transaction, same marks); kept after raw spans are
 * pruned. A (device, day) still marked in `telemetry_rollup_dirty` is read from raw spans instead.
 */
export const telemetryTokenRollups = pgTable(
  'telemetry_token_rollups',
  {
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    deviceId: uuid('device_id').notNull(),
    day: date('day', { mode: 'string' }).notNull(),
    model: text('model').notNull(),
    inputTokens: bigint('input_tokens', { mode: 'number' }).notNull(),
    outputTokens: bigint('output_tokens', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.deviceId, t.day, t.model] })],
);
