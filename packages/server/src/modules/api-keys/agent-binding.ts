/**
 * Binding an agent's hub identity to its API key's device (contract §2.6, §4.19
 * `svc_register_agent`; design §8.18; docs/decisions.md "Agent self-registration"). `POST
 * /hub/agents` creates a hub identity together with a new API key that has no device yet; the
 * identity records the key (`hub_identities.api_key_id`). When that key's first socket sends
 * `client_key_register` (trust on first use), the new device is bound to the identity in the same
 * transaction, and an identity registered without an owner key gets the device's identity key as
 * its owner key (`#owner-key` of the DID document). Recorded as `hub.agent_bound`.
 */
import type { Tx } from '../../db/client.js';
import { appendAudit } from '../audit/index.js';
import { commitDidKeys, decodeOwnerKey, movePendingAgentKey, pendingAgentIdentities, updateHubIdentity } from '../hub/index.js';
import type { KeyDirectory } from '../key-directory/index.js';

/**
 * Bind every identity waiting for key `apiKeyId` to `deviceId` (the key's new ACTIVE agent
 * device; `identityPublicKeyHex` its Ed25519 identity key, proven by the registration
 * signature). An identity without an owner key takes the device key, base64 (when it is a valid
 * Ed25519 key, see ed25519.ts), committed to the key directory `directory` as its DID keys. Audit `hub.agent_bound` (subject the identity id; data
 * `{hub_address, device_id, api_key_id, owner_key_from_device}`; actor `api_key:<id>`).
 * Runs inside the registration's transaction (scoped to `tenantId`).
 */
export async function bindPendingAgentIdentity(tx: Tx, tenantId: string, apiKeyId: string, deviceId: string, identityPublicKeyHex: string, directory: KeyDirectory): Promise<void> {
  for (const identity of await pendingAgentIdentities(tx, apiKeyId)) {
    const deviceKey = Buffer.from(identityPublicKeyHex, 'hex').toString('base64');
    const ownerKeyFromDevice = identity.publicKey === null && decodeOwnerKey(deviceKey) !== null;
    await updateHubIdentity(tx, identity.id, { deviceId, ...(ownerKeyFromDevice ? { publicKey: deviceKey } : {}), updatedAt: new Date() });
    await appendAudit(tx, tenantId, {
      type: 'hub.agent_bound',
      actor: `api_key:${apiKeyId}`,
      subject: identity.id,
      data: { hub_address: identity.hubAddress, device_id: deviceId, api_key_id: apiKeyId, owner_key_from_device: ownerKeyFromDevice },
    });
    if (ownerKeyFromDevice) await commitDidKeys(tx, directory, identity.id);
  }
}

/** Rotation (same transaction): identities still waiting for key `from` wait for its replacement `to`. */
export async function movePendingAgentIdentity(tx: Tx, from: string, to: string): Promise<void> {
  await movePendingAgentKey(tx, from, to);
}
