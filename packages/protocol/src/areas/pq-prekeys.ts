/**
 * Post-quantum prekeys for the X3DH fallback (design §8.34; Signal's PQXDH, revision 3):
 * schemas and route rows. A device publishes a signed last-resort KEM prekey (replacing the one
 * before) and optionally one-time KEM prekeys; a peer claims one before starting a session with
 * PQXDH: a one-time prekey while any is left (then never handed out again), else the last-resort
 * one. 404 means the device published none (an older client): the peer runs classical X3DH.
 *
 * Every field is an opaque blob to the service, like the other key material: it checks sizes and
 * encodings only, never the signature (the claiming client verifies it against the identity key).
 * Callers act as a device, as for MLS KeyPackages (device JWT, API key with registered key
 * material, or owner JWT with `X-Device-Id`). Claims: any ACTIVE device of the caller's tenant;
 * the other party of an approved or active A2A channel gets the device's last-resort prekey
 * across tenants too (no one-time prekey leaves the tenant).
 */
import { Type, type Static } from '@sinclair/typebox';
import { defineRoute } from '../contract.js';
import { Base64, Nullable, Uuid } from '../common.js';

/** Most one-time PQ prekeys one device may hold unclaimed. */
export const PQ_MAX_ONE_TIME_AVAILABLE = 500;
/** Largest public key accepted (bytes, decoded; an ML-KEM-768 key is 1184). */
export const PQ_MAX_PUBLIC_KEY_BYTES = 4096;
/** Largest signature accepted (bytes, decoded; an Ed25519 signature is 64). */
export const PQ_MAX_SIGNATURE_BYTES = 256;

/**
 * One signed PQ prekey: `key_id` (the client's identifier, 1–64 of [A-Za-z0-9_-]; the SDK uses 32
 * hex characters), `public_key` and `signature` canonical base64 (opaque to the service).
 */
export const PqPrekey = Type.Object(
  {
    key_id: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }),
    public_key: Type.String({ ...Base64, minLength: 4, maxLength: Math.ceil(PQ_MAX_PUBLIC_KEY_BYTES / 3) * 4 }),
    signature: Type.String({ ...Base64, minLength: 4, maxLength: Math.ceil(PQ_MAX_SIGNATURE_BYTES / 3) * 4 }),
  },
  { additionalProperties: false },
);
export type PqPrekey = Static<typeof PqPrekey>;

/** `POST /api/v1/pq-prekeys` body: a last-resort prekey (replaces the current one), one-time prekeys (1–100), or both. */
export const PublishPqPrekeysRequest = Type.Object({
  last_resort: Type.Optional(PqPrekey),
  one_time: Type.Optional(Type.Array(PqPrekey, { minItems: 1, maxItems: 100 })),
});
export type PublishPqPrekeysRequest = Static<typeof PublishPqPrekeysRequest>;

/**
 * What the service holds for a device: whether a last-resort prekey exists, its `key_id` and
 * `signature` (so the device sees whether the one it holds is the one served, signature
 * included: a prekey signed in an older form is published again), how many one-time ones are
 * unclaimed.
 */
export const PqPrekeyCount = Type.Object({
  device_id: Uuid,
  last_resort: Type.Boolean(),
  last_resort_key_id: Nullable(Type.String()),
  last_resort_signature: Type.Optional(Nullable(Type.String({ description: 'base64, as published' }))),
  one_time_available: Type.Integer({ minimum: 0 }),
});
export type PqPrekeyCount = Static<typeof PqPrekeyCount>;

/** `POST /api/v1/pq-prekeys/claim` body: the ACTIVE device whose PQ prekey is claimed. */
export const ClaimPqPrekeyRequest = Type.Object({ device_id: Uuid });
export type ClaimPqPrekeyRequest = Static<typeof ClaimPqPrekeyRequest>;

/** `POST /api/v1/pq-prekeys/claim` answer: one PQ prekey; `one_time` says whether it was consumed. */
export const ClaimedPqPrekey = Type.Object({
  device_id: Uuid,
  key_id: Type.String(),
  public_key: Type.String(),
  signature: Type.String(),
  one_time: Type.Boolean(),
});
export type ClaimedPqPrekey = Static<typeof ClaimedPqPrekey>;

/** `X-Device-Id` for owner callers: the owner device acting. */
const PqDeviceHeader = Type.Object({ 'x-device-id': Type.Optional(Type.String({ description: 'owner callers: the owner device acting' })) });

const tags = ['pq-prekeys'];

/** Route rows of this area. */
export const pqPrekeysRoutes = {
  publishPqPrekeys: defineRoute({
    method: 'POST',
    path: '/api/v1/pq-prekeys',
    auth: 'any',
    tags,
    summary: 'Publish PQ prekeys (PQXDH) of the calling device: a last-resort one (replaces the current) and/or one-time ones',
    description:
      'Publishes post-quantum KEM prekeys (PQXDH) of the calling device: a signed last-resort prekey, which replaces the current one, and/or one-time prekeys. Stored as opaque bytes; the service checks encodings and sizes, never signatures (claimers verify them against the identity key). Answers 201 with what the device now holds. The caller acts as a device: its device JWT\'s device, an API key\'s registered device, or for an owner the owner device named by `X-Device-Id`. 400 also when neither is given, a field is not canonical base64 of an allowed size, key ids repeat, or the device would hold more than 500 unclaimed one-time prekeys. 400 when an owner names no `X-Device-Id` (or not a UUID). 403 when the `X-Device-Id` device is not the caller\'s owner device or is revoked, or the API key has not registered key material yet (`client_key_register`). 404 when the `X-Device-Id` device is unknown in the tenant.',
    headers: PqDeviceHeader,
    body: PublishPqPrekeysRequest,
    responses: { 201: PqPrekeyCount },
    errors: [400, 401, 403, 404],
  }),
  pqPrekeyCount: defineRoute({
    method: 'GET',
    path: '/api/v1/pq-prekeys/{device_id}',
    auth: 'any',
    tags,
    summary: 'Whether a device of the tenant has a last-resort PQ prekey and how many one-time ones are unclaimed',
    description:
      'Whether a device of the tenant has a last-resort PQ prekey (its key id and signature) and how many one-time PQ prekeys are unclaimed, so the device knows when to top up. The caller acts as a device: its device JWT\'s device, an API key\'s registered device, or for an owner the owner device named by `X-Device-Id`. 400 when an owner names no `X-Device-Id` (or not a UUID). 403 when the `X-Device-Id` device is not the caller\'s owner device or is revoked, or the API key has not registered key material yet (`client_key_register`). 404 when the device (or the `X-Device-Id` device) is unknown in the tenant.',
    headers: PqDeviceHeader,
    params: Type.Object({ device_id: Uuid }),
    responses: { 200: PqPrekeyCount },
    errors: [400, 401, 403, 404],
  }),
  claimPqPrekey: defineRoute({
    method: 'POST',
    path: '/api/v1/pq-prekeys/claim',
    auth: 'any',
    tags,
    summary: 'Claim a PQ prekey of an ACTIVE device (a one-time one while any is left, else the last-resort one); 404 when it published none (use X3DH)',
    description:
      'Claims a PQ prekey of an ACTIVE device before starting a PQXDH session: the oldest unclaimed one-time prekey (consumed), else the last-resort one. Across tenants only the other party of an approved or active A2A channel may claim, and it gets the last-resort prekey only. The caller acts as a device: its device JWT\'s device, an API key\'s registered device, or for an owner the owner device named by `X-Device-Id`. 400 when an owner names no `X-Device-Id` (or not a UUID). 403 when the `X-Device-Id` device is not the caller\'s owner device or is revoked, or the API key has not registered key material yet (`client_key_register`). 404 when the device is unknown, not ACTIVE or not claimable by the caller, or it published no PQ prekey (the caller then runs X3DH).',
    headers: PqDeviceHeader,
    body: ClaimPqPrekeyRequest,
    responses: { 200: ClaimedPqPrekey },
    errors: [400, 401, 403, 404],
  }),
};
