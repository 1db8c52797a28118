/**
 * Tenants, their owner users and invites (contract §2.2; design §5: tenant resolution by membership).
 * The root of the foreign-key graph: every tenant-owned table references `tenants`.
 */
import { index, pgTable, primaryKey, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, ts } from './columns.js';

export const tenants = pgTable('tenants', {
  id: uuid('id').primaryKey(),
  name: text('name').notNull(),
  createdAt: createdAt(),
});

/** Owner users of a tenant (design §5: tenant resolution by membership). */
export const memberships = pgTable(
  'memberships',
  {
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    userSub: text('user_sub').notNull(),
    role: text('role').notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.userSub] }), index('memberships_user_sub_idx').on(t.userSub)],
);

/** contract §2.2. `status` stores active|revoked|consumed; `expired` is derived from `expires_at`. */
export const invites = pgTable(
  'invites',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    tokenHash: text('token_hash').notNull(),
    label: text('label'),
    status: text('status').notNull().default('active'),
    createdBy: text('created_by').notNull(),
    createdAt: createdAt(),
    expiresAt: ts('expires_at').notNull(),
    consumedAt: ts('consumed_at'),
    revokedAt: ts('revoked_at'),
    deletedAt: ts('deleted_at'),
    deviceId: uuid('device_id'),
  },
  (t) => [uniqueIndex('invites_token_hash_idx').on(t.tokenHash), index('invites_tenant_idx').on(t.tenantId)],
);
