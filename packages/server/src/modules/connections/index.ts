/** Connections (contract §4.13): a tenant's A2A channels and federation agreements in one view. The area's public surface. */
import type { Db } from '../../db/client.js';
import { API_PREFIX, type Area } from '../../http/area.js';
import type { Presence } from '../devices/index.js';
import { connectionRoutes } from './routes.js';
import { ConnectionService } from './service.js';

/** Connection routes (`presence` answers which devices are online). */
export function createConnections(d: { db: Db; presence: Presence }): Area {
  return {
    async routes(app) {
      await app.register(connectionRoutes, { prefix: API_PREFIX, connections: new ConnectionService(d.db, d.presence) });
    },
  };
}
