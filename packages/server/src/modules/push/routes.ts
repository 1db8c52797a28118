/** Push routes (contract §4.7; design §8.36 "Push delivery"): registrations (owner JWT) and the VAPID public key (no auth). */
import { ROUTES } from '@parley/protocol';
import type { FastifyPluginAsync } from 'fastify';
import { ownerOf } from '../../http/auth.js';
import { serve } from '../../http/contract.js';
import type { PushService } from './service.js';

/** Options of {@link pushRoutes}. */
export interface PushRoutesOptions {
  push: PushService;
  /** The VAPID public key (base64url of the uncompressed P-256 point) served by `GET /push/vapid-public-key`. */
  vapidPublicKey: string;
}

/** Registers `POST /push/register`, `DELETE /push/register/{push_token_id}`, `GET /push/registrations` and `GET /push/vapid-public-key`. */
export const pushRoutes: FastifyPluginAsync<PushRoutesOptions> = async (app, { push, vapidPublicKey }) => {
  serve(app, ROUTES.registerPushToken, async (req, reply) => {
    const { tenantId } = ownerOf(req);
    return reply.status(201).send(await push.register(tenantId, req.body.device_id.toLowerCase(), req.body.platform, req.body.token));
  });
  serve(app, ROUTES.deletePushRegistration, async (req, reply) => {
    const { tenantId, sub } = ownerOf(req);
    await push.remove(tenantId, req.params.push_token_id.toLowerCase(), sub);
    return reply.status(204).send(null);
  });
  serve(app, ROUTES.listPushRegistrations, async (req) => push.list(ownerOf(req).tenantId));
  serve(app, ROUTES.vapidPublicKey, async () => ({ public_key: vapidPublicKey }));
};
