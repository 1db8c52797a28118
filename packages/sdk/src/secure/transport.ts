/**
 * Transports for `SecureMessenger` (contract §4.5, §6.1): where encrypted wire fields go.
 * - {@link realtimeTransport}: the WebSocket `message` frame, acknowledged after commit; queued
 *   while offline (contract §6.1 rule 4); runs the client's outbound scanner (rule 5).
 * - {@link restTransport}: `POST /conversations/{id}/messages` (owner JWT + `X-Device-Id`).
 * And {@link ownerPeerResolver}: the owner's way to learn a conversation's peer keys.
 */
import type { ParleyClient } from '../client/rest.js';
import type { PeerDevice } from '../crypto/session.js';
import type { RealtimeClient } from '../realtime/client.js';
import type { SecureTransport } from './types.js';

/** Send over a {@link RealtimeClient} (`send` resolves with the `message_ack`). */
export function realtimeTransport(realtime: RealtimeClient): SecureTransport {
  return {
    send: (message) => realtime.send(message),
    scan: (plaintext, meta) => realtime.scanOutbound(plaintext, meta),
  };
}

/**
 * Send with `POST /api/v1/conversations/{id}/messages` as owner device `deviceId` (sent as
 * `X-Device-Id`; default: the client's configured acting device).
 * @throws ParleyApiError (400, 403 not a side, 404, 413) or ParleyNetworkError from `send`.
 */
export function restTransport(client: ParleyClient, deviceId?: string): SecureTransport {
  return {
    async send(message) {
      const { conversation_id, client_ref: _ref, ...body } = message;
      const stored = await client.sendMessage(conversation_id, body, deviceId === undefined ? undefined : { deviceId });
      return { message_id: stored.message_id, cursor: stored.cursor, timestamp: stored.timestamp };
    },
  };
}

/**
 * A `resolvePeer` for owners: the counterparty of a conversation from
 * `GET /conversations/{id}/keys` (owner JWT; `X-Device-Id` = this owner device). Answers
 * undefined when the service names another device than the message's sender (when one is given).
 * @throws ParleyApiError (403, 404) or ParleyNetworkError from the lookup.
 */
export function ownerPeerResolver(client: ParleyClient, ownerDeviceId: string): (conversationId: string, senderDeviceId?: string) => Promise<PeerDevice | undefined> {
  return async (conversationId, senderDeviceId) => {
    const keys = await client.conversationKeys(conversationId, { deviceId: ownerDeviceId });
    if (senderDeviceId !== undefined && keys.device_id !== senderDeviceId) return undefined;
    return { device_id: keys.device_id, identity_public_key: keys.identity_public_key, ephemeral_public_key: keys.ephemeral_public_key };
  };
}
