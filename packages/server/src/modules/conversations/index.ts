/**
 * Conversations, direct messages and topics (contract §4.5, §6.1; design §7, §8.12): the area's
 * public surface. Messages are group-committed per tenant (messages.ts); `close()` waits for the
 * queued writes. Devices provision conversations through the hooks exported here.
 */
import { API_PREFIX, type Area, type Platform } from '../../http/area.js';
import { registerConversationFrames } from './frames.js';
import { MessageService, type MessageServiceDeps } from './messages.js';
import { conversationRoutes } from './routes.js';
import { ConversationService } from './service.js';

export { RECEIPT_BATCH_DELAY_MS, type DeliveredMessage } from './deliveries.js';
export { MessageService } from './messages.js';
export { provisionAgent, provisionOwnerDevice } from './provisioning.js';

/** The conversations area and its message service (receipts read conversation sides through it). */
export interface ConversationsArea extends Area {
  messages: MessageService;
}

/** Conversations and messages; `onDelivered` hears of every delivered write (the delivered receipts). */
export function createConversations(d: Platform & Pick<MessageServiceDeps, 'onDelivered'>): ConversationsArea {
  const { limits } = d.config;
  const messages = new MessageService({
    db: d.db,
    writer: d.writer,
    notifier: d.notifier,
    maxCiphertextBytes: limits.maxCiphertextBytes,
    listDefault: limits.listDefault,
    listMax: limits.listMax,
    metrics: d.metrics,
    ...(d.onDelivered ? { onDelivered: d.onDelivered } : {}),
  });
  const conversations = new ConversationService(d.db, d.notifier);
  return {
    messages,
    frames: (gateway) => registerConversationFrames(gateway, messages, d.bus),
    async routes(app) {
      await app.register(conversationRoutes, { prefix: API_PREFIX, conversations, messages, db: d.db, messageRate: d.messageRate });
    },
    close: () => messages.drain(),
  };
}
