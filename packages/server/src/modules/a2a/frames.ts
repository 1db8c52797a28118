/**
 * A2A socket frames (contract §6.1; design §7 frame conventions), served through
 * {@link Gateway.registerFrame}; the frame schemas are the contract's (`@parley/protocol` a2a):
 *
 * - `a2a_key_exchange {channel_id, header_blob, ciphertext, client_ref?}` -> answered
 *   `a2a_key_exchange_ack {channel_id, status, conversation_id, client_ref?}`; the peer receives
 *   `a2a_key_exchange {channel_id, message_id, sender_device_id, header_blob, ciphertext, timestamp}`.
 * - `a2a_message {channel_id, header_blob, ciphertext, message_type?, priority?, traceparent?,
 *   client_ref?}` (counted against the 60/min per-device message limit, contract §8) -> answered
 *   `a2a_message_ack {message_id, channel_id, outcome, held_message_id?, timestamp, traceparent,
 *   client_ref?}`; the recipient receives `a2a_message` (`A2aMessage`).
 *
 * Errors are the gateway's error frames `{detail, status, client_ref?}`.
 */
import { A2aMessageFrame, KeyExchangeFrame } from '@parley/protocol';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { Gateway } from '../../realtime/gateway.js';
// Registers the `uuid` string format the compiled checks below need.
import '../../realtime/frames.js';
import type { A2aCore } from './internal.js';
import { keyExchange } from './key-exchange.js';
import { send } from './messages.js';

/** Serve the A2A frames on the gateway (called once by the composition root). */
export function registerA2aFrames(gateway: Pick<Gateway, 'registerFrame'>, a2a: A2aCore): void {
  gateway.registerFrame('a2a_key_exchange', {
    check: TypeCompiler.Compile(KeyExchangeFrame),
    async handle(sender, data) {
      const { client_ref: _ref, ...input } = data;
      return { event: 'a2a_key_exchange_ack', data: { ...(await keyExchange(a2a, sender, input)) } };
    },
  });
  gateway.registerFrame('a2a_message', {
    check: TypeCompiler.Compile(A2aMessageFrame),
    rateLimited: true,
    async handle(sender, data) {
      const { client_ref: _ref, channel_id: channelId, ...input } = data;
      return { event: 'a2a_message_ack', data: { ...(await send(a2a, sender, channelId, input, sender.socketId)) } };
    },
  });
}
