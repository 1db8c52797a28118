/**
 * Device lifecycle (contract §4.3, §3.1; design §5, §7, §8.7): owner approval (PENDING -> APPROVED),
 * rejection (PENDING -> REVOKED), revocation (PENDING | APPROVED | ACTIVE -> REVOKED, sockets
 * closed 4001, 403 for every later call) and deletion of a revoked device. A transition the
 * current state does not allow answers 409; each is one tenant-scoped transaction.
 *
 * Revoking or deleting a device retires the agent in the same transaction
 * (`DeviceHooks.retireAgent`): its active Skill Permission Tokens are revoked and its hub identity
 * falls to `unverified` (design §8.7; contract §3.3; docs/decisions.md "Skill Permission Tokens…").
 */
import type { DeviceStatus } from '@parley/protocol';
import { withTenant } from '../../db/tenant.js';
import { appendAudit } from '../audit/index.js';
import { conflict } from '../../lib/errors.js';
import { CLOSE } from '../../realtime/notifier.js';
import { mustGet, toDeviceOut, type DeviceOut, type DeviceServiceDeps } from './internal.js';
import * as repo from './repo.js';

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
 * agent is retired in the same transaction (`DeviceHooks.retireAgent`); audit `device.revoked`
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
      await deps.hooks.dropKeyPackages(tx, id);
      revokedGrants = await deps.hooks.retireAgent(tx, tenantId, id, 'device_revoked', actor, new Date());
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
 * agent again (`DeviceHooks.retireAgent`, reason `device_deleted`: normally nothing is left to
 * revoke); audit `device.deleted` data `{revoked_grants: [jti…]}`.
 */
export function deleteDevice(deps: DeviceServiceDeps, tenantId: string, id: string, actor = 'owner'): Promise<void> {
  return withTenant(deps.db, tenantId, async (tx) => {
    const d = await mustGet(tx, id, true);
    if (d.status !== 'REVOKED') throw conflict(`device is ${d.status}; revoke it before deleting`);
    const now = new Date();
    await repo.updateDevice(tx, id, { deletedAt: now });
    const revokedGrants = await deps.hooks.retireAgent(tx, tenantId, id, 'device_deleted', actor, now);
    await appendAudit(tx, tenantId, { type: 'device.deleted', actor, subject: id, data: { revoked_grants: revokedGrants } });
  });
}
