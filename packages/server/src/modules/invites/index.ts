/**
 * Invites (contract §4.2): single-use enrollment tokens. The area's public surface: the invite
 * lookups enrollment consumes (devices) and {@link createInvites}; the expiry sweep is a job
 * (jobs/invite-expiry.ts).
 */
import type { Config } from '../../config.js';
import type { Db } from '../../db/client.js';
import { API_PREFIX, type Area } from '../../http/area.js';
import { inviteRoutes } from './routes.js';
import { InviteService } from './service.js';

export { findTenantByTokenHash, getInvite, updateInvite } from './repo.js';
export { effectiveStatus } from './service.js';

/** Invite routes (`INVITE_TTL_MS`). */
export function createInvites(d: { db: Db; config: Config }): Area {
  const invites = new InviteService(d.db, d.config.inviteTtlMs);
  return {
    async routes(app) {
      await app.register(inviteRoutes, { prefix: API_PREFIX, invites });
    },
  };
}
