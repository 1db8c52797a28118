/**
 * Trust scores and tiers (contract §4.12; design §8.13; docs/trust-scoring.md): the engine, score
 * queries, drift, compliance reports, certification and operator tier grants, and the retirement of
 * an agent device (retire.ts). The area's public surface.
 */
import { API_PREFIX, type Area, type Platform } from '../../http/area.js';
import { hubCertifyRoutes } from './certify-routes.js';
import { HubCertifyService } from './certify.js';
import { TrustDriftService } from './drift.js';
import { TrustEngine } from './engine.js';
import { OperatorTierService } from './operator-tier.js';
import { TrustQueryService } from './query.js';
import { TrustReportService } from './report.js';
import { trustRoutes } from './routes.js';

export { latestSnapshot, type SnapshotRow } from './query-repo.js';
export { windowScores } from './query.js';
export { retireAgentDevice } from './retire.js';
export type { TrustEngine } from './engine.js';

/** The trust area: the engine (the recompute job runs it) and a hook on tier changes. */
export interface TrustArea extends Area {
  engine: TrustEngine;
  /** `fn` runs after every recompute and every operator tier grant (a rented agent may fall below its listing). */
  onTierChange(fn: () => Promise<void>): void;
}

/** The trust engine, its routes and the hub certification routes. */
export function createTrust(d: Pick<Platform, 'db' | 'log'>): TrustArea {
  const engine = new TrustEngine({ db: d.db, log: d.log });
  const operatorTier = new OperatorTierService(d.db, d.log);
  return {
    engine,
    onTierChange(fn) {
      engine.onRecomputed(fn);
      operatorTier.onGranted(fn);
    },
    async routes(app) {
      await app.register(hubCertifyRoutes, { prefix: API_PREFIX, certify: new HubCertifyService(d.db), operatorTier });
      await app.register(trustRoutes, { prefix: API_PREFIX, scores: new TrustQueryService({ db: d.db }), drift: new TrustDriftService({ db: d.db }), reports: new TrustReportService({ db: d.db }), engine });
    },
  };
}
