/**
 * Creating an API key inside a caller's transaction (contract §2.6, §4.8; design §8.17): shared by
 * `POST /api-keys` and rotation (ApiKeyService) and by agent self-registration
 * (`POST /hub/agents`, api-keys/agent-registration.ts), so that a key is minted, hashed and audited in
 * one place. The raw key `svc_agent_sk_{env}_{64 hex}` is answered once; only its BLAKE2b-256
 * hash is stored.
 */
import { randomUUID } from 'node:crypto';
import type { ApiKey, ApiKeyEnv, ApiKeyWithSecret } from '@parley/protocol';
import type { Tx } from '../../db/client.js';
import { hashSecret, randomToken } from '../../lib/crypto.js';
import { appendAudit } from '../audit/index.js';
import * as repo from './repo.js';

/** The raw-key prefix of an environment (contract §2.6). */
export const apiKeyPrefix = (env: ApiKeyEnv) => `svc_agent_sk_${env}_`;

/** The wire form of a stored key (never the raw key nor its hash). */
export const toApiKeyOut = (k: repo.ApiKeyRow): ApiKey => ({
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

/**
 * Insert a new active, unbound key in `tx` (scoped to `tenantId`) and answer it with its raw
 * `key` (once). No audit event: {@link createApiKeyIn} records `api_key.created`, rotation records
 * `api_key.rotated`.
 */
export async function insertApiKeyRow(tx: Tx, tenantId: string, createdBy: string, name: string, env: ApiKeyEnv, rotatedFrom: string | null): Promise<ApiKeyWithSecret> {
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
  return { ...toApiKeyOut(row!), key };
}

/**
 * Create a key in `tx` and record `api_key.created` (subject the key id; data `{name, env}`; actor
 * `createdBy`) in the same transaction: the whole of `POST /api-keys` but the transaction, for
 * callers that create a key as part of a larger write.
 */
export async function createApiKeyIn(tx: Tx, tenantId: string, createdBy: string, name: string, env: ApiKeyEnv): Promise<ApiKeyWithSecret> {
  const created = await insertApiKeyRow(tx, tenantId, createdBy, name, env, null);
  await appendAudit(tx, tenantId, { type: 'api_key.created', actor: createdBy, subject: created.id, data: { name, env } });
  return created;
}
