/**
 * Federation agreements between tenants (contract §4.13; design §8.5): the area's public surface.
 * A2A checks the active agreement between two tenants; connections and MLS read agreements.
 */
import type { Db } from '../../db/client.js';
import { API_PREFIX, type Area } from '../../http/area.js';
import { federationRoutes } from './routes.js';
import { FederationService } from './service.js';

export { listAgreements, unexpiredBetween, type AgreementRow } from './repo.js';
export { FederationService, statusOf } from './service.js';

/** The federation area and its service. */
export interface FederationArea extends Area {
  federation: FederationService;
}

/** Federation agreements. */
export function createFederation(d: { db: Db }): FederationArea {
  const federation = new FederationService(d.db);
  return {
    federation,
    async routes(app) {
      await app.register(federationRoutes, { prefix: API_PREFIX, federation });
    },
  };
}
