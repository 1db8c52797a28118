/**
 * Mobile push registration (contract §4.7): an owner registers a push token for an ACTIVE device of
 * its tenant. Registration is idempotent per (device, token).
 */
import { randomUUID } from 'node:crypto';
import type { PushPlatform, PushRegistration } from '@parley/protocol';
import type { Db } from '../../db/client.js';
import { withTenant } from '../../db/tenant.js';
import { notFound } from '../../lib/errors.js';
import { getDevice } from '../devices/repo.js';
import * as repo from './repo.js';

export class PushService {
  constructor(private readonly db: Db) {}

  /**
   * Register `token` for `deviceId` of `tenantId`; 404 when the device is unknown, of another
   * tenant, or not ACTIVE. Registering the same (device, token) again answers the same id.
   */
  register(tenantId: string, deviceId: string, platform: PushPlatform, token: string): Promise<PushRegistration> {
    return withTenant(this.db, tenantId, async (tx) => {
      const d = await getDevice(tx, deviceId);
      if (!d || d.status !== 'ACTIVE') throw notFound('active device');
      const row = await repo.upsertPushToken(tx, { id: randomUUID(), tenantId, deviceId, platform, token });
      return { push_token_id: row.id, device_id: row.deviceId, platform: row.platform as PushPlatform };
    });
  }
}
