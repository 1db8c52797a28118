/** Decision requests to owners (contract §4.8): the area's public surface; deadlines fire in a job (jobs/decision-deadlines.ts). */
import { API_PREFIX, type Area, type Platform } from '../../http/area.js';
import { decisionRoutes } from './routes.js';
import { DecisionService } from './service.js';

export type { DecisionService } from './service.js';

/** The decisions area and its service. */
export interface DecisionsArea extends Area {
  decisions: DecisionService;
}

/** Decision requests. */
export function createDecisions(d: Pick<Platform, 'db' | 'notifier' | 'config'>): DecisionsArea {
  const decisions = new DecisionService({ db: d.db, notifier: d.notifier, listDefault: d.config.limits.listDefault, listMax: d.config.limits.listMax });
  return {
    decisions,
    async routes(app) {
      await app.register(decisionRoutes, { prefix: API_PREFIX, decisions });
    },
  };
}
