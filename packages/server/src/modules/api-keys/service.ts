/**
 * API keys for third-party agents (contract §2.6, §4.8; design §5, §8.17). The raw key
 * `svc_agent_sk_{env}_{64 hex}` is returned once at creation (and rotation); only its
 * BLAKE2b-256 hash is stored. Revocation and rotation end the key's bound device (sockets closed
 * 4001); rotation creates the replacement and revokes the old key in one transaction; deletion
 * removes the key and its device.
 */
import { randomUUID } from 'node:crypto';
import type { ApiKey, ApiKeyEnv, ApiKeyWithSecret, ClientKeyAccepted, ClientKeyRegistration, RegisterAgentRequest, RegisteredAgent } from '@parley/protocol';
import type { Db, Tx } from '../../db/client.js';
import { crossTenantRead, withTenant } from '../../db/tenant.js';
import { appendAudit } from '../audit/index.js';
import { fingerprint, hashSecret, verifyEd25519 } from '../../lib/crypto.js';
import { requireDeviceKeys } from '../../lib/public-keys.js';
import { badRequest, conflict, notFound, unauthorized } from '../../lib/errors.js';
import { provisionAgent } from '../conversations/index.js';
import { activeDevices, getDevice, insertDevice, updateDevice } from '../devices/index.js';
import { CLOSE, type Notifier } from '../../realtime/notifier.js';
import { retireAgentDevice } from '../trust/index.js';
import { deleteKeyPackagesOf } from '../mls/index.js';
import type { HubService } from '../hub/index.js';
import type { KeyBindingService } from '../key-binding/index.js';
import { deviceBinding, type KeyDirectory } from '../key-directory/index.js';
import { registerAgent, type AgentRegistrar } from './agent-registration.js';
import { bindPendingAgentIdentity, movePendingAgentIdentity } from './agent-binding.js';
import { createApiKeyIn, insertApiKeyRow, toApiKeyOut as toOut } from './create.js';
import * as repo from './repo.js';

export { apiKeyPrefix } from './create.js';

/** What an API key authenticates as. `deviceId` is null until key material is registered. */
export interface ResolvedApiKey {
  apiKeyId: string;
  tenantId: string;
  deviceId: string | null;
  /** The bound device's status (`devices.status`) and deletion time, read with the key; null without a device. */
  device: { status: string; deletedAt: Date | null } | null;
}

export class ApiKeyService {
  /**
   * @param keyBinding checks the registration's `key_binding`, or whether one may go without it.
   * @param directory the key directory registered key material is committed to (design §8.39).
   */
  constructor(
    private readonly db: Db,
    private readonly notifier: Notifier,
    private readonly keyBinding: KeyBindingService,
    private readonly hub: HubService,
    private readonly directory: KeyDirectory,
  ) {}

  /** `POST /hub/agents`: a new API key and its hub identity (agent-registration.ts). */
  registerAgent(caller: AgentRegistrar, input: RegisterAgentRequest): Promise<RegisteredAgent> {
    return registerAgent(this.db, this.hub, caller, input);
  }

  /** Create a key; the answer carries the raw `key` once. */
  create(tenantId: string, createdBy: string, name: string, env: ApiKeyEnv = 'dev'): Promise<ApiKeyWithSecret> {
    return withTenant(this.db, tenantId, (tx) => createApiKeyIn(tx, tenantId, createdBy, name, env));
  }

  list(tenantId: string): Promise<ApiKey[]> {
    return withTenant(this.db, tenantId, async (tx) => (await repo.listApiKeys(tx)).map(toOut));
  }

  /** active -> revoked (409 when already revoked); the bound device is revoked with it. */
  async revoke(tenantId: string, id: string, actor = 'owner'): Promise<ApiKey> {
    const { key, deviceId } = await withTenant(this.db, tenantId, async (tx) => {
      const k = await this.mustGetActive(tx, id);
      await appendAudit(tx, tenantId, { type: 'api_key.revoked', actor, subject: id, data: { device_id: k.deviceId } });
      return { key: await this.end(tx, k, actor), deviceId: k.deviceId };
    });
    if (deviceId) await this.notifier.closeDevice(deviceId, CLOSE.revoked, 'api key revoked');
    return key;
  }

  /**
   * Atomic replacement: in one transaction the old key is revoked (with its bound device) and a
   * new key with the same name and environment is created, unbound, so the client may register
   * new key material (contract §2.6). 409 when the key is already revoked.
   */
  async rotate(tenantId: string, createdBy: string, id: string): Promise<ApiKeyWithSecret> {
    const { created, deviceId } = await withTenant(this.db, tenantId, async (tx) => {
      const old = await this.mustGetActive(tx, id);
      await this.end(tx, old, createdBy);
      const created = await insertApiKeyRow(tx, tenantId, createdBy, old.name, old.env as ApiKeyEnv, old.id);
      // A hub identity still waiting for the old key's first registration (POST /hub/agents) waits for the new key.
      await movePendingAgentIdentity(tx, old.id, created.id);
      await appendAudit(tx, tenantId, { type: 'api_key.rotated', actor: createdBy, subject: id, data: { new_id: created.id, device_id: old.deviceId } });
      return { created, deviceId: old.deviceId };
    });
    if (deviceId) await this.notifier.closeDevice(deviceId, CLOSE.revoked, 'api key rotated');
    return created;
  }

  /** Delete a key (any state) and its associated device (contract §2.6). */
  async delete(tenantId: string, id: string, actor = 'owner'): Promise<void> {
    const deviceId = await withTenant(this.db, tenantId, async (tx) => {
      const k = await repo.getApiKey(tx, id);
      if (!k) throw notFound('api key');
      if (k.deviceId) {
        const now = new Date();
        await updateDevice(tx, k.deviceId, { status: 'REVOKED', revokedAt: now, deletedAt: now });
        await deleteKeyPackagesOf(tx, k.deviceId);
        await retireAgentDevice(tx, tenantId, k.deviceId, 'device_deleted', actor, now);
      }
      await repo.deleteApiKey(tx, id);
      await appendAudit(tx, tenantId, { type: 'api_key.deleted', actor, subject: id, data: { device_id: k.deviceId } });
      return k.deviceId;
    });
    if (deviceId) await this.notifier.closeDevice(deviceId, CLOSE.revoked, 'api key deleted');
  }

  /**
   * Resolve a raw key (the key is the credential: a cross-tenant lookup by its hash).
   * @throws 401 for an unknown, malformed or revoked key.
   */
  async resolve(rawKey: string): Promise<ResolvedApiKey> {
    if (!/^svc_agent_sk_(prod|staging|dev)_[0-9a-f]{64}$/.test(rawKey)) throw unauthorized('invalid API key');
    const k = await crossTenantRead(this.db, 'API key authentication: the key is the credential', (q) => repo.findByHash(q, hashSecret(rawKey)));
    if (!k || k.status !== 'active') throw unauthorized('invalid or revoked API key');
    return { apiKeyId: k.id, tenantId: k.tenantId, deviceId: k.deviceId, device: k.device };
  }

  /**
   * Trust on first use (contract §2.6, §5 rule 4): the first registration binds the key to new key
   * material — an ACTIVE agent device with conversations to every ACTIVE owner device; owners get
   * `device_linked`. A hub identity created with the key (`POST /hub/agents`) is bound to that
   * device in the same transaction (agent-binding.ts). Registering the same identity key again is idempotent; other key material is
   * refused (409) until the key is rotated. A bad proof of possession or a key that is not a usable point
   * ({@link requireDeviceKeys}) is 400; a revoked key 401.
   *
   * The proof of possession never changes, so a first registration also carries a fresh
   * `key_binding` (purpose `client_key_register`, this API key as subject; modules/key-binding),
   * verified and spent in the same transaction (400 when it fails). Without it the registration
   * is refused (400) under `KEY_BINDING_REQUIRED` or when another device already holds the
   * identity key ({@link KeyBindingService.requireLegacyAllowed}).
   */
  async registerClientKey(tenantId: string, apiKeyId: string, input: ClientKeyRegistration): Promise<ClientKeyAccepted> {
    const ipk = input.identity_public_key.toLowerCase();
    const epk = input.ephemeral_public_key.toLowerCase();
    requireDeviceKeys(ipk, epk);
    if (!input.key_binding && !(await this.boundTo(tenantId, apiKeyId, ipk))) await this.keyBinding.requireLegacyAllowed('client_key_register', tenantId, ipk);
    const { accepted, created } = await withTenant(this.db, tenantId, async (tx) => {
      const k = await repo.getApiKey(tx, apiKeyId);
      if (!k || k.status !== 'active') throw unauthorized('invalid or revoked API key');
      let deviceId = k.deviceId;
      let created = false;
      if (deviceId) {
        const d = await getDevice(tx, deviceId);
        if (!d || d.status !== 'ACTIVE' || d.identityPublicKey !== ipk) {
          throw conflict('this API key is bound to other key material; rotate the key to register new material');
        }
      } else {
        if (!verifyEd25519(ipk, Buffer.from(ipk, 'hex'), input.signature.toLowerCase())) {
          throw badRequest('signature does not verify against identity_public_key');
        }
        if (input.key_binding) {
          const expect = { purpose: 'client_key_register', tenantId, subject: k.id, identityPublicKey: ipk, ephemeralPublicKey: epk } as const;
          await this.keyBinding.verifyAndSpend(tx, input.key_binding, expect);
        }
        deviceId = randomUUID();
        const now = new Date();
        await insertDevice(tx, {
          id: deviceId,
          tenantId,
          kind: 'agent',
          status: 'ACTIVE',
          identityPublicKey: ipk,
          ephemeralPublicKey: epk,
          fingerprint: fingerprint(ipk),
          name: k.name,
          platform: input.platform ?? null,
          approvedAt: now,
          activatedAt: now,
          lastSeen: now,
        });
        await this.directory.publish(tx, [deviceBinding({ id: deviceId, identityPublicKey: ipk, ephemeralPublicKey: epk })]);
        await repo.updateApiKey(tx, k.id, { deviceId, lastUsedAt: now });
        // A hub identity registered with this key (POST /hub/agents) is bound to the new device.
        await bindPendingAgentIdentity(tx, tenantId, k.id, deviceId, ipk, this.directory);
        created = true;
      }
      const group = await provisionAgent(tx, tenantId, deviceId);
      const owners = new Map((await activeDevices(tx, 'owner')).map((o) => [o.id, o]));
      const conversations = group.conversations.flatMap((c) => {
        const o = owners.get(c.ownerDeviceId);
        return o ? [{ conversation_id: c.id, peer_device_id: o.id, peer_identity_public_key: o.identityPublicKey, peer_ephemeral_public_key: o.ephemeralPublicKey }] : [];
      });
      return { accepted: { device_id: deviceId, conversations }, created };
    });
    if (created) {
      await this.notifier.toOwners(tenantId, 'device_linked', { device_id: accepted.device_id, conversation_id: accepted.conversations[0]?.conversation_id ?? null });
    }
    return accepted;
  }

  /** Whether the API key is already bound to a device with identity key `ipk` (an idempotent registration: nothing is created). */
  private boundTo(tenantId: string, apiKeyId: string, ipk: string): Promise<boolean> {
    return withTenant(this.db, tenantId, async (tx) => {
      const k = await repo.getApiKey(tx, apiKeyId);
      const d = k?.deviceId ? await getDevice(tx, k.deviceId) : undefined;
      return d?.identityPublicKey === ipk;
    });
  }

  /** Revoke the key and retire its bound device (its SPTs revoked, its hub identity demoted). */
  private async end(tx: Tx, k: repo.ApiKeyRow, actor: string): Promise<ApiKey> {
    const now = new Date();
    if (k.deviceId) {
      await updateDevice(tx, k.deviceId, { status: 'REVOKED', revokedAt: now });
      await deleteKeyPackagesOf(tx, k.deviceId);
      await retireAgentDevice(tx, k.tenantId, k.deviceId, 'device_revoked', actor, now);
    }
    const [row] = await repo.updateApiKey(tx, k.id, { status: 'revoked', revokedAt: now });
    return toOut(row!);
  }

  private async mustGetActive(tx: Tx, id: string): Promise<repo.ApiKeyRow> {
    const k = await repo.getApiKey(tx, id);
    if (!k) throw notFound('api key');
    if (k.status !== 'active') throw conflict(`api key is ${k.status}`);
    return k;
  }
}
