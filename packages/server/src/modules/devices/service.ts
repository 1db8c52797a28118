/**
 * Devices (contract §2.3, §3.1, §4.3, §4.4; design §5, §7): enrollment with proof of possession,
 * owner approval / rejection, activation with proof of possession, revocation (403 for every later
 * call, sockets closed 4001), deletion of revoked devices, owner devices, relink, rename,
 * webhooks, presence, keys, pending counts and device-token renewal.
 *
 * Transition rules: a request for a transition the current state does not allow answers 409;
 * every multi-step write is one tenant-scoped transaction.
 *
 * Revoking or deleting a device retires the agent in the same transaction
 * (`DeviceHooks.retireAgent`, trust/retire.ts): its active Skill Permission Tokens are revoked and its hub identity
 * falls to `unverified` (design §8.7; contract §3.3; docs/decisions.md "Skill Permission Tokens…").
 *
 * The operations live beside this file, one per responsibility: enrollment.ts (enroll, activate),
 * tokens.ts (token challenge, renewal), owner-devices.ts (register, relink, remove, the acting
 * device), lifecycle.ts (approve, reject, revoke, delete, retiring the agent) and reads.ts (list,
 * status, presence, keys, pending, rename, webhook, settings), over internal.ts (deps, shapes, lookups).
 */
import type { ActivateRequest, DeviceKeys, DeviceSettings, DeviceSettingsPatch, DeviceStatus, EnrollRequest, RegisterOwnerDeviceRequest } from '@parley/protocol';
import type { OwnerPrincipal, Principal } from '../../auth/authenticator.js';
import type { Tx } from '../../db/client.js';
import { activateDevice, enrollDevice } from './enrollment.js';
import type { DeviceOut, DeviceServiceDeps } from './internal.js';
import { approveDevice, deleteDevice, rejectDevice, revokeDevice } from './lifecycle.js';
import { actingDevice, registerOwnerDevice, relinkOwnerDevice, removeOwnerDevice, requireOwnerDeviceOf } from './owner-devices.js';
import { deviceKeys, devicePresence, deviceSettings, deviceStatus, listDevices, pendingCount, renameDevice, setDeviceSettings, setDeviceWebhook } from './reads.js';
import type * as repo from './repo.js';
import { renewToken, tokenChallenge } from './tokens.js';

export { activationMessage } from './enrollment.js';
export { keysOf, toDeviceOut, type DeviceHooks, type DeviceOut, type DeviceServiceDeps, type Presence, type RetireReason } from './internal.js';
export { requireOwnerDeviceOf } from './owner-devices.js';
export type { DeviceStatus };

export class DeviceService {
  constructor(private readonly deps: DeviceServiceDeps) {}

  /** See {@link enrollDevice}. */
  enroll(input: EnrollRequest): Promise<{ device_id: string; fingerprint: string; status: DeviceStatus }> {
    return enrollDevice(this.deps, input);
  }

  /** See {@link deviceStatus}. */
  status(id: string): Promise<{ device_id: string; status: DeviceStatus }> {
    return deviceStatus(this.deps, id);
  }

  /** See {@link activateDevice}. */
  activate(id: string, body: ActivateRequest) {
    return activateDevice(this.deps, id, body);
  }

  /** See {@link listDevices}. */
  list(tenantId: string): Promise<DeviceOut[]> {
    return listDevices(this.deps, tenantId);
  }

  /** See {@link approveDevice}. */
  approve(tenantId: string, id: string, actor = 'owner'): Promise<DeviceOut> {
    return approveDevice(this.deps, tenantId, id, actor);
  }

  /** See {@link rejectDevice}. */
  reject(tenantId: string, id: string, actor = 'owner'): Promise<DeviceOut> {
    return rejectDevice(this.deps, tenantId, id, actor);
  }

  /** See {@link revokeDevice}. */
  revoke(tenantId: string, id: string, actor = 'owner'): Promise<DeviceOut> {
    return revokeDevice(this.deps, tenantId, id, actor);
  }

  /** See {@link renameDevice}. */
  rename(tenantId: string, id: string, name: string, actor = 'owner'): Promise<DeviceOut> {
    return renameDevice(this.deps, tenantId, id, name, actor);
  }

  /** See {@link setDeviceWebhook}. */
  setWebhook(tenantId: string, id: string, url: string | null, actor = 'owner') {
    return setDeviceWebhook(this.deps, tenantId, id, url, actor);
  }

  /** See {@link deleteDevice}. */
  delete(tenantId: string, id: string, actor = 'owner'): Promise<void> {
    return deleteDevice(this.deps, tenantId, id, actor);
  }

  /** See {@link registerOwnerDevice}. */
  registerOwnerDevice(owner: OwnerPrincipal & { tenantId: string }, input: RegisterOwnerDeviceRequest) {
    return registerOwnerDevice(this.deps, owner, input);
  }

  /** See {@link relinkOwnerDevice}. */
  relink(tenantId: string, id: string) {
    return relinkOwnerDevice(this.deps, tenantId, id);
  }

  /** See {@link removeOwnerDevice}. */
  removeOwnerDevice(owner: OwnerPrincipal & { tenantId: string }, id: string, actingDeviceId: string): Promise<void> {
    return removeOwnerDevice(this.deps, owner, id, actingDeviceId);
  }

  /** The acting owner device of a request (`X-Device-Id`): ACTIVE, kind owner, registered by this user. */
  async requireOwnerDevice(tx: Tx, owner: OwnerPrincipal, deviceId: string): Promise<repo.DeviceRow> {
    return requireOwnerDeviceOf(tx, owner.sub, deviceId);
  }

  /** See {@link actingDevice}. */
  actingDevice(principal: Principal, headerDeviceId: string | undefined): Promise<{ tenantId: string; deviceId: string }> {
    return actingDevice(this.deps, principal, headerDeviceId);
  }

  /** See {@link deviceSettings}. */
  settings(tenantId: string, id: string): Promise<DeviceSettings> {
    return deviceSettings(this.deps, tenantId, id);
  }

  /** See {@link setDeviceSettings}. */
  setSettings(tenantId: string, id: string, patch: DeviceSettingsPatch, actor?: string): Promise<DeviceSettings> {
    return setDeviceSettings(this.deps, tenantId, id, patch, actor);
  }

  /** See {@link devicePresence}. */
  presence(tenantId: string, id: string) {
    return devicePresence(this.deps, tenantId, id);
  }

  /** See {@link deviceKeys}. */
  keys(tenantId: string, id: string): Promise<DeviceKeys> {
    return deviceKeys(this.deps, tenantId, id);
  }

  /** See {@link pendingCount}. */
  pending(tenantId: string, id: string): Promise<{ device_id: string; pending: number }> {
    return pendingCount(this.deps, tenantId, id);
  }

  /** See {@link tokenChallenge}. */
  tokenChallenge(id: string): { device_id: string; challenge: string; expires_at: string } {
    return tokenChallenge(this.deps, id);
  }

  /** See {@link renewToken}. */
  renewToken(id: string, challenge: string, signature: string) {
    return renewToken(this.deps, id, challenge, signature);
  }
}
