/** Hub identity routes (SPEC §4.10, address registry part; DESIGN §8.13, §8.15, §8.18). */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ownerOf } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import { IdParams, Nullable, Timestamp, Uuid } from '../../http/schemas.js';
import { HUB_ADDRESS_PATTERN, type HubService } from './service.js';

/** A capability name (registration `capabilities` entries, registered capabilities, search filter). */
export const CapabilityName = Type.String({ minLength: 1, maxLength: 100 });
/** `{hub_address}` route parameter (DESIGN §8.13; any case, matched lowercase). */
export const HubAddressParams = Type.Object({ hub_address: Type.String({ pattern: HUB_ADDRESS_PATTERN, description: 'hub address (DESIGN §8.13), any case' }) });
/** OpenAPI security of `public` routes: no credential, or any of the three (verified when sent). */
/** 32 bytes in padded base64 is 43 characters + "=", the last one with its two low bits zero. */
const PublicKey = Type.String({ pattern: '^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$', description: 'raw 32-byte Ed25519 public key, base64 (the owner key); must decode to a curve point not of small order' });

const Registration = Type.Object({
  hub_address: Type.String({ pattern: HUB_ADDRESS_PATTERN, description: '3-32 characters a-z 0-9 "-", no leading/trailing "-"; stored lowercase, unique platform-wide, immutable' }),
  display_name: Type.String({ minLength: 1, maxLength: 100 }),
  description: Type.Optional(Type.String({ maxLength: 1000 })),
  capabilities: Type.Optional(Type.Array(CapabilityName, { maxItems: 100 })),
  public_key: PublicKey,
  device_id: Type.Optional(Type.String({ format: 'uuid', description: 'an ACTIVE agent device of the tenant to bind (at most one identity per device)' })),
});
const HubIdentityOut = Type.Object({
  id: Uuid,
  hub_address: Type.String(),
  did: Type.String({ description: 'did:hub:<hub_address>' }),
  display_name: Type.String(),
  description: Nullable(Type.String()),
  capabilities: Type.Array(Type.String()),
  public_key: Nullable(Type.String()),
  device_id: Nullable(Uuid),
  trust_tier: Type.String({ description: 'unverified | certified | enterprise' }),
  created_at: Timestamp,
});
const tags = ['hub'];
const security = [{ ownerJwt: [] }];
const owner = { auth: 'owner' as const };

export const hubRoutes: FastifyPluginAsyncTypebox<{ hub: HubService }> = async (app, { hub }) => {
  for (const url of ['/hub/register', '/hub/identities']) {
    app.post(
      url,
      {
        config: owner,
        schema: {
          tags,
          security,
          summary: 'Register a hub identity (address, DID) for the tenant',
          body: Registration,
          response: { 201: HubIdentityOut, ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (req, reply) => {
        const o = ownerOf(req);
        return reply.status(201).send(await hub.register(o.tenantId, o.sub, req.body));
      },
    );
  }

  app.get(
    '/hub/identities',
    { config: owner, schema: { tags, security, summary: 'List the tenant hub identities', response: { 200: Type.Object({ identities: Type.Array(HubIdentityOut) }), ...errorResponses(401, 403) } } },
    async (req) => ({ identities: await hub.list(ownerOf(req).tenantId) }),
  );

  app.get(
    '/hub/identities/:id',
    { config: owner, schema: { tags, security, summary: 'Hub identity details', params: IdParams, response: { 200: HubIdentityOut, ...errorResponses(400, 401, 403, 404) } } },
    async (req) => hub.get(ownerOf(req).tenantId, req.params.id),
  );
};
