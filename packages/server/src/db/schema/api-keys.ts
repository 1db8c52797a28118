/**
 * API keys (contract §2.6, §4.8).
 */
import { index, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, ts } from './columns.js';
import { tenants } from './tenants.js';

/**
 * API keys (contract §2.6, §4.8): `svc_agent_sk_{env}_{64 hex}`; only the BLAKE2b-256 hash is
 * stored. `device_id` is the device bound on first use (trust on first use); deleting the key
 * deletes that device.
 */
export const apiKeys = pgTable(
  'api_keys',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    env: text('env').notNull(),
    keyHash: text('key_hash').notNull(),
    /** The first characters of the raw key, for recognising it in lists (`svc_agent_sk_dev_1a2b…`). */
    prefix: text('prefix').notNull(),
    status: text('status').notNull().default('active'),
    deviceId: uuid('device_id'),
    createdBy: text('created_by').notNull(),
    createdAt: createdAt(),
    revokedAt: ts('revoked_at'),
    rotatedFrom: uuid('rotated_from'),
    lastUsedAt: ts('last_used_at'),
  },
  (t) => [uniqueIndex('api_keys_hash_idx').on(t.keyHash), index('api_keys_tenant_idx').on(t.tenantId)],
);
