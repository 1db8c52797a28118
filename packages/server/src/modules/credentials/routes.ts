/**
 * Credential routes (SPEC §2.10, §4.11; DESIGN §8.16): issuance of TrustTierCredentials to
 * certified identities, their revocation by the issuing tenant, public verification of any
 * credential, and the service's JSON-LD trust context ({@link trustContextRoutes}, at the root).
 */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { RateLimitConfig } from '../../config.js';
import { ownerOf } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import { routeLimits } from '../../http/rate-limit.js';
import { IdParams, Nullable, Timestamp, Uuid } from '../../http/schemas.js';
import { TRUST_CONTEXT_PATH, trustContext } from './contexts.js';
import type { CredentialService } from './service.js';
import { CREDENTIAL_CHECKS, type CredentialVerifier } from './verifier.js';
import { PUBLIC_SECURITY } from '../../http/openapi.js';

/** No credential needed, or any of the three (auth mode `public`). */
const ownerSecurity = [{ ownerJwt: [] }];
const tags = ['credentials'];
/** Largest accepted verify body: a credential is a few KiB; this bounds JSON-LD canonicalization work. */
const VERIFY_BODY_LIMIT = 64 * 1024;

const TrustTierCredentialOut = Type.Object(
  {
    '@context': Type.Array(Type.String()),
    id: Type.String({ description: 'urn:uuid:<uuid>' }),
    type: Type.Array(Type.String(), { description: '[VerifiableCredential, TrustTierCredential]' }),
    issuer: Type.String({ description: 'the platform DID, did:hub:<PLATFORM_HUB_ADDRESS>' }),
    issuanceDate: Timestamp,
    expirationDate: Timestamp,
    credentialSubject: Type.Object({ id: Type.String({ description: 'did:hub:<hub_address>' }), trustTier: Type.String({ description: 'certified | enterprise' }) }),
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
const IssuedCredentialOut = Type.Object({
  credential_id: Type.String(),
  identity_id: Nullable(Uuid),
  type: Type.String(),
  subject: Type.String({ description: 'subject DID' }),
  issued_at: Timestamp,
  expires_at: Nullable(Timestamp),
  revoked_at: Nullable(Timestamp),
});
const CredentialIdParams = Type.Object({
  id: Type.String({ pattern: '^([uU][rR][nN]:[uU][uU][iI][dD]:)?[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$', description: 'credential id (urn:uuid:<uuid>) or its bare UUID' }),
});
const VerifyBody = Type.Object({ credential: Type.Object({}, { additionalProperties: true, description: 'the verifiable credential (JSON-LD object)' }) });
const VerifyOut = Type.Object({
  valid: Type.Boolean(),
  checks: Type.Array(Type.Object({ check: Type.Union(CREDENTIAL_CHECKS.map((c) => Type.Literal(c))), passed: Type.Boolean() })),
  subject: Nullable(Type.String({ description: 'credentialSubject.id' })),
  credential_type: Nullable(Type.String({ description: 'the first type other than VerifiableCredential' })),
});

export interface CredentialRouteOptions {
  credentials: CredentialService;
  verifier: CredentialVerifier;
  rateLimits: RateLimitConfig;
}

/** Issuance, revocation and verification; mounted under `/api/v1`. */
export const credentialRoutes: FastifyPluginAsyncTypebox<CredentialRouteOptions> = async (app, { credentials, verifier, rateLimits }) => {
  app.post(
    '/hub/identities/:id/credentials',
    {
      config: { auth: 'owner' },
      schema: {
        tags,
        security: ownerSecurity,
        summary: 'Issue a TrustTierCredential to a certified or enterprise hub identity',
        params: IdParams,
        response: { 201: TrustTierCredentialOut, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req, reply) => reply.status(201).send((await credentials.issue(ownerOf(req).tenantId, req.params.id, ownerOf(req).sub)) as never),
  );

  app.post(
    '/hub/credentials/:id/revoke',
    {
      config: { auth: 'owner' },
      schema: {
        tags,
        security: ownerSecurity,
        summary: 'Revoke a credential the tenant was issued',
        params: CredentialIdParams,
        response: { 200: IssuedCredentialOut, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (req) => credentials.revoke(ownerOf(req).tenantId, req.params.id, ownerOf(req).sub),
  );

  app.post(
    '/verify/credential',
    {
      bodyLimit: VERIFY_BODY_LIMIT,
      config: { auth: 'public', rateLimit: routeLimits(rateLimits).verify },
      schema: {
        tags,
        security: PUBLIC_SECURITY,
        summary: 'Verify a verifiable credential (signature, issuer, expiration, revocation, subject)',
        description: 'A well-formed credential that fails a check answers 200 with valid: false; only a body without a credential object is 400.',
        body: VerifyBody,
        response: { 200: VerifyOut, ...errorResponses(400, 401, 413, 429) },
      },
    },
    async (req) => verifier.verify(req.body.credential),
  );
};

/** `GET /contexts/trust/v1`: the service vocabulary context (public); mounted at the root. */
export const trustContextRoutes: FastifyPluginAsyncTypebox<{ trustContextUrl: string }> = async (app, { trustContextUrl }) => {
  const document = trustContext(trustContextUrl);
  app.get(
    TRUST_CONTEXT_PATH,
    { schema: { tags, summary: 'JSON-LD context of the service vocabulary (TrustTierCredential, trustTier)', response: { 200: Type.Object({ '@context': Type.Object({}, { additionalProperties: true }) }) } } },
    async (_req, reply) => reply.header('content-type', 'application/ld+json').header('cache-control', 'public, max-age=86400').send(document),
  );
};
