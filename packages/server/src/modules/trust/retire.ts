/**
 * Retiring an agent device (revoked or deleted, its API key revoked or deleted): its Skill
 * Permission Tokens end and its hub identities fall to `unverified`, in the caller's transaction.
 */
import type { Tx } from '../../db/client.js';
import type { RetireReason } from '../devices/index.js';
import { lockIdentitiesOfDevice, revokeAllGrantsOf } from '../grants/index.js';
import { decideTier } from './certify.js';

/**
 * Retire an agent device inside the caller's transaction (the device row already locked FOR
 * UPDATE, so a concurrent SPT issue — which holds it FOR SHARE — has committed or waits):
 * revoke every active SPT of the device (`revoked_reason` = `reason`), then demote every hub
 * identity bound to it to `unverified` through certify.ts `decideTier` (identity locked FOR
 * UPDATE; a latest score of 0 forces the fall; reason `device_revoked`: a `hub_tier_changes` row,
 * audit `hub.tier_changed`, capabilities restricted, a `svc.trust` span). An identity already
 * unverified is left as is. Answers the revoked `jti`s (for the caller's audit event).
 */
export async function retireAgentDevice(tx: Tx, tenantId: string, deviceId: string, reason: RetireReason, actor: string, now: Date): Promise<string[]> {
  const revoked = await revokeAllGrantsOf(tx, deviceId, reason, now);
  for (const identity of await lockIdentitiesOfDevice(tx, deviceId)) {
    await decideTier(tx, { tenantId, identity, latest: 0, series: [{ at: now, composite: 0 }], now, reason: 'device_revoked', actor });
  }
  return revoked;
}
