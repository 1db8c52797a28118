/**
 * Policy and held-message routes (SPEC §4.9; DESIGN §8.3, §8.5), all for the owner JWT.
 * `/policies/held-messages` is a static path; `/policies/{id}` takes UUIDs only.
 */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ownerOf } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import { IdParams, Nullable, Timestamp, Uuid, refuseUnknownKeys } from '../../http/schemas.js';
import { ownerTransition } from '../../http/transition.js';
import { POLICY_ACTIONS, PolicyConditions } from './engine.js';
import { HELD_STATUSES, type PolicyService } from './service.js';

const Action = Type.Union(POLICY_ACTIONS.map((a) => Type.Literal(a)));
const Name = Type.String({ minLength: 1, maxLength: 200 });
const Priority = Type.Integer({ minimum: -1_000_000, maximum: 1_000_000, description: 'higher first; decides the reported winner among equally restrictive matches' });
const ConditionsIn = refuseUnknownKeys(PolicyConditions);
const ScopeIn = refuseUnknownKeys(
  Type.Object(
    { room_id: Type.Optional(Uuid), skill: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })) },
    { additionalProperties: false, description: 'a room or a skill; absent, null or {} = tenant-wide' },
  ),
);
const PolicyFields = {
  name: Name,
  scope: Type.Optional(Nullable(ScopeIn)),
  priority: Type.Optional(Priority),
  conditions: ConditionsIn,
  action: Action,
  enabled: Type.Optional(Type.Boolean()),
};
const PolicyOut = Type.Object({
  policy_id: Uuid,
  name: Type.String(),
  scope: Type.Object({ room_id: Nullable(Uuid), skill: Nullable(Type.String()) }),
  priority: Type.Integer(),
  conditions: PolicyConditions,
  action: Action,
  enabled: Type.Boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
});
const HeldStatus = Type.Union(HELD_STATUSES.map((s) => Type.Literal(s)));
const HeldOut = Type.Object({
  held_message_id: Uuid,
  room_id: Nullable(Uuid),
  channel_id: Nullable(Uuid),
  sender_device_id: Uuid,
  recipient_device_id: Nullable(Uuid),
  policy_id: Nullable(Uuid),
  message_type: Type.String(),
  priority: Type.String(),
  status: HeldStatus,
  created_at: Timestamp,
  expires_at: Timestamp,
  decided_at: Nullable(Timestamp),
});

const tags = ['policies'];
const security = [{ ownerJwt: [] }];
const owner = { auth: 'owner' as const };

export const policyRoutes: FastifyPluginAsyncTypebox<{ policies: PolicyService }> = async (app, { policies }) => {
  app.post(
    '/policies',
    {
      config: owner,
      schema: {
        tags,
        security,
        summary: 'Create a policy (DESIGN §8.5)',
        body: Type.Object(PolicyFields),
        response: { 201: PolicyOut, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req, reply) => reply.status(201).send(await policies.create(ownerOf(req).tenantId, req.body, ownerOf(req).sub)),
  );

  app.get(
    '/policies',
    { config: owner, schema: { tags, security, summary: 'List the tenant policies', response: { 200: Type.Object({ policies: Type.Array(PolicyOut) }), ...errorResponses(401, 403) } } },
    async (req) => ({ policies: await policies.list(ownerOf(req).tenantId) }),
  );

  app.patch(
    '/policies/:id',
    {
      config: owner,
      schema: {
        tags,
        security,
        summary: 'Update a policy (any subset of its fields)',
        params: IdParams,
        body: Type.Partial(Type.Object(PolicyFields), { minProperties: 1 }),
        response: { 200: PolicyOut, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => policies.update(ownerOf(req).tenantId, req.params.id, req.body, ownerOf(req).sub),
  );

  app.delete(
    '/policies/:id',
    { config: owner, schema: { tags, security, summary: 'Delete a policy', params: IdParams, response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) } } },
    async (req, reply) => {
      await policies.delete(ownerOf(req).tenantId, req.params.id, ownerOf(req).sub);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/policies/held-messages',
    {
      config: owner,
      schema: {
        tags,
        security,
        summary: 'List held messages (default: those awaiting approval), without ciphertext',
        querystring: Type.Object({ status: Type.Optional(HeldStatus) }),
        response: { 200: Type.Object({ held_messages: Type.Array(HeldOut) }), ...errorResponses(400, 401, 403) },
      },
    },
    async (req) => ({ held_messages: await policies.listHeld(ownerOf(req).tenantId, req.query.status ? { status: req.query.status } : {}) }),
  );

  ownerTransition(app, '/policies/held-messages/:id/approve', { tags, summary: 'Approve a held message; fan-out proceeds', response: HeldOut }, (o, id) =>
    policies.approve(o.tenantId, o.sub, id),
  );
  ownerTransition(app, '/policies/held-messages/:id/deny', { tags, summary: 'Deny a held message; its ciphertext is dropped', response: HeldOut }, (o, id) =>
    policies.deny(o.tenantId, o.sub, id),
  );
};
