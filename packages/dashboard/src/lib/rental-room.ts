/**
 * A marketplace rental's room in the browser (the SDK's `secure/rental-rooms.ts`): this browser's
 * owner device is a member of the rooms of its tenant's rentals; each message is encrypted here,
 * one envelope per member of the other side (the rented agent), in a pairwise X3DH + Double
 * Ratchet session of this device's messenger, and sent with `POST /marketplace/rentals/{id}/messages`
 * (`X-Device-Id`). The agent's replies arrive on the owner socket as `rental_message` frames (and
 * by catch-up), are decrypted by the same messenger and land in the browser's chat log under the
 * pairwise conversation `rental:<rental_id>:<agent_device_id>`, which this module also writes what
 * the owner sent to.
 */
import { openRentalRooms, rentalConversationId, restRentalTransport, type RoomMessenger, type RoomSendReceipt } from '@parley/sdk';
import type { OwnerRuntime } from './owner';

const opened = new WeakMap<OwnerRuntime, Promise<RoomMessenger>>();

/**
 * The rental-room layer of `owner`'s device, opened once per runtime (its room list is kept in
 * the sealed store) and attached to the owner socket (live replies, catch-up on reconnection).
 * A failed opening is forgotten, so the next call tries again.
 */
export function rentalRooms(owner: Pick<OwnerRuntime, 'messenger' | 'store' | 'client' | 'realtime' | 'deviceId'>): Promise<RoomMessenger> {
  const key = owner as OwnerRuntime;
  let rooms = opened.get(key);
  if (!rooms) {
    rooms = openRentalRooms({ messenger: owner.messenger, store: owner.store, client: owner.client, realtime: owner.realtime, transport: restRentalTransport(owner.client, owner.deviceId) });
    opened.set(key, rooms);
    rooms.catch(() => opened.delete(key));
  }
  return rooms;
}

/**
 * Register rental `rentalId`'s room (its members' keys from the service), read what was sent to
 * this device meanwhile, and answer the agent's device id (the peer this device talks to).
 * @throws ParleyApiError 409 when the rental never became active (no room); SecureMessengerError.
 */
export async function joinRentalRoom(rooms: RoomMessenger, rentalId: string): Promise<string> {
  await rooms.refresh(rentalId);
  const [agent] = rooms.peers(rentalId).keys();
  if (!agent) throw new Error(`the room of rental ${rentalId} has no agent to talk to`);
  await rooms.catchUp(rentalId);
  return agent;
}

/** The browser chat-log conversation of rental `rentalId` with its agent `agentDeviceId`. */
export const rentalChatId = rentalConversationId;

/**
 * Encrypt `text` for the rental's agent and send it; the plaintext goes to the chat log as sent.
 * Answers the service's receipt: each recipient's outcome (`delivered`, `notified`, `held` by a
 * policy of either tenant or while the rental is suspended, `blocked`).
 * @throws SecureMessengerError `send_failed` (cause: the service's `{detail}`), `unknown_conversation`.
 */
export async function sendRentalText(owner: Pick<OwnerRuntime, 'chat' | 'deviceId'>, rooms: RoomMessenger, rentalId: string, agentDeviceId: string, text: string): Promise<RoomSendReceipt> {
  const sent = await rooms.sendText(rentalId, text);
  await owner.chat.append({
    message_id: sent.room_message_id,
    conversation_id: rentalChatId(rentalId, agentDeviceId),
    direction: 'out',
    sender_device_id: owner.deviceId,
    timestamp: sent.timestamp,
    message_type: 'text',
    content: { type: 'text', payload: { text } },
    status: 'sent',
  });
  return sent;
}

/** Recipients whose copy did not go through at once, in words ("held by a policy"), or undefined when all were delivered. */
export function undelivered(receipt: Pick<RoomSendReceipt, 'deliveries'>): string | undefined {
  const out = receipt.deliveries.filter((d) => d.outcome === 'held' || d.outcome === 'blocked');
  if (out.length === 0) return undefined;
  return out.map((d) => (d.outcome === 'held' ? 'held for an owner’s approval (a policy, or the rental is suspended)' : 'blocked by a policy')).join('; ');
}
