/**
 * MLS KeyPackage directory (SPEC §1.3; RFC 9420 §10).
 */
import { sql } from 'drizzle-orm';
import { index, pgTable, uuid } from 'drizzle-orm/pg-core';
import { bytea, createdAt, ts } from './columns.js';
import { tenants } from './tenants.js';
import { devices } from './devices.js';

/**
 * MLS KeyPackages (RFC 9420 §10) published by a device and claimed one at a time by whoever adds
 * that device to a group. Opaque bytes to the service.
 */
export const mlsKeyPackages = pgTable(
  'mls_key_packages',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    deviceId: uuid('device_id').notNull().references(() => devices.id, { onDelete: 'cascade' }),
    keyPackage: bytea('key_package').notNull(),
    createdAt: createdAt(),
    claimedAt: ts('claimed_at'),
    claimedBy: uuid('claimed_by'),
  },
  (t) => [index('mls_key_packages_available_idx').on(t.deviceId, t.createdAt).where(sql`claimed_at is null`)],
);
