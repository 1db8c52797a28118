/** Shadow mode (contract §4.15): gates comparing an agent's decisions with its owner's. The area's public surface. */
import type { Config } from '../../config.js';
import type { Db } from '../../db/client.js';
import { API_PREFIX, type Area } from '../../http/area.js';
import { shadowRoutes } from './routes.js';
import { ShadowService } from './service.js';

/** Shadow routes. */
export function createShadow(d: { db: Db; config: Config }): Area {
  return {
    async routes(app) {
      await app.register(shadowRoutes, { prefix: API_PREFIX, shadow: new ShadowService({ db: d.db, listDefault: d.config.limits.listDefault, listMax: d.config.limits.listMax }) });
    },
  };
}
