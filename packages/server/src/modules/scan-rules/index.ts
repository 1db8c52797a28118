/** Content scan rules (contract §4.15): the area's public surface. */
import type { Db } from '../../db/client.js';
import { API_PREFIX, type Area } from '../../http/area.js';
import type { SettingsService } from '../settings/index.js';
import { scanRuleRoutes } from './routes.js';
import { ScanRuleService } from './service.js';

/** Scan rule routes. */
export function createScanRules(d: { db: Db; settings: Pick<SettingsService, 'read'> }): Area {
  return {
    async routes(app) {
      await app.register(scanRuleRoutes, { prefix: API_PREFIX, scanRules: new ScanRuleService(d.db, d.settings) });
    },
  };
}
