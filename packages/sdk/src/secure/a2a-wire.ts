/**
 * What {@link SecureChannels} (`a2a.ts`) reads and writes on the wire besides its REST calls
 * (contract §2.11, §6.1): the handshake plaintext each side seals as its key exchange (never
 * delivered to the application), and the A2A key exchange events, history entries and channel
 * messages as messages for the messenger to receive (conversation id = channel id).
 */
import type { A2aKeyExchangeEvent, A2aMessage } from '@parley/protocol';
import type { ReceivedMessage } from './types.js';

/** The handshake plaintext (not content: never delivered to the application). */
const HANDSHAKE_PREFIX = 'parley-a2a-key-exchange/v1:';

/** The handshake plaintext of `role` in channel `channelId`. */
export function handshakeBytes(channelId: string, role: string): Uint8Array {
  return new TextEncoder().encode(`${HANDSHAKE_PREFIX}${channelId}:${role}`);
}

/** The channel and role a decrypted plaintext names when it is a handshake, else undefined. */
export function readHandshake(plaintext: Uint8Array): { channelId: string; role: string } | undefined {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(plaintext);
  } catch {
    return undefined;
  }
  if (!text.startsWith(HANDSHAKE_PREFIX)) return undefined;
  const [channelId, role] = text.slice(HANDSHAKE_PREFIX.length).split(':');
  return channelId && role ? { channelId, role } : undefined;
}

/** A `key_exchange` entry of a channel's history (`GET /a2a/channels/{id}/messages`) as its key exchange event. */
export function historyKeyExchange(m: A2aMessage): A2aKeyExchangeEvent {
  return { channel_id: m.channel_id, message_id: m.message_id, sender_device_id: m.sender_device_id, header_blob: m.header_blob, ciphertext: m.ciphertext, timestamp: m.timestamp };
}

/** A key exchange as a message of the channel's conversation; `cursor`: its history cursor, when read from the history. */
export function keyExchangeAsReceived(e: A2aKeyExchangeEvent, cursor: string | undefined): ReceivedMessage {
  return {
    message_id: e.message_id,
    conversation_id: e.channel_id,
    sender_device_id: e.sender_device_id,
    header_blob: e.header_blob,
    ciphertext: e.ciphertext,
    timestamp: e.timestamp,
    cursor: cursor ?? '0',
    message_type: 'key_exchange',
    priority: 'normal',
  };
}

/** A channel message as a message of the channel's conversation. */
export function channelMessageAsReceived(m: A2aMessage): ReceivedMessage {
  return {
    message_id: m.message_id,
    conversation_id: m.channel_id,
    sender_device_id: m.sender_device_id,
    header_blob: m.header_blob,
    ciphertext: m.ciphertext,
    timestamp: m.timestamp,
    cursor: m.cursor,
    message_type: m.message_type,
    priority: m.priority,
  };
}
