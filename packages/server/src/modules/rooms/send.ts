/**
 * Sending a room message (DESIGN §8.5): envelopes are validated and decoded, the policies decide
 * per recipient in the sending transaction, the message and its envelopes are stored at the
 * room's next release position, and released envelopes are published after commit in
 * release-position order (release-order.ts).
 */
import { randomUUID } from 'node:crypto';
import { ALL_MEMBERS, type DeliveryOutcome, type RoomDelivery, type RoomEnvelope, type RoomMessageInput, type RoomMessageResult } from '@parley/protocol';
import type { Tx } from '../../db/client.js';
import { withTenant } from '../../db/tenant.js';
import { AppError, ErrorCode, badRequest, conflict, forbidden, notFound } from '../../lib/errors.js';
import { decodeBase64 } from '../conversations/messages.js';
import { TIERS, type Evaluation, type PolicyAction, type Tier } from '../policies/engine.js';
import type { DecideItem } from '../policies/types.js';
import { enqueueWebhooks, released, roomMessageEvent, type DeviceKind, type RoomContext } from './internal.js';
import type { Turn } from './release-order.js';
import * as repo from './repo.js';

const OUTCOME_OF: Record<PolicyAction, DeliveryOutcome> = { allow: 'delivered', notify: 'notified', hold: 'held', block: 'blocked' };

/**
 * Hooks that let a socket pipeline its `room_message` frames while keeping their order
 * (rooms/frames.ts; DESIGN §8.5): the next frame may start once this one's release position is
 * taken, since its own position then comes later; and its frames are published after `after`.
 */
export interface SendOrder {
  /** Called once the message's release position is taken, or when the send failed before (at most once matters; later calls are no-ops for the caller). */
  positioned(): void;
  /** Settles once the same socket's previous send has published (or failed): this one publishes after it. */
  after?: Promise<unknown>;
}

interface DecodedEnvelope {
  recipient: string | null;
  header: Buffer;
  ciphertext: Buffer;
}

interface Release {
  recipients: string[];
  header: Buffer;
  ciphertext: Buffer;
}

interface SendMeta {
  senderDeviceId: string;
  messageType: string;
  priority: string;
  now: Date;
}

/** One recipient of a room message and the id of its envelope (or outcome row, for MLS). */
interface Target {
  envelopeId: string;
  recipient: string;
  kind: DeviceKind;
}

/**
 * The envelope rows of a room message: one per target with its outcome (ciphertext kept unless
 * blocked; the repo releases `delivered` / `notified` ones at the message's position); for MLS the
 * targets' rows carry no ciphertext and one carrier row (recipient null, outcome `shared`) holds
 * it, unless every recipient is blocked.
 */
function envelopeRows(targets: Target[], outcomes: DeliveryOutcome[], envelopes: DecodedEnvelope[]): repo.NewEnvelope[] {
  const mls = envelopes[0]!.recipient === null;
  const byRecipient = new Map(envelopes.map((e) => [e.recipient, e]));
  const rows: repo.NewEnvelope[] = targets.map((t, i) => {
    const own = mls || outcomes[i] === 'blocked' ? undefined : byRecipient.get(t.recipient);
    return { id: t.envelopeId, recipientDeviceId: t.recipient, headerBlob: own?.header ?? null, ciphertext: own?.ciphertext ?? null, outcome: outcomes[i]! };
  });
  if (mls) {
    const keep = outcomes.some((o) => o !== 'blocked');
    const { header, ciphertext } = envelopes[0]!;
    rows.unshift({ id: randomUUID(), recipientDeviceId: null, headerBlob: keep ? header : null, ciphertext: keep ? ciphertext : null, outcome: repo.SHARED_OUTCOME });
  }
  return rows;
}

/**
 * Fan out one room message (DESIGN §8.5). Rules: the sender is a member (403); each recipient
 * is another member (400), at most once; an MLS envelope (`*`) is the only envelope; base64
 * fields (400); ciphertext within the limit (413). Policies are evaluated per recipient in the
 * sending transaction, which ends by taking the message's release position (the answer's and
 * the events' `cursor`) while storing the message and its envelopes (one statement); the
 * `room.message` webhooks of the released recipients are enqueued in the same transaction.
 * Released envelopes are published after commit, all at once, in release-position order per
 * room (release-order.ts). `order` pipelines a socket's frames (rooms/frames.ts).
 * @throws 404 unknown room, 409 archived room.
 */
export async function sendRoomMessage(
  ctx: RoomContext,
  tenantId: string,
  senderDeviceId: string,
  roomId: string,
  input: RoomMessageInput,
  order?: SendOrder,
): Promise<RoomMessageResult> {
  const { policies, notifier } = ctx.deps;
  let turn: Turn | undefined;
  try {
    const envelopes = decode(ctx, input.envelopes);
    const mls = envelopes[0]!.recipient === null;
    const meta = { senderDeviceId, messageType: input.message_type ?? 'text', priority: input.priority ?? 'normal', now: new Date() };
    const { msg, position, result, releases, alerts } = await withTenant(ctx.deps.db, tenantId, async (tx) => {
      const room = await repo.sendContext(tx, roomId, senderDeviceId);
      if (!room) throw notFound('room');
      if (room.archived) throw conflict('the room is archived');
      const kinds = new Map(room.members.map((m) => [m.deviceId, m.kind as DeviceKind]));
      const senderKind = kinds.get(senderDeviceId);
      if (!senderKind) throw forbidden('the sending device is not a member of this room');
      const recipients = mls ? [...kinds.keys()].filter((d) => d !== senderDeviceId) : envelopes.map((e) => e.recipient!);
      for (const r of recipients) if (!kinds.has(r) || r === senderDeviceId) throw badRequest(`recipient ${r} is not another member of this room`);
      if (recipients.length === 0) throw badRequest('the room has no other member to send to');

      const msg: repo.NewRoomMessage = { id: randomUUID(), tenantId, roomId, senderDeviceId, messageType: meta.messageType, priority: meta.priority, createdAt: meta.now };
      const targets: Target[] = recipients.map((r) => ({ envelopeId: randomUUID(), recipient: r, kind: kinds.get(r)! }));
      const evaluations = await evaluate(ctx, tx, tenantId, { id: roomId, ...room }, { ...meta, senderKind }, targets);
      const outcomes = evaluations.map((e) => OUTCOME_OF[e.outcome]);
      await enqueueWebhooks(tx, tenantId, msg, targets.filter((_, i) => released(outcomes[i]!)).map((t) => t.recipient));

      // The message, its envelopes and its release position in one statement; from here to commit
      // the room's release lock is held: keep the rest short.
      const position = await repo.insertAtNextPosition(tx, msg, envelopeRows(targets, outcomes, envelopes));
      turn = ctx.order.enter(roomId);
      order?.positioned();
      const heldAt = targets.flatMap((_, i) => (outcomes[i] === 'held' ? [i] : []));
      const heldIds = await policies.holdAll(
        tx,
        tenantId,
        heldAt.map((i) => ({ roomId, envelopeId: targets[i]!.envelopeId, senderDeviceId, recipientDeviceId: targets[i]!.recipient, policyId: evaluations[i]!.policyId, messageType: meta.messageType, priority: meta.priority })),
      );
      const heldIdOf = new Map(heldAt.map((i, k) => [i, heldIds[k]!]));
      const deliveries: RoomDelivery[] = targets.map((t, i) => ({
        recipient_device_id: t.recipient,
        outcome: outcomes[i]!,
        ...(heldIdOf.has(i) ? { held_message_id: heldIdOf.get(i)! } : {}),
      }));
      const byRecipient = new Map(envelopes.map((e) => [e.recipient, e]));
      const releases: Release[] = mls
        ? [{ ...envelopes[0]!, recipients: targets.filter((_, i) => released(outcomes[i]!)).map((t) => t.recipient) }]
        : targets.flatMap((t, i) => (released(outcomes[i]!) ? [{ ...byRecipient.get(t.recipient)!, recipients: [t.recipient] }] : []));
      const alerts = targets.flatMap((t, i) =>
        outcomes[i] === 'notified' ? [{ room_id: roomId, policy_id: evaluations[i]!.policyId, sender_device_id: senderDeviceId, recipient_device_id: t.recipient, message_type: meta.messageType }] : [],
      );
      const result: RoomMessageResult = { room_message_id: msg.id, timestamp: meta.now.toISOString(), cursor: String(position), deliveries };
      return { msg, position, result, releases, alerts };
    });

    // After commit: publish in release order (earlier sends of the room, and the sender's earlier
    // frames, first), every recipient's frame at once (no webhook transaction per recipient).
    await turn!.ready;
    await order?.after;
    await Promise.all(releases.filter((r) => r.recipients.length > 0).map((r) => notifier.toDevices(tenantId, r.recipients, 'room_message', roomMessageEvent(msg, r.header, r.ciphertext, position))));
    turn!.done();
    for (const a of alerts) await policies.alert(tenantId, a);
    return result;
  } finally {
    turn?.done();
    order?.positioned();
  }
}

/**
 * Run the policy engine once per recipient (DESIGN §8.5): sender hub address and tier from
 * its hub identity (`unverified` without one), the sender's room-message count of the last
 * minute (this message included; counted only when a policy reads it), same tenant; by default
 * `hold` for an agent sender in a strict room, else `allow`.
 */
async function evaluate(
  ctx: RoomContext,
  tx: Tx,
  tenantId: string,
  room: Pick<repo.SendContext, 'securityLevel' | 'senderHub'> & { id: string },
  meta: SendMeta & { senderKind: DeviceKind },
  targets: Target[],
): Promise<Evaluation[]> {
  const hub = room.senderHub;
  const tier: Tier = TIERS.includes(hub?.trustTier as Tier) ? (hub!.trustTier as Tier) : 'unverified';
  // The message is not stored yet: count it.
  const senderRate = async () => (await repo.sentSince(tx, meta.senderDeviceId, new Date(meta.now.getTime() - 60_000))) + 1;
  const defaultOutcome: PolicyAction = meta.senderKind === 'agent' && room.securityLevel === 'strict' ? 'hold' : 'allow';
  const items: DecideItem[] = targets.map((t) => ({
    subjectKind: 'room_envelope',
    subjectId: t.envelopeId,
    defaultOutcome,
    ctx: {
      roomId: room.id,
      messageType: meta.messageType,
      priority: meta.priority,
      senderKind: meta.senderKind,
      recipientKind: t.kind,
      senderDeviceId: meta.senderDeviceId,
      recipientDeviceId: t.recipient,
      senderHubAddress: hub?.hubAddress ?? null,
      senderTier: tier,
      crossTenant: false,
      now: meta.now,
    },
  }));
  return ctx.deps.policies.decide(tx, tenantId, items, senderRate);
}

/** Validate and decode envelopes (no database): `*` alone, distinct recipients, base64, size. */
function decode(ctx: RoomContext, input: RoomEnvelope[]): DecodedEnvelope[] {
  if (input.length === 0) throw badRequest('envelopes must not be empty');
  const mls = input.some((e) => e.recipient_device_id === ALL_MEMBERS);
  if (mls && input.length !== 1) throw badRequest('an MLS envelope (recipient_device_id "*") must be the only envelope');
  const seen = new Set<string>();
  return input.map((e) => {
    const recipient = mls ? null : e.recipient_device_id.toLowerCase();
    if (recipient !== null) {
      if (seen.has(recipient)) throw badRequest(`more than one envelope for recipient ${recipient}`);
      seen.add(recipient);
    }
    const header = decodeBase64('header_blob', e.header_blob);
    const ciphertext = decodeBase64('ciphertext', e.ciphertext);
    if (ciphertext.length > ctx.deps.maxCiphertextBytes) throw new AppError(ErrorCode.PayloadTooLarge, `ciphertext exceeds ${ctx.deps.maxCiphertextBytes} bytes`);
    return { recipient, header, ciphertext };
  });
}
