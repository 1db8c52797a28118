/** Who may claim a device's keys across an A2A channel (docs/decisions.md "MLS over A2A channels"). */
import type { Tx } from '../../db/client.js';
import { unexpiredBetween } from '../federation/index.js';
import * as repo from './repo.js';

/**
 * The tenant of `deviceId` when an approved or active A2A channel joins `claimer` (of `tenantId`)
 * and it, and what authorizes a federated channel still holds; undefined otherwise. Reads only
 * two-party rows the caller's scope sees (channel, agreement, rental). Used by the MLS
 * KeyPackage and the PQ prekey claims.
 */
export async function channelPeer(tx: Tx, tenantId: string, claimer: string, deviceId: string): Promise<{ tenantId: string; since: Date } | undefined> {
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
