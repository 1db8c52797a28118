/**
 * Authentication of device and owner sockets for the gateway (contract §4.18; design §7): a device
 * JWT, or an owner JWT plus `device_id` naming one of the caller's ACTIVE owner devices. Refusals
 * are AppErrors the gateway maps to close codes (401 -> 4401, device revoked -> 4001, else 4003).
 * API-key sockets are authenticated before this by the api-keys module (apiKeySocketAuthenticator).
 */
import type { Authenticator } from '../../auth/authenticator.js';
import type { Db } from '../../db/client.js';
import { withTenant } from '../../db/tenant.js';
import { AppError, ErrorCode } from '../../lib/errors.js';
import { asUuid } from '../../lib/ids.js';
import type { SocketAuthenticator } from '../../realtime/gateway.js';
import { getDevice } from './repo.js';

export function deviceSocketAuthenticator(db: Db, authenticator: Pick<Authenticator, 'authenticate'>): SocketAuthenticator {
  return async (query) => {
    const principal = await authenticator.authenticate(query.token);
    if (principal.kind === 'device') return { deviceId: principal.deviceId, tenantId: principal.tenantId, kind: principal.deviceKind, registered: true };
    if (!principal.tenantId) throw new AppError(ErrorCode.Forbidden, 'the user belongs to no tenant');
    const deviceId = asUuid(query.device_id);
    if (!deviceId) throw new AppError(ErrorCode.Forbidden, 'owner sockets need device_id');
    const tenantId = principal.tenantId;
    const d = await withTenant(db, tenantId, (tx) => getDevice(tx, deviceId));
    if (!d || d.kind !== 'owner' || d.ownerSub !== principal.sub) throw new AppError(ErrorCode.Forbidden, 'device_id is not one of your owner devices');
    if (d.status === 'REVOKED') throw new AppError(ErrorCode.DeviceRevoked, 'device revoked');
    if (d.status !== 'ACTIVE') throw new AppError(ErrorCode.Forbidden, 'device is not active');
    return { deviceId, tenantId, kind: 'owner', registered: true };
  };
}
