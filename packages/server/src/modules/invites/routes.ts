/** Invite routes (SPEC §4.2). */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses } from '../../http/errors.js';
import { ownerOf } from '../../http/auth.js';
import { IdParams, Nullable, Timestamp, Uuid } from '../../http/schemas.js';
import type { InviteService } from './service.js';

const InviteOut = Type.Object({
  id: Uuid,
  status: Type.Union(['active', 'revoked', 'consumed', 'expired'].map((s) => Type.Literal(s))),
  label: Nullable(Type.String()),
  created_at: Timestamp,
  expires_at: Timestamp,
  consumed_at: Nullable(Timestamp),
  device_id: Nullable(Uuid),
});
const owner = { auth: 'owner' as const };
const security = [{ ownerJwt: [] }];
const tags = ['invites'];

export const inviteRoutes: FastifyPluginAsyncTypebox<{ invites: InviteService }> = async (app, { invites }) => {
  app.post(
    '/invites',
    {
      config: owner,
      // The body is optional (DESIGN §7: "an optional {label}"): a missing body reads as {}.
      preValidation: async (req) => {
        req.body ??= {};
      },
      schema: {
        tags,
        security,
        summary: 'Create a single-use invite; the raw token is returned once',
        body: Type.Object({ label: Type.Optional(Type.String({ maxLength: 200 })) }),
        response: { 201: Type.Intersect([InviteOut, Type.Object({ token: Type.String() })]), ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (req, reply) => {
      const o = ownerOf(req);
      return reply.status(201).send(await invites.create(o.tenantId, o.sub, req.body.label));
    },
  );

  app.get(
    '/invites',
    {
      config: owner,
      schema: { tags, security, summary: 'List tenant invites', response: { 200: Type.Object({ invites: Type.Array(InviteOut) }), ...errorResponses(401, 403) } },
    },
    async (req) => ({ invites: await invites.list(ownerOf(req).tenantId) }),
  );

  app.post(
    '/invites/:id/revoke',
    {
      config: owner,
      schema: { tags, security, summary: 'Revoke an active invite (409 unless active)', params: IdParams, response: { 200: InviteOut, ...errorResponses(400, 401, 403, 404, 409) } },
    },
    async (req) => invites.revoke(ownerOf(req).tenantId, req.params.id, ownerOf(req).sub),
  );

  app.delete(
    '/invites/:id',
    {
      config: owner,
      schema: { tags, security, summary: 'Soft-delete a revoked, consumed or expired invite', params: IdParams, response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404, 409) } },
    },
    async (req, reply) => {
      await invites.remove(ownerOf(req).tenantId, req.params.id);
      return reply.status(204).send(null);
    },
  );
};
