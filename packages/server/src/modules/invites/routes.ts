/** Invite routes (contract §4.2). */
import { ROUTES } from '@parley/protocol';
import type { FastifyPluginAsync } from 'fastify';
import { ownerOf } from '../../http/auth.js';
import { serve } from '../../http/contract.js';
import type { InviteService } from './service.js';

export const inviteRoutes: FastifyPluginAsync<{ invites: InviteService }> = async (app, { invites }) => {
  serve(
    app,
    ROUTES.createInvite,
    async (req, reply) => {
      const o = ownerOf(req);
      return reply.status(201).send(await invites.create(o.tenantId, o.sub, req.body.label));
    },
    {
      // The body is optional (design §7: "an optional {label}"): a missing body reads as {}.
      preValidation: async (req) => {
        req.body ??= {};
      },
    },
  );

  serve(app, ROUTES.listInvites, async (req) => ({ invites: await invites.list(ownerOf(req).tenantId) }));

  serve(app, ROUTES.revokeInvite, async (req) => invites.revoke(ownerOf(req).tenantId, req.params.id, ownerOf(req).sub));

  serve(app, ROUTES.deleteInvite, async (req, reply) => {
    await invites.remove(ownerOf(req).tenantId, req.params.id);
    return reply.status(204).send(null);
  });
};
