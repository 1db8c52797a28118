/**
 * Shadow sessions and their observations (contract §2.14, §3.4; design §8.8, §8.20).
 */
import { boolean, doublePrecision, index, integer, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, ts } from './columns.js';
import { tenants } from './tenants.js';
import { devices } from './devices.js';

/**
 * Shadow sessions (contract §2.14, §3.4; design §8.8, §8.20): one agent, skill and decision class.
 * `level` shadow | supervised | autonomous; `level_since` starts the evidence that gates count.
 */
export const shadowSessions = pgTable(
  'shadow_sessions',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    deviceId: uuid('device_id').notNull().references(() => devices.id, { onDelete: 'cascade' }),
    skillName: text('skill_name').notNull(),
    decisionClass: text('decision_class').notNull(),
    minObservations: integer('min_observations').notNull(),
    agreementThreshold: doublePrecision('agreement_threshold').notNull(),
    criticalMissWindowHours: doublePrecision('critical_miss_window_hours').notNull(),
    level: text('level').notNull().default('shadow'),
    levelSince: ts('level_since').notNull(),
    createdBy: text('created_by').notNull(),
    createdAt: createdAt(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [index('shadow_sessions_device_idx').on(t.tenantId, t.deviceId)],
);

/** Observations of a shadow session (contract §2.14): the agent's recommendation next to the human decision. */
export const shadowObservations = pgTable(
  'shadow_observations',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    sessionId: uuid('session_id').notNull().references(() => shadowSessions.id, { onDelete: 'cascade' }),
    observationId: text('observation_id').notNull(),
    level: text('level').notNull(),
    agentAction: text('agent_action').notNull(),
    agentConfidence: doublePrecision('agent_confidence'),
    agentReasoning: text('agent_reasoning'),
    humanAction: text('human_action').notNull(),
    humanNotes: text('human_notes'),
    agreed: boolean('agreed').notNull(),
    criticalMiss: boolean('critical_miss').notNull().default(false),
    recordedBy: text('recorded_by').notNull(),
    recordedAt: ts('recorded_at').notNull(),
  },
  (t) => [uniqueIndex('shadow_observations_id_idx').on(t.sessionId, t.observationId), index('shadow_observations_session_idx').on(t.sessionId, t.recordedAt)],
);
