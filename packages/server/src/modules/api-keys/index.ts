/**
 * API keys of agents (contract §4.17; design §8.18): keys, their bound devices (trust on first
 * use, `client_key_register`), agent self-registration in the hub. The area's public surface.
 */
import type { SocketAuthenticator } from '../../realtime/gateway.js';
import { API_PREFIX, type Area, type Platform } from '../../http/area.js';
import type { HubService } from '../hub/index.js';
import type { KeyBindingService } from '../key-binding/index.js';
import type { KeyDirectory } from '../key-directory/index.js';
import { apiKeySocketAuthenticator, registerApiKeyFrames } from './frames.js';
import { apiKeyRoutes } from './routes.js';
import { ApiKeyService } from './service.js';

export type { ApiKeyService } from './service.js';

/** The API-key area: its service and the socket authentication of `svc_agent_sk_` tokens. */
export interface ApiKeysArea extends Area {
  apiKeys: ApiKeyService;
  /** Authenticates API-key sockets, and passes every other socket to `next`. */
  socketAuthenticator(next: SocketAuthenticator): SocketAuthenticator;
}

/** API keys over the key bindings and the hub registry. */
export function createApiKeys(d: Pick<Platform, 'db' | 'notifier'> & { keyBinding: KeyBindingService; hub: HubService; keyDirectory: KeyDirectory }): ApiKeysArea {
  const apiKeys = new ApiKeyService(d.db, d.notifier, d.keyBinding, d.hub, d.keyDirectory);
  return {
    apiKeys,
    socketAuthenticator: (next) => apiKeySocketAuthenticator(d.db, apiKeys, next),
    frames: (gateway) => registerApiKeyFrames(gateway, apiKeys),
    async routes(app) {
      await app.register(apiKeyRoutes, { prefix: API_PREFIX, apiKeys });
    },
  };
}
