/** Audit routes (SPEC §4.14; DESIGN §8.10, §8.22): query the tenant's trail and recompute its chain. */
import { ROUTES } from '@parley/protocol';
import type { FastifyPluginAsync } from 'fastify';
import { ownerOf } from '../../http/auth.js';
import { serve } from '../../http/contract.js';
import type { AuditService } from './service.js';

export const auditRoutes: FastifyPluginAsync<{ audit: AuditService }> = async (app, { audit }) => {
  serve(app, ROUTES.listAuditEvents, async (req) => audit.list(ownerOf(req).tenantId, req.query));
  serve(app, ROUTES.verifyAudit, async (req) => audit.verify(ownerOf(req).tenantId));
};
