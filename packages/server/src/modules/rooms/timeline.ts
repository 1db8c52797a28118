/**
 * Reading a room's timeline (owner view by send order, member view by release position) and
 * releasing an approved held envelope at a fresh release position (design §8.5).
 */
import type { RoomTimelineEntry, RoomTimelinePage, RoomTimelineQuery } from '@parley/protocol';
import { withTenant } from '../../db/tenant.js';
import { blobsOut, encodeBlob } from '../../lib/envelope.js';
import { forbidden } from '../../lib/errors.js';
import { pageLimit, parseSince } from '../../lib/paging.js';
import type { HeldRecord } from '../policies/index.js';
import { enqueueWebhooks, messageFields, mustGet, roomMessageEvent, type RoomContext } from './internal.js';
import type { DeliveredEnvelope } from '../receipts/index.js';
import type { Turn } from './release-order.js';
import * as repo from './repo.js';

/**
 * Who reads a timeline: an owner (optionally as one of its devices: the owner view with that
 * device's envelopes) or a member device (`asMember`, `deviceId` required: the member view).
 */
export interface TimelineViewer {
  deviceId?: string;
  /** A member device reading for itself: must be a member, sees only its own messages and receipts, by release position. */
  asMember: boolean;
}

/** The paging part of the timeline query (the view is the {@link TimelineViewer}). */
export type TimelineQuery = Omit<RoomTimelineQuery, 'view'>;

/**
 * The aggregated timeline, oldest first with `since` / `limit` paging (design §7). Owners see
 * every message with every delivery outcome, by `seq` (the cursor). A member device sees the
 * messages it sent (with their outcomes) and the ones released to it (with its own outcome), by
 * its release position (the cursor; a timestamp `since` compares release times), so an
 * envelope approved later appears after what the device already read, once. Every delivery
 * carries its recipient's receipt times: `delivered_at` (the first `room_receipt_batches` row
 * naming the envelope) and `read_at` (the recipient's read mark covers the envelope's release
 * position). A member page marks the envelopes it hands over received (their delivered receipts
 * go out before it answers).
 * @throws 400 bad `since`, 403 a reading device that is not a member, 404 unknown room.
 */
export async function roomTimeline(ctx: RoomContext, tenantId: string, roomId: string, viewer: TimelineViewer, q: TimelineQuery): Promise<RoomTimelinePage> {
  const limit = pageLimit(q.limit, ctx.deps);
  const parsed = q.since === undefined ? undefined : parseSince(q.since);
  const since = parsed === undefined ? undefined : 'seq' in parsed ? { cursor: parsed.seq } : parsed;
  const me = viewer.deviceId;
  const fetched: DeliveredEnvelope[] = [];
  const messages = await withTenant(ctx.deps.db, tenantId, async (tx) => {
    await mustGet(tx, roomId);
    if (viewer.asMember && !(me && (await repo.getMember(tx, roomId, me)))) throw forbidden('the device is not a member of this room');
    const page = { ...(since ? { since } : {}), limit };
    const entries = viewer.asMember ? await repo.memberTimeline(tx, roomId, me!, page) : (await repo.timeline(tx, roomId, page)).map((row) => ({ row, position: row.seq }));
    const envelopes = await repo.envelopesOf(
      tx,
      entries.map((e) => e.row.id),
    );
    const marks = entries.length > 0 ? await repo.readMarksOf(tx, roomId) : new Map<string, { upTo: number; readAt: Date }>();
    const readAt = (e: repo.EnvelopeRow) => {
      const mark = marks.get(e.recipientDeviceId!);
      return mark && e.releaseSeq !== null && e.releaseSeq <= mark.upTo ? mark.readAt.toISOString() : null;
    };
    return entries.map(({ row: m, position }) => {
      const mine = envelopes.filter((e) => e.roomMessageId === m.id);
      const shared = mine.find((e) => e.recipientDeviceId === null);
      let deliveries = mine.filter((e) => e.recipientDeviceId !== null);
      if (viewer.asMember && m.senderDeviceId !== me) deliveries = deliveries.filter((e) => e.recipientDeviceId === me);
      const entry: RoomTimelineEntry = {
        room_message_id: m.id,
        sender_device_id: m.senderDeviceId,
        message_type: m.messageType,
        priority: m.priority,
        timestamp: m.createdAt.toISOString(),
        cursor: String(position),
        deliveries: deliveries.map((e) => ({ recipient_device_id: e.recipientDeviceId!, outcome: e.outcome, delivered_at: e.receivedAt?.toISOString() ?? null, read_at: readAt(e) })),
      };
      const own = me ? deliveries.find((e) => e.recipientDeviceId === me && repo.RELEASED.includes(e.outcome)) : undefined;
      const carrier = own?.ciphertext ? own : own ? shared : undefined;
      if (carrier?.ciphertext && carrier.headerBlob) {
        entry.envelope = blobsOut(carrier);
        if (viewer.asMember && own && !own.receivedAt) fetched.push({ roomMessageId: m.id, recipientDeviceId: me!, roomId: m.roomId, senderDeviceId: m.senderDeviceId, releaseSeq: position });
      }
      return entry;
    });
  });
  if (fetched.length > 0) await ctx.deps.deliveries?.fetched(tenantId, fetched);
  return { messages, next_cursor: messages.at(-1)?.cursor ?? null };
}

/**
 * The `room` releaser (called by the policy module after an approval committed): the held
 * envelope becomes delivered at a fresh release position (the recipient's member timeline lists
 * it after everything released before) and its `room_message` goes to the recipient. A
 * recipient that left the room in the meantime gets nothing: the envelope is dropped (outcome
 * `blocked`, no ciphertext). An envelope no longer held is left alone.
 */
export async function releaseHeld(ctx: RoomContext, held: HeldRecord): Promise<void> {
  const envelopeId = held.envelopeId;
  if (!envelopeId) return;
  let turn: Turn | undefined;
  try {
    const event = await withTenant(ctx.deps.db, held.tenantId, async (tx) => {
      const env = await repo.getEnvelope(tx, envelopeId);
      if (!env?.recipientDeviceId || env.outcome !== 'held') return undefined;
      const msg = await repo.getRoomMessage(tx, env.roomMessageId);
      if (!msg) return undefined;
      if (!(await repo.getMember(tx, msg.roomId, env.recipientDeviceId))) {
        await repo.updateEnvelope(tx, env.id, { outcome: 'blocked', headerBlob: null, ciphertext: null });
        return undefined;
      }
      const carrier = env.ciphertext ? env : await repo.sharedEnvelope(tx, env.roomMessageId);
      if (!carrier?.ciphertext || !carrier.headerBlob) return undefined;
      const position = await repo.nextReleasePosition(tx, msg.roomId);
      turn = ctx.order.enter(msg.roomId);
      if (!(await repo.releaseHeldEnvelope(tx, env.id, position, new Date()))) return undefined;
      await enqueueWebhooks(tx, held.tenantId, msg, [env.recipientDeviceId]);
      return { recipient: env.recipientDeviceId, out: roomMessageEvent(messageFields(msg), { header: encodeBlob(carrier.headerBlob), ciphertext: encodeBlob(carrier.ciphertext) }, String(position)) };
    });
    if (!event) return;
    await turn!.ready;
    await ctx.deps.notifier.toDevices(held.tenantId, [event.recipient], 'room_message', event.out);
  } finally {
    turn?.done();
  }
}
