/**
 * Workspaces and their device members (contract §2.5, §4.13).
 */
import { index, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { createdAt } from './columns.js';
import { tenants } from './tenants.js';
import { devices } from './devices.js';

/** Workspaces (contract §2.5, §4.13): a named group of a tenant's devices. */
export const workspaces = pgTable(
  'workspaces',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    createdBy: text('created_by').notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('workspaces_tenant_idx').on(t.tenantId)],
);

/** Workspace membership of agent devices, with a role (`admin` | `member`). */
export const workspaceMembers = pgTable(
  'workspace_members',
  {
    workspaceId: uuid('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    deviceId: uuid('device_id').notNull().references(() => devices.id, { onDelete: 'cascade' }),
    role: text('role').notNull().default('member'),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.deviceId] }), index('workspace_members_device_idx').on(t.deviceId)],
);
