/**
 * Tenant settings routes (contract §4.14; design §8.22), owner JWT: `GET /settings` answers the flat
 * object with defaults filled in; `PATCH /settings` validates field by field (types, ranges,
 * unknown keys refused with a 400 naming them) and answers the full object.
 */
import { ROUTES } from '@parley/protocol';
import type { FastifyPluginAsync } from 'fastify';
import { ownerOf } from '../../http/auth.js';
import { serve } from '../../http/contract.js';
import type { SettingsService } from './service.js';

export const settingsRoutes: FastifyPluginAsync<{ settings: SettingsService }> = async (app, { settings }) => {
  serve(app, ROUTES.getSettings, async (req) => settings.get(ownerOf(req).tenantId));

  serve(app, ROUTES.updateSettings, async (req) => {
    const o = ownerOf(req);
    return settings.update(o.tenantId, o.sub, req.body);
  });
};
