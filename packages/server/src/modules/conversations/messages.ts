/**
 * Messages (contract §2.4, §4.5, §6.1 rule 1; design §6, §7). The service stores only ciphertext:
 * `header_blob` and `ciphertext` arrive base64 and are stored as bytes, never inspected.
 *
 * Sending: the sender must be one side of the pairwise conversation; the message is written by a
 * group-commit batcher, acknowledged after commit, then published on the bus to the recipient
 * device and the sender's other sockets. History: oldest first with an opaque, total-ordered
 * cursor (the global `seq`); `since` takes a cursor or an ISO timestamp (exclusive), each entry
 * with its recipient's delivered and read times. Delivered: a live frame written to a recipient
 * socket (batched, ~20 ms) or a page the recipient fetched inserts the message's receipt
 * (deliveries.ts), and the messages it delivered go to `onDelivered` (the delivered receipts,
 * modules/receipts).
 */
import type { DeviceHistoryQuery, MessageInput, StoredMessage } from '@parley/protocol';
import { and, asc, desc, eq, gt, or, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { conversations, messageReceipts, messages, readMarks, topics } from '../../db/schema/index.js';
import { arrayLiteral, INTS, UUIDS, WORDS } from '../../db/array-literal.js';
import { drizzleTenantWriter, type TenantWriter } from '../../db/tenant-writer.js';
import { withTenant } from '../../db/tenant.js';
import { badRequest, forbidden, notFound } from '../../lib/errors.js';
import { BoundedCache } from '../../lib/bounded-cache.js';
import { blobsOut, decodeEnvelope, type EnvelopeBlobs } from '../../lib/envelope.js';
import { timeOrderedId } from '../../lib/ids.js';
import type { Notifier } from '../../realtime/notifier.js';
import { messageDeliveriesFrom } from '../webhooks/index.js';
import type { Metrics } from '../../lib/metrics.js';
import { TenantBatcher } from '../../db/batcher.js';
import { addToCounts, deliveredOf, distinctRefs, RECEIPT_BATCH_DELAY_MS, recordDeliveries, type DeliveredMessage, type DeliveredRef } from './deliveries.js';
import type { InsertedOnce } from '../../db/inserted-once.js';
import { pageLimit, parseSince } from '../../lib/paging.js';
import { PendingSet } from '../../lib/pending-set.js';

/** Body of `POST /conversations/{id}/messages` (with the path's conversation) and of the `message` send frame. */
export type SendInput = MessageInput & { conversation_id: string };

/** A stored message on the wire (history entries and `message` receive frames). */
export type MessageOut = StoredMessage;

/** History query of a conversation, or of a device (optionally one conversation). */
type HistoryQuery = DeviceHistoryQuery;

interface ConversationInfo {
  groupId: string;
  agentDeviceId: string;
  ownerDeviceId: string;
  defaultTopicId: string;
}

type NewMessage = typeof messages.$inferInsert;
/** A validated message row, ready to commit, with its blobs' base64 as received (sent back as is). */
export type PreparedMessage = Required<Omit<NewMessage, 'seq'>> & { wire: EnvelopeBlobs };
type MessageRow = typeof messages.$inferSelect;

/**
 * A stored message on the wire. `wire` gives the blobs' base64 when the caller still has it (the
 * send path), so they are not encoded again.
 */
export function toMessageOut(
  m: Pick<MessageRow, 'id' | 'seq' | 'conversationId' | 'senderDeviceId' | 'headerBlob' | 'ciphertext' | 'createdAt' | 'messageType' | 'priority' | 'topicId' | 'groupId'>,
  wire?: EnvelopeBlobs,
): MessageOut {
  return {
    message_id: m.id,
    conversation_id: m.conversationId,
    sender_device_id: m.senderDeviceId,
    ...(wire ?? blobsOut(m)),
    timestamp: m.createdAt.toISOString(),
    message_type: m.messageType,
    priority: m.priority,
    topic_id: m.topicId,
    message_group_id: m.groupId,
    cursor: String(m.seq),
  };
}

/**
 * The group-commit statement of one tenant's batch, whatever its size: the rows
 * from `unnest` of array parameters sent as array literals (UUIDs, enum words and ISO times need no
 * quoting), both blobs of every row in ONE binary parameter sliced by per-row offsets, and, in the
 * same statement, the `message.received` webhook outbox rows (webhooks/repo.ts). Answers
 * `{id, seq}` per row.
 */
function insertStatement(tenantId: string, rows: PreparedMessage[]): SQL {
  const col = (f: (r: PreparedMessage) => string) => arrayLiteral(rows.map(f), UUIDS);
  const words = (f: (r: PreparedMessage) => string) => arrayLiteral(rows.map(f), WORDS);
  const offsets: number[] = [];
  let at = 1; // substring() counts from 1
  for (const r of rows) {
    offsets.push(at);
    at += r.headerBlob.length + r.ciphertext.length;
  }
  const blobs = Buffer.concat(rows.flatMap((r) => [r.headerBlob, r.ciphertext]), at - 1);
  const ints = (f: (r: PreparedMessage, i: number) => number) => arrayLiteral(rows.map(f), INTS);
  return sql`
    with ins as (
      insert into messages (id, tenant_id, conversation_id, group_id, topic_id, sender_device_id, recipient_device_id,
                            header_blob, ciphertext, message_type, priority, created_at)
      select t.id, ${tenantId}::uuid, t.conversation_id, t.group_id, t.topic_id, t.sender_device_id, t.recipient_device_id,
             substring(b.blobs from t.off for t.header_len), substring(b.blobs from t.off + t.header_len for t.ciphertext_len),
             t.message_type, t.priority, t.created_at
      from unnest(${col((r) => r.id)}::uuid[], ${col((r) => r.conversationId)}::uuid[], ${col((r) => r.groupId)}::uuid[],
                  ${col((r) => r.topicId)}::uuid[], ${col((r) => r.senderDeviceId)}::uuid[], ${col((r) => r.recipientDeviceId)}::uuid[],
                  ${ints((_r, i) => offsets[i]!)}::int[], ${ints((r) => r.headerBlob.length)}::int[], ${ints((r) => r.ciphertext.length)}::int[],
                  ${words((r) => r.messageType)}::text[], ${words((r) => r.priority)}::text[],
                  ${words((r) => r.createdAt.toISOString())}::timestamptz[])
             with ordinality as t(id, conversation_id, group_id, topic_id, sender_device_id, recipient_device_id,
                                  off, header_len, ciphertext_len, message_type, priority, created_at, ord)
      cross join (select ${blobs}::bytea as blobs) b
      order by t.ord
      returning *
    ), hooks as (${messageDeliveriesFrom(sql`ins`)}),
    counted as (${addToCounts(tenantId, 'received')})
    select id, seq from ins`;
}

/** A message on the wire that reached `recipientDeviceId`, as its delivered receipt names it. */
export function refOf(m: Pick<MessageOut, 'message_id' | 'cursor' | 'conversation_id' | 'sender_device_id'>, recipientDeviceId: string): DeliveredRef {
  return { id: m.message_id, seq: Number(m.cursor), conversation_id: m.conversation_id, sender_device_id: m.sender_device_id, recipient_device_id: recipientDeviceId };
}

export interface MessageServiceDeps {
  db: Db;
  notifier: Notifier;
  maxCiphertextBytes: number;
  listDefault: number;
  listMax: number;
  /** Group-commit batch sizes, flush latency and committed messages (design §8.32). */
  metrics?: Metrics;
  /** How flushes reach the database (db/tenant-writer.ts); default: drizzle transactions on `db`. */
  writer?: TenantWriter;
  /**
   * Told of the messages each delivered write just marked (a batch of live deliveries, or a page
   * a recipient fetched): the delivered receipts (receipts/publisher.ts). Awaited before the
   * write counts as done; its errors are the hook's to handle.
   */
  onDelivered?: (tenantId: string, delivered: DeliveredMessage[]) => Promise<void>;
}

export class MessageService {
  private readonly conversations = new BoundedCache<ConversationInfo>(50_000);
  private readonly topicGroups = new BoundedCache<string>(50_000);
  private readonly writer: TenantBatcher<PreparedMessage, number>;
  private readonly delivered: TenantBatcher<DeliveredRef, undefined>;
  /** Messages queued in {@link delivered} and not flushed yet (see {@link whenDelivered}). */
  private readonly delivering = new PendingSet();

  constructor(private readonly deps: MessageServiceDeps) {
    const tenantWriter = deps.writer ?? drizzleTenantWriter(deps.db);
    this.writer = new TenantBatcher(
      // One statement per tenant flush under the tenant's sequence lock, taken before `seq` is
      // drawn and held until commit: the tenant's rows commit in `seq` order across every instance
      // (gap-free cursors). The statement also enqueues `message.received` webhooks (outbox).
      async (tenantId, rows, locked) => {
        const written = await tenantWriter.write<{ id: string; seq: string | number }>({
          tenantId,
          lockKey: `messages-seq:${tenantId}`,
          name: 'parley_messages_flush',
          genericPlan: true,
          statement: insertStatement(tenantId, rows),
          onLocked: locked,
          chain: true,
        });
        const seqById = new Map(written.map((r) => [r.id, Number(r.seq)]));
        return rows.map((r) => seqById.get(r.id)!);
      },
      // Chained (db/tenant-writer.ts): a flush's write is sent behind the one before it on the
      // tenant's connection, COMMIT included, so PostgreSQL runs them back to back; two in flight
      // (`overlap`: the next starts once this one is sent). Unchained, `overlap` measured slower
      // than one flush at a time; chained, two in flight measured fastest (docs/performance.md, "Relay").
      { maxInFlight: 2, overlap: true, maxBatch: 2000, ...(deps.metrics ? { observe: (n: number, s: number) => deps.metrics!.commit(n, s) } : {}) },
    );
    this.delivered = new TenantBatcher(
      async (tenantId, refs) => {
        try {
          const unique = distinctRefs(refs);
          const [answer] = await tenantWriter.write<InsertedOnce>({ tenantId, name: 'parley_messages_delivered', statement: recordDeliveries(tenantId, unique), pipelineCommit: true });
          const delivered = deliveredOf(unique, answer!);
          if (delivered.length > 0) await deps.onDelivered?.(tenantId, delivered);
        } finally {
          this.delivering.settle(refs.map((r) => r.id));
        }
        return refs.map(() => undefined);
      },
      // Delivery receipts are not on the sender's path: collect them for a while, one INSERT each time.
      { maxInFlight: 1, maxBatch: 10_000, delayMs: RECEIPT_BATCH_DELAY_MS },
    );
  }

  /** The two sides, group and default topic of a conversation in the tenant (cached). 404 if unknown. */
  async conversation(tenantId: string, conversationId: string): Promise<ConversationInfo> {
    const load = () =>
      withTenant(this.deps.db, tenantId, async (tx) => {
        const [c] = await tx.select().from(conversations).where(eq(conversations.id, conversationId));
        if (!c) return undefined;
        const [t] = await tx
          .select({ id: topics.id })
          .from(topics)
          .where(and(eq(topics.groupId, c.groupId), eq(topics.isDefault, true)));
        return { groupId: c.groupId, agentDeviceId: c.agentDeviceId, ownerDeviceId: c.ownerDeviceId, defaultTopicId: t!.id };
      });
    const info = await this.conversations.through(`${tenantId}:${conversationId}`, load);
    if (!info) throw notFound('conversation');
    return info;
  }

  /** The other side of a conversation for `deviceId`; 403 when the device is not a side. */
  async counterpart(tenantId: string, conversationId: string, deviceId: string): Promise<{ info: ConversationInfo; peer: string }> {
    const info = await this.conversation(tenantId, conversationId);
    if (deviceId === info.agentDeviceId) return { info, peer: info.ownerDeviceId };
    if (deviceId === info.ownerDeviceId) return { info, peer: info.agentDeviceId };
    throw forbidden('the sending device is not part of this conversation');
  }

  /** The group of a topic of the tenant (cached), undefined if unknown. */
  private topicGroup(tenantId: string, topicId: string): Promise<string | undefined> {
    return this.topicGroups.through(`${tenantId}:${topicId}`, async () => {
      const [t] = await withTenant(this.deps.db, tenantId, (tx) => tx.select({ groupId: topics.groupId }).from(topics).where(eq(topics.id, topicId)));
      return t?.groupId;
    });
  }

  /**
   * Store and relay one message: {@link prepare} then {@link commit}. Resolves after commit.
   */
  async send(tenantId: string, senderDeviceId: string, input: SendInput, excludeSocket?: string): Promise<MessageOut> {
    return this.commit(await this.prepare(tenantId, senderDeviceId, input), excludeSocket);
  }

  /**
   * Validate a message and build its row. Callers that must keep one sender's order (the socket
   * gateway) prepare sequentially and commit without waiting.
   * @throws 400 malformed base64 / mismatched group or topic, 403 not a side, 404 unknown
   *   conversation, 413 ciphertext over the limit.
   */
  async prepare(tenantId: string, senderDeviceId: string, input: SendInput): Promise<PreparedMessage> {
    const { info, peer } = await this.counterpart(tenantId, input.conversation_id, senderDeviceId);
    if (input.message_group_id && input.message_group_id !== info.groupId) throw badRequest('message_group_id does not match the conversation');
    let topicId = info.defaultTopicId;
    if (input.topic_id && input.topic_id !== topicId) {
      if ((await this.topicGroup(tenantId, input.topic_id)) !== info.groupId) throw badRequest('topic_id is not a topic of this conversation group');
      topicId = input.topic_id;
    }
    const { header: headerBlob, ciphertext } = decodeEnvelope(input, this.deps.maxCiphertextBytes);
    const createdAt = new Date();
    return {
      id: timeOrderedId(createdAt.getTime()),
      tenantId,
      conversationId: input.conversation_id,
      groupId: info.groupId,
      topicId,
      senderDeviceId,
      recipientDeviceId: peer,
      headerBlob,
      ciphertext,
      messageType: input.message_type ?? 'text',
      priority: input.priority ?? 'normal',
      createdAt,
      wire: { header_blob: input.header_blob, ciphertext: input.ciphertext },
    };
  }

  /** Queue a prepared message for group commit; after commit publish it to the recipient and the sender's other sockets. */
  async commit(row: PreparedMessage, excludeSocket?: string): Promise<MessageOut> {
    const seq = await this.writer.submit(row.tenantId, row);
    const out = toMessageOut({ ...row, seq }, row.wire);
    await this.deps.notifier.toDevices(row.tenantId, [row.recipientDeviceId, row.senderDeviceId], 'message', out, excludeSocket);
    return out;
  }

  /** Record that a message reached its recipient (batched; at-least-once delivery). */
  markDelivered(tenantId: string, ref: DeliveredRef): void {
    this.delivering.add(ref.id);
    this.delivered.add(tenantId, ref);
  }

  /**
   * When this instance delivered `messageId` and its receipt is not written yet (the
   * delivered batch, up to ~20 ms): a promise settling once that batch was written and its
   * receipts published (whether or not the write succeeded). Undefined otherwise. A read receipt
   * for a message just received waits for it (receipts/service.ts), so the sender learns
   * "delivered" before "read".
   */
  whenDelivered(messageId: string): Promise<void> | undefined {
    return this.delivering.when(messageId);
  }

  /**
   * History of one conversation (owner view). With `readerDeviceId` (the owner's acting device),
   * when it is a side of the conversation, the messages of the page addressed to it are marked
   * delivered (owners read every conversation of their tenant; reading another's delivers nothing).
   */
  async historyForConversation(tenantId: string, conversationId: string, q: HistoryQuery, readerDeviceId?: string) {
    const info = await this.conversation(tenantId, conversationId);
    const page = await this.page(tenantId, [eq(messages.conversationId, conversationId)], q);
    if (readerDeviceId === info.agentDeviceId || readerDeviceId === info.ownerDeviceId) await this.deliverFetched(tenantId, readerDeviceId, page.messages);
    return page;
  }

  /** History of a device's conversations; messages addressed to it are marked delivered. */
  async historyForDevice(tenantId: string, deviceId: string, q: HistoryQuery) {
    const cond: SQL[] = [or(eq(messages.senderDeviceId, deviceId), eq(messages.recipientDeviceId, deviceId))!];
    if (q.conversation_id) cond.push(eq(messages.conversationId, q.conversation_id));
    const page = await this.page(tenantId, cond, q);
    await this.deliverFetched(tenantId, deviceId, page.messages);
    return page;
  }

  /** Mark the fetched messages addressed to `deviceId` (one of their two sides) delivered now, with their receipts. */
  private async deliverFetched(tenantId: string, deviceId: string, page: MessageOut[]): Promise<void> {
    const mine = page.filter((m) => m.sender_device_id !== deviceId && !m.delivered_at);
    if (mine.length === 0) return;
    const unique = distinctRefs(mine.map((m) => refOf(m, deviceId)));
    const [answer] = await withTenant(this.deps.db, tenantId, async (tx) => ((await tx.execute(recordDeliveries(tenantId, unique))) as unknown as { rows: InsertedOnce[] }).rows);
    const delivered = deliveredOf(unique, answer!);
    if (delivered.length > 0) await this.deps.onDelivered?.(tenantId, delivered);
  }

  private async page(tenantId: string, cond: SQL[], q: HistoryQuery): Promise<{ messages: MessageOut[]; next_cursor: string | null }> {
    const limit = pageLimit(q.limit, this.deps);
    const where = [...cond];
    if (q.topic_id) where.push(eq(messages.topicId, q.topic_id));
    if (q.since !== undefined) {
      const since = parseSince(q.since);
      where.push('seq' in since ? gt(messages.seq, since.seq) : gt(messages.createdAt, since.at));
    }
    // Each message's read time comes from its recipient's read mark (receipts: a mark per reader, not a row per message).
    const rows = await withTenant(this.deps.db, tenantId, (tx) =>
      tx
        .select({ m: messages, deliveredAt: messageReceipts.deliveredAt, mark: { upTo: readMarks.upTo, readAt: readMarks.readAt } })
        .from(messages)
        .leftJoin(messageReceipts, eq(messageReceipts.messageId, messages.id))
        .leftJoin(readMarks, and(eq(readMarks.threadId, messages.conversationId), eq(readMarks.readerDeviceId, messages.recipientDeviceId)))
        .where(and(...where))
        .orderBy(q.since !== undefined ? asc(messages.seq) : desc(messages.seq))
        .limit(limit),
    );
    if (q.since === undefined) rows.reverse();
    const out = rows.map(({ m, deliveredAt, mark }) => ({
      ...toMessageOut(m),
      delivered_at: deliveredAt?.toISOString() ?? null,
      read_at: mark && mark.upTo >= m.seq! ? mark.readAt.toISOString() : null,
    }));
    return { messages: out, next_cursor: out.at(-1)?.cursor ?? null };
  }

  /** Wait for queued writes (graceful shutdown). */
  async drain(): Promise<void> {
    await this.writer.drain();
    await this.delivered.drain();
  }
}
