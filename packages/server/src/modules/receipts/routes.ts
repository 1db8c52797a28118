/**
 * Read-receipt routes (issue 20 part 1; @parley/protocol `areas/receipts.ts`): the REST twin of
 * the `message_read` / `room_message_read` frames, for clients without a socket. The reader is the
 * calling device (device JWT, API key with key material) or the owner's device named in
 * `X-Device-Id`. Thin: the rules live in ReceiptService.
 */
import { ROUTES } from '@parley/protocol';
import type { FastifyPluginAsync } from 'fastify';
import { actingDevice } from '../../http/auth.js';
import { serve } from '../../http/contract.js';
import type { DeviceService } from '../devices/service.js';
import type { ReceiptService } from './service.js';

export const receiptRoutes: FastifyPluginAsync<{ receipts: ReceiptService; devices: DeviceService }> = async (app, { receipts, devices }) => {
  /** The reading device: the caller's own, or (owners) the one in `X-Device-Id`. */
  const reader = (req: Parameters<typeof actingDevice>[0]) => devices.actingDevice(req.principal!, req.principal!.kind === 'owner' ? actingDevice(req, true) : undefined);

  serve(app, ROUTES.readConversation, async (req) => {
    const { tenantId, deviceId } = await reader(req);
    return receipts.readConversation(tenantId, deviceId, req.params.id, req.body.up_to_message_id.toLowerCase());
  });

  serve(app, ROUTES.readRoom, async (req) => {
    const { tenantId, deviceId } = await reader(req);
    return receipts.readRoom(tenantId, deviceId, req.params.id, req.body.up_to_room_message_id.toLowerCase());
  });
};
