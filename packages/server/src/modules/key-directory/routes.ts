/**
 * Key transparency routes (design §8.39): what a client pins, the newest checkpoint, lookups, and
 * the reports of a failed check or an unpublished key.
 */
import { KEY_DIRECTORY_MAX_ENTRIES, ROUTES } from '@parley/protocol';
import type { FastifyPluginAsync } from 'fastify';
import { agentDeviceOf, deviceIdHeader, tenantOf } from '../../http/auth.js';
import { serve } from '../../http/contract.js';
import type { KeyDirectoryReports } from './reports.js';
import type { KeyDirectory } from './service.js';
import type { KeyDirectoryInfoService } from './info.js';

export const keyDirectoryRoutes: FastifyPluginAsync<{ directory: KeyDirectory; info: KeyDirectoryInfoService; reports: KeyDirectoryReports }> = async (app, { directory, info, reports }) => {
  serve(app, ROUTES.keyDirectoryInfo, async (req) => info.info(tenantOf(req)));
  serve(app, ROUTES.keyDirectoryCheckpoint, async (req) => directory.latest(req.query.since));
  serve(app, ROUTES.keyDirectoryEntries, async (req) => directory.entries(req.query.start, req.query.limit ?? KEY_DIRECTORY_MAX_ENTRIES));
  serve(app, ROUTES.keyDirectoryLookup, async (req) => {
    tenantOf(req);
    return directory.lookup(req.query.label, req.query.since);
  });
  serve(app, ROUTES.keyDirectoryLookups, async (req) => {
    tenantOf(req);
    return directory.lookupMany(req.body.labels, req.body.since);
  });
  serve(app, ROUTES.reportKeyDirectory, async (req, reply) => {
    const p = req.principal!;
    const reporter = p.kind === 'owner' ? { tenantId: tenantOf(req), deviceId: deviceIdHeader(req, false) ?? null } : agentDeviceOf(req);
    await reports.report(p, reporter.tenantId, reporter.deviceId, req.body);
    return reply.status(202).send({ accepted: true });
  });
};
