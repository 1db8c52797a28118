/**
 * Verification and verifiable credentials (contract §2.10, §4.11; design §8.16): schemas, route rows and frames.
 */
import { Type, type Static, type TNumber } from '@sinclair/typebox';
import { defineRoute } from '../contract.js';
import { IdParams, lit, Nullable, Timestamp, Uuid } from '../common.js';
import { HubAddressParams } from './hub.js';
import { TRUST_DIMENSIONS, TRUST_TIERS, TRUST_WINDOWS, type TrustDimension } from './trust.js';


/** Verify-agent statuses (contract §4.11). */
export const VERIFY_STATUSES = ['verified', 'unverified', 'suspended', 'not_found'] as const;
export type VerifyStatus = (typeof VERIFY_STATUSES)[number];

/** The checks of a credential verification, in answer order (design §8.16). */
export const CREDENTIAL_CHECKS = ['signature', 'issuer', 'expiration', 'revocation', 'subject'] as const;
/** The checks of a credential verification, in answer order (design §8.16). */
export type CredentialCheckName = (typeof CREDENTIAL_CHECKS)[number];

/** Path of the service's JSON-LD trust context (outside `/api/v1`). */
export const TRUST_CONTEXT_PATH = '/contexts/trust/v1';

const Score = Type.Number({ minimum: 0, maximum: 1 });
const dimensionScores = Object.fromEntries(TRUST_DIMENSIONS.map((d) => [d, Score])) as Record<TrustDimension, TNumber>;

/** `composite` plus the 12 dimensions, each 0.0–1.0. */
export const TrustScores = Type.Object(
  { composite: Score, ...dimensionScores },
  {
    description:
      "contract §2.9 composite and dimensions of the window, the same values GET /trust-scores/{agent_id} answers: the agent's latest snapshot of the window; contract §3.9 warm-up values (all 0.5) before the trust engine has scored it",
  },
);
export type TrustScores = Static<typeof TrustScores>;

/** `GET /api/v1/verify/{hub_address}` query; `window` defaults to `7d`. */
export const VerifyAgentQuery = Type.Object({ window: Type.Optional(Type.Union(TRUST_WINDOWS.map((w) => Type.Literal(w)), { default: '7d' })) });
export type VerifyAgentQuery = Static<typeof VerifyAgentQuery>;

/**
 * `GET /api/v1/verify/{hub_address}` answer (contract §4.11). `status`: `verified` (tier certified
 * or enterprise and bound device ACTIVE), `unverified`, `suspended` (identity suspended or bound
 * device revoked) or `not_found` (then the tier, scores and times are null). `window`: the window
 * the scores are for (the requested one); `enrolled_at`: the bound device's enrolment, else the
 * identity's registration; `last_seen`: the bound device's last activity; `last_attestation`: the
 * last certification run, or null.
 */
export const AgentVerification = Type.Object({
  did: Type.String({ description: 'did:hub:<hub_address>' }),
  status: Type.Union(VERIFY_STATUSES.map((s) => Type.Literal(s))),
  trust_tier: Nullable(lit(TRUST_TIERS, { description: 'unverified | certified | enterprise; null when not_found' })),
  trust_scores: Nullable(TrustScores),
  window: Type.Union(TRUST_WINDOWS.map((w) => Type.Literal(w))),
  active_grants: Type.Integer({ minimum: 0, description: 'active Skill Permission Tokens of the bound device' }),
  enrolled_at: Nullable(Timestamp),
  last_seen: Nullable(Timestamp),
  last_attestation: Nullable(Timestamp),
});
export type AgentVerification = Static<typeof AgentVerification>;

/**
 * A TrustTierCredential (`POST /api/v1/hub/identities/{id}/credentials`, 201): a W3C Verifiable
 * Credential (data model 1.1) signed by the platform issuer `did:hub:<platform address>#key-1`
 * with an Ed25519Signature2020 proof. `@context` is [credentials v1, the service trust context
 * (`<PUBLIC_URL>/contexts/trust/v1`), Ed25519-2020 suite]. Verify it offline with the SDK's
 * `createDocumentLoader`, or with `ParleyClient.verifyCredential`.
 */
export const TrustTierCredential = Type.Object(
  {
    '@context': Type.Array(Type.String()),
    id: Type.String({ description: 'urn:uuid:<uuid>' }),
    type: Type.Array(Type.String(), { description: '[VerifiableCredential, TrustTierCredential]' }),
    issuer: Type.String({ description: 'the platform DID, did:hub:<PLATFORM_HUB_ADDRESS>' }),
    issuanceDate: Timestamp,
    expirationDate: Timestamp,
    credentialSubject: Type.Object({ id: Type.String({ description: 'did:hub:<hub_address>' }), trustTier: lit(TRUST_TIERS, { description: 'certified | enterprise' }) }),
    proof: Type.Object({
      type: Type.Literal('Ed25519Signature2020'),
      created: Timestamp,
      verificationMethod: Type.String({ description: '<platform DID>#key-1' }),
      proofPurpose: Type.Literal('assertionMethod'),
      proofValue: Type.String({ description: 'z + base58btc of the 64-byte signature' }),
    }),
  },
  { description: 'W3C Verifiable Credential (data model 1.1) with an Ed25519Signature2020 proof' },
);
export type TrustTierCredential = Static<typeof TrustTierCredential>;

/** An entry of the issued-credential registry (`POST /api/v1/hub/credentials/{id}/revoke` answer); `credential_id` is the credential `id` (`urn:uuid:…`). */
export const IssuedCredential = Type.Object({
  credential_id: Type.String(),
  identity_id: Nullable(Uuid),
  type: Type.String(),
  subject: Type.String({ description: 'subject DID' }),
  issued_at: Timestamp,
  expires_at: Nullable(Timestamp),
  revoked_at: Nullable(Timestamp),
});
export type IssuedCredential = Static<typeof IssuedCredential>;

/** `{id}` of a credential: `urn:uuid:<uuid>` or the bare UUID. */
export const CredentialIdParams = Type.Object({
  id: Type.String({ pattern: '^([uU][rR][nN]:[uU][uU][iI][dD]:)?[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$', description: 'credential id (urn:uuid:<uuid>) or its bare UUID' }),
});

/** `POST /api/v1/verify/credential` body: the credential to verify (any JSON object). */
export const VerifyCredentialRequest = Type.Object({
  credential: Type.Unsafe<Record<string, unknown>>(Type.Object({}, { additionalProperties: true, description: 'the verifiable credential (JSON-LD object)' })),
});
export type VerifyCredentialRequest = Static<typeof VerifyCredentialRequest>;

/**
 * `POST /api/v1/verify/credential` answer: `valid` when every check passes. A well-formed
 * credential that fails a check is still a 200 (`valid: false`). `subject`: the first
 * `credentialSubject.id`, or null; `credential_type`: the first type other than
 * `VerifiableCredential`, or null.
 */
export const CredentialVerification = Type.Object({
  valid: Type.Boolean(),
  checks: Type.Array(Type.Object({ check: Type.Union(CREDENTIAL_CHECKS.map((c) => Type.Literal(c))), passed: Type.Boolean() })),
  subject: Nullable(Type.String({ description: 'credentialSubject.id' })),
  credential_type: Nullable(Type.String({ description: 'the first type other than VerifiableCredential' })),
});
export type CredentialVerification = Static<typeof CredentialVerification>;

/** The JSON-LD context document at `GET /contexts/trust/v1` (the SDK types it as `JsonLdContextDocument`). */
export const TrustContextDocument = Type.Object({ '@context': Type.Unsafe<Record<string, unknown>>(Type.Object({}, { additionalProperties: true })) });
export type TrustContextDocument = Static<typeof TrustContextDocument>;

/** Largest accepted verify body: a credential is a few KiB; this bounds JSON-LD canonicalization work. */
export const VERIFY_BODY_LIMIT = 64 * 1024;

const tags = ['credentials'];

export const credentialsRoutes = {
  verifyAgent: defineRoute({
    method: 'GET',
    path: '/api/v1/verify/{hub_address}',
    auth: 'public',
    tags,
    summary: 'Verify an agent by hub address (status, tier, trust scores)',
    description:
      'Public verification of an agent by hub address: its `did:hub` DID, status (`verified`, `unverified`, `suspended`, or `not_found` for a well-formed unknown address, answered with 200), trust tier, trust scores of the `window` (`7d` by default, `30d`, `90d`), active Skill Permission Token count, enrollment, last-seen and last-attestation times. 400 when the address is malformed (it can name no agent). 429 also beyond 30 requests per minute per IP, or 300 per minute with an API key (configurable).',
    params: HubAddressParams,
    query: VerifyAgentQuery,
    responses: { 200: AgentVerification },
    errors: [400, 401, 429],
  }),
  verifyCredential: defineRoute({
    method: 'POST',
    path: '/api/v1/verify/credential',
    auth: 'public',
    tags,
    summary: 'Verify a verifiable credential (signature, issuer, expiration, revocation, subject)',
    description:
      'Verifies any W3C verifiable credential given as `credential`: the Ed25519Signature2020 proof against the issuer\'s key (only bundled contexts and `did:hub` DIDs are resolved, nothing is fetched), the issuer, the validity period, revocation (for credentials this service issued) and the subject. A well-formed credential that fails a check answers 200 with `valid: false` and the result of each check. 400 only when the body has no `credential` object. 413 when the body is larger than 64 KiB. 429 also beyond 30 requests per minute per IP, or 300 per minute with an API key (configurable).',
    body: VerifyCredentialRequest,
    responses: { 200: CredentialVerification },
    errors: [400, 401, 413, 429],
  }),
  issueCredential: defineRoute({
    method: 'POST',
    path: '/api/v1/hub/identities/{id}/credentials',
    auth: 'owner',
    tags,
    summary: 'Issue a TrustTierCredential to a certified or enterprise hub identity',
    description:
      'Issues a TrustTierCredential (W3C verifiable credential signed by the platform\'s `did:hub` issuer key (`did:hub:parley` by default), Ed25519Signature2020) stating the hub identity\'s current trust tier, valid `CREDENTIAL_TTL_DAYS` (30 by default). Recorded with a `credential.issued` audit event; answers 201 with the signed credential. 403 when the identity is suspended, or its tier is below `certified` (certify it first). 404 when the identity is unknown in the tenant.',
    params: IdParams,
    responses: { 201: TrustTierCredential },
    errors: [400, 401, 403, 404],
  }),
  revokeCredential: defineRoute({
    method: 'POST',
    path: '/api/v1/hub/credentials/{id}/revoke',
    auth: 'owner',
    tags,
    summary: 'Revoke a credential the tenant was issued',
    description:
      'Revokes a credential issued to the tenant (by its `urn:uuid:` id or bare UUID): verification then reports it revoked. Audited as `credential.revoked`; answers the issued credential\'s record with its revocation time. 404 when no credential issued to the tenant has this id. 409 when it is already revoked.',
    params: CredentialIdParams,
    responses: { 200: IssuedCredential },
    errors: [400, 401, 403, 404, 409],
  }),
  trustContext: defineRoute({
    method: 'GET',
    path: TRUST_CONTEXT_PATH,
    auth: 'none',
    tags,
    summary: 'JSON-LD context of the service vocabulary (TrustTierCredential, trustTier)',
    description:
      'The JSON-LD context (`application/ld+json`, cacheable for a day) defining the service\'s vocabulary used in its credentials (`TrustTierCredential`, `trustTier`), so JSON-LD processors can expand them without a remote fetch elsewhere.',
    responses: { 200: TrustContextDocument },
    errors: [],
  }),
};
