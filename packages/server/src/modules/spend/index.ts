/** Spend caps per agent (contract §4.14): the area's public surface; the alert sweep is a job (jobs/spend-alerts.ts). */
import { API_PREFIX, type Area, type Platform } from '../../http/area.js';
import type { SettingsService } from '../settings/index.js';
import { spendRoutes } from './routes.js';
import { SpendService } from './service.js';

export { rebuildTokenRollups } from './rollups.js';
export type { SpendService } from './service.js';

/** The spend area and its service (the skill pipeline's budget stage). */
export interface SpendArea extends Area {
  spend: SpendService;
}

/** Spend caps priced by the tenant's `model_prices` setting. */
export function createSpend(d: Pick<Platform, 'db' | 'notifier'> & { settings: Pick<SettingsService, 'read'> }): SpendArea {
  const spend = new SpendService({ db: d.db, settings: d.settings, notifier: d.notifier });
  return {
    spend,
    async routes(app) {
      await app.register(spendRoutes, { prefix: API_PREFIX, spend });
    },
  };
}
