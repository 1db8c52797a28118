/**
 * The exact bytes a device identity key signs for token renewal and for a key binding, built in
 * one place for the server (which verifies) and the SDK (which signs), each under its
 * {@link SIGNING_DOMAINS} tag (`domain || 0x00 || body`, see signing-domains.ts).
 *
 * - Token renewal: the body is the UTF-8 challenge of `POST /devices/{id}/token/challenge`, whose
 *   form is fixed here ({@link isRenewalChallengeFor}) so that a client signs nothing else.
 * - Key binding: a fresh signature over a server nonce, the tenant and the keys being registered
 *   or activated, the body being the canonical JSON (RFC 8785: keys sorted, no whitespace) of
 *   {@link KeyBindingFields}. Unlike the enrollment proof of possession (a signature over the
 *   identity key alone, the same every time), it cannot be replayed: the nonce is single use and
 *   the tenant and keys are named.
 *
 * Browser-safe: no imports beyond signing-domains.ts.
 */
import { SIGNING_DOMAINS, domainSeparated, utf8Bytes } from './signing-domains.js';


/** First field of a renewal challenge: `parley-renew:<device id>:<expiry ms>:<nonce>:<mac>`. */
export const RENEWAL_CHALLENGE_PREFIX = 'parley-renew';
/** Longest renewal challenge a client signs (characters; also the renewal body's bound). */
export const RENEWAL_CHALLENGE_MAX_LENGTH = 256;

const RENEWAL_TAIL = /^:[0-9]{1,16}:[0-9a-f]{32}:[A-Za-z0-9_-]{43}$/;

/**
 * True when `challenge` has the form the service issues for `deviceId`:
 * `parley-renew:<deviceId>:<expiry ms>:<32 hex nonce>:<43 base64url MAC>`, printable ASCII, at
 * most {@link RENEWAL_CHALLENGE_MAX_LENGTH} characters. A client checks this before signing, so a
 * server cannot have it sign an arbitrary message (e.g. an encoded key).
 */
export function isRenewalChallengeFor(challenge: unknown, deviceId: string): boolean {
  if (typeof challenge !== 'string' || challenge.length > RENEWAL_CHALLENGE_MAX_LENGTH) return false;
  if (!/^[\x21-\x7e]+$/.test(challenge)) return false;
  const head = `${RENEWAL_CHALLENGE_PREFIX}:${deviceId}`;
  return deviceId.length > 0 && !deviceId.includes(':') && challenge.startsWith(head) && RENEWAL_TAIL.test(challenge.slice(head.length));
}

/** What the identity key signs to renew a token: `tokenRenewal` domain || 0x00 || UTF-8(challenge). */
export function tokenRenewalMessage(challenge: string): Uint8Array {
  return domainSeparated(SIGNING_DOMAINS.tokenRenewal, utf8Bytes(challenge));
}

/** The steps a key binding is made for (`purpose`). */
export const KEY_BINDING_PURPOSES = ['client_key_register', 'owner_device_register', 'device_activate'] as const;
/** One of {@link KEY_BINDING_PURPOSES}. */
export type KeyBindingPurposeName = (typeof KEY_BINDING_PURPOSES)[number];

/** The signed fields of a key binding (all strings; keys lowercase hex, ids UUIDs). */
export interface KeyBindingFields {
  /** The step ({@link KEY_BINDING_PURPOSES}). */
  purpose: KeyBindingPurposeName;
  /** The nonce of `POST /api/v1/key-binding/nonce`, as answered. */
  nonce: string;
  /** The tenant the nonce was issued for (its answer's `tenant_id`). */
  tenant_id: string;
  /** Ed25519 identity public key, 64 lowercase hex characters. */
  identity_public_key: string;
  /** X25519 public key, 64 lowercase hex characters. */
  ephemeral_public_key: string;
  /** The device being activated (`device_activate` only). */
  device_id?: string;
}

/**
 * Canonical JSON (RFC 8785) of an object of string values: members sorted by key, no
 * whitespace. For strings, `JSON.stringify` already writes RFC 8785's form (ECMAScript
 * serialization), and keys compare by UTF-16 code units as RFC 8785 §3.2.3 orders them.
 */
function canonicalJson(fields: Record<string, string>): string {
  const keys = Object.keys(fields).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${JSON.stringify(fields[k])}`).join(',')}}`;
}

/**
 * What the identity key signs for a key binding: `keyBinding` domain || 0x00 || UTF-8 of the
 * canonical JSON of `fields` (keys lowercased; `device_id` left out when absent).
 */
export function keyBindingMessage(fields: KeyBindingFields): Uint8Array {
  const body: Record<string, string> = {
    purpose: fields.purpose,
    nonce: fields.nonce,
    tenant_id: fields.tenant_id,
    identity_public_key: fields.identity_public_key.toLowerCase(),
    ephemeral_public_key: fields.ephemeral_public_key.toLowerCase(),
  };
  if (fields.device_id !== undefined) body.device_id = fields.device_id;
  return domainSeparated(SIGNING_DOMAINS.keyBinding, utf8Bytes(canonicalJson(body)));
}
