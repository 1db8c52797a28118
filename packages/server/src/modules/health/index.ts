/** Platform routes (contract §4.1): health, version, plans, the device-token keys. The area's public surface. */
import type { DeviceTokenService } from '../../auth/device-tokens.js';
import type { Config } from '../../config.js';
import type { Db } from '../../db/client.js';
import { API_PREFIX, type Area } from '../../http/area.js';
import { platformRoutes, type PlatformRouteOptions } from './routes.js';

/** Platform routes (unprefixed health, and those under the API prefix). */
export function createHealth(d: { db: Db; config: Config; deviceTokens: DeviceTokenService; devIdpKey: PlatformRouteOptions['devIdpKey'] }): Area {
  return {
    async routes(app) {
      await app.register(platformRoutes, { db: d.db, version: d.config.version, deviceTokens: d.deviceTokens, devIdpKey: d.devIdpKey, apiPrefix: API_PREFIX });
    },
  };
}
