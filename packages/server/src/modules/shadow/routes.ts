/**
 * Shadow-session routes (contract §4.17; design §8.8, §8.20), all owner JWT:
 * `POST /shadow/sessions` (201), `GET /shadow/sessions` (?device_id, ?level, cursor/limit),
 * `GET /shadow/sessions/{session_id}`, `POST …/record-human-decision` (201),
 * `GET …/graduation-check`, `POST …/graduate`, `POST …/demote` (200 with the session).
 */
import { ROUTES } from '@parley/protocol';
import type { FastifyPluginAsync } from 'fastify';
import { ownerOf } from '../../http/auth.js';
import { serve } from '../../http/contract.js';
import type { ShadowService } from './service.js';

export const shadowRoutes: FastifyPluginAsync<{ shadow: ShadowService }> = async (app, { shadow }) => {
  serve(app, ROUTES.createShadowSession, async (req, reply) => {
    const o = ownerOf(req);
    return reply.status(201).send(await shadow.create(o.tenantId, o.sub, req.body));
  });

  serve(app, ROUTES.listShadowSessions, async (req) => shadow.list(ownerOf(req).tenantId, req.query));

  serve(app, ROUTES.getShadowSession, async (req) => shadow.get(ownerOf(req).tenantId, req.params.session_id));

  serve(app, ROUTES.recordShadowDecision, async (req, reply) => {
    const o = ownerOf(req);
    return reply.status(201).send(await shadow.record(o.tenantId, o.sub, req.params.session_id, req.body));
  });

  serve(app, ROUTES.getShadowGraduationCheck, async (req) => shadow.graduationCheck(ownerOf(req).tenantId, req.params.session_id));

  serve(app, ROUTES.graduateShadowSession, async (req) => {
    const o = ownerOf(req);
    return shadow.graduate(o.tenantId, o.sub, req.params.session_id);
  });

  serve(app, ROUTES.demoteShadowSession, async (req) => {
    const o = ownerOf(req);
    return shadow.demote(o.tenantId, o.sub, req.params.session_id, req.body);
  });
};
