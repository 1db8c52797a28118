/**
 * A2A channel and message queries (contract §2.11, §3.5). Both tables are two-party rows: under RLS a
 * tenant scope sees the channels (and their messages) where it is the initiator's tenant
 * (`tenant_id`) or the responder's (`partner_tenant_id`). Every function takes a tenant-scoped
 * transaction.
 */
import { and, asc, count, desc, eq, gt, gte, inArray, isNull, or, sql, type SQL } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { pairKey, xactLock } from '../../db/locks.js';
import { a2aChannels, a2aMessages } from '../../db/schema/index.js';
import type { A2aChannelStatus } from '@parley/protocol';

export type ChannelRow = typeof a2aChannels.$inferSelect;
export type A2aMessageRow = typeof a2aMessages.$inferSelect;

/** Channel states (contract §3.5); `rejected` and `revoked` are terminal. */
export { CHANNEL_STATUSES } from '@parley/protocol';
export type ChannelStatus = A2aChannelStatus;
/** States in which a channel still joins its two agents (one such channel per agent pair). */
export const OPEN_STATUSES: readonly ChannelStatus[] = ['pending', 'approved', 'active'];

/**
 * Outcomes of an A2A message: `delivered`, `notified` (delivered, owners alerted), `held` (awaits
 * an owner's decision), `blocked` (refused or denied; no ciphertext kept). The relayed key
 * exchanges are stored as `delivered` rows with `message_type = 'key_exchange'`, so a peer that
 * was offline finds them in the history. Only these two outcomes are ever shown to the agents.
 */
export const VISIBLE_OUTCOMES = ['delivered', 'notified'] as const;

/** `message_type` of a stored handshake (not a contract §2.4 content type: it never passes the policy engine). */
export const KEY_EXCHANGE_TYPE = 'key_exchange';

export const insertChannel = (tx: Tx, row: typeof a2aChannels.$inferInsert) => tx.insert(a2aChannels).values(row).returning();

export async function getChannel(tx: Tx, id: string, forUpdate = false): Promise<ChannelRow | undefined> {
  const q = tx.select().from(a2aChannels).where(eq(a2aChannels.id, id));
  const [row] = forUpdate ? await q.for('update') : await q;
  return row;
}

export async function updateChannel(tx: Tx, id: string, set: Partial<typeof a2aChannels.$inferInsert>): Promise<ChannelRow> {
  const [row] = await tx.update(a2aChannels).set(set).where(eq(a2aChannels.id, id)).returning();
  return row!;
}

/** Channels visible to the scope, newest first; `deviceId` keeps those the device is a party of. */
export function listChannels(tx: Tx, filter: { deviceId?: string; status?: string }) {
  const where: SQL[] = [];
  if (filter.deviceId) where.push(or(eq(a2aChannels.initiatorDeviceId, filter.deviceId), eq(a2aChannels.responderDeviceId, filter.deviceId))!);
  if (filter.status) where.push(eq(a2aChannels.status, filter.status));
  return tx
    .select()
    .from(a2aChannels)
    .where(and(...where))
    .orderBy(desc(a2aChannels.createdAt), desc(a2aChannels.id));
}

/** The open (pending, approved or active) channel joining two devices in either direction, if any. */
export async function openChannelBetween(tx: Tx, a: string, b: string): Promise<ChannelRow | undefined> {
  const [row] = await tx
    .select()
    .from(a2aChannels)
    .where(
      and(
        inArray(a2aChannels.status, [...OPEN_STATUSES]),
        or(
          and(eq(a2aChannels.initiatorDeviceId, a), eq(a2aChannels.responderDeviceId, b)),
          and(eq(a2aChannels.initiatorDeviceId, b), eq(a2aChannels.responderDeviceId, a)),
        ),
      ),
    )
    .limit(1);
  return row;
}

/**
 * Serialize channel requests for one device pair (either order) until the transaction ends, so
 * the one-open-channel-per-pair check cannot race (transaction-scoped advisory lock).
 */
export async function lockPair(tx: Tx, a: string, b: string): Promise<void> {
  await xactLock(tx, pairKey('a2a', a, b));
}

/**
 * Insert one channel message. The channel's sequence lock (`a2a-seq:<channel>`, held until the
 * transaction ends) is taken before the row's `seq` is drawn, so a channel's messages commit in
 * `seq` order whichever instance sends them and a reader paging by cursor never skips one that
 * commits late (docs/decisions.md "Consistency of cursors").
 */
export async function insertMessage(tx: Tx, row: typeof a2aMessages.$inferInsert): Promise<A2aMessageRow[]> {
  await xactLock(tx, `a2a-seq:${row.channelId}`);
  return tx.insert(a2aMessages).values(row).returning();
}

export async function getMessage(tx: Tx, id: string): Promise<A2aMessageRow | undefined> {
  const [row] = await tx.select().from(a2aMessages).where(eq(a2aMessages.id, id));
  return row;
}

/**
 * Release a held message: outcome `delivered` and a fresh `seq`, so the message sorts after
 * everything delivered before its release and a reader paging by cursor cannot miss it.
 */
export async function releaseMessage(tx: Tx, id: string): Promise<A2aMessageRow | undefined> {
  await tx.execute(sql`update a2a_messages set outcome = 'delivered', seq = default where id = ${id} and outcome = 'held'`);
  return getMessage(tx, id);
}

/** Messages sent by a device since `since` (A2A traffic only; for `rate_per_minute_over`). */
export async function countSentSince(tx: Tx, senderDeviceId: string, since: Date): Promise<number> {
  const [row] = await tx
    .select({ n: count() })
    .from(a2aMessages)
    .where(and(eq(a2aMessages.senderDeviceId, senderDeviceId), gte(a2aMessages.createdAt, since)));
  return Number(row?.n ?? 0);
}

/**
 * One page of a channel's visible history (delivered messages and key exchanges). Without
 * `afterSeq` / `afterTime` the latest `limit` (answered newest first: the caller reverses);
 * with one of them the next `limit` after it, oldest first.
 */
export function messagePage(tx: Tx, channelId: string, q: { afterSeq?: number; afterTime?: Date; limit: number }) {
  const where: SQL[] = [eq(a2aMessages.channelId, channelId), inArray(a2aMessages.outcome, [...VISIBLE_OUTCOMES])];
  if (q.afterSeq !== undefined) where.push(gt(a2aMessages.seq, q.afterSeq));
  if (q.afterTime !== undefined) where.push(gt(a2aMessages.createdAt, q.afterTime));
  const forward = q.afterSeq !== undefined || q.afterTime !== undefined;
  return tx
    .select()
    .from(a2aMessages)
    .where(and(...where))
    .orderBy(forward ? asc(a2aMessages.seq) : desc(a2aMessages.seq))
    .limit(q.limit);
}

/** Set `delivered_at` on the listed messages addressed to `recipientDeviceId` that lack it. */
export const markDelivered = (tx: Tx, recipientDeviceId: string, ids: string[]) =>
  tx
    .update(a2aMessages)
    .set({ deliveredAt: new Date() })
    .where(and(inArray(a2aMessages.id, ids), eq(a2aMessages.recipientDeviceId, recipientDeviceId), isNull(a2aMessages.deliveredAt)));
