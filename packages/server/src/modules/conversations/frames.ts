/**
 * The conversation socket frames (contract §6.1; design §7), served through
 * {@link Gateway.registerFrame}:
 *
 * - `message {conversation_id, header_blob, ciphertext, message_type?, priority?, …, client_ref?}`
 *   is rate limited (60/min per device, contract §8), prepared in the socket's arrival order, committed
 *   by group commit and answered `message_ack {message_id, timestamp, cursor, client_ref?}` only
 *   after commit; the stored message is published to the recipient device and the sender's other
 *   sockets (MessageService.commit).
 * - `typing {conversation_id}` is relayed to the counterpart with `device_id` filled in by the
 *   server; no ack, and its error frames carry no `client_ref`.
 *
 * Delivering a `message` frame to a socket of a device other than the sender marks it delivered
 * (batched; the sender then gets `message_delivered`, modules/receipts). The read receipt frames
 * are served by modules/receipts/frames.ts.
 */
import { OutgoingMessage, TypingFrame, type MessageAck, type TypingEvent } from '@parley/protocol';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { EventBus } from '../../realtime/bus.js';
import '../../realtime/frames.js'; // registers the `uuid` format the compiled checks need
import type { Gateway } from '../../realtime/gateway.js';
import { refOf, type MessageOut, type MessageService } from './messages.js';

/** Serve `message` and `typing` on the gateway and mark delivered messages (called once by the composition root). */
export function registerConversationFrames(gateway: Pick<Gateway, 'registerFrame' | 'onDeliver'>, messages: MessageService, bus: Pick<EventBus, 'publish'>): void {
  gateway.registerFrame('message', {
    check: TypeCompiler.Compile(OutgoingMessage),
    rateLimited: true,
    // Prepare in order; commit and ack without holding up the socket's next frame.
    async handle(sender, data) {
      const { client_ref: _ref, ...input } = data;
      const prepared = await messages.prepare(sender.tenantId, sender.deviceId, input);
      return {
        ack: messages.commit(prepared, sender.socketId).then((m) => {
          const ack: MessageAck = { message_id: m.message_id, timestamp: m.timestamp, cursor: m.cursor };
          return { event: 'message_ack', data: ack };
        }),
      };
    },
  });
  gateway.registerFrame('typing', {
    check: TypeCompiler.Compile(TypingFrame),
    echoClientRef: false,
    async handle(sender, data) {
      const conversationId = data.conversation_id;
      const { peer } = await messages.counterpart(sender.tenantId, conversationId, sender.deviceId);
      const event: TypingEvent = { conversation_id: conversationId, device_id: sender.deviceId };
      await bus.publish({ type: 'frame', to: { deviceIds: [peer] }, event: 'typing', data: event });
    },
  });
  gateway.onDeliver('message', (recipient, data) => {
    const message = data as MessageOut;
    if (recipient.deviceId !== message.sender_device_id) messages.markDelivered(recipient.tenantId, refOf(message, recipient.deviceId));
  });
}
