/**
 * Agent self-registration (`POST /hub/agents`, contract §4.19 `svc_register_agent`;
 * docs/decisions.md "Agent self-registration"): a new API key and the hub identity it will bind,
 * in one transaction.
 */
import type { ApiKeyEnv, RegisterAgentRequest, RegisteredAgent } from '@parley/protocol';
import type { Db } from '../../db/client.js';
import { withTenant } from '../../db/tenant.js';
import { hubDid, type HubService } from '../hub/index.js';
import { createApiKeyIn } from './create.js';
import { getApiKey } from './repo.js';

/**
 * Who registers an agent (`POST /hub/agents`): an owner, or an API key (`apiKeyId`, whose env is
 * the new key's default); `actor` as the audit chain names it (owner `sub`, `api_key:<id>`).
 */
export interface AgentRegistrar {
  tenantId: string;
  actor: string;
  apiKeyId: string | null;
}

/**
 * Register a NEW agent: in ONE transaction a new API key of the tenant (create.ts,
 * `api_key.created`; named after the address; env `input.env`, else the calling key's, else
 * `dev`) and a hub identity at address `name` (lowercased; `HubService.insertIdentity`) with
 * capabilities = `skills`, `description`, `display_name` (default the address), no trust score
 * yet and tier unverified, no device, and `api_key_id` = the new key, so the key's first
 * `client_key_register` binds its device (agent-binding.ts). Without `public_key` the DID
 * document has no `#owner-key` until then; the device's identity key becomes the owner key.
 * @returns the DID, address (`hub_name` too), the raw API key (once; only its hash is stored),
 *   its id and trust score 0, tier unverified.
 * @throws 400 malformed address or invalid `public_key`; 409 address reserved or taken
 *   (platform-wide; the transaction rolls back, so no API key is left behind).
 */
export function registerAgent(db: Db, hub: HubService, caller: AgentRegistrar, input: RegisterAgentRequest): Promise<RegisteredAgent> {
  const hubAddress = hub.newAddress(input.name, input.public_key, 'name must be a hub address: 3-32 characters of a-z, 0-9 and "-", not starting or ending with "-"');
  const { tenantId, actor } = caller;
  return hub.whileAddressFree(hubAddress, () =>
    withTenant(db, tenantId, async (tx) => {
      const callerKey = caller.apiKeyId ? await getApiKey(tx, caller.apiKeyId) : undefined;
      const env: ApiKeyEnv = input.env ?? (callerKey?.env as ApiKeyEnv | undefined) ?? 'dev';
      const key = await createApiKeyIn(tx, tenantId, actor, hubAddress, env);
      const row = await hub.insertIdentity(tx, {
        tenantId,
        hubAddress,
        deviceId: null,
        apiKeyId: key.id,
        displayName: input.display_name ?? hubAddress,
        description: input.description ?? null,
        publicKey: input.public_key ?? null,
        capabilities: input.skills ?? [],
        createdBy: actor,
      });
      return {
        identity_id: row.id,
        did: hubDid(hubAddress),
        hub_name: hubAddress,
        hub_address: hubAddress,
        api_key: key.key,
        api_key_id: key.id,
        trust_score: 0,
        trust_tier: 'unverified' as const,
      };
    }),
  );
}
