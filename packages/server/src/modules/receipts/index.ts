/**
 * Delivered and read receipts (@parley/protocol `areas/receipts.ts`; design §8.12): the area's
 * public surface. Published batched through the bus; `close()` waits for queued room receipts.
 */
import { API_PREFIX, type Area, type Platform } from '../../http/area.js';
import type { MessageService } from '../conversations/index.js';
import { READ_RECEIPTS_DEFAULT } from '../settings/index.js';
import { registerReceiptFrames } from './frames.js';
import { ReceiptPublisher } from './publisher.js';
import { RoomDeliveries } from './room-deliveries.js';
import { receiptRoutes } from './routes.js';
import { ReceiptService } from './service.js';

export type { DeliveredEnvelope, EnvelopeRef, RoomDeliveries } from './room-deliveries.js';
export type { ReceiptPublisher } from './publisher.js';

/** The receipts area: the publisher (delivered receipts of direct messages) and the room deliveries (of room envelopes). */
export interface ReceiptsArea extends Area {
  publisher: ReceiptPublisher;
  roomDeliveries: RoomDeliveries;
}

/** Receipts over the conversation sides and pending deliveries of `messages`. */
export function createReceipts(d: Pick<Platform, 'db' | 'notifier' | 'writer'> & { messages: Pick<MessageService, 'counterpart' | 'whenDelivered'> }): ReceiptsArea {
  const publisher = new ReceiptPublisher(d.notifier);
  const roomDeliveries = new RoomDeliveries({ db: d.db, publisher });
  const receipts = new ReceiptService({ db: d.db, writer: d.writer, messages: d.messages, roomDeliveries, publisher, readReceiptsDefault: READ_RECEIPTS_DEFAULT });
  return {
    publisher,
    roomDeliveries,
    frames: (gateway) => registerReceiptFrames(gateway, receipts, roomDeliveries),
    async routes(app) {
      await app.register(receiptRoutes, { prefix: API_PREFIX, receipts, db: d.db });
    },
    close: () => roomDeliveries.drain(),
  };
}
