/** `POST /api/v1/tenants` and `GET /api/v1/me` (the signed-in owner and whether it is a platform operator). */
import { ROUTES } from '@parley/protocol';
import type { FastifyPluginAsync } from 'fastify';
import type { Db } from '../../db/client.js';
import { serve } from '../../http/contract.js';
import { createTenant } from './service.js';

export const tenantRoutes: FastifyPluginAsync<{ db: Db }> = async (app, { db }) => {
  serve(app, ROUTES.createTenant, async (req, reply) => {
    const p = req.principal!;
    if (p.kind !== 'owner') throw new Error('unreachable');
    return reply.status(201).send(await createTenant(db, p.sub, req.body.name.trim() || req.body.name));
  });

  serve(app, ROUTES.getMe, async (req) => {
    const p = req.principal!;
    if (p.kind !== 'owner') throw new Error('unreachable');
    return { sub: p.sub, tenant_id: p.tenantId, role: p.role, operator: p.operator };
  });
};
