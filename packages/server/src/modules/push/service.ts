/**
 * Push registrations (contract §4.7; design §8.36 "Push delivery"): an owner registers a push
 * token for an ACTIVE device of its tenant (idempotent per device and token), lists the tenant's
 * registrations without their tokens, and removes one. A `web` token must be a PushSubscription
 * JSON whose endpoint passes the webhook URL rules (web.ts). Removals, by the owner or because the
 * push service answered 404 / 410, are audited as `push.registration_removed`.
 */
import { randomUUID } from 'node:crypto';
import type { PushPlatform, PushRegistration, PushRegistrationList } from '@parley/protocol';
import type { Db, Tx } from '../../db/client.js';
import { withTenant } from '../../db/tenant.js';
import { badRequest, notFound } from '../../lib/errors.js';
import { appendAudit } from '../audit/index.js';
import { getDevice } from '../devices/index.js';
import type { TargetPolicy } from '../webhooks/index.js';
import * as repo from './repo.js';
import { webTokenProblem } from './web.js';

/** The actor of removals the service makes itself (the push service said the registration is gone). */
export const PUSH_SYSTEM_ACTOR = 'system:push';

/**
 * Delete registration `id` of the scoped tenant and audit it (`push.registration_removed`, data
 * `{device_id, platform, reason}`; never the token). Answers whether there was one.
 */
export async function removeRegistration(tx: Tx, tenantId: string, id: string, actor: string, reason: 'owner' | 'gone'): Promise<boolean> {
  const gone = await repo.deletePushToken(tx, id);
  if (!gone) return false;
  await appendAudit(tx, tenantId, { type: 'push.registration_removed', actor, subject: id, data: { device_id: gone.deviceId, platform: gone.platform, reason } });
  return true;
}

export class PushService {
  /** `targets`: the webhook URL rules (`WEBHOOK_ALLOW_PRIVATE`, `WEBHOOK_ALLOW_HTTP`) a `web` endpoint must pass. */
  constructor(
    private readonly db: Db,
    private readonly targets: TargetPolicy,
  ) {}

  /**
   * Register `token` for `deviceId` of `tenantId`; 404 when the device is unknown, of another
   * tenant, or not ACTIVE; 400 for a `web` token that is not a usable subscription. Registering
   * the same (device, token) again answers the same id.
   */
  register(tenantId: string, deviceId: string, platform: PushPlatform, token: string): Promise<PushRegistration> {
    if (platform === 'web') {
      const problem = webTokenProblem(token, this.targets);
      if (problem) return Promise.reject(badRequest(problem));
    }
    return withTenant(this.db, tenantId, async (tx) => {
      const d = await getDevice(tx, deviceId);
      if (!d || d.status !== 'ACTIVE') throw notFound('active device');
      const row = await repo.upsertPushToken(tx, { id: randomUUID(), tenantId, deviceId, platform, token });
      return { push_token_id: row.id, device_id: row.deviceId, platform: row.platform as PushPlatform };
    });
  }

  /** The tenant's registrations, oldest first, without tokens. */
  list(tenantId: string): Promise<PushRegistrationList> {
    return withTenant(this.db, tenantId, async (tx) => ({
      registrations: (await repo.listPushTokens(tx)).map((r) => ({ push_token_id: r.id, device_id: r.deviceId, platform: r.platform as PushPlatform, created_at: r.createdAt.toISOString() })),
    }));
  }

  /** Remove registration `id` of `tenantId` for owner `actor` (audited). @throws 404 when the tenant has none with this id. */
  async remove(tenantId: string, id: string, actor: string): Promise<void> {
    const found = await withTenant(this.db, tenantId, (tx) => removeRegistration(tx, tenantId, id, actor, 'owner'));
    if (!found) throw notFound('push registration');
  }
}
