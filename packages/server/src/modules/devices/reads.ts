/**
 * Device reads and per-device settings (SPEC §4.3; DESIGN §5, §7): the owner's device list,
 * status polling by the enrolling agent, presence, keys and pending counts; and the two
 * single-row settings writes, rename and the webhook URL (registered or cleared).
 */
import type { DeviceKeys, DeviceStatus } from '@parley/protocol';
import { withTenant } from '../../db/tenant.js';
import { appendAudit } from '../audit/service.js';
import { badRequest, deviceRevoked } from '../../lib/errors.js';
import { newWebhookSecret, sealWebhookSecret } from '../webhooks/secrets.js';
import { webhookUrlProblem } from '../webhooks/target.js';
import { findAcrossTenants, keysOf, mustGet, toDeviceOut, type DeviceOut, type DeviceServiceDeps } from './internal.js';
import { health } from './last-seen.js';
import * as repo from './repo.js';

/** The host (and port) of a webhook URL, as audit events record it (never path, query or userinfo). */
function hostOf(url: string): string | null {
  try {
    return new URL(url).host;
  } catch {
    return null;
  }
}

export function listDevices(deps: DeviceServiceDeps, tenantId: string): Promise<DeviceOut[]> {
  return withTenant(deps.db, tenantId, async (tx) => (await repo.listDevices(tx)).map(toDeviceOut));
}

/** `GET /devices/{id}/status` (unauthenticated polling by the enrolling agent). */
export async function deviceStatus(deps: DeviceServiceDeps, id: string): Promise<{ device_id: string; status: DeviceStatus }> {
  const device = await findAcrossTenants(deps, id, 'status polling by device id');
  return { device_id: id, status: device.status as DeviceStatus };
}

/** Rename a device; records `device.renamed` (old and new name) by `actor`. @throws 404 unknown device. */
export function renameDevice(deps: DeviceServiceDeps, tenantId: string, id: string, name: string, actor = 'owner'): Promise<DeviceOut> {
  return withTenant(deps.db, tenantId, async (tx) => {
    const d = await mustGet(tx, id, true);
    const [row] = await repo.updateDevice(tx, id, { name });
    await appendAudit(tx, tenantId, { type: 'device.renamed', actor, subject: id, data: { from: d.name, to: name } });
    return toDeviceOut(row!);
  });
}

/**
 * Register (`url`) or clear (`null`) a device's webhook URL (delivery: DESIGN §8.11,
 * modules/webhooks). A new registration answers a fresh Standard Webhooks secret (`whsec_…`)
 * once; it is stored sealed (AES-256-GCM), never in clear. 400 for a URL the target policy
 * refuses (not https — or http when allowed —, userinfo, too long, a non-public IP literal).
 * Records `webhook.registered` (data: the URL's host only — never its path, query or the
 * secret) or `webhook.cleared` by `actor` (owner `sub` or `device:<id>`).
 */
export function setDeviceWebhook(deps: DeviceServiceDeps, tenantId: string, id: string, url: string | null, actor = 'owner') {
  const problem = url === null ? undefined : webhookUrlProblem(url, deps.webhookTargets);
  if (problem) throw badRequest(problem);
  return withTenant(deps.db, tenantId, async (tx) => {
    const d = await mustGet(tx, id, true);
    if (d.status === 'REVOKED') throw deviceRevoked();
    const secret = url === null ? null : newWebhookSecret();
    await repo.updateDevice(tx, id, { webhookUrl: url, webhookSecret: secret && sealWebhookSecret(deps.secrets, id, secret) });
    await appendAudit(
      tx,
      tenantId,
      url === null
        ? { type: 'webhook.cleared', actor, subject: id, data: { previous_host: d.webhookUrl ? hostOf(d.webhookUrl) : null } }
        : { type: 'webhook.registered', actor, subject: id, data: { host: hostOf(url) } },
    );
    return { device_id: id, webhook_url: url, ...(secret ? { secret } : {}) };
  });
}

export async function devicePresence(deps: DeviceServiceDeps, tenantId: string, id: string) {
  const d = await withTenant(deps.db, tenantId, (tx) => mustGet(tx, id));
  const online = await deps.presence.online([id]);
  return {
    device_id: id,
    online: online.has(id),
    last_seen: d.lastSeen?.toISOString() ?? null,
    health: health(d.lastSeen),
  };
}

export function deviceKeys(deps: DeviceServiceDeps, tenantId: string, id: string): Promise<DeviceKeys> {
  return withTenant(deps.db, tenantId, async (tx) => keysOf(await mustGet(tx, id)));
}

/** Count of messages addressed to the device and not yet delivered to it. */
export function pendingCount(deps: DeviceServiceDeps, tenantId: string, id: string): Promise<{ device_id: string; pending: number }> {
  return withTenant(deps.db, tenantId, async (tx) => ({ device_id: id, pending: await repo.pendingCount(tx, id) }));
}
