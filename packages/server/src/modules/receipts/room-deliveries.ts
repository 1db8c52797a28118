/**
 * Delivered receipts of room envelopes (issue 20 part 1; DESIGN §8.5): per recipient, for
 * pairwise envelopes and for the per-member rows of MLS room messages alike. A `room_message`
 * frame written to a recipient's socket (gateway delivery hook, receipts/frames.ts) is queued and
 * written in batches (about 200 ms, one UPDATE per tenant and batch, off the send path); a
 * member-timeline page marks what it hands over at once. Each write inserts a `room_receipts` row
 * for the envelopes that had none and publishes `room_message_delivered` for exactly those.
 */
import { sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { arrayLiteral, UUIDS } from '../../db/array-literal.js';
import { drizzleTenantWriter, type TenantWriter } from '../../db/tenant-writer.js';
import { withTenant } from '../../db/tenant.js';
import { PendingSet } from '../../lib/pending-set.js';
import { TenantBatcher } from '../conversations/batcher.js';
import type { ReceiptPublisher, ReceivedEnvelope } from './publisher.js';

/** One envelope of a room message, named by its message and its recipient. */
export interface EnvelopeRef {
  roomMessageId: string;
  recipientDeviceId: string;
}

const keyOf = (e: EnvelopeRef) => `${e.roomMessageId}:${e.recipientDeviceId}`;

/**
 * Record that the listed envelopes reached their recipients: one `room_receipts` row each for the
 * released ones that have none yet, answering those with their room, sender and position
 * ({@link ReceivedEnvelope}). Always the same text. The distinct message ids are given on their
 * own so that PostgreSQL finds the envelopes through `room_envelopes_message_idx` (joined to the
 * (message, recipient) pairs alone it planned a sequential scan of the whole table per batch).
 * A receipt is a narrow insert, not an update of the envelope's wide row (issue 21: the update,
 * with its three index entries, doubled PostgreSQL's work per room message).
 */
function markReceivedStatement(refs: readonly EnvelopeRef[]): SQL {
  return sql`
    with src as materialized (
      select e.tenant_id, e.room_message_id, e.recipient_device_id, e.release_seq, m.room_id, m.sender_device_id
      from unnest(${arrayLiteral(
        refs.map((r) => r.roomMessageId),
        UUIDS,
      )}::uuid[], ${arrayLiteral(
        refs.map((r) => r.recipientDeviceId),
        UUIDS,
      )}::uuid[]) as u(mid, rid)
      join room_envelopes e on e.room_message_id = u.mid and e.recipient_device_id = u.rid
      join room_messages m on m.id = e.room_message_id
      where e.room_message_id = any(${arrayLiteral([...new Set(refs.map((r) => r.roomMessageId))], UUIDS)}::uuid[]) and e.release_seq is not null
    ),
    ins as (
      insert into room_receipts (tenant_id, room_message_id, recipient_device_id, received_at)
      select tenant_id, room_message_id, recipient_device_id, now() from src
      on conflict do nothing
      returning room_message_id, recipient_device_id, received_at
    )
    select ins.room_message_id, src.room_id, src.sender_device_id, ins.recipient_device_id, src.release_seq, ins.received_at
    from ins join src on src.room_message_id = ins.room_message_id and src.recipient_device_id = ins.recipient_device_id`;
}

/** Distinct refs, first occurrence kept. */
function distinct(refs: readonly EnvelopeRef[]): EnvelopeRef[] {
  const seen = new Map<string, EnvelopeRef>();
  for (const r of refs) if (!seen.has(keyOf(r))) seen.set(keyOf(r), r);
  return [...seen.values()];
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
  private readonly batcher: TenantBatcher<EnvelopeRef, undefined>;
  /** Envelopes queued and not written yet, by {@link keyOf} (see {@link whenReceived}). */
  private readonly pending = new PendingSet();
  private readonly writer: TenantWriter;

  constructor(private readonly deps: RoomDeliveriesDeps) {
    this.writer = deps.writer ?? drizzleTenantWriter(deps.db);
    this.batcher = new TenantBatcher(
      async (tenantId, refs) => {
        try {
          const rows = await this.writer.write<ReceivedEnvelope>({ tenantId, name: 'parley_room_envelopes_received', statement: markReceivedStatement(distinct(refs)), pipelineCommit: true });
          if (rows.length > 0) await deps.publisher.roomMessagesDelivered(tenantId, rows);
        } finally {
          this.pending.settle(refs.map(keyOf));
        }
        return refs.map(() => undefined);
      },
      { maxInFlight: 1, maxBatch: 10_000, delayMs: deps.delayMs ?? 200 },
    );
  }

  /** A `room_message` frame was written to a socket of its recipient: queue the envelope's delivered receipt (batched). */
  delivered(tenantId: string, ref: EnvelopeRef): void {
    this.pending.add(keyOf(ref));
    this.batcher.add(tenantId, ref);
  }

  /**
   * The recipient fetched these envelopes (a member-timeline page): mark them received now and
   * publish their receipts before answering.
   */
  async fetched(tenantId: string, refs: readonly EnvelopeRef[]): Promise<void> {
    if (refs.length === 0) return;
    const rows = await withTenant(this.deps.db, tenantId, async (tx) => ((await tx.execute(markReceivedStatement(distinct(refs)))) as unknown as { rows: ReceivedEnvelope[] }).rows);
    if (rows.length > 0) await this.deps.publisher.roomMessagesDelivered(tenantId, rows);
  }

  /**
   * When this instance delivered the envelope and its receipt is not written yet: a promise
   * settling once its batch was written and published (successfully or not); undefined otherwise.
   */
  whenReceived(ref: EnvelopeRef): Promise<void> | undefined {
    return this.pending.when(keyOf(ref));
  }

  /** Wait for queued receipts (graceful shutdown). */
  drain(): Promise<void> {
    return this.batcher.drain();
  }
}
