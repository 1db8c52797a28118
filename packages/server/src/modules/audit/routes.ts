/**
 * Audit routes (contract §4.14, §4.19; design §8.10, §8.22, §8.33): query the tenant's trail, recompute
 * its chain, an agent's own `agent.action` events (`POST /audit/events`, device JWT or API key),
 * and the transparency log: the signing key, checkpoints, inclusion and consistency proofs.
 */
import { ROUTES } from '@parley/protocol';
import type { FastifyPluginAsync } from 'fastify';
import { agentDeviceOf, ownerOf } from '../../http/auth.js';
import { serve } from '../../http/contract.js';
import { forbidden } from '../../lib/errors.js';
import { auditActor } from './parties.js';
import type { AuditService } from './service.js';
import type { AuditTransparency } from './transparency.js';

/** Largest `POST /audit/events` body. */
const SUBMIT_BODY_LIMIT = 64 * 1024;

export const auditRoutes: FastifyPluginAsync<{ audit: AuditService; transparency: AuditTransparency }> = async (app, { audit, transparency }) => {
  serve(app, ROUTES.listAuditEvents, async (req) => audit.list(ownerOf(req).tenantId, req.query));
  serve(app, ROUTES.verifyAudit, async (req) => audit.verify(ownerOf(req).tenantId));
  serve(app, ROUTES.getAuditLogKey, async () => transparency.logKey());
  serve(app, ROUTES.getAuditCheckpoint, async (req) => transparency.latest(ownerOf(req).tenantId));
  serve(app, ROUTES.getAuditEventProof, async (req) => transparency.eventProof(ownerOf(req).tenantId, req.params.event_id, req.query.tree_size));
  serve(app, ROUTES.getAuditConsistency, async (req) => transparency.consistency(ownerOf(req).tenantId, req.query.first, req.query.second));

  serve(
    app,
    ROUTES.submitAuditEvent,
    async (req, reply) => {
      // 403 for an API key without registered key material (agentDeviceOf) and for an owner device's JWT.
      const { tenantId, deviceId, kind } = agentDeviceOf(req);
      if (kind !== 'agent') throw forbidden('only agent devices record agent actions');
      return reply.status(201).send(await audit.submit({ tenantId, deviceId, actor: auditActor(req.principal!) }, req.body));
    },
    // details may be 16 KiB of JSON; room for escaping and the other fields, 413 beyond.
    { bodyLimit: SUBMIT_BODY_LIMIT },
  );
};
