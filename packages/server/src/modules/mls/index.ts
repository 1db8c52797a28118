/**
 * Key directories (RFC 9420 §10 KeyPackages; X3DH §3.2 and PQXDH prekeys): the area's public
 * surface. Devices drop a device's KeyPackages through {@link deleteKeyPackagesOf}.
 */
import type { Db } from '../../db/client.js';
import { API_PREFIX, type Area } from '../../http/area.js';
import type { KeyDirectory } from '../key-directory/index.js';
import { deleteKeyPackagesOf } from './repo.js';
import { mlsRoutes } from './routes.js';
import { MlsService } from './service.js';

export { deleteKeyPackagesOf };

/** The key directory routes. */
export function createMls(d: { db: Db; keyDirectory: KeyDirectory }): Area {
  return {
    async routes(app) {
      await app.register(mlsRoutes, { prefix: API_PREFIX, mls: new MlsService(d.db, d.keyDirectory), db: d.db });
    },
  };
}
