/**
 * Pairwise conversations, topics and messages (contract §2.4; design §7).
 */
import { sql } from 'drizzle-orm';
import { bigint, boolean, index, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { bytea, createdAt, ts } from './columns.js';
import { tenants } from './tenants.js';

/** A conversation group (`message_group_id`): one agent device and its conversations (design §7). */
export const conversationGroups = pgTable('conversation_groups', {
  id: uuid('id').primaryKey(),
  tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
  agentDeviceId: uuid('agent_device_id').notNull(),
  createdAt: createdAt(),
});

/** A pairwise conversation: `agent_device_id` and `owner_device_id` (design §7). */
export const conversations = pgTable(
  'conversations',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    groupId: uuid('group_id').notNull().references(() => conversationGroups.id, { onDelete: 'cascade' }),
    agentDeviceId: uuid('agent_device_id').notNull(),
    ownerDeviceId: uuid('owner_device_id').notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('conversations_pair_idx').on(t.agentDeviceId, t.ownerDeviceId),
    index('conversations_tenant_idx').on(t.tenantId),
    index('conversations_owner_idx').on(t.ownerDeviceId),
  ],
);

export const topics = pgTable(
  'topics',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    groupId: uuid('group_id').notNull().references(() => conversationGroups.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    isDefault: boolean('is_default').notNull().default(false),
    archived: boolean('archived').notNull().default(false),
    createdAt: createdAt(),
  },
  (t) => [index('topics_group_idx').on(t.groupId)],
);

/**
 * contract §2.4 messages. `seq` is a global identity column giving a total order for cursors;
 * `recipient_device_id` is the other side of the pairwise conversation; when the message reached a
 * socket of the recipient or was fetched by it is its `message_receipts` row. `tenant_id` (RLS) has
 * no foreign key of its own: the conversation's carries it and cascades, and a second check per
 * inserted row was a tenth of the group commit's database time (migration 0032).
 */
export const messages = pgTable(
  'messages',
  {
    id: uuid('id').primaryKey(),
    seq: bigint('seq', { mode: 'number' }).generatedAlwaysAsIdentity(),
    tenantId: uuid('tenant_id').notNull(),
    conversationId: uuid('conversation_id').notNull().references(() => conversations.id, { onDelete: 'cascade' }),
    groupId: uuid('group_id').notNull(),
    topicId: uuid('topic_id').notNull(),
    senderDeviceId: uuid('sender_device_id').notNull(),
    recipientDeviceId: uuid('recipient_device_id').notNull(),
    headerBlob: bytea('header_blob').notNull(),
    ciphertext: bytea('ciphertext').notNull(),
    messageType: text('message_type').notNull(),
    priority: text('priority').notNull(),
    createdAt: ts('created_at').notNull().default(sql`now()`),
  },
  (t) => [
    uniqueIndex('messages_seq_idx').on(t.seq),
    index('messages_conversation_seq_idx').on(t.conversationId, t.seq),
  ],
);
