/** Public verification of an agent (contract §4.11): its identity, tier, score and grants. The area's public surface. */
import type { Config } from '../../config.js';
import type { Db } from '../../db/client.js';
import { API_PREFIX, type Area } from '../../http/area.js';
import type { HubService } from '../hub/index.js';
import { verificationRoutes } from './routes.js';
import { VerificationService } from './service.js';

/** Verification routes (contract §8 limits). */
export function createVerification(d: { db: Db; config: Config; hub: HubService }): Area {
  return {
    async routes(app) {
      await app.register(verificationRoutes, { prefix: API_PREFIX, verification: new VerificationService(d.db, d.hub), rateLimits: d.config.rateLimits });
    },
  };
}
