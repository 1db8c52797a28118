/**
 * Public profile and search routes (contract §2.8, §4.10; design §8.15). Reads are `public`: no
 * credential needed; one that is sent is verified (401 when invalid). Anonymous searches answer
 * at most 10 results; authenticated ones up to `limit`.
 */
import { ROUTES } from '@parley/protocol';
import type { FastifyPluginAsync } from 'fastify';
import { ownerOf } from '../../http/auth.js';
import { serve } from '../../http/contract.js';
import type { HubDirectoryService } from './directory.js';

export const hubProfileRoutes: FastifyPluginAsync<{ directory: HubDirectoryService }> = async (app, { directory }) => {
  serve(app, ROUTES.searchHub, async (req) => ({ results: await directory.search(req.query, req.principal !== undefined) }));

  serve(app, ROUTES.getHubProfile, async (req) => directory.profile(req.params.hub_address));

  serve(app, ROUTES.updateHubProfile, async (req) => {
    const o = ownerOf(req);
    return directory.updateProfile(o.tenantId, req.params.hub_address, req.body, o.sub);
  });
};
