/**
 * MLS KeyPackage directory (contract §1.3; RFC 9420 §10): schemas, route rows and frames.
 *
 * Every route acts as a device: a device JWT, an owner JWT with `X-Device-Id` (its owner device),
 * or an API key whose client registered key material (`client_key_register`; 403 before that).
 * Claims: a device of the caller's tenant, except that the KeyPackages of an agent bound to an API
 * key serve its A2A channels: only the other party of an `approved` or `active` channel with it
 * claims them, in the same tenant or across tenants, and an API-key agent claims nothing else
 * (docs/decisions.md "MLS over A2A channels").
 */
import { Type, type Static } from '@sinclair/typebox';
import { defineRoute } from '../contract.js';
import { Base64, Uuid } from '../common.js';

/** Most KeyPackages one device may hold unclaimed. */
export const MLS_MAX_AVAILABLE = 500;
/** Largest KeyPackage accepted (bytes, decoded). */
export const MLS_MAX_KEY_PACKAGE_BYTES = 16 * 1024;
/** Most KeyPackages a channel party may claim of the other (API-key agent) device since the channel's approval (429 beyond). */
export const MLS_MAX_CHANNEL_CLAIMS = 10;

/**
 * RFC 9420 ciphersuite of the classical suite every client speaks
 * (MLS_128_DHKEMX25519_CHACHA20POLY1305_SHA256_Ed25519): the default `cipher_suite` of a KeyPackage.
 */
export const MLS_DEFAULT_CIPHER_SUITE = 3;

/** An MLS ciphersuite number (RFC 9420 §17.1 registry; 84 is ts-mls's MLS_256_XWING_CHACHA20POLY1305_SHA512_Ed25519). */
export const MlsCipherSuite = Type.Integer({ minimum: 1, maximum: 65535 });

/**
 * `POST /api/v1/mls/key-packages` body: 1–100 KeyPackages, each canonical base64 of 1–16 384
 * bytes, all of the ciphersuite `cipher_suite` (default {@link MLS_DEFAULT_CIPHER_SUITE}; a label
 * the publisher sets, the service does not parse KeyPackages).
 */
export const PublishKeyPackagesRequest = Type.Object({
  key_packages: Type.Array(Base64, { minItems: 1, maxItems: 100 }),
  cipher_suite: Type.Optional(MlsCipherSuite),
});
export type PublishKeyPackagesRequest = Static<typeof PublishKeyPackagesRequest>;

/** `POST /api/v1/mls/key-packages` answer (201); a device holds at most 500 unclaimed KeyPackages. */
export const PublishKeyPackagesResponse = Type.Object({ device_id: Uuid, published: Type.Integer(), available: Type.Integer({ maximum: MLS_MAX_AVAILABLE }) });
export type PublishKeyPackagesResponse = Static<typeof PublishKeyPackagesResponse>;

/**
 * `GET /api/v1/mls/key-packages/{device_id}`: unclaimed KeyPackages of a device of the tenant, in
 * total and per ciphersuite (the suites a group creator can choose from, design §8.34).
 */
export const KeyPackageCount = Type.Object({
  device_id: Uuid,
  available: Type.Integer(),
  by_cipher_suite: Type.Optional(Type.Array(Type.Object({ cipher_suite: MlsCipherSuite, available: Type.Integer() }))),
});
export type KeyPackageCount = Static<typeof KeyPackageCount>;

/**
 * `POST /api/v1/mls/key-packages/claim` body: the ACTIVE device whose KeyPackage is claimed (of the
 * caller's tenant; an API-key agent's only by the other party of an approved / active A2A channel
 * with it, which may be of another tenant).
 */
export const ClaimKeyPackageRequest = Type.Object({
  device_id: Uuid,
  /**
   * Acceptable ciphersuites, most preferred first (1–8): the oldest KeyPackage of the first suite
   * the device has one of is claimed. Default `[3]` (what clients before X-Wing speak).
   */
  cipher_suites: Type.Optional(Type.Array(MlsCipherSuite, { minItems: 1, maxItems: 8 })),
});
export type ClaimKeyPackageRequest = Static<typeof ClaimKeyPackageRequest>;

/** `POST /api/v1/mls/key-packages/claim` answer: one single-use KeyPackage (base64) and its ciphersuite label. */
export const ClaimedKeyPackage = Type.Object({ device_id: Uuid, key_package_id: Uuid, key_package: Type.String(), cipher_suite: Type.Optional(MlsCipherSuite) });
export type ClaimedKeyPackage = Static<typeof ClaimedKeyPackage>;

/** `X-Device-Id` for owner callers: the owner device acting (device JWTs and API keys act as their own device). */
const MlsDeviceHeader = Type.Object({ 'x-device-id': Type.Optional(Type.String({ description: 'owner callers: the owner device acting' })) });

const tags = ['mls'];

/** Route rows of this area (device JWT, API key with registered key material, or owner JWT acting as its device through X-Device-Id). */
export const mlsRoutes = {
  publishKeyPackages: defineRoute({
    method: 'POST',
    path: '/api/v1/mls/key-packages',
    auth: 'any',
    tags,
    summary: 'Publish MLS KeyPackages of the calling device',
    description:
      'Publishes MLS KeyPackages (RFC 9420) of the calling device, each labelled with `cipher_suite` (default 3); the service stores them as opaque bytes and hands each out once. Answers 201 with how many were published and are available. The caller acts as a device: its device JWT\'s device, an API key\'s registered device, or for an owner the owner device named by `X-Device-Id`. 400 also when a KeyPackage is not canonical base64 of 1 to 16384 bytes, or the device would hold more than 500 unclaimed. 400 when an owner names no `X-Device-Id` (or not a UUID). 403 when the `X-Device-Id` device is not the caller\'s owner device or is revoked, or the API key has not registered key material yet (`client_key_register`). 404 when the `X-Device-Id` device is unknown in the tenant.',
    headers: MlsDeviceHeader,
    body: PublishKeyPackagesRequest,
    responses: { 201: PublishKeyPackagesResponse },
    errors: [400, 401, 403, 404],
  }),
  keyPackageCount: defineRoute({
    method: 'GET',
    path: '/api/v1/mls/key-packages/{device_id}',
    auth: 'any',
    tags,
    summary: 'How many unclaimed KeyPackages a device of the tenant has',
    description:
      'How many unclaimed KeyPackages a device of the tenant has, in total and per ciphersuite, so a group creator can pick a suite every member offers and a device knows when to publish more. The caller acts as a device: its device JWT\'s device, an API key\'s registered device, or for an owner the owner device named by `X-Device-Id`. 400 when an owner names no `X-Device-Id` (or not a UUID). 403 when the `X-Device-Id` device is not the caller\'s owner device or is revoked, or the API key has not registered key material yet (`client_key_register`). 404 when the device (or the `X-Device-Id` device) is unknown in the tenant.',
    params: Type.Object({ device_id: Uuid }),
    responses: { 200: KeyPackageCount },
    errors: [400, 401, 403, 404],
  }),
  claimKeyPackage: defineRoute({
    method: 'POST',
    path: '/api/v1/mls/key-packages/claim',
    auth: 'any',
    tags,
    summary: 'Claim (consume) one KeyPackage of an ACTIVE device of the tenant, or of an API-key agent that is the peer of an approved A2A channel; 404 when none is left',
    description:
      'Claims one KeyPackage of an ACTIVE device to add it to an MLS group: the first of `cipher_suites` (most preferred first, default `[3]`) the device has one of; it is never handed out again. Any device of the tenant may claim an enrolled device\'s; an API-key agent\'s KeyPackages serve only its approved A2A channels, so they are claimed by the channel\'s other party (also across tenants while the federation agreement or rental holds), at most 10 per channel pair. The caller acts as a device: its device JWT\'s device, an API key\'s registered device, or for an owner the owner device named by `X-Device-Id`. 400 when an owner names no `X-Device-Id` (or not a UUID). 403 when the `X-Device-Id` device is not the caller\'s owner device or is revoked, or the API key has not registered key material yet (`client_key_register`). 404 when the device is unknown, not ACTIVE, not claimable by the caller, or has no KeyPackage left of an accepted suite (the caller then falls back to X3DH + Double Ratchet). 409 when the channel party already claimed 10 of the device\'s KeyPackages since the channel was approved.',
    headers: MlsDeviceHeader,
    body: ClaimKeyPackageRequest,
    responses: { 200: ClaimedKeyPackage },
    errors: [400, 401, 403, 404, 409, 429],
  }),
};
