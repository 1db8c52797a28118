/**
 * X25519 prekey bundles of X3DH ("The X3DH Key Agreement Protocol", Signal, revision 1, §§2-4):
 * schemas and route rows. A device publishes its signed prekey SPK_B with Sig(IK_B, Encode(SPK_B))
 * (replacing the one before: the service serves the newest only; the device keeps the previous
 * private key for a grace period itself) and batches of one-time prekeys OPK_B (unsigned, X3DH
 * §3.2). A peer about to start a session claims the bundle (X3DH §3.3): the current signed prekey
 * plus one one-time prekey while any is left (consumed, never handed out again), else none.
 * 404 means the device published no signed prekey (an older client: the peer falls back to the
 * device's `ephemeral_public_key`).
 *
 * The service checks encodings, sizes and that each public key is a usable X25519 key, never the
 * signature (the claiming client verifies it against the identity key it already holds). The PQXDH
 * KEM prekeys stay in their own area (`pq-prekeys.ts`) and claim. Callers act as a device, as for
 * the PQ prekeys (device JWT, API key with registered key material, or owner JWT with
 * `X-Device-Id`). Claims: any ACTIVE device of the caller's tenant; the other party of an approved
 * or active A2A channel gets the signed prekey across tenants too, without a one-time prekey.
 */
import { Type, type Static } from '@sinclair/typebox';
import { defineRoute } from '../contract.js';
import { Nullable, Uuid } from '../common.js';

/** Most one-time X25519 prekeys one device may hold unclaimed. */
export const MAX_ONE_TIME_PREKEYS_AVAILABLE = 500;
/** Most one-time prekeys in one publish. */
export const MAX_ONE_TIME_PREKEYS_PER_PUBLISH = 100;

/** A prekey identifier: 1–64 of [A-Za-z0-9_-] (the SDK uses 32 lowercase hex characters). */
const PrekeyId = Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' });
/** A raw 32-byte X25519 public key, standard base64 (44 characters). */
const X25519Base64 = Type.String({ pattern: '^[A-Za-z0-9+/]{43}=$', description: '32-byte X25519 public key, base64' });
/** A raw 64-byte Ed25519 signature, standard base64 (88 characters). */
const SignatureBase64 = Type.String({ pattern: '^[A-Za-z0-9+/]{86}==$', description: '64-byte Ed25519 signature, base64' });

/**
 * A signed prekey (X3DH §3.2): `key_id`, `public_key` SPK_B and `signature`
 * Sig(IK_B, "parley/v2/signed-prekey" || 0x00 || Encode(SPK_B)) (protocol `signing-domains.ts`).
 */
export const SignedPrekey = Type.Object({ key_id: PrekeyId, public_key: X25519Base64, signature: SignatureBase64 }, { additionalProperties: false });
export type SignedPrekey = Static<typeof SignedPrekey>;

/** A one-time prekey OPK_B (X3DH §3.2, unsigned). */
export const OneTimePrekey = Type.Object({ key_id: PrekeyId, public_key: X25519Base64 }, { additionalProperties: false });
export type OneTimePrekey = Static<typeof OneTimePrekey>;

/** `POST /api/v1/prekeys` body: a signed prekey (replaces the current one), one-time prekeys (1–100), or both. */
export const PublishPrekeysRequest = Type.Object(
  {
    signed_prekey: Type.Optional(SignedPrekey),
    one_time: Type.Optional(Type.Array(OneTimePrekey, { minItems: 1, maxItems: MAX_ONE_TIME_PREKEYS_PER_PUBLISH })),
  },
  { additionalProperties: false },
);
export type PublishPrekeysRequest = Static<typeof PublishPrekeysRequest>;

/**
 * What the service holds for a device: the `key_id` of the signed prekey it serves (null when none,
 * so the device sees whether the one it holds is the one served) and how many one-time prekeys are
 * unclaimed (the device tops them up below its threshold).
 */
export const PrekeyCount = Type.Object({
  device_id: Uuid,
  signed_prekey_key_id: Nullable(Type.String()),
  one_time_available: Type.Integer({ minimum: 0 }),
});
export type PrekeyCount = Static<typeof PrekeyCount>;

/** `POST /api/v1/prekeys/claim` body: the ACTIVE device whose prekey bundle is claimed. */
export const ClaimPrekeyBundleRequest = Type.Object({ device_id: Uuid }, { additionalProperties: false });
export type ClaimPrekeyBundleRequest = Static<typeof ClaimPrekeyBundleRequest>;

/**
 * `POST /api/v1/prekeys/claim` answer (X3DH §3.3 "prekey bundle", without IK_B, which the caller
 * already holds from the device directory): the signed prekey, and a one-time prekey now consumed
 * (null when none was left, or across tenants).
 */
export const PrekeyBundle = Type.Object({
  device_id: Uuid,
  signed_prekey: SignedPrekey,
  one_time_prekey: Nullable(OneTimePrekey),
});
export type PrekeyBundle = Static<typeof PrekeyBundle>;

/** `X-Device-Id` for owner callers: the owner device acting. */
const DeviceHeader = Type.Object({ 'x-device-id': Type.Optional(Type.String({ description: 'owner callers: the owner device acting' })) });

const tags = ['prekeys'];

/** Route rows of this area. */
export const prekeysRoutes = {
  publishPrekeys: defineRoute({
    method: 'POST',
    path: '/api/v1/prekeys',
    auth: 'any',
    tags,
    summary: 'Publish X3DH prekeys of the calling device: a signed prekey (replaces the current) and/or one-time prekeys',
    description:
      'Publishes X3DH prekeys of the calling device: a signed X25519 prekey with its Ed25519 signature, which replaces the current one, and/or one-time X25519 prekeys. Each public key must be a usable X25519 key (not of low order); signatures are not checked here (claimers verify them). Answers 201 with what the device now holds. The caller acts as a device: its device JWT\'s device, an API key\'s registered device, or for an owner the owner device named by `X-Device-Id`. 400 also when neither is given, a key or signature is malformed, key ids repeat, or the device would hold more than 500 unclaimed one-time prekeys. 400 when an owner names no `X-Device-Id` (or not a UUID). 403 when the `X-Device-Id` device is not the caller\'s owner device or is revoked, or the API key has not registered key material yet (`client_key_register`). 404 when the `X-Device-Id` device is unknown in the tenant.',
    headers: DeviceHeader,
    body: PublishPrekeysRequest,
    responses: { 201: PrekeyCount },
    errors: [400, 401, 403, 404],
  }),
  prekeyCount: defineRoute({
    method: 'GET',
    path: '/api/v1/prekeys/{device_id}',
    auth: 'any',
    tags,
    summary: 'The signed prekey id a device of the tenant has published and how many one-time prekeys are unclaimed',
    description:
      'The key id of the signed prekey a device of the tenant has published and how many of its one-time prekeys are unclaimed, so the device knows when to rotate or top up. The caller acts as a device: its device JWT\'s device, an API key\'s registered device, or for an owner the owner device named by `X-Device-Id`. 400 when an owner names no `X-Device-Id` (or not a UUID). 403 when the `X-Device-Id` device is not the caller\'s owner device or is revoked, or the API key has not registered key material yet (`client_key_register`). 404 when the device (or the `X-Device-Id` device) is unknown in the tenant.',
    headers: DeviceHeader,
    params: Type.Object({ device_id: Uuid }),
    responses: { 200: PrekeyCount },
    errors: [400, 401, 403, 404],
  }),
  claimPrekeyBundle: defineRoute({
    method: 'POST',
    path: '/api/v1/prekeys/claim',
    auth: 'any',
    tags,
    summary: 'Claim the X3DH prekey bundle of an ACTIVE device: its signed prekey and one one-time prekey while any is left; 404 when it published none',
    description:
      'Claims the X3DH prekey bundle of an ACTIVE device before starting a session: its signed prekey and one one-time prekey (consumed, never handed out again) while any is left. Across tenants only the other party of an approved or active A2A channel may claim, and the bundle then carries no one-time prekey. The caller acts as a device: its device JWT\'s device, an API key\'s registered device, or for an owner the owner device named by `X-Device-Id`. 400 when an owner names no `X-Device-Id` (or not a UUID). 403 when the `X-Device-Id` device is not the caller\'s owner device or is revoked, or the API key has not registered key material yet (`client_key_register`). 404 when the device is unknown, not ACTIVE or not claimable by the caller, or it published no signed prekey.',
    headers: DeviceHeader,
    body: ClaimPrekeyBundleRequest,
    responses: { 200: PrekeyBundle },
    errors: [400, 401, 403, 404],
  }),
};
