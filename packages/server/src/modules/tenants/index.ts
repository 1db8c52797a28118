/** Tenants (contract §4.1): creation of a tenant by its first owner. The area's public surface. */
import type { Db } from '../../db/client.js';
import { API_PREFIX, type Area } from '../../http/area.js';
import { tenantRoutes } from './routes.js';

/** Tenant routes. */
export function createTenants(d: { db: Db }): Area {
  return {
    async routes(app) {
      await app.register(tenantRoutes, { prefix: API_PREFIX, db: d.db });
    },
  };
}
