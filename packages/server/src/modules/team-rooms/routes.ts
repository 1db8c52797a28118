/**
 * Team-room routes (contract §2.5, §4.13): create (owner) and list (owner JWT or API key with
 * optional `X-Workspace-Id`). Thin: rules live in service.ts and the room module.
 */
import { ROUTES } from '@parley/protocol';
import type { FastifyPluginAsync } from 'fastify';
import { ownerOf, unregisteredKeyOnOpenRoute } from '../../http/auth.js';
import { serve } from '../../http/contract.js';
import { workspaceViewerOf } from '../workspaces/index.js';
import type { TeamRoomService } from './service.js';

export const teamRoomRoutes: FastifyPluginAsync<{ teamRooms: TeamRoomService }> = async (app, { teamRooms }) => {
  serve(app, ROUTES.createTeamRoom, async (req, reply) => {
    const o = ownerOf(req);
    return reply.status(201).send(await teamRooms.create(o.tenantId, o.sub, req.body));
  });

  serve(
    app,
    ROUTES.listTeamRooms,
    async (req) => {
      if (unregisteredKeyOnOpenRoute(req)) return { team_rooms: [] };
      const { tenantId, viewer } = workspaceViewerOf(req);
      return { team_rooms: await teamRooms.list(tenantId, viewer, req.query.workspace_id) };
    },
    { config: { allowUnregisteredKey: true } },
  );
};
