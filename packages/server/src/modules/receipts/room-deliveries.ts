/**
 * Delivered receipts of room envelopes (issue 20 part 1; DESIGN §8.5): per recipient, for
 * pairwise envelopes and for the per-member rows of MLS room messages alike. A `room_message`
 * frame written to a recipient's socket (gateway delivery hook, receipts/frames.ts) is queued and
 * written in batches (about 200 ms, one INSERT per tenant and batch, off the send path); a
 * member-timeline page marks what it hands over at once. Each write inserts a `room_receipts` row
 * for the envelopes that had none and publishes `room_message_delivered` for exactly those.
 */
import { sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { arrayLiteral, UUIDS } from '../../db/array-literal.js';
import { insertedItems, insertedOnceAnswer, type InsertedOnce } from '../../db/inserted-once.js';
import { drizzleTenantWriter, type TenantWriter } from '../../db/tenant-writer.js';
import { withTenant } from '../../db/tenant.js';
import { PendingSet } from '../../lib/pending-set.js';
import { TenantBatcher } from '../../db/batcher.js';
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
 * Record that the listed envelopes reached their recipients: one `room_receipts` row each that
 * did not exist yet, answering which ones those were in ONE row ({@link InsertedOnce},
 * db/inserted-once.ts). Always the same text. A receipt is a narrow insert with nothing to look
 * up: the room, sender and position come with the delivery (every ref names a released envelope:
 * a `room_message` frame written to its recipient, or a page that handed it over), where an
 * UPDATE of the wide envelope row (three index entries) after finding it doubled PostgreSQL's work
 * per room message (issue 21).
 */
function insertReceiptsStatement(tenantId: string, refs: readonly EnvelopeRef[]): SQL {
  return sql`
    with ins as (
      insert into room_receipts (tenant_id, room_message_id, recipient_device_id, received_at)
      select ${tenantId}::uuid, u.mid, u.rid, now()
      from unnest(${arrayLiteral(
        refs.map((r) => r.roomMessageId),
        UUIDS,
      )}::uuid[], ${arrayLiteral(
        refs.map((r) => r.recipientDeviceId),
        UUIDS,
      )}::uuid[]) as u(mid, rid)
      on conflict do nothing
      returning room_message_id, recipient_device_id
    )
    ${insertedOnceAnswer(refs.length, sql`room_message_id::text || ':' || recipient_device_id::text`)}`;
}

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
  /** The pipelined tenant writer of the batched writes (db/tenant-writer.ts); drizzle transactions without it. */
  writer?: TenantWriter;
  /** Batch delay in ms (default 200, as the messages' delivered batch). */
  delayMs?: number;
}

/** Records that room envelopes reached their recipients, and publishes their delivered receipts. */
export class RoomDeliveries {
  private readonly batcher: TenantBatcher<DeliveredEnvelope, undefined>;
  /** Room messages with envelopes queued and not written yet, once per envelope (see {@link whenReceived}). */
  private readonly pending = new PendingSet();
  private readonly writer: TenantWriter;

  constructor(private readonly deps: RoomDeliveriesDeps) {
    this.writer = deps.writer ?? drizzleTenantWriter(deps.db);
    this.batcher = new TenantBatcher(
      async (tenantId, refs) => {
        try {
          const unique = distinct(refs);
          const [answer] = await this.writer.write<InsertedOnce>({ tenantId, name: 'parley_room_receipts_insert', statement: insertReceiptsStatement(tenantId, unique), pipelineCommit: true });
          const received = receivedOf(unique, answer!);
          if (received.length > 0) await deps.publisher.roomMessagesDelivered(tenantId, received);
        } finally {
          this.pending.settle(refs.map((r) => r.roomMessageId));
        }
        return refs.map(() => undefined);
      },
      { maxInFlight: 1, maxBatch: 10_000, delayMs: deps.delayMs ?? 200 },
    );
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
    if (refs.length === 0) return;
    const unique = distinct(refs);
    const [answer] = await withTenant(this.deps.db, tenantId, async (tx) => ((await tx.execute(insertReceiptsStatement(tenantId, unique))) as unknown as { rows: InsertedOnce[] }).rows);
    const received = receivedOf(unique, answer!);
    if (received.length > 0) await this.deps.publisher.roomMessagesDelivered(tenantId, received);
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
