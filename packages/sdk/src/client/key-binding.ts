/**
 * Key bindings (docs/decisions.md "Key bindings"): a fresh signature by the identity key over a
 * single-use server nonce, the tenant and the keys being registered or activated, sent as the
 * `key_binding` field of `client_key_register`, `POST /devices/register` and
 * `POST /devices/{id}/activate`. The fixed proof of possession of the wire contract (a signature over
 * the raw identity key) is the same every time, so whoever saw it could replay it; a binding
 * cannot be.
 */
import { keyBindingMessage, type KeyBinding, type KeyBindingPurposeName, type RegisterOwnerDeviceRequest, type RegisterOwnerDeviceResponse } from '@parley/protocol';
import { signHex, type Signer } from './signer.js';
import { keyToHex } from './encoding.js';
import type { ParleyClient, RequestOptions } from './rest.js';

/** The keys a binding names, and who signs for the identity key. */
export interface BindingKeys {
  /** Ed25519 identity public key (32 bytes or 64 hex characters). */
  identityPublicKey: string | Uint8Array;
  /** X25519 public key (32 bytes or 64 hex characters). */
  ephemeralPublicKey: string | Uint8Array;
  /** Signs with the identity private key. */
  sign: Signer;
}

/** Thrown when the service's nonce answer does not match what was asked (another purpose or device). */
export class KeyBindingError extends Error {
  override readonly name = 'KeyBindingError';
}

/**
 * A fresh `key_binding` for `purpose`: asks `POST /api/v1/key-binding/nonce` (with the client's
 * credential: the API key for `client_key_register`, the owner JWT for `owner_device_register`,
 * none for `device_activate`), checks the answer names the same purpose and device, and signs
 * @parley/protocol `keyBindingMessage` (domain `parley/v2/key-binding`) with the identity key.
 * @throws ParleyApiError from the nonce route; KeyBindingError for a mismatched answer.
 */
export async function bindKeys(client: ParleyClient, purpose: KeyBindingPurposeName, keys: BindingKeys, deviceId?: string, opts?: RequestOptions): Promise<KeyBinding> {
  const issued = await client.keyBindingNonce({ purpose, ...(deviceId !== undefined ? { device_id: deviceId } : {}) }, opts);
  if (issued.purpose !== purpose || (issued.device_id ?? undefined) !== deviceId) {
    throw new KeyBindingError(`the service answered a ${issued.purpose} nonce for ${issued.device_id ?? 'no device'}; asked ${purpose} for ${deviceId ?? 'no device'}`);
  }
  const message = keyBindingMessage({
    purpose,
    nonce: issued.nonce,
    tenant_id: issued.tenant_id,
    identity_public_key: keyToHex(keys.identityPublicKey),
    ephemeral_public_key: keyToHex(keys.ephemeralPublicKey),
    ...(deviceId !== undefined ? { device_id: deviceId } : {}),
  });
  return { nonce: issued.nonce, signature: await signHex(keys.sign, message) };
}

/**
 * `POST /devices/register` (owner JWT) with a fresh key binding: registers the owner's device
 * with `keys`, ACTIVE at once.
 * @throws ParleyApiError (400 bad keys or binding, 401, 403), KeyBindingError.
 */
export async function registerOwnerDeviceBound(
  client: ParleyClient,
  keys: BindingKeys,
  details: Pick<RegisterOwnerDeviceRequest, 'name' | 'platform'> = {},
  opts?: RequestOptions,
): Promise<RegisterOwnerDeviceResponse> {
  const key_binding = await bindKeys(client, 'owner_device_register', keys, undefined, opts);
  return client.registerOwnerDevice({ identity_public_key: keyToHex(keys.identityPublicKey), ephemeral_public_key: keyToHex(keys.ephemeralPublicKey), ...details, key_binding }, opts);
}
