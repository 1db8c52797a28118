/**
 * Encrypted attachments and mobile push tokens (contract §2.5, §4.7).
 */
import { bigint, index, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt } from './columns.js';
import { tenants } from './tenants.js';
import { devices } from './devices.js';

/** Encrypted attachments (contract §2.5, §4.7): metadata here, bytes in the blob store. */
export const attachments = pgTable(
  'attachments',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    sizeBytes: bigint('size_bytes', { mode: 'number' }).notNull(),
    contentType: text('content_type').notNull(),
    storageKey: text('storage_key').notNull(),
    uploadedByDevice: uuid('uploaded_by_device'),
    uploadedBySub: text('uploaded_by_sub'),
    createdAt: createdAt(),
  },
  (t) => [index('attachments_tenant_idx').on(t.tenantId)],
);

/** Mobile push tokens per device (contract §4.7). */
export const pushTokens = pgTable(
  'push_tokens',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    deviceId: uuid('device_id').notNull().references(() => devices.id, { onDelete: 'cascade' }),
    platform: text('platform').notNull(),
    token: text('token').notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('push_tokens_device_token_idx').on(t.deviceId, t.token)],
);
