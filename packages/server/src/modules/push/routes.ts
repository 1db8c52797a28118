/** Push registration route (contract §4.7). Owner JWT. */
import { ROUTES } from '@parley/protocol';
import type { FastifyPluginAsync } from 'fastify';
import { ownerOf } from '../../http/auth.js';
import { serve } from '../../http/contract.js';
import type { PushService } from './service.js';

/** Registers `POST /push/register`. */
export const pushRoutes: FastifyPluginAsync<{ push: PushService }> = async (app, { push }) => {
  serve(app, ROUTES.registerPushToken, async (req, reply) => {
    const { tenantId } = ownerOf(req);
    return reply.status(201).send(await push.register(tenantId, req.body.device_id.toLowerCase(), req.body.platform, req.body.token));
  });
};
