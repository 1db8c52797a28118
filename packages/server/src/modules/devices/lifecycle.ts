/**
 * Device lifecycle (contract §4.3, §3.1; design §5, §7, §8.7): owner approval (PENDING -> APPROVED),
 * rejection (PENDING -> REVOKED), revocation (PENDING | APPROVED | ACTIVE -> REVOKED, sockets
 * closed 4001, 403 for every later call) and deletion of a revoked device. A transition the
 * current state does not allow answers 409; each is one tenant-scoped transaction.
 *
 * Revoking or deleting a device retires the agent in the same transaction
 * ({@link retireAgentDevice}): its active Skill Permission Tokens are revoked and its hub identity
 * falls to `unverified` (design §8.7; contract §3.3; docs/decisions.md "Skill Permission Tokens…").
 */
import type { DeviceStatus } from '@parley/protocol';
import type { Tx } from '../../db/client.js';
import { withTenant } from '../../db/tenant.js';
import { appendAudit } from '../audit/service.js';
import { revokeAllGrantsOf, lockIdentitiesOfDevice } from '../grants/repo.js';
import { decideTier } from '../trust/certify.js';
import { conflict } from '../../lib/errors.js';
import { CLOSE } from '../../realtime/notifier.js';
import { deleteKeyPackagesOf } from '../mls/repo.js';
import { mustGet, toDeviceOut, type DeviceOut, type DeviceServiceDeps } from './internal.js';
import * as repo from './repo.js';

/** Why an agent device is retired: `skill_grants.revoked_reason` of its SPTs. */
export type RetireReason = 'device_revoked' | 'device_deleted';

/**
 * Retire an agent device inside the caller's transaction (the device row already locked FOR
 * UPDATE, so a concurrent SPT issue — which holds it FOR SHARE — has committed or waits):
 * revoke every active SPT of the device (`revoked_reason` = `reason`), then demote every hub
 * identity bound to it to `unverified` through hub/certify.ts `decideTier` (identity locked FOR
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

/** PENDING -> APPROVED; the agent receives `device_approved`. */
export function approveDevice(deps: DeviceServiceDeps, tenantId: string, id: string, actor = 'owner'): Promise<DeviceOut> {
  return transition(deps, tenantId, id, ['PENDING'], 'APPROVED', { approvedAt: new Date() }, actor, (d) =>
    deps.notifier.toDevices(tenantId, [d.id], 'device_approved', { device_id: d.id }),
  );
}

/** PENDING -> REVOKED (owner rejects, contract §3.1). */
export function rejectDevice(deps: DeviceServiceDeps, tenantId: string, id: string, actor = 'owner'): Promise<DeviceOut> {
  return transition(deps, tenantId, id, ['PENDING'], 'REVOKED', { revokedAt: new Date() }, actor);
}

/**
 * PENDING | APPROVED | ACTIVE -> REVOKED; every socket of the device is closed with 4001. The
 * agent is retired in the same transaction ({@link retireAgentDevice}); audit `device.revoked`
 * data `{from, revoked_grants: [jti…]}`.
 */
export function revokeDevice(deps: DeviceServiceDeps, tenantId: string, id: string, actor = 'owner'): Promise<DeviceOut> {
  return transition(deps, tenantId, id, ['PENDING', 'APPROVED', 'ACTIVE'], 'REVOKED', { revokedAt: new Date() }, actor, (d) =>
    deps.notifier.closeDevice(d.id, CLOSE.revoked, 'device revoked'),
  );
}

async function transition(
  deps: DeviceServiceDeps,
  tenantId: string,
  id: string,
  from: DeviceStatus[],
  to: DeviceStatus,
  set: Partial<repo.DeviceRow>,
  actor: string,
  after?: (d: repo.DeviceRow) => Promise<void>,
): Promise<DeviceOut> {
  const updated = await withTenant(deps.db, tenantId, async (tx) => {
    const d = await mustGet(tx, id, true);
    if (!from.includes(d.status as DeviceStatus)) throw conflict(`device is ${d.status}; cannot become ${to}`);
    const [row] = await repo.updateDevice(tx, id, { ...set, status: to });
    let revokedGrants: string[] | undefined;
    if (to === 'REVOKED') {
      await deleteKeyPackagesOf(tx, id);
      revokedGrants = await retireAgentDevice(tx, tenantId, id, 'device_revoked', actor, new Date());
    }
    await appendAudit(tx, tenantId, {
      type: to === 'APPROVED' ? 'device.approved' : 'device.revoked',
      actor,
      subject: id,
      data: { from: d.status, ...(revokedGrants ? { revoked_grants: revokedGrants } : {}) },
    });
    return row!;
  });
  await after?.(updated);
  return toDeviceOut(updated);
}

/**
 * `DELETE /devices/{id}`: only a REVOKED device (409 otherwise); its history stays. Retires the
 * agent again ({@link retireAgentDevice}, reason `device_deleted`: normally nothing is left to
 * revoke); audit `device.deleted` data `{revoked_grants: [jti…]}`.
 */
export function deleteDevice(deps: DeviceServiceDeps, tenantId: string, id: string, actor = 'owner'): Promise<void> {
  return withTenant(deps.db, tenantId, async (tx) => {
    const d = await mustGet(tx, id, true);
    if (d.status !== 'REVOKED') throw conflict(`device is ${d.status}; revoke it before deleting`);
    const now = new Date();
    await repo.updateDevice(tx, id, { deletedAt: now });
    const revokedGrants = await retireAgentDevice(tx, tenantId, id, 'device_deleted', actor, now);
    await appendAudit(tx, tenantId, { type: 'device.deleted', actor, subject: id, data: { revoked_grants: revokedGrants } });
  });
}
