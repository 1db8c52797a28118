/**
 * API-key sockets (contract §2.6, §5 rule 4; design §7): how the gateway authenticates a socket whose
 * token is an API key, and the `client_key_register` frame that binds such a key to key material
 * on first use (trust on first use).
 *
 * - A key already bound to a device serves the socket as that device, which must be ACTIVE
 *   (4001 when revoked or gone, 4003 otherwise). An unbound key gives an unregistered socket: no
 *   deliveries and only `client_key_register`, `ping` and `pong` until it registers.
 * - `client_key_register {identity_public_key, ephemeral_public_key, signature, platform?}` is
 *   answered `client_key_accepted {device_id, conversations}` and registers the socket as that
 *   device; other key material than the key's is refused with an error frame and close 4003. Its
 *   error frames carry no `client_ref`.
 */
import { ClientKeyRegistration } from '@parley/protocol';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { Db } from '../../db/client.js';
import { withTenant } from '../../db/tenant.js';
import { AppError, ErrorCode } from '../../lib/errors.js';
// Registers the `uuid` string format for compiled checks (a side effect of that module).
import '../../realtime/frames.js';
import type { Gateway, SocketAuthenticator } from '../../realtime/gateway.js';
import { CLOSE } from '../../realtime/notifier.js';
import { getDevice } from '../devices/index.js';
import type { ApiKeyService } from './service.js';

/**
 * Authenticate `svc_agent_sk_…` tokens as API-key sockets: the key's bound device (which must be
 * ACTIVE), or unregistered until `client_key_register`. Other tokens go to `next`.
 */
export function apiKeySocketAuthenticator(db: Db, apiKeys: Pick<ApiKeyService, 'resolve'>, next: SocketAuthenticator): SocketAuthenticator {
  return async (query) => {
    if (!query.token?.startsWith('svc_agent_sk_')) return next(query);
    const key = await apiKeys.resolve(query.token);
    const base = { tenantId: key.tenantId, kind: 'agent' as const, apiKeyId: key.apiKeyId };
    if (!key.deviceId) return { ...base, deviceId: '', registered: false };
    const deviceId = key.deviceId;
    const d = await withTenant(db, key.tenantId, (tx) => getDevice(tx, deviceId));
    if (!d || d.status === 'REVOKED') throw new AppError(ErrorCode.DeviceRevoked, 'device revoked');
    if (d.status !== 'ACTIVE') throw new AppError(ErrorCode.Forbidden, 'device is not active');
    return { ...base, deviceId, registered: true };
  };
}

/** Serve `client_key_register` on the gateway (called once by the composition root). */
export function registerApiKeyFrames(gateway: Pick<Gateway, 'registerFrame'>, apiKeys: Pick<ApiKeyService, 'registerClientKey'>): void {
  gateway.registerFrame('client_key_register', {
    check: TypeCompiler.Compile(ClientKeyRegistration),
    senders: 'apiKey',
    echoClientRef: false,
    // Trust on first use: bind the key to the registered material, then serve the socket as that device.
    async handle(sender, data) {
      const accepted = await apiKeys.registerClientKey(sender.tenantId, sender.apiKeyId!, data);
      return { event: 'client_key_accepted', data: { ...accepted }, registerAs: accepted.device_id };
    },
    closeOnError: (err) => (err instanceof AppError && err.code === ErrorCode.Conflict ? { code: CLOSE.forbidden, reason: 'key material does not match; rotate the API key' } : undefined),
  });
}
