/** Push registration route (SPEC §4.7). Owner JWT. */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ownerOf } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import { Uuid } from '../../http/schemas.js';
import { PUSH_PLATFORMS } from './gateway.js';
import type { PushService } from './service.js';

const Platform = Type.Union(PUSH_PLATFORMS.map((p) => Type.Literal(p)));

/** Registers `POST /push/register`. */
export const pushRoutes: FastifyPluginAsyncTypebox<{ push: PushService }> = async (app, { push }) => {
  app.post(
    '/push/register',
    {
      config: { auth: 'owner' },
      schema: {
        tags: ['push'],
        security: [{ ownerJwt: [] }],
        summary: "Register a mobile push token for an ACTIVE device of the caller's tenant (idempotent per device and token)",
        body: Type.Object({ device_id: Uuid, platform: Platform, token: Type.String({ minLength: 1, maxLength: 4096 }) }),
        response: { 201: Type.Object({ push_token_id: Uuid, device_id: Uuid, platform: Platform }), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req, reply) => {
      const { tenantId } = ownerOf(req);
      return reply.status(201).send(await push.register(tenantId, req.body.device_id.toLowerCase(), req.body.platform, req.body.token));
    },
  );
};
