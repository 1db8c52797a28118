/**
 * Telemetry export setting routes (docs/decisions.md "Telemetry export"), owner JWT:
 * `GET /settings/telemetry-export` (404 when none), `PUT` (set or replace; header values are
 * write-only), `DELETE` (204; stops exporting and drops the backlog).
 */
import { ROUTES } from '@parley/protocol';
import type { FastifyPluginAsync } from 'fastify';
import { ownerOf } from '../../http/auth.js';
import { serve } from '../../http/contract.js';
import type { TelemetryExportService } from './service.js';

export const telemetryExportRoutes: FastifyPluginAsync<{ telemetryExport: TelemetryExportService }> = async (app, { telemetryExport }) => {
  serve(app, ROUTES.getTelemetryExport, async (req) => telemetryExport.get(ownerOf(req).tenantId));

  serve(app, ROUTES.setTelemetryExport, async (req) => {
    const o = ownerOf(req);
    return telemetryExport.set(o.tenantId, o.sub, req.body);
  });

  serve(app, ROUTES.deleteTelemetryExport, async (req, reply) => {
    const o = ownerOf(req);
    await telemetryExport.remove(o.tenantId, o.sub);
    return reply.status(204).send(null);
  });
};
