/**
 * Read marks of delivery and read receipts (issue 20 part 1; docs/decisions.md "Delivery and read
 * receipts"). Delivered times of pairwise messages live on their rows (`messages.delivered_at`), those
 * of room envelopes in the narrow `room_receipts`; a read is not a row per message but a mark per
 * (thread, reader).
 */
import { bigint, index, pgTable, primaryKey, uuid } from 'drizzle-orm/pg-core';
import { ts } from './columns.js';
import { tenants } from './tenants.js';

/**
 * "Read up to here", one row per (thread, reader device): `thread_id` is a pairwise conversation
 * (`up_to` = the `seq` of a message to the reader) or a room (`up_to` = the reader's release
 * position, `room_envelopes.release_seq`). A message to the reader is read when its position is at
 * or before `up_to`; `read_at` is when the mark last moved forward. Marks only move forward; a
 * device or tenant with read receipts off writes none.
 */
export const readMarks = pgTable(
  'read_marks',
  {
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    threadId: uuid('thread_id').notNull(),
    readerDeviceId: uuid('reader_device_id').notNull(),
    upTo: bigint('up_to', { mode: 'number' }).notNull(),
    readAt: ts('read_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.threadId, t.readerDeviceId] }), index('read_marks_tenant_idx').on(t.tenantId)],
);

/**
 * When a room envelope reached its recipient device (delivered receipt; issue 20 part 1): a
 * `room_message` frame written to one of its sockets, or a member-timeline page that handed it over.
 * One narrow row per (room message, recipient), inserted once (receipts/room-deliveries.ts), so
 * recording a delivery does not rewrite the envelope's wide row and its three index entries.
 * No foreign keys (the fan-out hot path, as `room_envelopes`): the `room_messages` delete trigger of
 * migration 0037 removes a message's receipts with its envelopes.
 */
export const roomReceipts = pgTable(
  'room_receipts',
  {
    tenantId: uuid('tenant_id').notNull(),
    roomMessageId: uuid('room_message_id').notNull(),
    recipientDeviceId: uuid('recipient_device_id').notNull(),
    receivedAt: ts('received_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.roomMessageId, t.recipientDeviceId] })],
);
