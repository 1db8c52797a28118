/**
 * Rooms, their members, pairwise room conversations, messages and per-recipient envelopes
 * (contract §2.5, §4.6; design §8.5). A room with a `workspace_id` is a team room.
 */
import { bigint, index, pgSequence, pgTable, primaryKey, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { bytea, createdAt, ts } from './columns.js';
import { tenants } from './tenants.js';
import { devices } from './devices.js';
import { workspaces } from './workspaces.js';

/**
 * Rooms (contract §2.5, §4.6; design §8.5). `timeline_id` is the room's `conversation_id` (its
 * aggregated timeline); a room with a `workspace_id` is a team room. `security_level` is
 * `standard` | `strict`; `archived_at` set = no longer active.
 */
export const rooms = pgTable(
  'rooms',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    timelineId: uuid('timeline_id').notNull(),
    name: text('name').notNull(),
    securityLevel: text('security_level').notNull().default('standard'),
    workspaceId: uuid('workspace_id').references(() => workspaces.id, { onDelete: 'cascade' }),
    createdBy: text('created_by').notNull(),
    createdAt: createdAt(),
    archivedAt: ts('archived_at'),
  },
  (t) => [index('rooms_tenant_idx').on(t.tenantId), index('rooms_workspace_idx').on(t.workspaceId)],
);

/** Room members by device (`kind` copied from the device: owner | agent). */
export const roomMembers = pgTable(
  'room_members',
  {
    roomId: uuid('room_id').notNull().references(() => rooms.id, { onDelete: 'cascade' }),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    deviceId: uuid('device_id').notNull().references(() => devices.id, { onDelete: 'cascade' }),
    kind: text('kind').notNull(),
    joinedAt: ts('joined_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.roomId, t.deviceId] }), index('room_members_device_idx').on(t.deviceId)],
);

/** One pairwise conversation per member pair of a room (`device_a` < `device_b`). */
export const roomConversations = pgTable(
  'room_conversations',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    roomId: uuid('room_id').notNull().references(() => rooms.id, { onDelete: 'cascade' }),
    deviceA: uuid('device_a').notNull(),
    deviceB: uuid('device_b').notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('room_conversations_pair_idx').on(t.roomId, t.deviceA, t.deviceB)],
);

/**
 * Release positions of room envelopes (member timelines, design §8.5): one value per release, i.e.
 * per room message at send time (its sender's position and that of every envelope released with
 * it) and per held envelope at approval. Taken under a per-room transaction lock, so within a room
 * positions commit in order and a member paging by cursor never skips one.
 */
export const roomReleaseSeq = pgSequence('room_release_seq');

/**
 * A room message (timeline entry); its per-recipient ciphertexts are `room_envelopes`. `seq`
 * orders the owner timeline; `release_seq` is the sender's position in its member timeline
 * (set at the end of the sending transaction).
 */
export const roomMessages = pgTable(
  'room_messages',
  {
    id: uuid('id').primaryKey(),
    seq: bigint('seq', { mode: 'number' }).generatedAlwaysAsIdentity(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    roomId: uuid('room_id').notNull().references(() => rooms.id, { onDelete: 'cascade' }),
    senderDeviceId: uuid('sender_device_id').notNull(),
    messageType: text('message_type').notNull(),
    priority: text('priority').notNull(),
    createdAt: createdAt(),
    releaseSeq: bigint('release_seq', { mode: 'number' }),
  },
  (t) => [index('room_messages_room_seq_idx').on(t.roomId, t.seq), index('room_messages_sender_idx').on(t.senderDeviceId, t.createdAt)],
);

/**
 * One envelope per recipient (`recipient_device_id` null = every member, an MLS room's single
 * ciphertext). `outcome` is delivered | held | blocked | notified; a blocked or denied envelope
 * keeps no ciphertext, and an MLS carrier loses its ciphertext once every recipient row is
 * blocked (trigger of migration 0009). `release_seq` (from `room_release_seq`) is set when the
 * envelope is released to its recipient (at send, or at approval when held): the recipient's
 * member-timeline position of the message. When the recipient device received it (delivered
 * receipt) is in the `room_receipt_batches` rows of its message; its read time comes from its
 * reader's `read_marks` row.
 */
export const roomEnvelopes = pgTable(
  'room_envelopes',
  {
    id: uuid('id').primaryKey(),
    // No foreign keys (migrations 0031 and 0037): each check cost one lookup per envelope
    // on the fan-out hot path. Envelopes are only written by the statement that writes their
    // message (rooms/repo.ts), and a statement trigger on room_messages deletes them with it (the
    // cascade the key gave).
    tenantId: uuid('tenant_id').notNull(),
    roomMessageId: uuid('room_message_id').notNull(),
    recipientDeviceId: uuid('recipient_device_id'),
    headerBlob: bytea('header_blob'),
    ciphertext: bytea('ciphertext'),
    outcome: text('outcome').notNull(),
    deliveredAt: ts('delivered_at'),
    releaseSeq: bigint('release_seq', { mode: 'number' }),
  },
  (t) => [index('room_envelopes_message_idx').on(t.roomMessageId), index('room_envelopes_recipient_idx').on(t.recipientDeviceId, t.releaseSeq)],
);
