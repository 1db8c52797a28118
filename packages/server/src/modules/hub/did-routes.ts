/**
 * DID routes (SPEC §4.10, §8; DESIGN §8.15): resolution by address, the DID document, its update
 * by owner-key signature, and the DIF Universal Resolver driver path `/1.0/identifiers/{did}`
 * (served at the root, outside `/api/v1`: {@link didResolverRoutes}).
 *
 * Reads are public (a sent credential is verified, 401 when invalid) and limited per SPEC §8:
 * 60/min per IP, 600/min per API key. Resolution routes always answer a DID resolution result,
 * errors included (`didResolutionMetadata.error`), plus a `detail` string on errors (DESIGN §7).
 */
import { Type, type FastifyPluginAsyncTypebox, type Static } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import type { RateLimitConfig } from '../../config.js';
import { ownerOf } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import { routeLimits } from '../../http/rate-limit.js';
import { Nullable } from '../../http/schemas.js';
import { ED25519_2020 } from './did.js';
import type { HubDidService, Resolution } from './did-service.js';
import { HUB_ADDRESS_PATTERN } from './service.js';
import { PUBLIC_SECURITY } from '../../http/openapi.js';

/** No credential needed, or any of the three (DESIGN: `public` auth mode). */
const tags = ['hub'];

const VerificationMethodOut = Type.Object({ id: Type.String(), type: Type.String(), controller: Type.String(), publicKeyMultibase: Type.String() });
/** A DID document (W3C DID Core). Other properties (e.g. of the platform's issuer document) pass through. */
const DidDocumentOut = Type.Object(
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
const ResolutionOut = Type.Object(
  {
    '@context': Type.String(),
    didDocument: Nullable(DidDocumentOut),
    didResolutionMetadata: Type.Object({
      contentType: Type.Optional(Type.String()),
      error: Type.Optional(Type.String({ description: 'notFound | invalidDid | methodNotSupported' })),
    }),
    didDocumentMetadata: Type.Object({ created: Type.Optional(Type.String()), updated: Type.Optional(Type.String()), deactivated: Type.Optional(Type.Boolean()) }),
    detail: Type.Optional(Type.String({ description: 'on errors only' })),
  },
  { description: 'W3C DID resolution result' },
);
/** Every 400/404 of these routes is a resolution result (no schema-level validation can fail on them). */
const resolutionResponses = { 200: ResolutionOut, 400: ResolutionOut, 404: ResolutionOut, ...errorResponses(401, 429) };

const AddressParams = Type.Object({ hub_address: Type.String({ pattern: HUB_ADDRESS_PATTERN, description: 'hub address (DESIGN §8.13), any case' }) });
/** 64 bytes in padded base64: 86 characters + "==", the last one with its four low bits zero. */
const Signature64 = Type.String({ pattern: '^[A-Za-z0-9+/]{85}[AQgw]==$', description: 'base64 Ed25519 signature (64 bytes) by the owner key over JCS of the body without "signature"' });
const DidUpdate = Type.Object({
  add_verification_method: Type.Object({
    type: Type.Literal(ED25519_2020),
    publicKeyMultibase: Type.String({ pattern: '^z[1-9A-HJ-NP-Za-km-z]{40,60}$', description: 'z + base58btc(0xed 0x01 ‖ 32-byte Ed25519 key)' }),
  }),
  timestamp: Type.String({ format: 'date-time', description: 'ISO 8601; within 5 minutes of the server time and newer than the last accepted update' }),
  signature: Signature64,
});

/** Send a resolution with its status; errors also carry `detail` (DESIGN §7). */
function sendResolution(reply: FastifyReply, r: Resolution, contentType?: string) {
  if (contentType) void reply.header('content-type', contentType);
  const error = 'error' in r.body.didResolutionMetadata ? r.body.didResolutionMetadata.error : undefined;
  return reply.status(r.status).send(error ? { ...r.body, detail: `DID resolution failed: ${error}` } : r.body);
}

export interface DidRouteOptions {
  hubDid: HubDidService;
  rateLimits: RateLimitConfig;
}

/** `/hub/resolve/{address}`, `/hub/{hub_address}/did` (GET, PATCH); mounted under `/api/v1`. */
export const hubDidRoutes: FastifyPluginAsyncTypebox<DidRouteOptions> = async (app, { hubDid, rateLimits }) => {
  const publicDid = { auth: 'public' as const, rateLimit: routeLimits(rateLimits).did };

  app.get(
    '/hub/resolve/:address',
    {
      config: publicDid,
      schema: {
        tags,
        security: PUBLIC_SECURITY,
        summary: 'Resolve a hub address to a DID resolution result (404 notFound, 400 invalidDid; 60/min public, 600/min with an API key)',
        params: Type.Object({ address: Type.String({ description: 'hub address; a malformed one answers 400 invalidDid' }) }),
        response: resolutionResponses,
      },
    },
    async (req, reply) => sendResolution(reply, await hubDid.resolveAddress(req.params.address)),
  );

  app.get(
    '/hub/:hub_address/did',
    {
      config: publicDid,
      schema: {
        tags,
        security: PUBLIC_SECURITY,
        summary: 'The DID document of a hub address (60/min public, 600/min with an API key)',
        params: AddressParams,
        response: { 200: DidDocumentOut, ...errorResponses(400, 401, 404, 429) },
      },
    },
    // The platform's issuer document is typed `object` by its hook; the response schema lets extra properties through.
    async (req) => (await hubDid.document(req.params.hub_address)) as Static<typeof DidDocumentOut>,
  );

  app.patch(
    '/hub/:hub_address/did',
    {
      config: { auth: 'owner' },
      schema: {
        tags,
        security: [{ ownerJwt: [] }],
        summary: 'Add a verification method (signed by the owner key over JCS of the body without "signature"; replay-safe timestamp)',
        params: AddressParams,
        body: DidUpdate,
        response: { 200: DidDocumentOut, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (req) => hubDid.addVerificationMethod(ownerOf(req).tenantId, req.params.hub_address, req.body, ownerOf(req).sub),
  );
};

/** Content type of a resolution result at the Universal Resolver driver path (DID Resolution, HTTP(S) binding). */
export const RESOLUTION_CONTENT_TYPE = 'application/ld+json;profile="https://w3id.org/did-resolution";charset=utf-8';

/** `GET /1.0/identifiers/{did}` (DIF Universal Resolver driver interface); mounted at the root. */
export const didResolverRoutes: FastifyPluginAsyncTypebox<DidRouteOptions> = async (app, { hubDid, rateLimits }) => {
  app.get(
    '/1.0/identifiers/:did',
    {
      config: { auth: 'public', rateLimit: routeLimits(rateLimits).did },
      schema: {
        tags,
        security: PUBLIC_SECURITY,
        summary: 'DIF Universal Resolver driver: resolve a did:hub DID (400 invalidDid / methodNotSupported, 404 notFound)',
        params: Type.Object({ did: Type.String({ description: 'did:hub:<address>; other methods answer 400 methodNotSupported' }) }),
        response: resolutionResponses,
      },
    },
    async (req, reply) => sendResolution(reply, await hubDid.resolveDid(req.params.did), RESOLUTION_CONTENT_TYPE),
  );
};
