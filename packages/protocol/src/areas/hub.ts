/**
 * Hub identities: registration, DID documents, capabilities, profiles, search, certification (contract §2.8, §3.3, §4.10; design §8.13–§8.16): schemas, route rows and frames.
 */
import { Type, type Static } from '@sinclair/typebox';
import { defineRoute } from '../contract.js';
import { IdParams, lit, Nullable, Timestamp, Uuid } from '../common.js';
import { TRUST_TIERS } from './trust.js';
import { API_KEY_ENVS } from './api-keys.js';
import { Page, PageCursor, PageLimit } from '../paging.js';

/**
 * Hub address rule (design §8.13): 3-32 characters of `[a-z0-9-]`, no leading or trailing
 * hyphen. Input is case-insensitive (uppercase is accepted and lowercased), so the pattern
 * allows both cases; the stored form is lowercase.
 */
export const HUB_ADDRESS_PATTERN = '^[A-Za-z0-9][A-Za-z0-9-]{1,30}[A-Za-z0-9]$';


/**
 * Where an identity's tier comes from (design §8.25): `computed` (the trust engine and certify,
 * contract §3.3) or `operator` (a platform operator's tier grant, `POST /hub/identities/{id}/tier`).
 */
export const TIER_SOURCES = ['computed', 'operator'] as const;
/** Where an identity's tier comes from: `computed` or `operator` (design §8.25). */
export type TierSource = (typeof TIER_SOURCES)[number];

/** Names of the certification checks, in answer order (contract §3.3). */
export const CERTIFICATION_CHECKS = ['owner_key', 'bound_device', 'capabilities', 'activity', 'trust_score'] as const;
/** Names of the certification checks, in answer order (contract §3.3). */
export type CertificationCheckName = (typeof CERTIFICATION_CHECKS)[number];

/** Most results an anonymous search answers (design §8.15). */
export const ANONYMOUS_SEARCH_LIMIT = 10;
/** Default `limit` of an authenticated search. */
export const DEFAULT_SEARCH_LIMIT = 20;

/** A capability name (registration `capabilities` entries, registered capabilities, search filter). */
export const CapabilityName = Type.String({ minLength: 1, maxLength: 100 });
/** `{hub_address}` route parameter (design §8.13; any case, matched lowercase). */
export const HubAddressParams = Type.Object({ hub_address: Type.String({ pattern: HUB_ADDRESS_PATTERN, description: 'hub address (design §8.13), any case' }) });
/** 32 bytes in padded base64 is 43 characters + "=", the last one with its two low bits zero. */
const PublicKey = Type.String({ pattern: '^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$', description: 'raw 32-byte Ed25519 public key, base64 (the owner key); must decode to a curve point not of small order' });

const tierOut = (description: string) => lit(TRUST_TIERS, { description });
const tierSourceOut = lit(TIER_SOURCES, { description: 'computed (trust engine, certify) | operator (a platform operator’s tier grant, design §8.25)' });

/**
 * `POST /api/v1/hub/register` and `POST /api/v1/hub/identities` body (design §8.15, §8.18).
 * `hub_address`: 3–32 characters `[a-z0-9-]`, no leading/trailing hyphen, any case (stored
 * lowercase), unique platform-wide; `display_name` 1–100 characters; `description` ≤ 1000;
 * `capabilities` ≤ 100 names of 1–100 characters; `public_key` the raw 32-byte Ed25519 owner key
 * in padded base64 (`#owner-key` of the DID document); `device_id` an ACTIVE agent device of the
 * tenant to bind (at most one identity per device).
 */
export const RegisterHubRequest = Type.Object({
  hub_address: Type.String({ pattern: HUB_ADDRESS_PATTERN, description: '3-32 characters a-z 0-9 "-", no leading/trailing "-"; stored lowercase, unique platform-wide, immutable' }),
  display_name: Type.String({ minLength: 1, maxLength: 100 }),
  description: Type.Optional(Type.String({ maxLength: 1000 })),
  capabilities: Type.Optional(Type.Array(CapabilityName, { maxItems: 100 })),
  public_key: PublicKey,
  device_id: Type.Optional(Type.String({ format: 'uuid', description: 'an ACTIVE agent device of the tenant to bind (at most one identity per device)' })),
});
export type RegisterHubRequest = Static<typeof RegisterHubRequest>;

/**
 * A hub identity of the tenant (registration answer, list entry, details): `hub_address`
 * lowercase; `did` = `did:hub:<hub_address>`; `capabilities` the names given at registration;
 * `public_key` the owner key (base64) or null; `device_id` the bound agent device or null.
 */
export const HubIdentity = Type.Object({
  id: Uuid,
  hub_address: Type.String(),
  did: Type.String({ description: 'did:hub:<hub_address>' }),
  display_name: Type.String(),
  description: Nullable(Type.String()),
  capabilities: Type.Array(Type.String()),
  public_key: Nullable(Type.String()),
  device_id: Nullable(Uuid),
  trust_tier: tierOut('unverified | certified | enterprise'),
  tier_source: tierSourceOut,
  created_at: Timestamp,
});
export type HubIdentity = Static<typeof HubIdentity>;

export const HubIdentityList = Type.Object({ identities: Type.Array(HubIdentity) });
export type HubIdentityList = Static<typeof HubIdentityList>;

/** Semver-like: `1`, `1.2`, `1.2.3`, with optional `-pre.release` and `+build`. */
const Version = Type.String({
  maxLength: 100,
  pattern: '^(0|[1-9][0-9]{0,8})(\\.(0|[1-9][0-9]{0,8})){0,2}(-[0-9A-Za-z-]+(\\.[0-9A-Za-z-]+)*)?(\\+[0-9A-Za-z-]+(\\.[0-9A-Za-z-]+)*)?$',
  description: 'semver-like: 1, 1.2 or 1.2.3, optional -pre.release and +build',
});

/** Promised service levels of a capability: `latency_p95_ms` 0–1e9 milliseconds, `uptime_sla` a fraction 0–1. */
export const CapabilitySla = Type.Object(
  {
    latency_p95_ms: Type.Number({ minimum: 0, maximum: 1e9, description: '95th-percentile latency, milliseconds' }),
    uptime_sla: Type.Number({ minimum: 0, maximum: 1, description: 'promised uptime, fraction 0..1' }),
  },
  { additionalProperties: false },
);
export type CapabilitySla = Static<typeof CapabilitySla>;

/** A JSON Schema document (any object; the server validates it against its meta-schema). */
const JsonSchemaDoc = Type.Unsafe<Record<string, unknown>>(
  Type.Object({}, { additionalProperties: true, description: 'a JSON Schema object: 2020-12 unless its $schema names 2019-09 or draft-07; validated against the meta-schema' }),
);

/**
 * `POST /api/v1/hub/{hub_address}/capabilities` body. `version` is semver-like (`1`, `1.2`,
 * `1.2.3`, optional `-pre.release` and `+build`); `input_schema` must be a valid JSON Schema
 * (2020-12 unless its `$schema` names 2019-09 or draft-07), else 400.
 */
export const HubCapabilityInput = Type.Object({
  name: CapabilityName,
  version: Version,
  description: Type.Optional(Type.String({ maxLength: 1000 })),
  input_schema: JsonSchemaDoc,
  sla: Type.Optional(CapabilitySla),
});
export type HubCapabilityInput = Static<typeof HubCapabilityInput>;

/** A registered capability; `certification_tier` is set by certification runs (capabilities with an SLA). */
export const HubCapability = Type.Object({
  name: Type.String(),
  version: Type.String(),
  description: Nullable(Type.String()),
  input_schema: JsonSchemaDoc,
  sla: Nullable(CapabilitySla),
  certification_tier: tierOut('unverified | certified | enterprise (set by certify)'),
  registered_at: Timestamp,
});
export type HubCapability = Static<typeof HubCapability>;

export const HubCapabilityList = Type.Object({ capabilities: Type.Array(HubCapability) });
export type HubCapabilityList = Static<typeof HubCapabilityList>;

/** Public profile of a hub identity (`GET /hub/{hub_address}/profile`, search results). */
export const HubProfile = Type.Object({
  hub_address: Type.String(),
  display_name: Type.String(),
  description: Nullable(Type.String()),
  trust_tier: tierOut('unverified | certified | enterprise'),
  tier_source: tierSourceOut,
  trust_score: Type.Number({ description: '0.0-1.0; 0.5 until the trust engine has computed one (contract §3.9)' }),
  capabilities: Type.Array(Type.String(), { description: 'names given at registration and registered capability names' }),
  enrolled_at: Timestamp,
  last_active: Nullable(Timestamp),
});
export type HubProfile = Static<typeof HubProfile>;

/** `PATCH /api/v1/hub/{hub_address}/profile` body: at least one field; `description` null or `""` clears it. */
export const UpdateHubProfileRequest = Type.Object(
  {
    display_name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    // Null first: with the app's type coercion, null must not be coerced into "" by the string branch; "" clears too.
    description: Type.Optional(Type.Union([Type.Null(), Type.String({ maxLength: 1000 })], { description: 'null or "" clears it' })),
  },
  { minProperties: 1, additionalProperties: false },
);
export type UpdateHubProfileRequest = Static<typeof UpdateHubProfileRequest>;

/**
 * `GET /api/v1/hub/search` query. `query`: free text (websearch syntax, ≤ 500 characters) over
 * names, descriptions and capabilities; `tier`: minimum tier; `capability`: a capability name;
 * `limit` 1–100 (default 20). Anonymous callers get at most 10 results.
 */
export const HubSearchQuery = Type.Object({
  query: Type.Optional(Type.String({ maxLength: 500, description: 'free text (websearch syntax: words, "phrases", -exclusions, or) over names, descriptions and capabilities' })),
  tier: Type.Optional(lit(TRUST_TIERS)),
  capability: Type.Optional(CapabilityName),
  limit: PageLimit({ maximum: 100, description: `default ${DEFAULT_SEARCH_LIMIT}; anonymous callers get at most ${ANONYMOUS_SEARCH_LIMIT} results` }),
});
export type HubSearchQuery = Static<typeof HubSearchQuery>;

export const HubSearchResults = Type.Object({ results: Type.Array(HubProfile) });
export type HubSearchResults = Static<typeof HubSearchResults>;

/** `POST /api/v1/hub/identities/{id}/certify` answer (design §8.16), whether or not the tier rose. */
export const CertifyResult = Type.Object({
  identity_id: Uuid,
  tier: tierOut('the tier after the run: unverified | certified | enterprise'),
  upgraded: Type.Boolean({ description: 'true when this run raised the tier' }),
  checks: Type.Array(
    Type.Object({
      check: lit(CERTIFICATION_CHECKS, { description: 'owner_key | bound_device | capabilities | activity | trust_score' }),
      passed: Type.Boolean(),
      detail: Type.String(),
    }),
  ),
});
export type CertifyResult = Static<typeof CertifyResult>;

/** Longest `reason` of an operator tier grant. */
export const TIER_GRANT_REASON_MAX = 500;

/**
 * `POST /api/v1/hub/identities/{id}/tier` body (platform operators, design §8.25): the `tier` to
 * grant, the review's `reason` (1-500 characters, not blank) and an optional `expires_at` (ISO
 * 8601, in the future; absent: the grant holds until a real-telemetry score demotes the identity
 * or another grant replaces it).
 */
export const GrantTierRequest = Type.Object(
  {
    tier: lit(TRUST_TIERS, { description: 'unverified | certified | enterprise' }),
    reason: Type.String({ minLength: 1, maxLength: TIER_GRANT_REASON_MAX, description: 'why (the review); recorded in the audit chain of the identity’s tenant' }),
    expires_at: Type.Optional(Type.String({ format: 'date-time', description: 'ISO 8601, in the future; the computed rules take over when it passes' })),
  },
  { additionalProperties: false },
);
export type GrantTierRequest = Static<typeof GrantTierRequest>;

/**
 * `GET /api/v1/hub/review` query (platform operators; docs/decisions.md "Platform operators and
 * operator tier grants"): `tier` exactly this tier; `query` a case-insensitive part of the hub
 * address or display name (at most 100 characters); `limit` 1–200 (default 50); `cursor` a
 * `next_cursor` of the previous page.
 */
export const HubReviewQuery = Type.Object({
  tier: Type.Optional(lit(TRUST_TIERS)),
  query: Type.Optional(Type.String({ maxLength: 100, description: 'case-insensitive part of the hub address or display name' })),
  limit: PageLimit(),
  cursor: PageCursor(),
});
export type HubReviewQuery = Static<typeof HubReviewQuery>;

/**
 * A hub identity as a platform operator reviews it: its public profile (tier, score,
 * capabilities, activity) with the `id` a tier grant names, its DID, the current grant's reason
 * and expiry (null unless `tier_source` is `operator`; null expiry: no end) and its creation.
 */
export const HubReviewEntry = Type.Object({
  ...HubProfile.properties,
  id: Uuid,
  did: Type.String({ description: 'did:hub:<hub_address>' }),
  tier_grant_reason: Nullable(Type.String()),
  tier_grant_expires_at: Nullable(Timestamp),
  created_at: Timestamp,
});
export type HubReviewEntry = Static<typeof HubReviewEntry>;

/** `GET /api/v1/hub/review` answer: newest identities first; `next_cursor` null on the last page. */
export const HubReviewPage = Page('identities', HubReviewEntry);
export type HubReviewPage = Static<typeof HubReviewPage>;

// ---------------------------------------------------------------- DID documents and resolution (contract §4.10, §8; design §8.15)

/** The verification method type of hub DID documents. */
export const ED25519_2020 = 'Ed25519VerificationKey2020';

const VerificationMethodOut = Type.Object({ id: Type.String(), type: Type.String(), controller: Type.String(), publicKeyMultibase: Type.String() });
/**
 * A DID document (W3C DID Core). Other properties (e.g. of the platform's issuer document) pass
 * through. The SDK types it with `did-resolver`'s `DIDDocument`.
 */
export const DidDocument = Type.Object(
  {
    '@context': Type.Array(Type.String()),
    id: Type.String({ description: 'did:hub:<hub_address>' }),
    verificationMethod: Type.Optional(Type.Array(VerificationMethodOut)),
    authentication: Type.Optional(Type.Array(Type.String())),
    assertionMethod: Type.Optional(Type.Array(Type.String())),
    service: Type.Optional(Type.Array(Type.Object({ id: Type.String(), type: Type.String(), serviceEndpoint: Type.String() }))),
  },
  { additionalProperties: true, description: 'W3C DID Core document' },
);
export type DidDocument = Static<typeof DidDocument>;

/** A DID resolution result (W3C DID Resolution), errors included; the SDK types it with `did-resolver`'s `DIDResolutionResult`. */
export const DidResolutionResult = Type.Object(
  {
    '@context': Type.String(),
    didDocument: Nullable(DidDocument),
    didResolutionMetadata: Type.Object({
      contentType: Type.Optional(Type.String()),
      error: Type.Optional(Type.String({ description: 'notFound | invalidDid | methodNotSupported' })),
    }),
    didDocumentMetadata: Type.Object({ created: Type.Optional(Type.String()), updated: Type.Optional(Type.String()), deactivated: Type.Optional(Type.Boolean()) }),
    detail: Type.Optional(Type.String({ description: 'on errors only' })),
  },
  { description: 'W3C DID resolution result' },
);
export type DidResolutionResult = Static<typeof DidResolutionResult>;

/** 64 bytes in padded base64: 86 characters + "==", the last one with its four low bits zero. */
const Signature64 = Type.String({ pattern: '^[A-Za-z0-9+/]{85}[AQgw]==$', description: 'base64 Ed25519 signature (64 bytes) by the owner key over JCS of the body without "signature"' });

/** `PATCH /api/v1/hub/{hub_address}/did` body (design §8.15); the SDK builds it with `signDidUpdate`. */
export const DidUpdateBody = Type.Object({
  add_verification_method: Type.Object({
    type: Type.Literal(ED25519_2020),
    publicKeyMultibase: Type.String({ pattern: '^z[1-9A-HJ-NP-Za-km-z]{40,60}$', description: 'z + base58btc(0xed 0x01 ‖ 32-byte Ed25519 key)' }),
  }),
  timestamp: Type.String({ format: 'date-time', description: 'ISO 8601; within 5 minutes of the server time and newer than the last accepted update' }),
  signature: Signature64,
});
export type DidUpdateBody = Static<typeof DidUpdateBody>;

/** One JWS of a signed Agent Card (A2A 1.0 `AgentCardSignature`); unprotected `header` members pass through. */
const AgentCardSignatureBody = Type.Object(
  { protected: Type.String({ description: 'base64url protected header: alg EdDSA, kid = a did:hub DID URL' }), signature: Type.String({ description: 'base64url Ed25519 signature' }) },
  { additionalProperties: true },
);
/**
 * A signed A2A 1.0 Agent Card in its JSON form (`PUT`/`GET /hub/{hub_address}/agent-card`): every
 * A2A field passes through unchanged; `signatures` holds JWSs over its RFC 8785 canonical form
 * without `signatures` (`@parley/protocol` `checkAgentCardSignatures`).
 */
export const SignedAgentCard = Type.Object(
  {
    name: Type.String({ minLength: 1, description: 'the agent name' }),
    signatures: Type.Optional(Type.Array(AgentCardSignatureBody, { description: 'JWS signatures (A2A 1.0 AgentCardSignature)' })),
  },
  { additionalProperties: true, description: 'A2A 1.0 Agent Card (JSON form), signed' },
);
export type SignedAgentCard = Static<typeof SignedAgentCard>;

/** Answer of `PUT /hub/{hub_address}/agent-card`: the verifying key and when the card was stored. */
export const AgentCardPublished = Type.Object({
  hub_address: Type.String(),
  did: Type.String({ description: 'did:hub:<hub_address>' }),
  kid: Type.String({ description: 'the DID URL of the verification method whose signature verified' }),
  updated_at: Timestamp,
});
export type AgentCardPublished = Static<typeof AgentCardPublished>;

/** Every 400/404 of the resolution routes is a resolution result (no schema-level validation can fail on them); 401 and 429 are `{detail}`. */
const resolutionResponses = { 200: DidResolutionResult, 400: DidResolutionResult, 404: DidResolutionResult };
/** Content type of a resolution result at the Universal Resolver driver path (DID Resolution, HTTP(S) binding). */
/**
 * `POST /api/v1/hub/agents` body (contract §4.19 `svc_register_agent`; docs/decisions.md "Agent
 * self-registration"): `name` is the new agent's hub address (the rules of `hub_address`,
 * design §8.13); `skills` ≤ 50 capability names of 1–100 characters; `description` ≤ 1000;
 * `display_name` 1–100 (default `name`); `env` of the new API key (default the calling key's,
 * `dev` for owners); `public_key` the optional owner key as in hub registration (without it the
 * bound device's identity key becomes the owner key when the new key registers its material).
 */
export const RegisterAgentRequest = Type.Object({
  name: Type.String({ pattern: HUB_ADDRESS_PATTERN, description: 'the hub address: 3-32 characters a-z 0-9 "-", no leading/trailing "-"; stored lowercase, unique platform-wide' }),
  skills: Type.Optional(Type.Array(CapabilityName, { maxItems: 50, description: 'capability names' })),
  description: Type.Optional(Type.String({ maxLength: 1000 })),
  display_name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'default: name' })),
  env: Type.Optional(lit(API_KEY_ENVS, { description: 'environment of the new API key; default the calling key’s, dev for owners' })),
  public_key: Type.Optional(PublicKey),
});
export type RegisterAgentRequest = Static<typeof RegisterAgentRequest>;

/**
 * `POST /api/v1/hub/agents` answer (201): the new identity (`hub_name` = `hub_address`), the raw
 * API key (returned once, never stored in plaintext) and its id. A new agent starts unverified
 * with score 0.
 */
export const RegisteredAgent = Type.Object({
  identity_id: Uuid,
  did: Type.String({ description: 'did:hub:<hub_address>' }),
  hub_name: Type.String({ description: 'the hub address' }),
  hub_address: Type.String(),
  api_key: Type.String({ description: 'svc_agent_sk_{env}_{64 hex}; shown only here' }),
  api_key_id: Uuid,
  trust_score: Type.Number(),
  trust_tier: tierOut('unverified for a new agent'),
});
export type RegisteredAgent = Static<typeof RegisteredAgent>;

export const RESOLUTION_CONTENT_TYPE = 'application/ld+json;profile="https://w3id.org/did-resolution";charset=utf-8';

const tags = ['hub'];
const registration = {
  method: 'POST',
  auth: 'owner',
  tags,
  summary: 'Register a hub identity (address, DID) for the tenant',
  description:
    'Registers a hub identity for the tenant: a platform-wide address (3 to 32 characters of a-z, 0-9 and `-`), its `did:hub:<address>` DID, display name, description, capabilities, an optional owner `public_key` (Ed25519, base64; it signs DID document updates) and optionally the ACTIVE agent device it is bound to. Starts at tier `unverified`; searchable at once. Audited as `hub.registered`; answers 201 with the identity. 400 when the address is malformed, `public_key` is not a valid Ed25519 key, or `device_id` is not an agent device. 404 when `device_id` is unknown in the tenant. 409 when the address is reserved or taken (platform-wide), or the device is not ACTIVE or already bound to an identity.',
  body: RegisterHubRequest,
  responses: { 201: HubIdentity },
  errors: [400, 401, 403, 404, 409],
} as const;

export const hubRoutes = {
  registerHub: defineRoute({ ...registration, path: '/api/v1/hub/register' }),
  createHubIdentity: defineRoute({ ...registration, path: '/api/v1/hub/identities' }),
  registerAgent: defineRoute({
    method: 'POST',
    path: '/api/v1/hub/agents',
    auth: 'owner-or-apikey',
    tags,
    summary: 'Register a new agent: a hub identity and a new API key for it, in one transaction',
    description:
      'Registers a new agent in one transaction: a hub identity at address `name` (capabilities from `skills`, tier `unverified`, no device yet) and a new API key of the tenant for it (environment `env`, else the calling key\'s, else `dev`). The raw API key is answered once. The key has no device until its first socket sends `client_key_register`, which binds the identity to the new device (and its identity key becomes the owner key when no `public_key` was given). Audited as `api_key.created` and `hub.registered`. Answers 201 with the DID, address, key, key id, trust score 0 and tier. 400 when `name` is not a valid hub address or `public_key` is not a valid Ed25519 key. 409 when the address is taken or reserved (nothing is written).',
    body: RegisterAgentRequest,
    responses: { 201: RegisteredAgent },
    errors: [400, 401, 403, 409],
  }),
  listHubIdentities: defineRoute({
    method: 'GET',
    path: '/api/v1/hub/identities',
    auth: 'owner',
    tags,
    summary: 'List the tenant hub identities',
    description:
      'Every hub identity of the tenant, oldest first, with its address, DID, display name, description, capability names, owner public key, bound device, trust tier and its source (score or operator grant) and creation time.',
    responses: { 200: HubIdentityList },
    errors: [401, 403],
  }),
  getHubIdentity: defineRoute({
    method: 'GET',
    path: '/api/v1/hub/identities/{id}',
    auth: 'owner',
    tags,
    summary: 'Hub identity details',
    description:
      'One hub identity of the tenant with its address, DID, display name, description, capability names, owner public key, bound device, trust tier and its source (score or operator grant) and creation time. 404 when the identity is unknown in the tenant.',
    params: IdParams,
    responses: { 200: HubIdentity },
    errors: [400, 401, 403, 404],
  }),
  listHubCapabilities: defineRoute({
    method: 'GET',
    path: '/api/v1/hub/{hub_address}/capabilities',
    auth: 'owner',
    tags,
    summary: "An identity's registered capabilities",
    description:
      'The registered capabilities of one of the tenant\'s hub identities, oldest first: name, version, description, input schema, SLA and certification tier. 404 when the tenant has no hub identity at this address.',
    params: HubAddressParams,
    responses: { 200: HubCapabilityList },
    errors: [400, 401, 403, 404],
  }),
  registerHubCapability: defineRoute({
    method: 'POST',
    path: '/api/v1/hub/{hub_address}/capabilities',
    auth: 'owner',
    tags,
    summary: 'Register a capability (input_schema must be a valid JSON Schema)',
    description:
      'Registers a capability of one of the tenant\'s hub identities: name, version, description, `input_schema` (a JSON Schema, checked) and an optional SLA (`latency_p95_ms`, `uptime_sla`). It starts `unverified`; the next certify run certifies it. Refreshes the identity\'s search document; audited. Answers 201. 400 when `input_schema` is not a valid JSON Schema (the detail names the problem). 404 when the tenant has no hub identity at this address. 409 when the identity already has this name and version.',
    params: HubAddressParams,
    body: HubCapabilityInput,
    responses: { 201: HubCapability },
    errors: [400, 401, 403, 404, 409],
  }),
  searchHub: defineRoute({
    method: 'GET',
    path: '/api/v1/hub/search',
    auth: 'public',
    tags,
    summary: `Search hub identities (full-text, minimum tier, capability); at most ${ANONYMOUS_SEARCH_LIMIT} results without a credential`,
    description:
      'Searches hub identities of every tenant: full text over address, name, description and capabilities, a minimum trust tier and a capability. Anonymous callers get at most 10 results; callers with a credential up to `limit`. Answers public profiles only.',
    query: HubSearchQuery,
    responses: { 200: HubSearchResults },
    errors: [400, 401],
  }),
  getHubProfile: defineRoute({
    method: 'GET',
    path: '/api/v1/hub/{hub_address}/profile',
    auth: 'public',
    tags,
    summary: 'Public profile of a hub identity',
    description:
      'The public profile of any tenant\'s hub identity: address, display name, description, trust tier and its source, trust score (0.5 until the engine computed one), capability names, enrollment and last-activity times. 404 when no identity has this address (or it is malformed).',
    params: HubAddressParams,
    responses: { 200: HubProfile },
    errors: [400, 401, 404],
  }),
  updateHubProfile: defineRoute({
    method: 'PATCH',
    path: '/api/v1/hub/{hub_address}/profile',
    auth: 'owner',
    tags,
    summary: 'Update display_name and/or description',
    description:
      'Changes the display name and/or description of one of the tenant\'s hub identities; the search document is refreshed. Audited; answers the profile. 400 when neither field is given. 404 when the tenant has no hub identity at this address.',
    params: HubAddressParams,
    body: UpdateHubProfileRequest,
    responses: { 200: HubProfile },
    errors: [400, 401, 403, 404],
  }),
  certifyHubIdentity: defineRoute({
    method: 'POST',
    path: '/api/v1/hub/identities/{id}/certify',
    auth: 'owner',
    tags,
    summary: 'Run the certification checks and raise the trust tier when they pass (answered either way)',
    description:
      'Runs the five certification checks of one of the tenant\'s identities (owner key, bound ACTIVE device, a capability with input schema and SLA, activity in the last 7 days, a held 7-day trust score of at least 0.6 over fresh scores) and raises the tier when they pass; lowers it when the latest score is below the current tier\'s threshold. Answers 200 either way with each check\'s result and the tier; every run is audited and sets the last attestation time. 404 when the identity is unknown in the tenant. 409 when the identity is suspended.',
    params: IdParams,
    responses: { 200: CertifyResult },
    errors: [400, 401, 403, 404, 409],
  }),
  grantHubIdentityTier: defineRoute({
    method: 'POST',
    path: '/api/v1/hub/identities/{id}/tier',
    auth: 'owner-any',
    tags,
    summary: 'Grant a trust tier after a review (platform operators only; any tenant; audited in the identity’s tenant chain)',
    description:
      'A platform operator grants a hub identity of any tenant a trust tier after a review, with a reason and an optional expiry. While the grant holds, fallback scores never lower the tier; any tier change ends it. Tier-change side effects apply as for certification (tokens issued above a lowered tier are revoked). Audited as `hub.tier_granted` in the identity\'s tenant chain; answers the identity. 400 when `reason` is blank or `expires_at` is not in the future. 403 also for an owner who is not a platform operator (`PLATFORM_OPERATOR_SUBS`). 404 when no identity has this id. 409 when the identity is suspended.',
    params: IdParams,
    body: GrantTierRequest,
    responses: { 200: HubIdentity },
    errors: [400, 401, 403, 404, 409],
  }),
  listHubReview: defineRoute({
    method: 'GET',
    path: '/api/v1/hub/review',
    auth: 'owner-any',
    tags,
    summary: 'Hub identities of every tenant, for a certification review (platform operators only)',
    description:
      'For platform operators: active (not suspended) hub identities of every tenant, newest first, paged by `cursor` and `limit`, with the id a tier grant (`POST /hub/identities/{id}/tier`) names and the current grant. 400 when `cursor` is not a `next_cursor` value. 403 also for an owner who is not a platform operator (`PLATFORM_OPERATOR_SUBS`).',
    query: HubReviewQuery,
    responses: { 200: HubReviewPage },
    errors: [400, 401, 403],
  }),
  resolveHub: defineRoute({
    method: 'GET',
    path: '/api/v1/hub/resolve/{address}',
    auth: 'public',
    tags,
    summary: 'Resolve a hub address to a DID resolution result (404 notFound, 400 invalidDid; 60/min public, 600/min with an API key)',
    description:
      'Resolves a hub address to a W3C DID resolution result (DID document, document metadata, resolution metadata). Errors are resolution results too, with `didResolutionMetadata.error` and a `detail`: 400 `invalidDid` for a malformed address, 404 `notFound` for an unknown one. 429 also beyond 60 requests per minute per IP, or 600 per minute with an API key.',
    params: Type.Object({ address: Type.String({ description: 'hub address; a malformed one answers 400 invalidDid' }) }),
    responses: resolutionResponses,
    errors: [401, 429],
  }),
  getDidDocument: defineRoute({
    method: 'GET',
    path: '/api/v1/hub/{hub_address}/did',
    auth: 'public',
    tags,
    summary: 'The DID document of a hub address (60/min public, 600/min with an API key)',
    description:
      'The DID document of a hub address: `did:hub:<address>` with its owner key and added verification methods and its messaging service endpoint (the WebSocket URL). 400 when the address is malformed. 404 when no identity has this address. 429 also beyond 60 requests per minute per IP, or 600 per minute with an API key.',
    params: HubAddressParams,
    responses: { 200: DidDocument },
    errors: [400, 401, 404, 429],
  }),
  updateDid: defineRoute({
    method: 'PATCH',
    path: '/api/v1/hub/{hub_address}/did',
    auth: 'owner',
    tags,
    summary: 'Add a verification method (signed by the owner key over JCS of the body without "signature"; replay-safe timestamp)',
    description:
      'Adds a verification method (an Ed25519VerificationKey2020 key) to the DID document of one of the tenant\'s identities. The body is signed by the identity\'s owner key over its JCS canonical form without `signature`, with a timestamp within 5 minutes of the server\'s and newer than the last accepted update (replay-safe). Audited as `hub.did_updated`; answers the updated document. 400 when the timestamp is off by more than 5 minutes, or the method is not an Ed25519VerificationKey2020 with a valid `publicKeyMultibase`. 403 when the signature does not verify with the owner key. 404 when the tenant has no hub identity at this address. 409 when the identity has no owner key, the timestamp is not newer than the last accepted update, or the key is already a verification method.',
    params: HubAddressParams,
    body: DidUpdateBody,
    responses: { 200: DidDocument },
    errors: [400, 401, 403, 404, 409],
  }),
  publishAgentCard: defineRoute({
    method: 'PUT',
    path: '/api/v1/hub/{hub_address}/agent-card',
    auth: 'any',
    tags,
    summary: "Publish the identity's signed A2A Agent Card (stored only after its JWS verifies against the DID document)",
    description:
      "Stores the signed A2A 1.0 Agent Card of a hub identity, replacing the previous one. The card must carry a JWS (`signatures[]`, `alg` EdDSA) over its RFC 8785 canonical form without `signatures`, whose `kid` is an assertion method of the identity's `did:hub` document (e.g. `did:hub:<address>#owner-key`), and that signature must verify: the service holds no agent key, so it cannot forge a card. Callers: an owner of the identity's tenant, or the agent the identity is bound to (its device token or API key). Afterwards `GET` serves the card as stored and the DID document lists it as an `A2AAgentCard` service. Audited as `hub.agent_card_published`; answers the verifying key. 400 when the card is unsigned or its signature does not verify; the detail names the reason (`unsigned`, `bad_signature`, `wrong_did`, `unknown_key`, `unsupported_header`, `malformed_signature`), or the card exceeds 64 KiB. 403 when a device or API key that is not the identity's agent calls. 404 when the caller's tenant has no hub identity at this address. 409 when the identity is suspended.",
    params: HubAddressParams,
    body: SignedAgentCard,
    responses: { 200: AgentCardPublished },
    errors: [400, 401, 403, 404, 409],
  }),
  getAgentCard: defineRoute({
    method: 'GET',
    path: '/api/v1/hub/{hub_address}/agent-card',
    auth: 'public',
    tags,
    summary: "The identity's signed A2A Agent Card, as its agent published it (60/min public, 600/min with an API key)",
    description:
      "The signed A2A 1.0 Agent Card of any tenant's hub identity, as stored by `PUT` (its signature verified then). A client verifies it itself against the `did:hub` document (SDK `verifyAgentCard`). 400 when the address is malformed. 404 when no identity has this address or it has published no card. 429 also beyond 60 requests per minute per IP, or 600 per minute with an API key.",
    params: HubAddressParams,
    responses: { 200: SignedAgentCard },
    errors: [400, 401, 404, 429],
  }),
  resolveDid: defineRoute({
    method: 'GET',
    path: '/1.0/identifiers/{did}',
    auth: 'public',
    tags,
    summary: 'DIF Universal Resolver driver: resolve a did:hub DID (400 invalidDid / methodNotSupported, 404 notFound)',
    description:
      'The DIF Universal Resolver driver interface: resolves a `did:hub` DID to a DID resolution result (`application/ld+json;profile="https://w3id.org/did-resolution"`). Errors are resolution results too, with `didResolutionMetadata.error` and a `detail`: 400 `invalidDid` for a malformed DID or `methodNotSupported` for another DID method, 404 `notFound` for an unknown address. 429 also beyond 60 requests per minute per IP, or 600 per minute with an API key.',
    params: Type.Object({ did: Type.String({ description: 'did:hub:<address>; other methods answer 400 methodNotSupported' }) }),
    responses: resolutionResponses,
    errors: [401, 429],
  }),
};
