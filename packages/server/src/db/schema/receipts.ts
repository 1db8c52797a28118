/**
 * Read marks of delivery and read receipts (docs/decisions.md "Delivery and read
 * receipts"). Delivered times of pairwise messages live in the narrow `message_receipts`, those of
 * room envelopes in `room_receipt_batches`; a read is not a row per message but a mark per (thread,
 * reader). A device's count of undelivered messages comes from `device_message_counts`.
 */
import { bigint, index, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
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
 * When room envelopes reached their recipient devices (delivered receipts, issue
 * 21): one row per room message and receipt write, naming every recipient whose envelope of that
 * message the write recorded (a `room_message` frame written to one of its sockets, or a
 * member-timeline page that handed it over). A batch of receipts (about 20 ms of deliveries) is one
 * row per room message instead of one per envelope: a row per envelope cost PostgreSQL as much as
 * the envelopes themselves. An envelope is received when its recipient is in a row of its message
 * (the earliest row gives the time); the writes of a tenant take a lock and add only recipients
 * not recorded yet (receipts/room-deliveries.ts), so each receipt is published once. No foreign
 * keys (the fan-out hot path, as `room_envelopes`): the `room_messages` delete trigger removes a
 * message's receipts with its envelopes.
 */
export const roomReceiptBatches = pgTable(
  'room_receipt_batches',
  {
    tenantId: uuid('tenant_id').notNull(),
    roomMessageId: uuid('room_message_id').notNull(),
    recipientDeviceIds: uuid('recipient_device_ids').array().notNull(),
    receivedAt: ts('received_at').notNull(),
  },
  (t) => [index('room_receipt_batches_message_idx').on(t.roomMessageId)],
);

/**
 * When a pairwise message reached its recipient device (delivered receipt, issue
 * 15): its `message` frame written to one of the recipient's sockets, or a history page that handed
 * it over. One narrow row per message, inserted once (conversations/messages.ts): recording a
 * delivery used to set `messages.delivered_at`, an UPDATE that could never be HOT (the column was in
 * the predicate of the undelivered index), so each one rewrote the wide message row and all its
 * index entries and doubled PostgreSQL's work per message. No foreign key (the relay's hot path):
 * the `messages` delete trigger of migration 0040 removes a message's receipt with it.
 */
export const messageReceipts = pgTable('message_receipts', {
  messageId: uuid('message_id').primaryKey(),
  tenantId: uuid('tenant_id').notNull(),
  recipientDeviceId: uuid('recipient_device_id').notNull(),
  deliveredAt: ts('delivered_at').notNull(),
});

/**
 * Running counts of the pairwise messages addressed to a device (`kind` `received`: rows written to
 * `messages`; `delivered`: their `message_receipts` rows), so `GET /devices/{id}/pending` (contract §4,
 * "count of undelivered messages") is one lookup of two rows instead of a scan of the device's
 * history. The group-commit write adds to `received` and the delivered batch to `delivered`, each in
 * the statement that writes the rows; separate rows, so the two writers never wait for each other's
 * row lock. The `messages` delete trigger (migration 0040) takes deleted messages off both.
 */
export const deviceMessageCounts = pgTable(
  'device_message_counts',
  {
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    deviceId: uuid('device_id').notNull(),
    kind: text('kind', { enum: ['received', 'delivered'] }).notNull(),
    n: bigint('n', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.deviceId, t.kind] }), index('device_message_counts_tenant_idx').on(t.tenantId)],
);
