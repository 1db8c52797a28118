/**
 * The audit log (design §8.10) and its transparency log (design §8.33): the area's public surface.
 * Every area appends its events with {@link appendAudit} inside its own transaction; the
 * checkpoints are a job (jobs/audit-checkpoints.ts).
 */
import { API_PREFIX, type Area, type Platform } from '../../http/area.js';
import { AuditLogKeys } from '../../keys/index.js';
import { auditRoutes } from './routes.js';
import { AuditService } from './service.js';
import { AuditTransparency } from './transparency.js';

export type { AuditEventType, AuditInput } from './events.js';
export { appendAuditToParties, auditActor, lockChains, twoPartyEvents, type PartyEvent } from './parties.js';
export { lockChain } from './repo.js';
export { appendAudit, verifyTenantChain } from './service.js';
export type { AuditTransparency } from './transparency.js';

/** The audit area and its transparency log. */
export interface AuditArea extends Area {
  transparency: AuditTransparency;
}

/** Audit routes; the platform audit-log key is shared by all instances (platform_keys). */
export async function createAudit(d: Pick<Platform, 'db' | 'secrets' | 'config' | 'keyRefreshMs'>): Promise<AuditArea> {
  const keys = new AuditLogKeys(d.db, d.secrets, d.config.publicUrl, d.keyRefreshMs);
  await keys.init();
  const transparency = new AuditTransparency(d.db, keys);
  return {
    transparency,
    async routes(app) {
      await app.register(auditRoutes, { prefix: API_PREFIX, audit: new AuditService(d.db), transparency });
    },
  };
}
