/**
 * The hash-chained tenant audit log (SPEC §4.14; DESIGN §8.10).
 */
import { bigint, index, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt } from './columns.js';
import { tenants } from './tenants.js';

/**
 * The tenant audit log (SPEC §4.14; DESIGN §8.10): append-only, hash-chained per tenant:
 * `hash = BLAKE2b-256(prev_hash || JCS(event))`; `seq` orders a tenant's chain (1, 2, …).
 */
export const auditEvents = pgTable(
  'audit_events',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    seq: bigint('seq', { mode: 'number' }).notNull(),
    type: text('type').notNull(),
    actor: text('actor').notNull(),
    subject: text('subject'),
    data: jsonb('data').notNull().default({}),
    createdAt: createdAt(),
    prevHash: text('prev_hash').notNull(),
    hash: text('hash').notNull(),
  },
  (t) => [uniqueIndex('audit_events_chain_idx').on(t.tenantId, t.seq), index('audit_events_type_idx').on(t.tenantId, t.type, t.createdAt)],
);
