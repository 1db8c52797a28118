/**
 * The hash-chained tenant audit log (contract §4.14; design §8.10) and the transparency log over it
 * (design §8.33): the Merkle tree's nodes and the signed checkpoints.
 */
import { bigint, index, jsonb, pgTable, primaryKey, smallint, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { bytea, createdAt } from './columns.js';
import { tenants } from './tenants.js';

/**
 * The tenant audit log (contract §4.14; design §8.10): append-only, hash-chained per tenant:
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

/**
 * The tenant's RFC 9162 Merkle tree over its audit events (design §8.33; modules/audit/tree.ts):
 * every complete subtree, written in the transaction that appends the event that completes it.
 * Node (`level`, `idx`) covers leaves [idx * 2^level, (idx + 1) * 2^level); level 0 holds the leaf
 * hashes (leaf idx = seq - 1, input the 32 bytes of the event's chain `hash`). Append-only for the
 * application role, as the events (migration 0027).
 */
export const auditTreeNodes = pgTable(
  'audit_tree_nodes',
  {
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    level: smallint('level').notNull(),
    idx: bigint('idx', { mode: 'number' }).notNull(),
    hash: bytea('hash').notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.level, t.idx] })],
);

/**
 * Every checkpoint the service signed for a tenant (design §8.33): the whole C2SP note, kept so that
 * proofs can be asked for the sizes an owner was given. One per (size, signing key): a rotation
 * signs the sizes asked again with the new key. Append-only for the application role.
 */
export const auditCheckpoints = pgTable(
  'audit_checkpoints',
  {
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    treeSize: bigint('tree_size', { mode: 'number' }).notNull(),
    /** The signed-note key id (8 hex) of the key that was active when it was signed. */
    keyId: text('key_id').notNull(),
    rootHash: bytea('root_hash').notNull(),
    note: text('note').notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.treeSize, t.keyId] })],
);
