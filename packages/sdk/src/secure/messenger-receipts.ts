/**
 * Read receipts of a {@link SecureMessenger} (`messenger.ts`; contract §6.1 `message_read`,
 * design §8.5 for rooms): sending one for a received message over the realtime client or the REST
 * client, and `autoRead`, which reads the latest handled message of each conversation or room
 * shortly after it was delivered (a read is a mark: one covers the messages before it). Rental
 * rooms have no read receipts.
 */
import type { MessageReadAck, RoomMessageReadAck } from '@parley/protocol';
import type { ParleyClient } from '../client/rest.js';
import type { RealtimeClient } from '../realtime/client.js';
import { describe } from './messenger-host.js';
import { SecureMessengerError, type SecureMessage } from './types.js';

/** How long `autoRead` gathers delivered messages before reading them (ms). */
const AUTO_READ_MS = 50;

/**
 * Send a read receipt for `message` over `realtime`, else with `client` as device `deviceId`
 * (`SecureMessenger.markRead`).
 * @throws (rejects) SecureMessengerError `no_transport`; the realtime or REST client's errors.
 */
export function sendReadReceipt(
  realtime: RealtimeClient | undefined,
  client: ParleyClient | undefined,
  deviceId: string,
  message: Pick<SecureMessage, 'message_id' | 'conversation_id' | 'room_id' | 'rental_id'>,
): Promise<MessageReadAck | RoomMessageReadAck> {
  const rt = realtime;
  if (message.rental_id !== undefined) return Promise.reject(new SecureMessengerError('no_transport', 'rental rooms have no read receipts', { conversationId: message.conversation_id, messageId: message.message_id }));
  if (message.room_id !== undefined) {
    if (rt) return rt.markRoomRead(message.room_id, message.message_id);
    if (client) return client.readRoom(message.room_id, { up_to_room_message_id: message.message_id }, { deviceId });
  } else {
    if (rt) return rt.markRead(message.conversation_id, message.message_id);
    if (client) return client.readConversation(message.conversation_id, { up_to_message_id: message.message_id }, { deviceId });
  }
  return Promise.reject(new SecureMessengerError('no_transport', 'no realtime or REST client to send the read receipt with', { conversationId: message.conversation_id }));
}

/** `autoRead`: the latest delivered message per conversation or room, read when the timer fires. */
export class AutoRead {
  private readonly toRead = new Map<string, SecureMessage>();
  private timer: ReturnType<typeof setTimeout> | undefined;

  /** `markRead` sends one receipt; `report` gets the failures (`send_failed`). */
  constructor(
    private readonly markRead: (message: SecureMessage) => Promise<unknown>,
    private readonly report: (error: SecureMessengerError) => void,
  ) {}

  /** Read `m` shortly, unless a later message of its conversation or room comes first (rental rooms: never). */
  schedule(m: SecureMessage): void {
    if (m.rental_id !== undefined) return;
    this.toRead.set(m.room_id !== undefined ? `room:${m.room_id}` : `conversation:${m.conversation_id}`, m);
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      const batch = [...this.toRead.values()];
      this.toRead.clear();
      for (const read of batch) {
        this.markRead(read).catch((err: unknown) => this.report(new SecureMessengerError('send_failed', `read receipt for ${read.message_id} failed: ${describe(err)}`, { conversationId: read.conversation_id, messageId: read.message_id, cause: err })));
      }
    }, AUTO_READ_MS);
  }

  /** Drop what waits to be read, and the timer. */
  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.toRead.clear();
  }
}
