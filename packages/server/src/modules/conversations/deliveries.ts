/**
 * Delivered receipts of pairwise messages. A message reached its
 * recipient when its `message` frame was written to one of the recipient's sockets (batched by
 * MessageService) or a history page handed it over; either way it gets one narrow
 * `message_receipts` row, inserted once, and its recipient's `delivered` count goes up in the same
 * statement (`device_message_counts`, the pending count of contract §4 `GET /devices/{id}/pending`).
 *
 * Nothing is looked up: the conversation, sender, recipient and position come with the delivery
 * (the frame or the page), as room envelopes' receipts do (receipts/room-deliveries.ts). Setting
 * `messages.delivered_at` instead was a non-HOT UPDATE of the wide row per message, half of
 * PostgreSQL's work per relayed message (docs/performance.md, "Relay").
 */
import { sql, type SQL } from 'drizzle-orm';
import { arrayLiteral, UUIDS } from '../../db/array-literal.js';
import { insertedItems, insertedOnceAnswer, type InsertedOnce } from '../../db/inserted-once.js';

/**
 * Collection delay of the delivered-receipt batches (message receipts, room envelope receipts),
 * in ms. Short, so each batch is a few hundred rows: at 200 ms a batch of 1,500-2,600 receipts
 * held PostgreSQL for 20-60 ms and its receipt frames then left in one burst, and the sends queued
 * behind both waited (docs/performance.md, "Receipt batches every 20 ms").
 */
export const RECEIPT_BATCH_DELAY_MS = 20;

/**
 * A message that reached its recipient, named with what its delivered receipt needs: the
 * `message_delivered` frame goes to the sender, per conversation, in `seq` order.
 */
export interface DeliveredRef {
  id: string;
  seq: number;
  conversation_id: string;
  sender_device_id: string;
  recipient_device_id: string;
}

/**
 * A message that just became delivered (its `message_receipts` row was inserted by this
 * statement), as the delivered receipts need it (receipts/publisher.ts): each message is answered
 * once, by the statement that delivered it, whatever the number of instances and sockets.
 * `delivered_at` is epoch milliseconds.
 */
export interface DeliveredMessage extends DeliveredRef {
  delivered_at: number;
}

/**
 * The statement recording `refs` delivered now: a `message_receipts` row for each message that had
 * none (`on conflict do nothing`: a message delivered twice, to two sockets or by a live frame and a
 * page, keeps its first time), and the inserted rows added to their recipients' `delivered` counts.
 * Answers ONE row ({@link InsertedOnce}: which refs were new, db/inserted-once.ts). Always the
 * same text (a named prepared statement of the tenant writer). `refs` must be distinct.
 */
export function recordDeliveries(tenantId: string, refs: readonly DeliveredRef[]): SQL {
  return sql`
    with ins as (
      insert into message_receipts (message_id, tenant_id, recipient_device_id, delivered_at)
      select u.id, ${tenantId}::uuid, u.rid, now()
      from unnest(${arrayLiteral(
        refs.map((r) => r.id),
        UUIDS,
      )}::uuid[], ${arrayLiteral(
        refs.map((r) => r.recipient_device_id),
        UUIDS,
      )}::uuid[]) as u(id, rid)
      on conflict do nothing
      returning message_id, recipient_device_id
    ), counted as (${addToCounts(tenantId, 'delivered')})
    ${insertedOnceAnswer(refs.length, sql`message_id::text`)}`;
}

/**
 * A CTE body adding the rows of the statement's `ins` CTE (which returns `recipient_device_id`) to
 * their recipients' `kind` counts (`device_message_counts`), upserted in device order so that
 * concurrent writers never deadlock. The message writer adds to `received`, the receipts to `delivered`.
 */
export function addToCounts(tenantId: string, kind: 'received' | 'delivered'): SQL {
  return sql`
      insert into device_message_counts (tenant_id, device_id, kind, n)
      select ${tenantId}::uuid, recipient_device_id, ${sql.raw(`'${kind}'`)}, count(*) from ins group by recipient_device_id order by recipient_device_id
      on conflict (device_id, kind) do update set n = device_message_counts.n + excluded.n`;
}

/** `refs` without repeats (first kept), by id: a message's frame can reach two sockets of its recipient. */
export function distinctRefs(refs: readonly DeliveredRef[]): DeliveredRef[] {
  const seen = new Set<string>();
  return refs.filter((r) => !seen.has(r.id) && (seen.add(r.id), true));
}

/**
 * The messages a {@link recordDeliveries} write delivered: those of `refs` it inserted, each given
 * its `delivered_at` in place (a live batch delivers thousands; a copy of each ref was a tenth of
 * the delivered path's CPU). The refs are the caller's own.
 */
export function deliveredOf(refs: readonly DeliveredRef[], answer: InsertedOnce): DeliveredMessage[] {
  return insertedItems(answer, refs, (r) => r.id).map((ref) => {
    const m = ref as DeliveredMessage;
    m.delivered_at = answer.at;
    return m;
  });
}
