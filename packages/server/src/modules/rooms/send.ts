/**
 * Sending a room message (design §8.5): envelopes are validated and decoded here, the
 * message is queued for its tenant's group commit (flush.ts: in one transaction with the other
 * sends queued meanwhile, the policies decide per recipient, the message and its envelopes are
 * stored at the room's next release position), and after commit the released envelopes are
 * published in release-position order (release-order.ts) and the send is acknowledged.
 */
import { ALL_MEMBERS, type RoomEnvelope, type RoomMessageInput, type RoomMessageResult } from '@parley/protocol';
import { decodeEnvelope } from '../../lib/envelope.js';
import { badRequest } from '../../lib/errors.js';
import type { DecodedEnvelope } from './internal.js';
import { messageFields, roomMessageEvent, type RoomContext } from './internal.js';
import { joinOwnerSender } from './management.js';
import type { Turn } from './release-order.js';

/**
 * Hooks that let a socket pipeline its `room_message` frames while keeping their order
 * (rooms/frames.ts; design §8.5): the next frame may start once this one's release position is
 * settled to come first (it is queued for the group commit, whose flushes assign positions in
 * queue order), and its frames are published after `after`.
 */
export interface SendOrder {
  /** Called once the message is queued (its position will precede any later send's), or when the send failed before (later calls are no-ops for the caller). */
  positioned(): void;
  /** Settles once the same socket's previous send has published (or failed): this one publishes after it. */
  after?: Promise<unknown>;
}

/** The device sending a room message, and its kind (an owner device joins the room it sends into). */
export interface RoomSender {
  deviceId: string;
  kind: 'owner' | 'agent';
}

/**
 * Fan out one room message (design §8.5). Rules: the sender is a member (403) — an ACTIVE owner
 * device of the tenant that is not one joins first (management.ts `joinOwnerSender`); each recipient
 * is another member (400), at most once; an MLS envelope (`*`) is the only envelope; base64
 * fields (400); ciphertext within the limit (413). The message is written by its tenant's group
 * commit (flush.ts), where the policies decide per recipient, the `room.message` webhooks of the
 * released recipients are enqueued and the message takes its release position (the answer's and
 * the events' `cursor`), with its envelopes. Resolves after that commit; released envelopes are
 * published first, all at once, in release-position order per room (release-order.ts). `order`
 * pipelines a socket's frames (rooms/frames.ts).
 * @throws 404 unknown room, 409 archived room (or full, for an owner device joining).
 */
export async function sendRoomMessage(
  ctx: RoomContext,
  tenantId: string,
  sender: RoomSender,
  roomId: string,
  input: RoomMessageInput,
  order?: SendOrder,
): Promise<RoomMessageResult> {
  const { policies, notifier } = ctx.deps;
  const senderDeviceId = sender.deviceId;
  let turn: Turn | undefined;
  try {
    const envelopes = decode(ctx, input.envelopes);
    if (sender.kind === 'owner') await joinOwnerSender(ctx, tenantId, roomId, senderDeviceId);
    const queued = ctx.sends.submit(tenantId, { roomId, senderDeviceId, messageType: input.message_type ?? 'text', priority: input.priority ?? 'normal', envelopes });
    order?.positioned();
    const outcome = await queued;
    if ('error' in outcome) throw outcome.error;
    const { msg, position, result, releases, alerts } = outcome.ok;
    turn = outcome.ok.turn;

    // After commit: publish in release order (earlier sends of the room, and the sender's earlier
    // frames, first), every recipient's frame in one bus message.
    await turn.ready;
    await order?.after;
    const fields = messageFields(msg);
    const cursor = String(position);
    await notifier.toEach(
      tenantId,
      'room_message',
      releases.filter((r) => r.recipients.length > 0).map((r) => ({ deviceIds: r.recipients, data: roomMessageEvent(fields, r.wire, cursor) })),
    );
    turn.done();
    for (const a of alerts) await policies.alert(tenantId, a);
    return result;
  } finally {
    turn?.done();
    order?.positioned();
  }
}

/**
 * Validate and decode envelopes (no database): not empty, `*` alone, distinct recipients, then per
 * envelope base64 and size (lib/envelope.ts `decodeEnvelope`).
 */
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
    return { recipient, ...decodeEnvelope(e, ctx.deps.maxCiphertextBytes), wire: { header: e.header_blob, ciphertext: e.ciphertext } };
  });
}
