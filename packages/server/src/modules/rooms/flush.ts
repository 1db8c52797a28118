/**
 * The group commit of room messages (design §6, §8.5): the sends of one tenant queued
 * while the previous flush ran are written together, as the 1:1 message writer does
 * (db/batcher.ts `TenantBatcher`), and each send is acknowledged after that commit.
 *
 * One flush, whatever its number of messages, rooms and senders, is in the common case ONE read
 * and ONE write, each a transaction of its own in one pipelined round trip on PostgreSQL
 * (db/tenant-writer.ts):
 * 1. the read: the rooms, their members (and which of them receive webhooks), the senders' hub
 *    identities and the version of the tenant's policy set (repo `sendContextsStatement`);
 * 2. each message checked on its own (404 / 409 / 403 / 400 answer that send only: the others
 *    commit);
 * 3. the policies decide every (message, recipient) pair against the tenant's cached compiled set
 *    (policies/decide.ts `evaluateCached`), in memory;
 * 4. the write, under the tenant's room-flush lock (repo `insertAtNextPositionsStatement`): the
 *    rooms' release locks (held to commit), the messages and all their envelopes at their rooms'
 *    next release positions, the policy records (non-allow rows, allow counts) and the
 *    `room.message` webhook rows of the released recipients that had a webhook URL at the read.
 * When the policies need reads of their own (a changed set, a sender rate, a trust score) or an
 * envelope is held (its held message needs the tenant's hold time), steps 3–4 and the held
 * messages run in one drizzle transaction that takes the same lock first.
 *
 * Order (design §8.5; rooms/frames.ts): a flush assigns positions in queue order, and the next
 * flush of the instance starts only once this one holds the tenant's room-flush lock (`locked`,
 * the batcher's `overlap`): its read and decisions overlap this one's commit, and its write waits
 * for that commit in the database. So the positions of one socket's messages, and of a room's
 * messages sent through this instance, follow their send order; across instances the locks order
 * the commits. Each message enters its room's publish queue (release-order.ts) in position order,
 * as soon as its flush's write answered.
 */
import type { DeliveryOutcome, RoomDelivery, RoomMessageResult } from '@parley/protocol';
import type { SQL } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { xactLock } from '../../db/locks.js';
import { withTenant } from '../../db/tenant.js';
import { AppError, badRequest, conflict, forbidden, notFound } from '../../lib/errors.js';
import { timeOrderedId } from '../../lib/ids.js';
import { deliveriesOfEach } from '../webhooks/index.js';
import { TIERS, type Evaluation, type PolicyAction, type Tier } from '../policies/index.js';
import type { DecideItem, HoldInput } from '../policies/index.js';
import type { Turn } from './release-order.js';
import { messageFields, released, SENDER_NOT_A_MEMBER, type Committed, type DeviceKind, type FlushOutcome, type QueuedSend, type Release, type RoomContext } from './internal.js';
import * as repo from './repo.js';

const OUTCOME_OF: Record<PolicyAction, DeliveryOutcome> = { allow: 'delivered', notify: 'notified', hold: 'held', block: 'blocked' };

/** One recipient of a room message and the id of its envelope (or outcome row, for MLS). */
interface Target {
  envelopeId: string;
  recipient: string;
  kind: DeviceKind;
}

/** A send that passed its checks, through the steps of the flush. */
interface Plan {
  /** Its index in the flush. */
  index: number;
  send: QueuedSend;
  msg: repo.NewRoomMessage;
  mls: boolean;
  targets: Target[];
  items: DecideItem[];
  evaluations: Evaluation[];
  outcomes: DeliveryOutcome[];
  /** The room's members that receive webhooks (repo.SendRoom `webhooks`). */
  webhooks: ReadonlySet<string>;
}

/**
 * Check one send against its room (module comment, step 2) and build its message, targets and
 * decision items. @throws 404 unknown room, 409 archived, 403 sender not a member, 400 a recipient
 * not another member, or nobody to send to.
 */
function plan(tenantId: string, send: QueuedSend, index: number, found: repo.SendContexts, now: Date): Plan {
  const room = found.rooms.get(send.roomId);
  if (!room) throw notFound('room');
  if (room.archived) throw conflict('the room is archived');
  const kinds = new Map(room.members.map((m) => [m.deviceId, m.kind as DeviceKind]));
  const senderKind = kinds.get(send.senderDeviceId);
  if (!senderKind) throw forbidden(SENDER_NOT_A_MEMBER);
  const mls = send.envelopes[0]!.recipient === null;
  const recipients = mls ? [...kinds.keys()].filter((d) => d !== send.senderDeviceId) : send.envelopes.map((e) => e.recipient!);
  for (const r of recipients) if (!kinds.has(r) || r === send.senderDeviceId) throw badRequest(`recipient ${r} is not another member of this room`);
  if (recipients.length === 0) throw badRequest('the room has no other member to send to');

  const at = now.getTime();
  const msg: repo.NewRoomMessage = { id: timeOrderedId(at), tenantId, roomId: send.roomId, senderDeviceId: send.senderDeviceId, messageType: send.messageType, priority: send.priority, createdAt: now };
  const targets: Target[] = recipients.map((r) => ({ envelopeId: timeOrderedId(at), recipient: r, kind: kinds.get(r)! }));
  // Sender hub address and tier from its hub identity (`unverified` without one); by default
  // `hold` for an agent sender in a strict room, else `allow` (design §8.5).
  const hub = found.senderHubs.get(send.senderDeviceId);
  const tier: Tier = TIERS.includes(hub?.trustTier as Tier) ? (hub!.trustTier as Tier) : 'unverified';
  const defaultOutcome: PolicyAction = senderKind === 'agent' && room.securityLevel === 'strict' ? 'hold' : 'allow';
  const items: DecideItem[] = targets.map((t) => ({
    subjectKind: 'room_envelope',
    subjectId: t.envelopeId,
    defaultOutcome,
    ctx: {
      roomId: send.roomId,
      messageType: send.messageType,
      priority: send.priority,
      senderKind,
      recipientKind: t.kind,
      senderDeviceId: send.senderDeviceId,
      recipientDeviceId: t.recipient,
      senderHubAddress: hub?.hubAddress ?? null,
      senderTier: tier,
      crossTenant: false,
      now,
    },
  }));
  return { index, send, msg, mls, targets, items, evaluations: [], outcomes: [], webhooks: room.webhooks };
}

/**
 * The sender rate of every decision item (design §8.5 `rate_per_minute_over`): the sender's room
 * messages of the last minute before `now` (one statement for the flush's senders), plus its
 * messages earlier in this flush, plus this one; one value per item, in the items' order.
 */
async function flushRates(tx: Tx, plans: readonly Plan[], now: Date): Promise<number[]> {
  const stored = await repo.sentSinceBySender(tx, [...new Set(plans.map((p) => p.send.senderDeviceId))], new Date(now.getTime() - 60_000));
  const earlier = new Map<string, number>();
  return plans.flatMap((p) => {
    const sender = p.send.senderDeviceId;
    const rate = (stored.get(sender) ?? 0) + (earlier.get(sender) ?? 0) + 1;
    earlier.set(sender, (earlier.get(sender) ?? 0) + 1);
    return p.targets.map(() => rate);
  });
}

/**
 * The envelope rows of a message: one per target with its outcome (ciphertext kept unless
 * blocked; `delivered` / `notified` ones are released at the message's position); for MLS the
 * targets' rows carry no ciphertext and one carrier row (recipient null, outcome `shared`) holds
 * it, unless every recipient is blocked.
 */
function envelopeRows(p: Plan): repo.NewEnvelope[] {
  const byRecipient = new Map(p.send.envelopes.map((e) => [e.recipient, e]));
  const rows: repo.NewEnvelope[] = p.targets.map((t, i) => {
    const own = p.mls || p.outcomes[i] === 'blocked' ? undefined : byRecipient.get(t.recipient);
    return { id: t.envelopeId, recipientDeviceId: t.recipient, headerBlob: own?.header ?? null, ciphertext: own?.ciphertext ?? null, outcome: p.outcomes[i]! };
  });
  if (p.mls) {
    const keep = p.outcomes.some((o) => o !== 'blocked');
    const { header, ciphertext } = p.send.envelopes[0]!;
    rows.unshift({ id: timeOrderedId(p.msg.createdAt.getTime()), recipientDeviceId: null, headerBlob: keep ? header : null, ciphertext: keep ? ciphertext : null, outcome: repo.SHARED_OUTCOME });
  }
  return rows;
}

const releasedTo = (p: Plan) => p.targets.filter((_, i) => released(p.outcomes[i]!)).map((t) => t.recipient);

/** What a committed send answers and publishes (its held envelopes' held-message ids in `heldIds`, by target index). */
function committed(p: Plan, position: number, heldIds: Map<number, string>, turn: Turn): Committed {
  const { msg, send, targets, outcomes, evaluations } = p;
  const deliveries: RoomDelivery[] = targets.map((t, i) => ({
    recipient_device_id: t.recipient,
    outcome: outcomes[i]!,
    ...(heldIds.has(i) ? { held_message_id: heldIds.get(i)! } : {}),
  }));
  const byRecipient = new Map(send.envelopes.map((e) => [e.recipient, e]));
  const releases: Release[] = p.mls
    ? [{ wire: send.envelopes[0]!.wire, recipients: releasedTo(p) }]
    : targets.flatMap((t, i) => (released(outcomes[i]!) ? [{ wire: byRecipient.get(t.recipient)!.wire, recipients: [t.recipient] }] : []));
  const alerts = targets.flatMap((t, i) =>
    outcomes[i] === 'notified' ? [{ room_id: msg.roomId, policy_id: evaluations[i]!.policyId, sender_device_id: msg.senderDeviceId, recipient_device_id: t.recipient, message_type: msg.messageType }] : [],
  );
  const result: RoomMessageResult = { room_message_id: msg.id, timestamp: msg.createdAt.toISOString(), cursor: String(position), deliveries };
  return { msg, position, result, releases, alerts, turn };
}

/** The tenant's flush lock: a tenant's flushes write one after the other, on every instance, in the order they took it. */
const flushLock = (tenantId: string) => `room-flush:${tenantId}`;

/** Each plan's evaluations and delivery outcomes, from the flush's evaluations in item order. */
function applyEvaluations(plans: readonly Plan[], evaluations: readonly Evaluation[]): void {
  let next = 0;
  for (const p of plans) {
    p.evaluations = evaluations.slice(next, (next += p.targets.length));
    p.outcomes = p.evaluations.map((e) => OUTCOME_OF[e.outcome]);
  }
}

/** The flush's one write (module comment, step 4) for `plans` whose outcomes are set, with the policy `records`. */
function writeStatement(tenantId: string, now: Date, plans: readonly Plan[], records: readonly SQL[]): SQL {
  // Only members that had a webhook URL when the flush read its rooms are offered a row (the
  // insert checks them again); with none, the write joins no devices.
  const webhooks = deliveriesOfEach(
    tenantId,
    plans.map((p) => ({ deviceIds: p.webhooks.size === 0 ? [] : releasedTo(p).filter((d) => p.webhooks.has(d)), event: 'room_message', data: messageFields(p.msg) })),
  );
  return repo.insertAtNextPositionsStatement(tenantId, now, plans.map((p) => ({ message: p.msg, envelopes: envelopeRows(p) })), [...records, webhooks]);
}

/** The held messages of the plans' held envelopes, by plan and target index. */
function heldInputs(plans: readonly Plan[]): { plan: number; target: number; input: HoldInput }[] {
  return plans.flatMap((p, j) =>
    p.targets.flatMap((t, i) =>
      p.outcomes[i] === 'held'
        ? [{ plan: j, target: i, input: { roomId: p.msg.roomId, envelopeId: t.envelopeId, senderDeviceId: p.msg.senderDeviceId, recipientDeviceId: t.recipient, policyId: p.evaluations[i]!.policyId, messageType: p.msg.messageType, priority: p.msg.priority } }]
        : [],
    ),
  );
}

/**
 * Write one tenant's queued sends (module comment) and answer one outcome per send, in order;
 * `locked` is called once the flush holds the tenant's flush lock (the next flush may start: its
 * write waits for this one's commit); `ready` settles once every earlier flush of the instance
 * holds that lock (the batcher's read-ahead): the read and the decisions run before it, the write
 * and its lock after it. A send refused by its checks answers its error and writes
 * nothing; any other failure rejects the whole flush (nothing written, every publish-queue place
 * taken released).
 *
 * Common case, two round trips on PostgreSQL (db/tenant-writer.ts: BEGIN, scope and statement,
 * COMMIT pipelined): the read, then the write, the decisions made in between from the cached
 * compiled policies. When the policies need reads of their own (a changed set, a sender rate, a
 * trust score) or an envelope is held (held messages), the decisions and the write run in one
 * drizzle transaction instead.
 */
export async function flushRoomSends(
  ctx: RoomContext,
  tenantId: string,
  sends: readonly QueuedSend[],
  locked: () => void = () => undefined,
  ready: Promise<void> = Promise.resolve(),
): Promise<FlushOutcome[]> {
  const { db, policies } = ctx.deps;
  const now = new Date();
  const rows = await ctx.tenantWriter.write<repo.SendContextRow>({
    tenantId,
    name: 'rooms-flush-read',
    pipelineCommit: true,
    genericPlan: true,
    statement: repo.sendContextsStatement(tenantId, [...new Set(sends.map((s) => s.roomId))], [...new Set(sends.map((s) => s.senderDeviceId))]),
  });
  const found = repo.sendContextsOf(rows);
  const outcomes: FlushOutcome[] = [];
  const plans: Plan[] = [];
  sends.forEach((send, index) => {
    try {
      plans.push(plan(tenantId, send, index, found, now));
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      outcomes[index] = { error: err };
    }
  });
  if (plans.length === 0) return outcomes;

  const items = plans.flatMap((p) => p.items);
  const cached = policies.evaluateCached(tenantId, items, found.policyEpoch);
  const turns: Turn[] = [];
  // An earlier flush of this instance may still be on its way to the lock: take it after that one.
  await ready;
  try {
    let positions: number[];
    let held: ReturnType<typeof heldInputs> = [];
    let heldIds: string[] = [];
    if (cached && !cached.evaluations.some((e) => e.outcome === 'hold')) {
      applyEvaluations(plans, cached.evaluations);
      const written = ctx.tenantWriter.write<{ i: number; pos: number }>({
        tenantId,
        lockKey: flushLock(tenantId),
        name: 'rooms-flush-write',
        genericPlan: true,
        statement: writeStatement(tenantId, now, plans, cached.records),
        onLocked: locked,
        chain: true,
      });
      ctx.chained = written.catch(() => undefined);
      positions = repo.positionsOf(await written);
      for (const p of plans) turns.push(ctx.order.enter(p.msg.roomId));
    } else {
      // A chained write before this one holds the lock only once PostgreSQL reaches it: wait for it.
      await ctx.chained;
      [positions, held, heldIds] = await withTenant(db, tenantId, async (tx) => {
        await xactLock(tx, flushLock(tenantId));
        locked();
        const decided = cached ?? (await policies.evaluateAll(tx, tenantId, items, () => flushRates(tx, plans, now), found.policyEpoch));
        applyEvaluations(plans, decided.evaluations);
        const taken = repo.positionsOf(((await tx.execute(writeStatement(tenantId, now, plans, decided.records))) as unknown as { rows: { i: number; pos: number }[] }).rows);
        for (const p of plans) turns.push(ctx.order.enter(p.msg.roomId));
        const inputs = heldInputs(plans);
        return [taken, inputs, inputs.length > 0 ? await policies.holdAll(tx, tenantId, inputs.map((h) => h.input)) : []] as const;
      });
    }
    plans.forEach((p, j) => {
      const ids = new Map(held.flatMap((h, k) => (h.plan === j ? [[h.target, heldIds[k]!] as const] : [])));
      outcomes[p.index] = { ok: committed(p, positions[j]!, ids, turns[j]!) };
    });
    return outcomes;
  } catch (err) {
    for (const t of turns) t.done();
    throw err;
  }
}
