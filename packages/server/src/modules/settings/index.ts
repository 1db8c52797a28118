/**
 * Tenant settings (contract §4.15; design §8.22): the area's public surface. Other areas read a
 * tenant's settings inside their own transactions through {@link SettingsService.read}.
 */
import type { Config } from '../../config.js';
import type { Db } from '../../db/client.js';
import { API_PREFIX, type Area } from '../../http/area.js';
import { settingsRoutes } from './routes.js';
import { SettingsService, defaultSettings } from './service.js';

export { READ_RECEIPTS_DEFAULT, type SettingsService } from './service.js';

/** The settings area and its service. */
export interface SettingsArea extends Area {
  settings: SettingsService;
}

/** Tenant settings with the configured defaults (`HELD_MESSAGE_TTL_MS`). */
export function createSettings(d: { db: Db; config: Config }): SettingsArea {
  const settings = new SettingsService(d.db, defaultSettings(d.config.heldMessageTtlMs));
  return {
    settings,
    async routes(app) {
      await app.register(settingsRoutes, { prefix: API_PREFIX, settings });
    },
  };
}
