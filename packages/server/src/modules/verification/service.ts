/**
 * Verify agent (contract §4.11, `GET /verify/{hub_address}`): what a third party may learn about a
 * hub address without trusting the caller. Status:
 * - `not_found`: no identity has this address (the platform issuer's reserved address included:
 *   it names no agent);
 * - `suspended`: the identity is suspended, or its bound device is revoked (or deleted);
 * - `verified`: the identity is active, its tier is certified or enterprise, and its bound device
 *   is ACTIVE;
 * - `unverified`: any other registered identity (tier unverified, or no ACTIVE bound device yet).
 *
 * Trust scores (contract §2.9, §3.9, §4.12): exactly the values `GET /trust-scores/{agent_id}?window=`
 * answers for the bound device (trust/query.ts `windowScores`, the one builder): the newest
 * trust-engine snapshot of the requested window, or before the engine has scored that window (or
 * without a bound device) contract §3.9's warm-up answer, composite and the 12 dimensions at 0.5. The
 * identity's stored `trust_score` (the 7-day composite) is never answered for another window.
 * `active_grants` counts the bound device's active Skill Permission Tokens now (not revoked, not
 * expired; 0 without a bound device).
 */
import type { Db } from '../../db/client.js';
import { withTenant } from '../../db/tenant.js';
import { getDevice, type DeviceRow } from '../devices/index.js';
import { countActiveGrants } from '../grants/index.js';
import { hubDid, type HubIdentityRow, type HubService } from '../hub/index.js';
import { latestSnapshot, type SnapshotRow, windowScores } from '../trust/index.js';
import { tierRank, type TrustWindow } from '@parley/protocol';
import type { AgentVerification, TrustScores, TrustTier, VerifyStatus } from '@parley/protocol';

export { TRUST_DIMENSIONS, TRUST_WINDOWS, type TrustDimension, type TrustWindow } from '@parley/protocol';

export { VERIFY_STATUSES, type AgentVerification, type TrustScores, type VerifyStatus } from '@parley/protocol';

/**
 * The window's scores as `trust_scores` (module comment): trust/query.ts `windowScores` of the
 * window's snapshot, flattened; the contract §3.9 warm-up values (all 0.5) without one.
 */
export function verifyScores(snapshot: Pick<SnapshotRow, 'composite' | 'dimensions'> | undefined): TrustScores {
  const { composite, dimensions } = windowScores(snapshot);
  return { composite, ...dimensions };
}

/** The status rule of the module comment. */
export function agentStatus(identity: Pick<HubIdentityRow, 'status' | 'trustTier'>, device: Pick<DeviceRow, 'status' | 'deletedAt'> | undefined): Exclude<VerifyStatus, 'not_found'> {
  if (identity.status === 'suspended' || device?.status === 'REVOKED' || device?.deletedAt) return 'suspended';
  const certified = tierRank(identity.trustTier) >= tierRank('certified');
  return certified && device?.status === 'ACTIVE' ? 'verified' : 'unverified';
}

export class VerificationService {
  constructor(
    private readonly db: Db,
    private readonly hub: HubService,
  ) {}

  /**
   * Verify the agent at `address` (a well-formed hub address, any case). Unknown addresses answer
   * `status: not_found`, never an error.
   */
  async verifyAgent(address: string, window: TrustWindow): Promise<AgentVerification> {
    const identity = await this.hub.findByAddress(address);
    if (!identity) {
      return { did: hubDid(address.toLowerCase()), status: 'not_found', trust_tier: null, trust_scores: null, window, active_grants: 0, enrolled_at: null, last_seen: null, last_attestation: null };
    }
    // The bound device, its snapshot and grants live in the identity's tenant: read them there (RLS), not across tenants.
    const deviceId = identity.deviceId;
    const now = new Date();
    const bound = deviceId
      ? await withTenant(this.db, identity.tenantId, async (tx) => ({
          device: await getDevice(tx, deviceId),
          snapshot: await latestSnapshot(tx, deviceId, window),
          grants: await countActiveGrants(tx, deviceId, now),
        }))
      : undefined;
    const device = bound?.device;
    return {
      did: hubDid(identity.hubAddress),
      status: agentStatus(identity, device),
      trust_tier: identity.trustTier as TrustTier,
      trust_scores: verifyScores(bound?.snapshot),
      window,
      active_grants: bound?.grants ?? 0,
      enrolled_at: (device?.enrolledAt ?? identity.createdAt).toISOString(),
      last_seen: device?.lastSeen?.toISOString() ?? null,
      last_attestation: identity.lastAttestationAt?.toISOString() ?? null,
    };
  }
}
