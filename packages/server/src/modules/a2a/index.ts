/**
 * Agent-to-agent channels (contract §2.11, §3.3, §3.5, §4.13, §6.1; see service.ts): the area's
 * public surface. Routes and frames call the channel and message operations with the area's
 * {@link A2aCore}; connections read channels through the queries exported here.
 */
import { API_PREFIX, type Area, type Platform } from '../../http/area.js';
import type { FederationService } from '../federation/index.js';
import type { HubService } from '../hub/index.js';
import { registerA2aFrames } from './frames.js';
import type { A2aPolicies } from './internal.js';
import { getChannel, listChannels, type ChannelRow } from './repo.js';
import { a2aRoutes } from './routes.js';
import { openA2a } from './service.js';

export { getChannel, listChannels, type ChannelRow };

/** A2A channels between agents of the hub, across tenants under a federation agreement or a rental. */
export function createA2a(d: Pick<Platform, 'db' | 'notifier' | 'config' | 'messageRate'> & { hub: HubService; federation: FederationService; policies: A2aPolicies }): Area {
  const { limits } = d.config;
  const a2a = openA2a({ db: d.db, notifier: d.notifier, hubs: d.hub, federation: d.federation, policies: d.policies, maxCiphertextBytes: limits.maxCiphertextBytes, listDefault: limits.listDefault, listMax: limits.listMax });
  return {
    frames: (gateway) => registerA2aFrames(gateway, a2a),
    async routes(app) {
      await app.register(a2aRoutes, { prefix: API_PREFIX, a2a, messageRate: d.messageRate });
    },
  };
}
