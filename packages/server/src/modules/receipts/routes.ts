/**
 * Read-receipt routes (@parley/protocol `areas/receipts.ts`): the REST twin of
 * the `message_read` / `room_message_read` frames, for clients without a socket. The reader is the
 * calling device (device JWT, API key with key material) or the owner's device named in
 * `X-Device-Id`. Thin: the rules live in ReceiptService.
 */
import { ROUTES } from '@parley/protocol';
import type { FastifyPluginAsync } from 'fastify';
import type { Db } from '../../db/client.js';
import { deviceIdHeader } from '../../http/auth.js';
import { serve } from '../../http/contract.js';
import { actingDevice } from '../devices/index.js';
import type { ReceiptService } from './service.js';

export const receiptRoutes: FastifyPluginAsync<{ receipts: ReceiptService; db: Db }> = async (app, { receipts, db }) => {
  /** The reading device: the caller's own, or (owners) the one in `X-Device-Id`. */
  const reader = (req: Parameters<typeof deviceIdHeader>[0]) => actingDevice({ db }, req.principal!, req.principal!.kind === 'owner' ? deviceIdHeader(req, true) : undefined);

  serve(app, ROUTES.readConversation, async (req) => {
    const { tenantId, deviceId } = await reader(req);
    return receipts.readConversation(tenantId, deviceId, req.params.id, req.body.up_to_message_id.toLowerCase());
  });

  serve(app, ROUTES.readRoom, async (req) => {
    const { tenantId, deviceId } = await reader(req);
    return receipts.readRoom(tenantId, deviceId, req.params.id, req.body.up_to_room_message_id.toLowerCase());
  });
};
