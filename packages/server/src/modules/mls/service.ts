/**
 * MLS KeyPackage directory (RFC 9420 §10, contract §1.3): a device publishes KeyPackages; whoever
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
 *
 * Ciphersuites (design §8.34): each KeyPackage carries the ciphersuite label its
 * publisher gave (default 3, the classical suite). A claim names the suites it accepts, most
 * preferred first (default `[3]`, so clients from before X-Wing never get a KeyPackage they cannot
 * use); the count reports availability per suite so a group creator can pick the suite every
 * member offers. The service never parses a KeyPackage.
 */
import { randomUUID } from 'node:crypto';
import {
  MLS_DEFAULT_CIPHER_SUITE,
  MLS_MAX_AVAILABLE,
  MLS_MAX_CHANNEL_CLAIMS,
  MLS_MAX_KEY_PACKAGE_BYTES,
  type ClaimedKeyPackage,
  type KeyPackageCount,
  type PublishKeyPackagesResponse,
} from '@parley/protocol';
import type { Db } from '../../db/client.js';
import { xactLock } from '../../db/locks.js';
import { switchTenant, withTenant } from '../../db/tenant.js';
import { AppError, badRequest, ErrorCode, notFound } from '../../lib/errors.js';
import { getDevice } from '../devices/index.js';
import { channelPeer } from './channel-peer.js';
import type { KeyDirectory } from '../key-directory/index.js';
import { PqPrekeyService } from './pq-prekeys.js';
import { PrekeyService } from './prekeys.js';
import * as repo from './repo.js';

/** Most KeyPackages one device may hold unclaimed, and the largest one accepted (bytes). */
export const MAX_AVAILABLE = MLS_MAX_AVAILABLE;
export const MAX_KEY_PACKAGE_BYTES = MLS_MAX_KEY_PACKAGE_BYTES;
/** Most KeyPackages one channel party may claim of the other (API-key agent) device since the channel's approval. */
export const MAX_CHANNEL_CLAIMS = MLS_MAX_CHANNEL_CLAIMS;

export class MlsService {
  /** The PQXDH prekeys of the same key directory (pq-prekeys.ts). */
  readonly pqPrekeys: PqPrekeyService;
  /** The X3DH signed and one-time prekeys of the same key directory (prekeys.ts). */
  readonly prekeys: PrekeyService;

  /** @param directory the key directory the prekeys are committed to (design §8.39). */
  constructor(
    private readonly db: Db,
    directory: KeyDirectory,
  ) {
    this.pqPrekeys = new PqPrekeyService(db, directory);
    this.prekeys = new PrekeyService(db, directory);
  }

  /**
   * Publish KeyPackages (base64) for `deviceId`, labelled with `cipherSuite`. 400 for bad
   * encoding, size or over MAX_AVAILABLE.
   */
  publish(tenantId: string, deviceId: string, keyPackages: string[], cipherSuite = MLS_DEFAULT_CIPHER_SUITE): Promise<PublishKeyPackagesResponse> {
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
        bytes.map((keyPackage) => ({ id: randomUUID(), tenantId, deviceId, keyPackage, cipherSuite })),
      );
      return { device_id: deviceId, published: bytes.length, available: before + bytes.length };
    });
  }

  available(tenantId: string, deviceId: string): Promise<KeyPackageCount> {
    return withTenant(this.db, tenantId, async (tx) => {
      if (!(await getDevice(tx, deviceId))) throw notFound('device');
      const bySuite = await repo.availableBySuite(tx, deviceId);
      return {
        device_id: deviceId,
        available: bySuite.reduce((sum, r) => sum + r.n, 0),
        by_cipher_suite: bySuite.map((r) => ({ cipher_suite: r.cipherSuite, available: r.n })),
      };
    });
  }

  /**
   * Claim one KeyPackage of an ACTIVE device for `claimedBy` (see the file comment for who may).
   * 404 when the device is unknown to the caller, not ACTIVE, not claimable by it (no channel), or
   * has none left of any of `cipherSuites` (the caller then falls back to X3DH + Double Ratchet);
   * 409 over the per-channel cap. The first suite of `cipherSuites` the device has a KeyPackage of wins.
   */
  claim(tenantId: string, deviceId: string, claimedBy: string, cipherSuites: readonly number[] = [MLS_DEFAULT_CIPHER_SUITE]): Promise<ClaimedKeyPackage> {
    return withTenant(this.db, tenantId, async (tx) => {
      let d = await getDevice(tx, deviceId);
      if (!d || (await repo.boundToApiKey(tx, deviceId)) || (await repo.boundToApiKey(tx, claimedBy))) {
        const unclaimable = "claimable KeyPackage (an API-key agent's KeyPackages serve, and its claims are for, its approved A2A channels with other API-key agents)";
        const peer = await channelPeer(tx, tenantId, claimedBy, deviceId);
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
      for (const suite of new Set(cipherSuites)) {
        const kp = await repo.claimOldest(tx, deviceId, claimedBy, suite);
        if (kp) return { device_id: deviceId, key_package_id: kp.id, key_package: kp.keyPackage.toString('base64'), cipher_suite: kp.cipherSuite };
      }
      throw notFound('unclaimed KeyPackage of an accepted ciphersuite for this device');
    });
  }
}
