/**
 * Rooms (contract §2.5, §4.6, §6.1; design §8.5): a named set of member devices of one tenant, with
 * one pairwise conversation per member pair, a security level, room-scoped policies and an
 * aggregated timeline (`conversation_id` = the room's `timeline_id`).
 *
 * A room message is a set of envelopes, one per recipient (pairwise ciphertexts), or a single
 * MLS envelope addressed to `*`. Sends are group-committed per tenant (flush.ts): in one
 * transaction with the sends queued meanwhile, the room message and its
 * envelopes are stored and the policy engine decides per recipient (allow -> delivered,
 * notify -> notified, hold -> held, block -> blocked); after commit, released envelopes go to
 * their recipients' sockets as `room_message` frames and owners get `policy_alert` for notified
 * ones. Held envelopes are released by the policy module on approval through the `room` releaser.
 *
 * MLS storage: the `*` ciphertext is stored once, in a carrier envelope with recipient null and
 * outcome `shared`; each recipient gets an outcome row (recipient set, no ciphertext) that holds
 * its policy outcome, delivery time, held message and release position. The carrier loses its
 * ciphertext once every recipient row is blocked (database trigger, migration 0009).
 *
 * Timelines have two orders. The owner view lists every message by `seq` (send order). A member
 * device's view lists what it sent and what was released to it by release position
 * (`room_release_seq`): one position per message at send (the sender's, and every envelope
 * delivered or notified then), and a fresh one per held envelope at approval, so a device that
 * caught up before the approval still finds it after its cursor, exactly once. `room_message`
 * events and send answers carry that member cursor.
 */
import type { CreateRoomRequest, Room, RoomMessageInput, RoomMessageResult, RoomSummary, RoomTimelinePage, UpdateRoomRequest } from '@parley/protocol';
import type { HeldRecord } from '../policies/types.js';
import type { RoomContext, RoomServiceDeps } from './internal.js';
import { addMember, createRoom, getRoom, listRooms, removeMember, updateRoom } from './management.js';
import { drizzleTenantWriter } from '../../db/tenant-writer.js';
import { TenantBatcher } from '../../db/batcher.js';
import { flushRoomSends, type FlushOutcome, type QueuedSend } from './flush.js';
import { ReleaseOrder } from './release-order.js';
import { sendRoomMessage, type RoomSender, type SendOrder } from './send.js';
import { releaseHeld, roomTimeline, type TimelineQuery, type TimelineViewer } from './timeline.js';

export type { RoomPolicies, RoomServiceDeps } from './internal.js';

/** Most room messages in one group-commit flush. */
export const MAX_FLUSH = 64;
export type { RoomSender, SendOrder } from './send.js';
export type { TimelineQuery, TimelineViewer } from './timeline.js';

/**
 * The room module's service: room management (management.ts), sending (send.ts), timelines and
 * the release of approved held envelopes (timeline.ts), over one shared context (internal.ts).
 */
export class RoomService {
  private readonly ctx: RoomContext;

  constructor(deps: RoomServiceDeps) {
    // Group commit (flush.ts): everything queued during a flush goes into the next one, which
    // may write once this one holds the tenant's flush lock (`overlap`), so positions follow queue
    // order; with `readAhead` it reads while the one before it is still on its way to the lock.
    // A flush carries at most MAX_FLUSH sends (a 50-member room message is 49 envelope rows).
    const sends = new TenantBatcher<QueuedSend, FlushOutcome>((tenantId, queued, locked, ready) => flushRoomSends(this.ctx, tenantId, queued, locked, ready), {
      maxInFlight: 3,
      overlap: true,
      readAhead: 1,
      maxBatch: MAX_FLUSH,
    });
    this.ctx = { deps, order: new ReleaseOrder(), sends, tenantWriter: deps.writer ?? drizzleTenantWriter(deps.db), chained: Promise.resolve() };
    deps.policies.registerReleaser('room', (held) => this.release(held));
  }

  /** See {@link createRoom}. */
  create(tenantId: string, createdBy: string, input: CreateRoomRequest, creatorDeviceId?: string): Promise<Room> {
    return createRoom(this.ctx, tenantId, createdBy, input, creatorDeviceId);
  }

  /** See {@link listRooms}. */
  list(tenantId: string): Promise<RoomSummary[]> {
    return listRooms(this.ctx, tenantId);
  }

  /** See {@link getRoom}. */
  get(tenantId: string, id: string, memberDeviceId?: string): Promise<Room> {
    return getRoom(this.ctx, tenantId, id, memberDeviceId);
  }

  /** See {@link updateRoom}. */
  update(tenantId: string, id: string, input: UpdateRoomRequest): Promise<Room> {
    return updateRoom(this.ctx, tenantId, id, input);
  }

  /** See {@link addMember}. */
  addMember(tenantId: string, roomId: string, deviceId: string): Promise<Room> {
    return addMember(this.ctx, tenantId, roomId, deviceId);
  }

  /** See {@link removeMember}. */
  removeMember(tenantId: string, roomId: string, deviceId: string): Promise<void> {
    return removeMember(this.ctx, tenantId, roomId, deviceId);
  }

  /** See {@link sendRoomMessage}. */
  send(tenantId: string, sender: RoomSender, roomId: string, input: RoomMessageInput, order?: SendOrder): Promise<RoomMessageResult> {
    return sendRoomMessage(this.ctx, tenantId, sender, roomId, input, order);
  }

  /** See {@link roomTimeline}. */
  timeline(tenantId: string, roomId: string, viewer: TimelineViewer, q: TimelineQuery): Promise<RoomTimelinePage> {
    return roomTimeline(this.ctx, tenantId, roomId, viewer, q);
  }

  /** Wait for queued sends to be written (graceful shutdown). */
  drain(): Promise<void> {
    return this.ctx.sends.drain();
  }

  /** The `room` releaser; see {@link releaseHeld}. */
  release(held: HeldRecord): Promise<void> {
    return releaseHeld(this.ctx, held);
  }
}
