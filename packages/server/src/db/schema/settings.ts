/**
 * Tenant settings and client-side scan rule sets (contract §4.14; design §8.22).
 */
import { integer, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, ts } from './columns.js';
import { tenants } from './tenants.js';

/** Tenant settings (contract §4.14; design §8.22): one flat JSON object per tenant, validated field by field. */
export const tenantSettings = pgTable('tenant_settings', {
  tenantId: uuid('tenant_id').primaryKey().references(() => tenants.id, { onDelete: 'cascade' }),
  settings: jsonb('settings').notNull().default({}),
  updatedAt: ts('updated_at').notNull().defaultNow(),
  updatedBy: text('updated_by'),
});

/** Versioned client-side scan rule sets (contract §4.14): the newest version is current. */
export const scanRuleSets = pgTable(
  'scan_rule_sets',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    version: integer('version').notNull(),
    rules: jsonb('rules').notNull(),
    createdBy: text('created_by').notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('scan_rule_sets_version_idx').on(t.tenantId, t.version)],
);
