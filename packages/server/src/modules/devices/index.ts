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
 * The operations live in this folder, one file per responsibility: enrollment.ts (enroll, activate),
 * tokens.ts (token challenge, renewal), owner-devices.ts (register, relink, remove, the acting
 * device), lifecycle.ts (approve, reject, revoke, delete, retiring the agent) and reads.ts (list,
 * status, presence, keys, pending, rename, webhook, settings), over internal.ts (deps, shapes,
 * lookups); routes.ts calls each with the area's {@link DeviceServiceDeps}.
 *
 * This file is the area's public surface: what other areas use, and {@link createDevices}.
 */
import type { RateLimitConfig } from '../../config.js';
import { API_PREFIX, type Area } from '../../http/area.js';
import type { DeviceServiceDeps } from './internal.js';
import { deviceRoutes } from './routes.js';

export { activeDevices, getDevice, insertDevice, updateDevice, type DeviceRow } from './repo.js';
export { keysOf, toDeviceOut, type DeviceHooks, type DeviceServiceDeps, type Presence, type RetireReason } from './internal.js';
export { actingDevice, requireOwnerDeviceOf } from './owner-devices.js';
export { LastSeenTracker } from './last-seen.js';
export { deviceSocketAuthenticator } from './socket-auth.js';

/** The devices area: its routes over `deps` (the operations' dependencies, and the per-route limits of contract §8). */
export function createDevices(deps: DeviceServiceDeps & { rateLimits: RateLimitConfig }): Area {
  return {
    async routes(app) {
      await app.register(deviceRoutes, { prefix: API_PREFIX, deps, rateLimits: deps.rateLimits });
    },
  };
}
