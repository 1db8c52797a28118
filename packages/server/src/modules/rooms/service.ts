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
 *
 * The operations live beside this file, one per responsibility: management.ts (create, list, get,
 * update, members), send.ts (sending), timeline.ts (timelines, the release of approved held
 * envelopes); each takes the {@link RoomContext} opened here (internal.ts).
 */
import { TenantBatcher } from '../../db/batcher.js';
import { drizzleTenantWriter } from '../../db/tenant-writer.js';
import { flushRoomSends } from './flush.js';
import type { FlushOutcome, QueuedSend } from './internal.js';
import type { RoomContext, RoomServiceDeps } from './internal.js';
import { ReleaseOrder } from './release-order.js';
import { releaseHeld } from './timeline.js';

/** Most room messages in one group-commit flush. */
export const MAX_FLUSH = 64;

/**
 * The state every room operation runs with: the group commit of sends and this instance's
 * publish order. Registers the `room` releaser (an approved held envelope goes out through
 * {@link releaseHeld}). Drain `sends` at shutdown.
 */
export function openRooms(deps: RoomServiceDeps): RoomContext {
  // Group commit (flush.ts): everything queued during a flush goes into the next one, which
  // may write once this one holds the tenant's flush lock (`overlap`), so positions follow queue
  // order; with `readAhead` it reads while the one before it is still on its way to the lock.
  // A flush carries at most MAX_FLUSH sends (a 50-member room message is 49 envelope rows).
  const sends = new TenantBatcher<QueuedSend, FlushOutcome>((tenantId, queued, locked, ready) => flushRoomSends(ctx, tenantId, queued, locked, ready), {
    maxInFlight: 3,
    overlap: true,
    readAhead: 1,
    maxBatch: MAX_FLUSH,
  });
  const ctx: RoomContext = { deps, order: new ReleaseOrder(), sends, tenantWriter: deps.writer ?? drizzleTenantWriter(deps.db), chained: Promise.resolve() };
  deps.policies.registerReleaser('room', (held) => releaseHeld(ctx, held));
  return ctx;
}
