/**
 * API keys for third-party agents (SPEC §2.6, §4.8; DESIGN §5, §8.17). The raw key
 * `svc_agent_sk_{env}_{64 hex}` is returned once at creation (and rotation); only its
 * BLAKE2b-256 hash is stored. Revocation and rotation end the key's bound device (sockets closed
 * 4001); rotation creates the replacement and revokes the old key in one transaction; deletion
 * removes the key and its device.
 */
import { randomUUID } from 'node:crypto';
import type { Db, Tx } from '../../db/client.js';
import { withTenant } from '../../db/tenant.js';
import { hashSecret, randomToken } from '../../lib/crypto.js';
import { conflict, notFound } from '../../lib/errors.js';
import { CLOSE, type Notifier } from '../../realtime/notifier.js';
import { updateDevice } from '../devices/repo.js';
import { deleteKeyPackagesOf } from '../mls/repo.js';
import * as repo from './repo.js';

export const API_KEY_ENVS = ['prod', 'staging', 'dev'] as const;
export type ApiKeyEnv = (typeof API_KEY_ENVS)[number];

/** The raw-key prefix of an environment (SPEC §2.6). */
export const apiKeyPrefix = (env: ApiKeyEnv) => `svc_agent_sk_${env}_`;

/** An API key as listed (never the raw key nor its hash). */
export interface ApiKeyOut {
  id: string;
  name: string;
  env: string;
  prefix: string;
  status: 'active' | 'revoked';
  device_id: string | null;
  created_at: string;
  revoked_at: string | null;
  last_used_at: string | null;
  rotated_from: string | null;
}

const toOut = (k: repo.ApiKeyRow): ApiKeyOut => ({
  id: k.id,
  name: k.name,
  env: k.env,
  prefix: k.prefix,
  status: k.status as 'active' | 'revoked',
  device_id: k.deviceId,
  created_at: k.createdAt.toISOString(),
  revoked_at: k.revokedAt?.toISOString() ?? null,
  last_used_at: k.lastUsedAt?.toISOString() ?? null,
  rotated_from: k.rotatedFrom,
});

export class ApiKeyService {
  constructor(
    private readonly db: Db,
    private readonly notifier: Notifier,
  ) {}

  /** Create a key; the answer carries the raw `key` once. */
  create(tenantId: string, createdBy: string, name: string, env: ApiKeyEnv = 'dev'): Promise<ApiKeyOut & { key: string }> {
    return withTenant(this.db, tenantId, (tx) => this.insert(tx, tenantId, createdBy, name, env, null));
  }

  list(tenantId: string): Promise<ApiKeyOut[]> {
    return withTenant(this.db, tenantId, async (tx) => (await repo.listApiKeys(tx)).map(toOut));
  }

  /** active -> revoked (409 when already revoked); the bound device is revoked with it. */
  async revoke(tenantId: string, id: string): Promise<ApiKeyOut> {
    const { key, deviceId } = await withTenant(this.db, tenantId, async (tx) => {
      const k = await this.mustGetActive(tx, id);
      return { key: await this.end(tx, k), deviceId: k.deviceId };
    });
    if (deviceId) await this.notifier.closeDevice(deviceId, CLOSE.revoked, 'api key revoked');
    return key;
  }

  /**
   * Atomic replacement: in one transaction the old key is revoked (with its bound device) and a
   * new key with the same name and environment is created, unbound, so the client may register
   * new key material (SPEC §2.6). 409 when the key is already revoked.
   */
  async rotate(tenantId: string, createdBy: string, id: string): Promise<ApiKeyOut & { key: string }> {
    const { created, deviceId } = await withTenant(this.db, tenantId, async (tx) => {
      const old = await this.mustGetActive(tx, id);
      await this.end(tx, old);
      return { created: await this.insert(tx, tenantId, createdBy, old.name, old.env as ApiKeyEnv, old.id), deviceId: old.deviceId };
    });
    if (deviceId) await this.notifier.closeDevice(deviceId, CLOSE.revoked, 'api key rotated');
    return created;
  }

  /** Delete a key (any state) and its associated device (SPEC §2.6). */
  async delete(tenantId: string, id: string): Promise<void> {
    const deviceId = await withTenant(this.db, tenantId, async (tx) => {
      const k = await repo.getApiKey(tx, id);
      if (!k) throw notFound('api key');
      if (k.deviceId) {
        await updateDevice(tx, k.deviceId, { status: 'REVOKED', revokedAt: new Date(), deletedAt: new Date() });
        await deleteKeyPackagesOf(tx, k.deviceId);
      }
      await repo.deleteApiKey(tx, id);
      return k.deviceId;
    });
    if (deviceId) await this.notifier.closeDevice(deviceId, CLOSE.revoked, 'api key deleted');
  }

  private async insert(tx: Tx, tenantId: string, createdBy: string, name: string, env: ApiKeyEnv, rotatedFrom: string | null) {
    const key = randomToken(apiKeyPrefix(env));
    const [row] = await repo.insertApiKey(tx, {
      id: randomUUID(),
      tenantId,
      name,
      env,
      keyHash: hashSecret(key),
      prefix: key.slice(0, apiKeyPrefix(env).length + 6),
      createdBy,
      rotatedFrom,
    });
    return { ...toOut(row!), key };
  }

  private async end(tx: Tx, k: repo.ApiKeyRow): Promise<ApiKeyOut> {
    const now = new Date();
    if (k.deviceId) {
      await updateDevice(tx, k.deviceId, { status: 'REVOKED', revokedAt: now });
      await deleteKeyPackagesOf(tx, k.deviceId);
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
