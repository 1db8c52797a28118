/**
 * Post-quantum prekeys of the X3DH fallback (design §8.34; Signal's PQXDH, revision 3):
 * a device publishes a signed last-resort KEM prekey (replacing the previous one) and optionally
 * one-time prekeys; a peer about to start a session claims one: the oldest unclaimed one-time
 * prekey, else the last-resort one. Stored and served as opaque bytes like every other key: the
 * service checks encodings and sizes, never the signature (the claimer verifies it against the
 * device's identity key), so it learns nothing it did not know (that the device speaks PQXDH).
 *
 * Who may claim: any device of the caller's tenant claims an ACTIVE device of the tenant (the
 * prekeys are the device's, whichever of its messengers answers). Across tenants, only the other
 * party of an approved or active A2A channel with the device, under the rule MLS claims use
 * ({@link channelPeer}); it gets the last-resort prekey only, so no one-time prekey is consumed
 * from another tenant. 404 otherwise, or when the device published none: the caller runs X3DH.
 */
import { randomUUID } from 'node:crypto';
import { PQ_MAX_ONE_TIME_AVAILABLE, PQ_MAX_PUBLIC_KEY_BYTES, PQ_MAX_SIGNATURE_BYTES, type ClaimedPqPrekey, type PqPrekey, type PqPrekeyCount, type PublishPqPrekeysRequest } from '@parley/protocol';
import type { Db } from '../../db/client.js';
import { withTenant } from '../../db/tenant.js';
import { prekeyBindings, type KeyDirectory } from '../key-directory/index.js';
import { badRequest, notFound } from '../../lib/errors.js';
import { getDevice } from '../devices/index.js';
import * as repo from './prekeys-repo.js';
import { blob, claimableDevice, distinctKeyIds } from './prekey-directory.js';

export class PqPrekeyService {
  constructor(
    private readonly db: Db,
    private readonly directory: KeyDirectory,
  ) {}

  /**
   * Publish PQ prekeys of `deviceId`: `last_resort` replaces the current one, `one_time` are added.
   * 400 when neither is given, for bad encodings or sizes, repeated key ids, or more than
   * {@link PQ_MAX_ONE_TIME_AVAILABLE} unclaimed one-time prekeys in total.
   */
  publish(tenantId: string, deviceId: string, body: PublishPqPrekeysRequest): Promise<PqPrekeyCount> {
    const oneTime = body.one_time ?? [];
    if (body.last_resort === undefined && oneTime.length === 0) throw badRequest('give last_resort, one_time or both');
    distinctKeyIds([body.last_resort, ...oneTime].filter((p) => p !== undefined).map((p) => p.key_id));
    const row = (p: PqPrekey, field: string) => ({
      id: randomUUID(),
      tenantId,
      deviceId,
      keyId: p.key_id,
      publicKey: blob(p.public_key, PQ_MAX_PUBLIC_KEY_BYTES, `${field}.public_key`),
      signature: blob(p.signature, PQ_MAX_SIGNATURE_BYTES, `${field}.signature`),
    });
    const last = body.last_resort === undefined ? undefined : row(body.last_resort, 'last_resort');
    const rows = oneTime.map((p, i) => row(p, `one_time[${i}]`));
    return withTenant(this.db, tenantId, async (tx) => {
      const before = await repo.holdings(tx, 'kem', deviceId);
      if (before.oneTime + rows.length > PQ_MAX_ONE_TIME_AVAILABLE) {
        throw badRequest(`a device holds at most ${PQ_MAX_ONE_TIME_AVAILABLE} unclaimed one-time PQ prekeys (has ${before.oneTime})`);
      }
      if (last) await repo.replaceLastResort(tx, 'kem', last);
      if (rows.length > 0) await repo.insertOneTime(tx, 'kem', rows);
      await this.directory.publish(tx, prekeyBindings('pq', deviceId, last, rows));
      const lastResortKeyId = last?.keyId ?? before.lastResortKeyId;
      const lastResortSignature = last?.signature ?? before.lastResortSignature;
      return {
        device_id: deviceId,
        last_resort: lastResortKeyId !== null,
        last_resort_key_id: lastResortKeyId,
        last_resort_signature: lastResortSignature?.toString('base64') ?? null,
        one_time_available: before.oneTime + rows.length,
      };
    });
  }

  /** What a device of the tenant holds; 404 for a device the tenant does not have. */
  holdings(tenantId: string, deviceId: string): Promise<PqPrekeyCount> {
    return withTenant(this.db, tenantId, async (tx) => {
      if (!(await getDevice(tx, deviceId))) throw notFound('device');
      const h = await repo.holdings(tx, 'kem', deviceId);
      return {
        device_id: deviceId,
        last_resort: h.lastResortKeyId !== null,
        last_resort_key_id: h.lastResortKeyId,
        last_resort_signature: h.lastResortSignature?.toString('base64') ?? null,
        one_time_available: h.oneTime,
      };
    });
  }

  /** Claim a PQ prekey of `deviceId` for `claimedBy` (see the file comment for who may and which). */
  claim(tenantId: string, deviceId: string, claimedBy: string): Promise<ClaimedPqPrekey> {
    return withTenant(this.db, tenantId, async (tx) => {
      const { crossTenant } = await claimableDevice(tx, tenantId, deviceId, claimedBy);
      const oneTime = crossTenant ? undefined : await repo.claimOneTime(tx, 'kem', deviceId, claimedBy);
      const p = oneTime ?? (await repo.lastResort(tx, 'kem', deviceId));
      if (!p) throw notFound('PQ prekey for this device (it published none: use X3DH)');
      return { device_id: deviceId, key_id: p.keyId, public_key: p.publicKey.toString('base64'), signature: (p.signature ?? Buffer.alloc(0)).toString('base64'), one_time: oneTime !== undefined };
    });
  }
}
