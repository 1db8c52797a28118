/**
 * The room layer of a running agent (`runtime.ts` API-key agents, `agent.ts` enrolled devices;
 * contract §4.6, design §8.5): a {@link RoomMessenger} on the agent's owner-conversation messenger,
 * attached to its socket (room messages arrive on the messenger's `message` event with `room_id`,
 * rooms joined are registered, known rooms are caught up on every connection) and sending over it.
 */
import type { ParleyClient } from '../client/rest.js';
import type { RealtimeClient } from '../realtime/client.js';
import type { SecureMessenger } from '../secure/messenger.js';
import { RoomMessenger } from '../secure/rooms.js';
import type { SessionStore } from '../storage.js';

/** Open the room layer of `messenger`'s device and attach it to `realtime`; problems are logged. */
export async function openRoomLayer(options: { messenger: SecureMessenger; store: SessionStore; client: ParleyClient; realtime: RealtimeClient; log: (line: string) => void }): Promise<RoomMessenger> {
  const rooms = await RoomMessenger.open({ messenger: options.messenger, store: options.store, client: options.client });
  rooms.on('error', (e) => options.log(`warning: room ${e.code}: ${e.message}`));
  rooms.attach(options.realtime);
  return rooms;
}
