/** `POST /api/v1/tenants` (SPEC §4.2). */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Db } from '../../db/client.js';
import { errorResponses } from '../../http/errors.js';
import { createTenant } from './service.js';

const TenantOut = Type.Object({ tenant_id: Type.String({ format: 'uuid' }), name: Type.String(), role: Type.String() });

export const tenantRoutes: FastifyPluginAsyncTypebox<{ db: Db }> = async (app, { db }) => {
  app.post(
    '/tenants',
    {
      config: { auth: 'owner-any' },
      schema: {
        tags: ['tenants'],
        summary: 'Create a tenant; the caller becomes OWNER_ADMIN',
        security: [{ ownerJwt: [] }],
        body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }) }),
        response: { 201: TenantOut, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request, reply) => {
      const p = request.principal!;
      if (p.kind !== 'owner') throw new Error('unreachable');
      return reply.status(201).send(await createTenant(db, p.sub, request.body.name.trim() || request.body.name));
    },
  );
};
