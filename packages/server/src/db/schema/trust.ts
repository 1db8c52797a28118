/**
 * Trust scoring: score snapshots, per-day dimension values and PSI drift baselines
 * (contract §2.9, §3.9, §4.12). Device presence, also a trust input, lives in `devices.ts`.
 */
import { doublePrecision, index, integer, jsonb, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { ts } from './columns.js';
import { tenants } from './tenants.js';
import { devices } from './devices.js';

/**
 * Trust score snapshots (contract §2.9, §3.9, §4.12): one row per agent, window (`7d`|`30d`|`90d`)
 * and recompute. `dimensions` holds the 12 values 0.0-1.0; `sources` says per dimension whether
 * it came from `telemetry`, the `fleet_median` or the 48-hour `warmup` fallback. The newest row
 * per (device, window) is the current score; the `7d` rows are the history and the tier input.
 */
export const trustSnapshots = pgTable(
  'trust_snapshots',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    deviceId: uuid('device_id').notNull().references(() => devices.id, { onDelete: 'cascade' }),
    window: text('window').notNull(),
    composite: doublePrecision('composite').notNull(),
    dimensions: jsonb('dimensions').notNull(),
    sources: jsonb('sources').notNull().default({}),
    percentile: integer('percentile').notNull(),
    tier: text('tier').notNull(),
    computedAt: ts('computed_at').notNull(),
  },
  (t) => [index('trust_snapshots_device_idx').on(t.tenantId, t.deviceId, t.window, t.computedAt)],
);

/**
 * Per-day dimension values of an agent (UTC day; the input of PSI drift, contract §4.12): only the
 * dimensions that had data that day are present in `dimensions`. Upserted by each recompute.
 */
export const trustDailyScores = pgTable(
  'trust_daily_scores',
  {
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    deviceId: uuid('device_id').notNull().references(() => devices.id, { onDelete: 'cascade' }),
    day: text('day').notNull(),
    dimensions: jsonb('dimensions').notNull(),
    computedAt: ts('computed_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.deviceId, t.day] }), index('trust_daily_scores_tenant_idx').on(t.tenantId, t.deviceId, t.day)],
);

/**
 * PSI drift baselines (contract §4.12): per agent and dimension, the binned distribution (`bins`,
 * proportions summing to 1) of the daily values of the first stable 30-day window, or of the
 * window chosen at the last manual recalibration (`reason` `initial` | `recalibrated`).
 */
export const trustBaselines = pgTable(
  'trust_baselines',
  {
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    deviceId: uuid('device_id').notNull().references(() => devices.id, { onDelete: 'cascade' }),
    dimension: text('dimension').notNull(),
    bins: jsonb('bins').notNull(),
    samples: integer('samples').notNull(),
    windowStart: text('window_start').notNull(),
    windowEnd: text('window_end').notNull(),
    reason: text('reason').notNull(),
    establishedAt: ts('established_at').notNull(),
    establishedBy: text('established_by').notNull(),
  },
  (t) => [primaryKey({ columns: [t.deviceId, t.dimension] }), index('trust_baselines_tenant_idx').on(t.tenantId)],
);
