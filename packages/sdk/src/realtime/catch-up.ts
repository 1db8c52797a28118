/**
 * Ready-made catch-up sources for {@link RealtimeClient} (design §6): after a reconnection the
 * client reads what it missed with `since=<last cursor>`.
 * - agents: `GET /devices/{id}/messages?since=` (device JWT), all of the device's conversations;
 * - owners: `GET /conversations/{id}/messages?since=` (owner JWT), one source per conversation.
 */
import type { ParleyClient } from '../client/rest.js';
import type { CatchUpSource } from './types.js';

/** Catch-up for an agent (or any device with a device JWT): every conversation of `deviceId`. */
export function deviceCatchUp(client: ParleyClient, deviceId: string): CatchUpSource {
  return {
    key: `device:${deviceId}`,
    covers: () => true,
    fetchPage: (since, limit) => client.deviceMessages(deviceId, since === undefined ? { limit } : { since, limit }),
  };
}

/** Catch-up for an owner: one conversation (use one source per conversation the owner device is in). */
export function conversationCatchUp(client: ParleyClient, conversationId: string): CatchUpSource {
  return {
    key: `conversation:${conversationId}`,
    covers: (m) => m.conversation_id === conversationId,
    fetchPage: (since, limit) => client.conversationMessages(conversationId, since === undefined ? { limit } : { since, limit }),
  };
}
