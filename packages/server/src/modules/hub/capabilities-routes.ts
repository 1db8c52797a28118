/** Capability routes (SPEC §2.8, §4.10): list and register an identity's capabilities (owner). */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ownerOf } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import { Nullable, Timestamp } from '../../http/schemas.js';
import type { HubCapabilityService } from './capabilities.js';
import { CapabilityName, HubAddressParams } from './routes.js';

/** Semver-like: `1`, `1.2`, `1.2.3`, with optional `-pre.release` and `+build`. */
const Version = Type.String({
  maxLength: 100,
  pattern: '^(0|[1-9][0-9]{0,8})(\\.(0|[1-9][0-9]{0,8})){0,2}(-[0-9A-Za-z-]+(\\.[0-9A-Za-z-]+)*)?(\\+[0-9A-Za-z-]+(\\.[0-9A-Za-z-]+)*)?$',
  description: 'semver-like: 1, 1.2 or 1.2.3, optional -pre.release and +build',
});
const Sla = Type.Object(
  {
    latency_p95_ms: Type.Number({ minimum: 0, maximum: 1e9, description: '95th-percentile latency, milliseconds' }),
    uptime_sla: Type.Number({ minimum: 0, maximum: 1, description: 'promised uptime, fraction 0..1' }),
  },
  { additionalProperties: false },
);
const JsonSchemaDoc = Type.Object({}, { additionalProperties: true, description: 'a JSON Schema object: 2020-12 unless its $schema names 2019-09 or draft-07; validated against the meta-schema' });
const CapabilityIn = Type.Object({
  name: CapabilityName,
  version: Version,
  description: Type.Optional(Type.String({ maxLength: 1000 })),
  input_schema: JsonSchemaDoc,
  sla: Type.Optional(Sla),
});
const CapabilityOut = Type.Object({
  name: Type.String(),
  version: Type.String(),
  description: Nullable(Type.String()),
  input_schema: JsonSchemaDoc,
  sla: Nullable(Sla),
  certification_tier: Type.String({ description: 'unverified | certified | enterprise (set by certify)' }),
  registered_at: Timestamp,
});
const tags = ['hub'];
const security = [{ ownerJwt: [] }];
const owner = { auth: 'owner' as const };

export const hubCapabilityRoutes: FastifyPluginAsyncTypebox<{ capabilities: HubCapabilityService }> = async (app, { capabilities }) => {
  app.get(
    '/hub/:hub_address/capabilities',
    {
      config: owner,
      schema: {
        tags,
        security,
        summary: "An identity's registered capabilities",
        params: HubAddressParams,
        response: { 200: Type.Object({ capabilities: Type.Array(CapabilityOut) }), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => ({ capabilities: await capabilities.list(ownerOf(req).tenantId, req.params.hub_address) }),
  );

  app.post(
    '/hub/:hub_address/capabilities',
    {
      config: owner,
      schema: {
        tags,
        security,
        summary: 'Register a capability (input_schema must be a valid JSON Schema)',
        params: HubAddressParams,
        body: CapabilityIn,
        response: { 201: CapabilityOut, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (req, reply) => reply.status(201).send(await capabilities.register(ownerOf(req).tenantId, req.params.hub_address, req.body, ownerOf(req).sub)),
  );
};
