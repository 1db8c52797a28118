/**
 * Key bindings (docs/decisions.md "Key bindings"): a fresh, domain-tagged signature by the
 * identity key over a single-use server nonce, the tenant and the keys, sent as the optional
 * `key_binding` field of the steps no single-use secret protects (`client_key_register`,
 * `POST /devices/register`, `POST /devices/{id}/activate`). The signed bytes are
 * signed-messages.ts `keyBindingMessage`. Schemas and the nonce route.
 */
import { Type, type Static } from '@sinclair/typebox';
import { defineRoute } from '../contract.js';
import { lit, Nullable, SignatureHex, Timestamp, Uuid } from '../common.js';
import { KEY_BINDING_PURPOSES } from '../signed-messages.js';

/** Longest nonce accepted (characters). */
export const KEY_BINDING_NONCE_MAX_LENGTH = 512;

/** The step a key binding is for (see signed-messages.ts `KEY_BINDING_PURPOSES`). */
export const KeyBindingPurpose = lit(KEY_BINDING_PURPOSES);
export type KeyBindingPurpose = Static<typeof KeyBindingPurpose>;

/**
 * The optional `key_binding` field: the nonce as answered by `POST /api/v1/key-binding/nonce` and
 * the Ed25519 signature (hex) by the identity key over `keyBindingMessage` of the request's keys.
 */
export const KeyBinding = Type.Object(
  {
    nonce: Type.String({ minLength: 1, maxLength: KEY_BINDING_NONCE_MAX_LENGTH }),
    signature: SignatureHex,
  },
  { additionalProperties: false },
);
export type KeyBinding = Static<typeof KeyBinding>;

/**
 * `POST /api/v1/key-binding/nonce` body. `client_key_register` needs the API key (`X-API-Key`),
 * `owner_device_register` the owner JWT, `device_activate` the `device_id` (no credential: the
 * device id is the activation's credential, as for the activation itself).
 */
export const KeyBindingNonceRequest = Type.Object({
  purpose: KeyBindingPurpose,
  device_id: Type.Optional(Uuid),
});
export type KeyBindingNonceRequest = Static<typeof KeyBindingNonceRequest>;

/** `POST /api/v1/key-binding/nonce` answer (201): sign `keyBindingMessage` with these values. */
export const KeyBindingNonce = Type.Object({
  nonce: Type.String(),
  purpose: KeyBindingPurpose,
  tenant_id: Uuid,
  device_id: Nullable(Uuid),
  expires_at: Timestamp,
});
export type KeyBindingNonce = Static<typeof KeyBindingNonce>;

/** Route rows of this area. */
export const keyBindingRoutes = {
  keyBindingNonce: defineRoute({
    method: 'POST',
    path: '/api/v1/key-binding/nonce',
    auth: 'public',
    tags: ['devices'],
    summary: 'A short-lived, single-use nonce to sign as a key binding (API-key registration: API key; owner-device registration: owner JWT; activation: device_id)',
    description:
      'Issues a stateless nonce, valid 5 minutes and good for one step, that the client signs with its identity key as the `key_binding` of a key registration, proving a fresh hold of the key (a replayed proof of possession cannot pass). The purpose decides the credential: `client_key_register` needs the API key; `owner_device_register` the owner JWT of a tenant member; `device_activate` the `device_id` being activated (its id is the activation\'s credential). Answers 201; nothing is stored. 400 when a `device_activate` request names no `device_id`. 401 when the purpose\'s credential is missing: no API key for `client_key_register`, no owner JWT with a tenant for `owner_device_register`. 404 when no device has the `device_id`.',
    body: KeyBindingNonceRequest,
    responses: { 201: KeyBindingNonce },
    errors: [400, 401, 403, 404, 429],
  }),
};
