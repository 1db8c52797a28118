/**
 * MLS KeyPackage directory (RFC 9420 §10, SPEC §1.3): a device publishes KeyPackages; whoever
 * adds it to a group claims one, which is then never handed out again (KeyPackages are single
 * use). The service stores them as opaque bytes. Welcome, Commit and application messages travel
 * as ordinary opaque messages.
 */
import { randomUUID } from 'node:crypto';
import { MLS_MAX_AVAILABLE, MLS_MAX_KEY_PACKAGE_BYTES, type ClaimedKeyPackage, type KeyPackageCount, type PublishKeyPackagesResponse } from '@parley/protocol';
import type { Db } from '../../db/client.js';
import { withTenant } from '../../db/tenant.js';
import { badRequest, notFound } from '../../lib/errors.js';
import { getDevice } from '../devices/repo.js';
import * as repo from './repo.js';

/** Most KeyPackages one device may hold unclaimed, and the largest one accepted (bytes). */
export const MAX_AVAILABLE = MLS_MAX_AVAILABLE;
export const MAX_KEY_PACKAGE_BYTES = MLS_MAX_KEY_PACKAGE_BYTES;

export class MlsService {
  constructor(private readonly db: Db) {}

  /** Publish KeyPackages (base64) for `deviceId`. 400 for bad encoding, size or over MAX_AVAILABLE. */
  publish(tenantId: string, deviceId: string, keyPackages: string[]): Promise<PublishKeyPackagesResponse> {
    const bytes = keyPackages.map((b64, i) => {
      const buf = Buffer.from(b64, 'base64');
      if (buf.length === 0 || buf.length > MAX_KEY_PACKAGE_BYTES || buf.toString('base64') !== b64) {
        throw badRequest(`key_packages[${i}] must be canonical base64 of 1..${MAX_KEY_PACKAGE_BYTES} bytes`);
      }
      return buf;
    });
    return withTenant(this.db, tenantId, async (tx) => {
      const before = await repo.availableCount(tx, deviceId);
      if (before + bytes.length > MAX_AVAILABLE) throw badRequest(`a device holds at most ${MAX_AVAILABLE} unclaimed KeyPackages (has ${before})`);
      await repo.insertKeyPackages(
        tx,
        bytes.map((keyPackage) => ({ id: randomUUID(), tenantId, deviceId, keyPackage })),
      );
      return { device_id: deviceId, published: bytes.length, available: before + bytes.length };
    });
  }

  available(tenantId: string, deviceId: string): Promise<KeyPackageCount> {
    return withTenant(this.db, tenantId, async (tx) => {
      if (!(await getDevice(tx, deviceId))) throw notFound('device');
      return { device_id: deviceId, available: await repo.availableCount(tx, deviceId) };
    });
  }

  /**
   * Claim one KeyPackage of an ACTIVE device of the tenant. 404 when the device is unknown, not
   * ACTIVE, or has none left (the caller then falls back to X3DH + Double Ratchet).
   */
  claim(tenantId: string, deviceId: string, claimedBy: string): Promise<ClaimedKeyPackage> {
    return withTenant(this.db, tenantId, async (tx) => {
      const d = await getDevice(tx, deviceId);
      if (!d || d.status !== 'ACTIVE') throw notFound('active device');
      const kp = await repo.claimOldest(tx, deviceId, claimedBy);
      if (!kp) throw notFound('unclaimed KeyPackage for this device');
      return { device_id: deviceId, key_package_id: kp.id, key_package: kp.keyPackage.toString('base64') };
    });
  }
}
