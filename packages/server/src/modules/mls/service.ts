/**
 * MLS KeyPackage directory (RFC 9420 §10, SPEC §1.3): a device publishes KeyPackages; whoever
 * adds it to a group claims one, which is then never handed out again (KeyPackages are single
 * use). The service stores them as opaque bytes. Welcome, Commit and application messages travel
 * as ordinary opaque messages.
 *
 * Callers act as a device: a device JWT, an owner JWT with its owner device (`X-Device-Id`), or an
 * API key whose client registered key material (`client_key_register`; 403 before that).
 *
 * Who may claim (docs/decisions.md "MLS over A2A channels"): a device's KeyPackages can only be
 * joined by the one client that generated them. For an agent bound to an API key that is its A2A
 * channel messenger (the SDK runtime keeps owner conversations on X3DH + Double Ratchet), for
 * other devices their conversation messenger. So:
 * - neither the device nor the claimer bound to an API key: any device of the caller's tenant
 *   claims a device of the tenant (unchanged);
 * - otherwise the claim is for an A2A channel: the device must be bound to an API key and the
 *   claimer the other party of an `approved` or `active` channel joining the two — of the same
 *   tenant, or of another tenant while what authorizes the federated channel holds (an active
 *   federation agreement, or the channel's active rental); at most {@link MAX_CHANNEL_CLAIMS} per
 *   device pair since the approval (429 beyond). An API-key agent claiming an enrolled device's
 *   KeyPackage gets 404 and falls back to X3DH + Double Ratchet.
 * A cross-tenant claim switches the transaction's tenant scope to the other tenant
 * ({@link switchTenant}, RLS keeps filtering) only to read that one device (status, API-key
 * binding) and take one of its KeyPackages; nothing else of the other tenant is read. Counting
 * stays per tenant.
 */
import { randomUUID } from 'node:crypto';
import { MLS_MAX_AVAILABLE, MLS_MAX_CHANNEL_CLAIMS, MLS_MAX_KEY_PACKAGE_BYTES, type ClaimedKeyPackage, type KeyPackageCount, type PublishKeyPackagesResponse } from '@parley/protocol';
import type { Db, Tx } from '../../db/client.js';
import { xactLock } from '../../db/locks.js';
import { switchTenant, withTenant } from '../../db/tenant.js';
import { AppError, badRequest, ErrorCode, notFound } from '../../lib/errors.js';
import { getDevice } from '../devices/repo.js';
import { unexpiredBetween } from '../federation/repo.js';
import * as repo from './repo.js';

/** Most KeyPackages one device may hold unclaimed, and the largest one accepted (bytes). */
export const MAX_AVAILABLE = MLS_MAX_AVAILABLE;
export const MAX_KEY_PACKAGE_BYTES = MLS_MAX_KEY_PACKAGE_BYTES;
/** Most KeyPackages one channel party may claim of the other (API-key agent) device since the channel's approval. */
export const MAX_CHANNEL_CLAIMS = MLS_MAX_CHANNEL_CLAIMS;

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
   * Claim one KeyPackage of an ACTIVE device for `claimedBy` (see the file comment for who may).
   * 404 when the device is unknown to the caller, not ACTIVE, not claimable by it (no channel), or
   * has none left (the caller then falls back to X3DH + Double Ratchet); 409 over the per-channel
   * cap.
   */
  claim(tenantId: string, deviceId: string, claimedBy: string): Promise<ClaimedKeyPackage> {
    return withTenant(this.db, tenantId, async (tx) => {
      let d = await getDevice(tx, deviceId);
      if (!d || (await repo.boundToApiKey(tx, deviceId)) || (await repo.boundToApiKey(tx, claimedBy))) {
        const unclaimable = "claimable KeyPackage (an API-key agent's KeyPackages serve, and its claims are for, its approved A2A channels with other API-key agents)";
        const peer = await this.channelPeer(tx, tenantId, claimedBy, deviceId);
        if (!peer) throw notFound(d ? unclaimable : 'active device');
        if (peer.tenantId !== tenantId) {
          await switchTenant(tx, peer.tenantId);
          d = await getDevice(tx, deviceId);
          if (!d) throw notFound('active device');
        }
        // The device's KeyPackages must be its channel messenger's (bound to an API key): another
        // device's belong to its conversation messenger, which could not read a channel's Welcome.
        if (!(await repo.boundToApiKey(tx, deviceId))) throw notFound(peer.tenantId === tenantId ? unclaimable : 'active device');
        // Count and claim under one lock per device pair, so concurrent claims cannot pass the cap.
        await xactLock(tx, `mls-claims:${deviceId}:${claimedBy}`);
        if ((await repo.claimedBySince(tx, deviceId, claimedBy, peer.since)) >= MAX_CHANNEL_CLAIMS) {
          // A cap, not a rate: 409 (the SDK falls back to X3DH + Double Ratchet), with no Retry-After to honour.
          throw new AppError(ErrorCode.Conflict, `a channel party claims at most ${MAX_CHANNEL_CLAIMS} KeyPackages of the other device per channel; use X3DH + Double Ratchet or a new channel`);
        }
      }
      if (!d || d.status !== 'ACTIVE') throw notFound('active device');
      const kp = await repo.claimOldest(tx, deviceId, claimedBy);
      if (!kp) throw notFound('unclaimed KeyPackage for this device');
      return { device_id: deviceId, key_package_id: kp.id, key_package: kp.keyPackage.toString('base64') };
    });
  }

  /**
   * The tenant of `deviceId` when an approved or active channel joins `claimer` (of `tenantId`)
   * and it, and what authorizes a federated channel still holds; undefined otherwise. Reads only
   * two-party rows the caller's scope sees (channel, agreement, rental).
   */
  private async channelPeer(tx: Tx, tenantId: string, claimer: string, deviceId: string): Promise<{ tenantId: string; since: Date } | undefined> {
    const c = await repo.approvedChannelJoining(tx, claimer, deviceId);
    if (!c) return undefined;
    const [own, other] = c.initiatorDeviceId === claimer ? [c.tenantId, c.partnerTenantId] : [c.partnerTenantId, c.tenantId];
    if (own !== tenantId) return undefined;
    if (other === tenantId) return { tenantId, since: c.approvedAt ?? c.createdAt };
    if (c.rentalId) {
      const r = await repo.rentalParties(tx, c.rentalId);
      if (r?.status !== 'active' || r.tenantId !== c.tenantId || r.partnerTenantId !== c.partnerTenantId) return undefined;
    } else {
      const [agreement] = await unexpiredBetween(tx, c.tenantId, c.partnerTenantId, ['active'], new Date());
      if (!agreement) return undefined;
    }
    return { tenantId: other, since: c.approvedAt ?? c.createdAt };
  }
}
