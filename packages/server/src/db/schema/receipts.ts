/**
 * Read marks of delivery and read receipts (issue 20 part 1; docs/decisions.md "Delivery and read
 * receipts"). Delivered times live on the per-recipient rows (`messages.delivered_at`,
 * `room_envelopes.received_at`); a read is not a row per message but a mark per (thread, reader).
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
