/**
 * Delivered receipts of room envelopes (design §8.5): per recipient, for
 * pairwise envelopes and for the per-member rows of MLS room messages alike. A `room_message`
 * frame written to a recipient's socket (gateway delivery hook, receipts/frames.ts) is queued and
 * written in batches (about 20 ms, one INSERT per tenant and batch, off the send path); a
 * member-timeline page marks what it hands over at once. Each write records the envelopes that had
 * no receipt yet (`room_receipt_batches`, a row per room message) and publishes
 * `room_message_delivered` for exactly those.
 */
import { sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { arrayLiteral, INTS, UUIDS } from '../../db/array-literal.js';
import { xactLock } from '../../db/locks.js';
import { insertedItems, insertedOnceAnswer, type InsertedOnce } from '../../db/inserted-once.js';
import { withTenant } from '../../db/tenant.js';
import { PendingSet } from '../../lib/pending-set.js';
import { TenantBatcher } from '../../db/batcher.js';
import { RECEIPT_BATCH_DELAY_MS } from '../conversations/index.js';
import type { ReceiptPublisher, ReceivedEnvelope } from './publisher.js';

/** One envelope of a room message, named by its message and its recipient. */
export interface EnvelopeRef {
  roomMessageId: string;
  recipientDeviceId: string;
}

/** A released envelope as its delivery knows it: the frame's (or the page's) room, sender and release position. */
export interface DeliveredEnvelope extends EnvelopeRef {
  roomId: string;
  senderDeviceId: string;
  releaseSeq: number;
}

/**
 * Record that the listed envelopes (distinct) reached their recipients, answering which of them
 * were not recorded before in ONE row ({@link InsertedOnce}, db/inserted-once.ts): per room
 * message, one `room_receipt_batches` row naming its recipients not yet in a row of that message.
 * Run it holding the tenant's {@link receiptsLock}, so a concurrent write (another instance, or a
 * member-timeline page) cannot record, and publish, the same receipt. Always the same text. A
 * receipt is a narrow insert with nothing to look up but the message's earlier rows: the room,
 * sender and position come with the delivery (every ref names a released envelope: a
 * `room_message` frame written to its recipient, or a page that handed it over). A row per
 * envelope doubled PostgreSQL's work per room message, and an UPDATE of the wide envelope row
 * (three index entries) did too.
 */
function insertReceiptsStatement(tenantId: string, refs: readonly EnvelopeRef[]): SQL {
  const messageIds: string[] = [];
  const indexOf = new Map<string, number>();
  const messageIndex = refs.map((r) => {
    let i = indexOf.get(r.roomMessageId);
    if (i === undefined) indexOf.set(r.roomMessageId, (i = messageIds.push(r.roomMessageId)));
    return i;
  });
  const ids = arrayLiteral(messageIds, UUIDS);
  return sql`
    with m as (select * from unnest(${ids}::uuid[]) with ordinality as m(id, i)),
    u as (
      select m.id as mid, r.rid
      from unnest(${arrayLiteral(messageIndex, INTS)}::int[], ${arrayLiteral(
        refs.map((r) => r.recipientDeviceId),
        UUIDS,
      )}::uuid[]) as r(i, rid) join m on m.i = r.i
    ),
    old as (
      select b.room_message_id as mid, unnest(b.recipient_device_ids) as rid
      from room_receipt_batches b where b.room_message_id = any(${ids}::uuid[])
    ),
    new as (select u.mid, u.rid from u where not exists (select 1 from old where old.mid = u.mid and old.rid = u.rid)),
    ins as (
      insert into room_receipt_batches (tenant_id, room_message_id, recipient_device_ids, received_at)
      select ${tenantId}::uuid, mid, array_agg(rid), now() from new group by mid
    )
    ${insertedOnceAnswer(refs.length, sql`mid::text || ':' || rid::text`, 'new')}`;
}

/** The lock key every receipt write of a tenant's room envelopes holds (see {@link insertReceiptsStatement}). */
const receiptsLock = (tenantId: string) => `room-receipts:${tenantId}`;

/** The receipts a write inserted ({@link insertReceiptsStatement}'s answer about `unique`), as the publisher takes them. */
function receivedOf(unique: readonly DeliveredEnvelope[], answer: InsertedOnce): ReceivedEnvelope[] {
  return insertedItems(answer, unique, (r) => `${r.roomMessageId}:${r.recipientDeviceId}`).map((ref) => ({
    room_message_id: ref.roomMessageId,
    room_id: ref.roomId,
    sender_device_id: ref.senderDeviceId,
    recipient_device_id: ref.recipientDeviceId,
    release_seq: ref.releaseSeq,
    received_at: answer.at,
  }));
}

/** Distinct refs (an envelope can reach two sockets of its recipient), first occurrence kept, by room message then recipient. */
function distinct(refs: readonly DeliveredEnvelope[]): DeliveredEnvelope[] {
  const byMessage = new Map<string, Set<string>>();
  const unique: DeliveredEnvelope[] = [];
  for (const r of refs) {
    let recipients = byMessage.get(r.roomMessageId);
    if (!recipients) byMessage.set(r.roomMessageId, (recipients = new Set()));
    if (recipients.has(r.recipientDeviceId)) continue;
    recipients.add(r.recipientDeviceId);
    unique.push(r);
  }
  return unique;
}

export interface RoomDeliveriesDeps {
  db: Db;
  publisher: ReceiptPublisher;
  /** Batch delay in ms (default {@link RECEIPT_BATCH_DELAY_MS}, as the messages' delivered batch). */
  delayMs?: number;
}

/** Records that room envelopes reached their recipients, and publishes their delivered receipts. */
export class RoomDeliveries {
  private readonly batcher: TenantBatcher<DeliveredEnvelope, undefined>;
  /** Room messages with envelopes queued and not written yet, once per envelope (see {@link whenReceived}). */
  private readonly pending = new PendingSet();

  constructor(private readonly deps: RoomDeliveriesDeps) {
    this.batcher = new TenantBatcher(
      async (tenantId, refs) => {
        try {
          await this.record(tenantId, refs);
        } finally {
          this.pending.settle(refs.map((r) => r.roomMessageId));
        }
        return refs.map(() => undefined);
      },
      { maxInFlight: 1, maxBatch: 10_000, delayMs: deps.delayMs ?? RECEIPT_BATCH_DELAY_MS },
    );
  }

  /**
   * Record `refs` (see {@link insertReceiptsStatement}) and publish the receipts that were new.
   * A transaction from the pool, not the pipelined tenant writer: waiting for the tenant's receipt
   * lock (another instance's batch, a page) must not hold up the group-commit writes queued on
   * the writer's connections; a batch every 20 ms or more can afford the round trips.
   */
  private async record(tenantId: string, refs: readonly DeliveredEnvelope[]): Promise<void> {
    const unique = distinct(refs);
    const [answer] = await withTenant(this.deps.db, tenantId, async (tx) => {
      await xactLock(tx, receiptsLock(tenantId));
      return ((await tx.execute(insertReceiptsStatement(tenantId, unique))) as unknown as { rows: InsertedOnce[] }).rows;
    });
    const received = receivedOf(unique, answer!);
    if (received.length > 0) await this.deps.publisher.roomMessagesDelivered(tenantId, received);
  }

  /** A `room_message` frame was written to a socket of its recipient: queue the envelope's delivered receipt (batched). */
  delivered(tenantId: string, ref: DeliveredEnvelope): void {
    this.pending.add(ref.roomMessageId);
    this.batcher.add(tenantId, ref);
  }

  /**
   * The recipient fetched these envelopes (a member-timeline page): mark them received now and
   * publish their receipts before answering.
   */
  async fetched(tenantId: string, refs: readonly DeliveredEnvelope[]): Promise<void> {
    if (refs.length > 0) await this.record(tenantId, refs);
  }

  /**
   * When this instance delivered envelopes of the envelope's room message whose receipts are not
   * written yet: a promise settling once they were written and published (successfully or not);
   * undefined otherwise. Kept per room message, not per envelope: the envelopes of a message are
   * delivered in the same turn and so go in the same batch, and waiting for the others' receipts
   * too costs nothing more.
   */
  whenReceived(ref: EnvelopeRef): Promise<void> | undefined {
    return this.pending.when(ref.roomMessageId);
  }

  /** Wait for queued receipts (graceful shutdown). */
  drain(): Promise<void> {
    return this.batcher.drain();
  }
}
