/**
 * API keys (contract §2.6, §4.8; design §8.17) and their trust-on-first-use key registration
 * (`client_key_register` / `client_key_accepted`, design §7): schemas, route rows and frames.
 */
import { Type, type Static } from '@sinclair/typebox';
import { defineRoute } from '../contract.js';
import { IdParams, KeyHex, lit, Nullable, SignatureHex, Timestamp, Uuid } from '../common.js';
import { KeyBinding } from './key-binding.js';

/** Environments of an API key (contract §2.6); the raw key reads `svc_agent_sk_{env}_{64 hex}`. */
export const API_KEY_ENVS = ['prod', 'staging', 'dev'] as const;
export type ApiKeyEnv = (typeof API_KEY_ENVS)[number];
/** API key states. */
export const API_KEY_STATUSES = ['active', 'revoked'] as const;

/** An API key as listed (contract §2.6, §4.8); never the raw key nor its hash (the raw key appears only in {@link ApiKeyWithSecret}). */
export const ApiKey = Type.Object({
  id: Uuid,
  name: Type.String(),
  env: Type.String(),
  prefix: Type.String({ description: 'the first characters of the raw key' }),
  status: lit(API_KEY_STATUSES),
  device_id: Nullable(Uuid),
  created_at: Timestamp,
  revoked_at: Nullable(Timestamp),
  last_used_at: Nullable(Timestamp),
  rotated_from: Nullable(Uuid),
});
export type ApiKey = Static<typeof ApiKey>;

/** Answer of create and rotate: the key with its raw `svc_agent_sk_{env}_{64 hex}` value, shown once. */
export const ApiKeyWithSecret = Type.Intersect([ApiKey, Type.Object({ key: Type.String({ description: 'svc_agent_sk_{env}_{64 hex}; shown only here' }) })]);
export type ApiKeyWithSecret = Static<typeof ApiKeyWithSecret>;

/** `POST /api/v1/api-keys` body (design §8.17): `env` defaults to `dev`. */
export const CreateApiKeyRequest = Type.Object({ name: Type.String({ minLength: 1, maxLength: 100 }), env: Type.Optional(lit(API_KEY_ENVS)) });
export type CreateApiKeyRequest = Static<typeof CreateApiKeyRequest>;

/** `GET /api/v1/api-keys`. */
export const ApiKeyList = Type.Object({ api_keys: Type.Array(ApiKey) });
export type ApiKeyList = Static<typeof ApiKeyList>;

const tags = ['api-keys'];

export const apiKeysRoutes = {
  createApiKey: defineRoute({
    method: 'POST',
    path: '/api/v1/api-keys',
    auth: 'owner',
    tags,
    summary: 'Create an API key; the raw key is returned once',
    description:
      'Creates an API key for a third-party agent (name 1 to 100 characters, `env` `prod`, `staging` or `dev`, default `dev`). Answers 201 with the raw key `svc_agent_sk_{env}_{64 hex}` shown this once; only its hash is stored. The key has no device until its client connects the WebSocket and registers key material with `client_key_register`.',
    body: CreateApiKeyRequest,
    responses: { 201: ApiKeyWithSecret },
    errors: [400, 401, 403],
  }),
  listApiKeys: defineRoute({
    method: 'GET',
    path: '/api/v1/api-keys',
    auth: 'owner',
    tags,
    summary: 'List tenant API keys',
    description:
      'Every API key of the tenant with name, environment, prefix, status, bound device (null before `client_key_register`), the key it was rotated from, and creation, revocation and last-use times; raw keys are never listed.',
    responses: { 200: ApiKeyList },
    errors: [401, 403],
  }),
  revokeApiKey: defineRoute({
    method: 'POST',
    path: '/api/v1/api-keys/{id}/revoke',
    auth: 'owner',
    tags,
    summary: 'Revoke an API key (and its device)',
    description:
      'Revokes an active API key: later calls with it answer 401. Its bound device is revoked in the same transaction (key packages deleted, Skill Permission Tokens revoked, hub identities demoted) and its sockets close with 4001. Audited as `api_key.revoked`; answers the key. 404 when no key of the tenant has this id. 409 when the key is already revoked.',
    params: IdParams,
    responses: { 200: ApiKey },
    errors: [400, 401, 403, 404, 409],
  }),
  rotateApiKey: defineRoute({
    method: 'POST',
    path: '/api/v1/api-keys/{id}/rotate',
    auth: 'owner',
    tags,
    summary: 'Atomic replacement: the old key is revoked and a new one returned once',
    description:
      'Atomically replaces an active key: in one transaction the old key is revoked (with its bound device, whose sockets close with 4001) and a new key with the same name and environment is created, unbound, so the client registers fresh key material; a hub identity waiting for the old key\'s first registration moves to the new one. Answers the new key with its raw value, shown once. 404 when no key of the tenant has this id. 409 when the key is already revoked.',
    params: IdParams,
    responses: { 200: ApiKeyWithSecret },
    errors: [400, 401, 403, 404, 409],
  }),
  deleteApiKey: defineRoute({
    method: 'DELETE',
    path: '/api/v1/api-keys/{id}',
    auth: 'owner',
    tags,
    summary: 'Delete an API key and its associated device',
    description:
      'Deletes an API key in any state, together with its bound device (revoked and deleted, its key packages deleted, its Skill Permission Tokens revoked; sockets closed with 4001). Audited as `api_key.deleted`; answers 204. 404 when no key of the tenant has this id.',
    params: IdParams,
    responses: { 204: null },
    errors: [400, 401, 403, 404],
  }),
};

/**
 * `client_key_register` frame data (design §7): key material an API-key client registers on first
 * connect, with its proof of possession (`signature`: Ed25519, hex, by the identity key over its
 * raw 32 bytes, as in enrollment) and optionally a {@link KeyBinding} (purpose
 * `client_key_register`): the proof alone is replayable, so without the binding the server
 * refuses an identity key another device holds, or every registration under `KEY_BINDING_REQUIRED`.
 */
export const ClientKeyRegistration = Type.Object({
  identity_public_key: KeyHex,
  ephemeral_public_key: KeyHex,
  signature: SignatureHex,
  platform: Type.Optional(Type.String({ maxLength: 100 })),
  key_binding: Type.Optional(KeyBinding),
});
export type ClientKeyRegistration = Static<typeof ClientKeyRegistration>;

/** `client_key_accepted` event data (design §7): the device the key now serves as, and its conversations with owner devices. */
export const ClientKeyAccepted = Type.Object({
  device_id: Uuid,
  conversations: Type.Array(
    Type.Object({
      conversation_id: Uuid,
      peer_device_id: Uuid,
      peer_identity_public_key: Type.String(),
      peer_ephemeral_public_key: Type.String(),
    }),
  ),
});
export type ClientKeyAccepted = Static<typeof ClientKeyAccepted>;
