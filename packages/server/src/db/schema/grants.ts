/**
 * Skill Permission Tokens (design §8.7; the skill grants of the trust tiers, contract §2.9).
 */
import { index, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { ts } from './columns.js';
import { tenants } from './tenants.js';
import { devices } from './devices.js';

/**
 * Skill Permission Tokens (design §8.7): one row per issued SPT (`jti`). The revocation list is
 * the rows with `revoked_at` set; an SPT is active while not revoked and `expires_at` is ahead.
 * `tier` is the trust tier the grant was issued under (a downgrade below it revokes the grant).
 */
export const skillGrants = pgTable(
  'skill_grants',
  {
    jti: uuid('jti').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    deviceId: uuid('device_id').notNull().references(() => devices.id, { onDelete: 'cascade' }),
    subject: text('subject').notNull(),
    skill: text('skill').notNull(),
    tier: text('tier').notNull(),
    audience: text('audience').notNull(),
    issuedBy: text('issued_by').notNull(),
    issuedAt: ts('issued_at').notNull(),
    expiresAt: ts('expires_at').notNull(),
    revokedAt: ts('revoked_at'),
    revokedReason: text('revoked_reason'),
  },
  (t) => [index('skill_grants_device_idx').on(t.tenantId, t.deviceId, t.expiresAt)],
);
