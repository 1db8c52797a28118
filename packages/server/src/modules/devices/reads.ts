/**
 * Device reads and per-device settings (contract §4.3; design §5, §7): the owner's device list,
 * status polling by the enrolling agent, presence, keys and pending counts; and the two
 * single-row settings writes, rename, the webhook URL (registered or cleared) and the device's
 * settings (read receipts).
 */
import type { DeviceKeys, DeviceSettings, DeviceSettingsPatch, DeviceStatus } from '@parley/protocol';
import type { Tx } from '../../db/client.js';
import { withTenant } from '../../db/tenant.js';
import { appendAudit } from '../audit/index.js';
import { badRequest, deviceRevoked } from '../../lib/errors.js';
import { newWebhookSecret, sealWebhookSecret, webhookUrlProblem } from '../webhooks/index.js';
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
 * Register (`url`) or clear (`null`) a device's webhook URL (delivery: design §8.11,
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

/**
 * A device's own settings: its `read_receipts_enabled` choice and whether read
 * receipts are in effect for it (the tenant setting can turn them off), and the tenant's
 * `require_post_quantum` for its messenger to honour. @throws 404 unknown device.
 */
export function deviceSettings(deps: DeviceServiceDeps, tenantId: string, id: string): Promise<DeviceSettings> {
  return withTenant(deps.db, tenantId, async (tx) => settingsOut(deps, tx, tenantId, await mustGet(tx, id)));
}

/**
 * Change a device's settings (`PATCH /devices/{id}/settings`, `/devices/self/settings`); records
 * `device.settings_updated` (changed keys) by `actor` (owner `sub` or `device:<id>`).
 * @throws 404 unknown device, 403 a revoked device.
 */
export function setDeviceSettings(deps: DeviceServiceDeps, tenantId: string, id: string, patch: DeviceSettingsPatch, actor = 'owner'): Promise<DeviceSettings> {
  return withTenant(deps.db, tenantId, async (tx) => {
    const d = await mustGet(tx, id, true);
    if (d.status === 'REVOKED') throw deviceRevoked();
    const [row] = patch.read_receipts_enabled === undefined ? [d] : await repo.updateDevice(tx, id, { readReceipts: patch.read_receipts_enabled });
    await appendAudit(tx, tenantId, { type: 'device.settings_updated', actor, subject: id, data: { keys: Object.keys(patch).sort() } });
    return settingsOut(deps, tx, tenantId, row!);
  });
}

async function settingsOut(deps: DeviceServiceDeps, tx: Tx, tenantId: string, d: repo.DeviceRow): Promise<DeviceSettings> {
  const tenant = (await deps.tenantSettings?.(tx, tenantId)) ?? { read_receipts_enabled: true, require_post_quantum: false };
  return { device_id: d.id, read_receipts_enabled: d.readReceipts, read_receipts_effective: d.readReceipts && tenant.read_receipts_enabled, require_post_quantum: tenant.require_post_quantum };
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
