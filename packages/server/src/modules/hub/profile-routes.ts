/**
 * Public profile and search routes (SPEC §2.8, §4.10; DESIGN §8.15). Reads are `public`: no
 * credential needed; one that is sent is verified (401 when invalid). Anonymous searches answer
 * at most 10 results; authenticated ones up to `limit`.
 */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ownerOf } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import { Nullable, Timestamp } from '../../http/schemas.js';
import { ANONYMOUS_SEARCH_LIMIT, DEFAULT_SEARCH_LIMIT, type HubDirectoryService } from './directory.js';
import { TRUST_TIERS } from './repo.js';
import { PUBLIC_SECURITY } from '../../http/openapi.js';
import { CapabilityName, HubAddressParams } from './routes.js';

const Tier = Type.Union(TRUST_TIERS.map((t) => Type.Literal(t)));
const ProfileOut = Type.Object({
  hub_address: Type.String(),
  display_name: Type.String(),
  description: Nullable(Type.String()),
  trust_tier: Type.String({ description: 'unverified | certified | enterprise' }),
  trust_score: Type.Number({ description: '0.0-1.0; 0.5 until the trust engine has computed one (SPEC §3.9)' }),
  capabilities: Type.Array(Type.String(), { description: 'names given at registration and registered capability names' }),
  enrolled_at: Timestamp,
  last_active: Nullable(Timestamp),
});
const ProfileUpdate = Type.Object(
  {
    display_name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    // Null first: with the app's type coercion, null must not be coerced into "" by the string branch; "" clears too.
    description: Type.Optional(Type.Union([Type.Null(), Type.String({ maxLength: 1000 })], { description: 'null or "" clears it' })),
  },
  { minProperties: 1, additionalProperties: false },
);
const SearchQuery = Type.Object({
  query: Type.Optional(Type.String({ maxLength: 500, description: 'free text (websearch syntax: words, "phrases", -exclusions, or) over names, descriptions and capabilities' })),
  tier: Type.Optional(Tier),
  capability: Type.Optional(CapabilityName),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: `default ${DEFAULT_SEARCH_LIMIT}; anonymous callers get at most ${ANONYMOUS_SEARCH_LIMIT} results` })),
});
const tags = ['hub'];

export const hubProfileRoutes: FastifyPluginAsyncTypebox<{ directory: HubDirectoryService }> = async (app, { directory }) => {
  app.get(
    '/hub/search',
    {
      config: { auth: 'public' },
      schema: {
        tags,
        security: PUBLIC_SECURITY,
        summary: `Search hub identities (full-text, minimum tier, capability); at most ${ANONYMOUS_SEARCH_LIMIT} results without a credential`,
        querystring: SearchQuery,
        response: { 200: Type.Object({ results: Type.Array(ProfileOut) }), ...errorResponses(400, 401) },
      },
    },
    async (req) => ({ results: await directory.search(req.query, req.principal !== undefined) }),
  );

  app.get(
    '/hub/:hub_address/profile',
    {
      config: { auth: 'public' },
      schema: { tags, security: PUBLIC_SECURITY, summary: 'Public profile of a hub identity', params: HubAddressParams, response: { 200: ProfileOut, ...errorResponses(400, 401, 404) } },
    },
    async (req) => directory.profile(req.params.hub_address),
  );

  app.patch(
    '/hub/:hub_address/profile',
    {
      config: { auth: 'owner' },
      schema: {
        tags,
        security: [{ ownerJwt: [] }],
        summary: 'Update display_name and/or description',
        params: HubAddressParams,
        body: ProfileUpdate,
        response: { 200: ProfileOut, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => directory.updateProfile(ownerOf(req).tenantId, req.params.hub_address, req.body, ownerOf(req).sub),
  );
};
