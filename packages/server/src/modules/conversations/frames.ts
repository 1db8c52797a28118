/**
 * The conversation socket frames (SPEC §6.1; DESIGN §7), served through
 * {@link Gateway.registerFrame}:
 *
 * - `message {conversation_id, header_blob, ciphertext, message_type?, priority?, …, client_ref?}`
 *   is rate limited (60/min per device, SPEC §8), prepared in the socket's arrival order, committed
 *   by group commit and answered `message_ack {message_id, timestamp, cursor, client_ref?}` only
 *   after commit; the stored message is published to the recipient device and the sender's other
 *   sockets (MessageService.commit).
 * - `typing {conversation_id}` is relayed to the counterpart with `device_id` filled in by the
 *   server; no ack, and its error frames carry no `client_ref`.
 *
 * Delivering a `message` frame to a socket of a device other than the sender marks it delivered.
 */
import { Type, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { MessageFields, Uuid } from '../../http/schemas.js';
import type { EventBus } from '../../realtime/bus.js';
import { ClientRef } from '../../realtime/frames.js';
import type { Gateway } from '../../realtime/gateway.js';
import type { MessageService } from './messages.js';

export const MessageFrame = Type.Object({ conversation_id: Uuid, ...MessageFields, client_ref: ClientRef });
export type MessageFrame = Static<typeof MessageFrame>;

export const TypingFrame = Type.Object({ conversation_id: Uuid });
export type TypingFrame = Static<typeof TypingFrame>;

/** Serve `message` and `typing` on the gateway and mark delivered messages (called once by the composition root). */
export function registerConversationFrames(gateway: Pick<Gateway, 'registerFrame' | 'onDeliver'>, messages: MessageService, bus: Pick<EventBus, 'publish'>): void {
  gateway.registerFrame<MessageFrame>('message', {
    check: TypeCompiler.Compile(MessageFrame),
    rateLimited: true,
    // Prepare in order; commit and ack without holding up the socket's next frame.
    async handle(sender, data) {
      const { client_ref: _ref, ...input } = data;
      const prepared = await messages.prepare(sender.tenantId, sender.deviceId, input);
      return {
        ack: messages.commit(prepared, sender.socketId).then((m) => ({ event: 'message_ack', data: { message_id: m.message_id, timestamp: m.timestamp, cursor: m.cursor } })),
      };
    },
  });
  gateway.registerFrame<TypingFrame>('typing', {
    check: TypeCompiler.Compile(TypingFrame),
    echoClientRef: false,
    async handle(sender, data) {
      const conversationId = data.conversation_id;
      const { peer } = await messages.counterpart(sender.tenantId, conversationId, sender.deviceId);
      await bus.publish({ type: 'frame', to: { deviceIds: [peer] }, event: 'typing', data: { conversation_id: conversationId, device_id: sender.deviceId } });
    },
  });
  gateway.onDeliver('message', (recipient, data) => {
    const message = data as { message_id: string; sender_device_id: string };
    if (recipient.deviceId !== message.sender_device_id) messages.markDelivered(recipient.tenantId, message.message_id);
  });
}
