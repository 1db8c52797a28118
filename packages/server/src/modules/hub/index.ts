/**
 * The hub registry (contract §4.10; design §8.14–§8.16): hub identities and addresses, their
 * capabilities, the directory, DID documents and Agent Cards. The area's public surface: agent
 * references (`resolveAgent`), the registry's queries and {@link createHub}.
 */
import { API_PREFIX, type Area, type Platform } from '../../http/area.js';
import { AgentCardService } from './agent-card.js';
import { hubCapabilityRoutes } from './capabilities-routes.js';
import { HubCapabilityService } from './capabilities.js';
import { didResolverRoutes, hubDidRoutes } from './did-routes.js';
import { HubDidService, type HubDidServiceOptions } from './did-service.js';
import { HubDirectoryService } from './directory.js';
import { hubProfileRoutes } from './profile-routes.js';
import { hubRoutes } from './routes.js';
import { HubService } from './service.js';
import type { KeyDirectory } from '../key-directory/index.js';

export { resolveAgent, resolveAgentId, type AgentRef } from './agent-ref.js';
export { toOut } from './capabilities.js';
export { ED25519_2020, buildDidDocument, didTimestamp, messagingEndpoint, type DidDocument } from './did.js';
export { commitDidKeys } from './did-keys.js';
export type { HubDidService } from './did-service.js';
export { decodeOwnerKey } from './ed25519.js';
export {
  SEARCH_CONFIG,
  TRUST_TIERS,
  certifyCapabilities,
  getByAddress,
  getByDevice,
  getHubIdentity,
  insertTierChange,
  listCapabilities,
  movePendingAgentKey,
  pendingAgentIdentities,
  updateHubIdentity,
  type HubCapabilityRow,
  type HubIdentityRow,
} from './repo.js';
export { reviewIdentities } from './review.js';
export { HubService, hubDid, normalizeHubAddress, toHubIdentity } from './service.js';

/** The hub area and the services other areas use. */
export interface HubArea extends Area {
  hub: HubService;
  hubDid: HubDidService;
}

/** The registry with the platform issuer's address reserved and its DID document served first. */
export function createHub(d: Pick<Platform, 'db' | 'config'> & { platformAddress: string; platformDocument: HubDidServiceOptions['platformDocument']; keyDirectory: KeyDirectory }): HubArea {
  const hub = new HubService(d.db, d.keyDirectory, [d.platformAddress]);
  const hubDid = new HubDidService({ db: d.db, publicUrl: d.config.publicUrl, directory: d.keyDirectory, ...(d.platformDocument ? { platformDocument: d.platformDocument } : {}) });
  const rateLimits = d.config.rateLimits;
  return {
    hub,
    hubDid,
    async routes(app) {
      await app.register(hubRoutes, { prefix: API_PREFIX, hub });
      await app.register(hubCapabilityRoutes, { prefix: API_PREFIX, capabilities: new HubCapabilityService(d.db) });
      await app.register(hubProfileRoutes, { prefix: API_PREFIX, directory: new HubDirectoryService(d.db) });
      await app.register(hubDidRoutes, { prefix: API_PREFIX, hubDid, rateLimits, agentCards: new AgentCardService(d.db, hubDid) });
      await app.register(didResolverRoutes, { hubDid, rateLimits });
    },
  };
}
