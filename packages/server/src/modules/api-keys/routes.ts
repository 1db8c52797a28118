/** API key routes (SPEC §4.8; DESIGN §8.17: `POST /api-keys {name, env}`, env default dev). */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ownerOf } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import { IdParams, Nullable, Timestamp, Uuid } from '../../http/schemas.js';
import { ownerTransition } from '../../http/transition.js';
import { API_KEY_ENVS, type ApiKeyService } from './service.js';

const Env = Type.Union(API_KEY_ENVS.map((e) => Type.Literal(e)));
const ApiKeyOut = Type.Object({
  id: Uuid,
  name: Type.String(),
  env: Type.String(),
  prefix: Type.String({ description: 'the first characters of the raw key' }),
  status: Type.Union([Type.Literal('active'), Type.Literal('revoked')]),
  device_id: Nullable(Uuid),
  created_at: Timestamp,
  revoked_at: Nullable(Timestamp),
  last_used_at: Nullable(Timestamp),
  rotated_from: Nullable(Uuid),
});
const WithKey = Type.Intersect([ApiKeyOut, Type.Object({ key: Type.String({ description: 'svc_agent_sk_{env}_{64 hex}; shown only here' }) })]);
const tags = ['api-keys'];
const security = [{ ownerJwt: [] }];
const owner = { auth: 'owner' as const };

export const apiKeyRoutes: FastifyPluginAsyncTypebox<{ apiKeys: ApiKeyService }> = async (app, { apiKeys }) => {
  app.post(
    '/api-keys',
    {
      config: owner,
      schema: {
        tags,
        security,
        summary: 'Create an API key; the raw key is returned once',
        body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 100 }), env: Type.Optional(Env) }),
        response: { 201: WithKey, ...errorResponses(400, 401, 403) },
      },
    },
    async (req, reply) => {
      const o = ownerOf(req);
      return reply.status(201).send(await apiKeys.create(o.tenantId, o.sub, req.body.name, req.body.env));
    },
  );

  app.get(
    '/api-keys',
    { config: owner, schema: { tags, security, summary: 'List tenant API keys', response: { 200: Type.Object({ api_keys: Type.Array(ApiKeyOut) }), ...errorResponses(401, 403) } } },
    async (req) => ({ api_keys: await apiKeys.list(ownerOf(req).tenantId) }),
  );

  ownerTransition(app, '/api-keys/:id/revoke', { tags, summary: 'Revoke an API key (and its device)', response: ApiKeyOut }, (o, id) => apiKeys.revoke(o.tenantId, id, o.sub));
  ownerTransition(app, '/api-keys/:id/rotate', { tags, summary: 'Atomic replacement: the old key is revoked and a new one returned once', response: WithKey }, (o, id) =>
    apiKeys.rotate(o.tenantId, o.sub, id),
  );

  app.delete(
    '/api-keys/:id',
    { config: owner, schema: { tags, security, summary: 'Delete an API key and its associated device', params: IdParams, response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) } } },
    async (req, reply) => {
      await apiKeys.delete(ownerOf(req).tenantId, req.params.id, ownerOf(req).sub);
      return reply.status(204).send(null);
    },
  );
};
