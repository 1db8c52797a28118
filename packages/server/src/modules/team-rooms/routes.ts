/**
 * Team-room routes (SPEC §2.5, §4.13): create (owner) and list (owner JWT or API key with
 * optional `X-Workspace-Id`). Thin: rules live in service.ts and the room module.
 */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ownerOf, unregisteredKeyOnOpenRoute } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import { Uuid } from '../../http/schemas.js';
import { RoomDetails, SecurityLevel } from '../rooms/routes.js';
import { MAX_MEMBERS } from '../rooms/service.js';
import { workspaceHeader, workspaceViewerOf } from '../workspaces/routes.js';
import type { TeamRoomService } from './service.js';

const TeamRoom = Type.Object({ id: Uuid, ...RoomDetails.properties });
const Summary = Type.Object({ id: Uuid, name: Type.String(), participant_count: Type.Integer(), workspace_id: Uuid });

const tags = ['team-rooms'];

export const teamRoomRoutes: FastifyPluginAsyncTypebox<{ teamRooms: TeamRoomService }> = async (app, { teamRooms }) => {
  app.post(
    '/team-rooms',
    {
      config: { auth: 'owner' },
      schema: {
        tags,
        security: [{ ownerJwt: [] }],
        summary: 'Create a team room in a workspace; participants are workspace members or owner devices',
        body: Type.Object({
          workspace_id: Uuid,
          name: Type.String({ minLength: 1, maxLength: 100 }),
          member_device_ids: Type.Array(Uuid, { minItems: 1, maxItems: MAX_MEMBERS }),
          security_level: Type.Optional(SecurityLevel),
        }),
        response: { 201: TeamRoom, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req, reply) => {
      const o = ownerOf(req);
      return reply.status(201).send(await teamRooms.create(o.tenantId, o.sub, req.body));
    },
  );

  app.get(
    '/team-rooms',
    {
      config: { auth: 'owner-or-apikey', allowUnregisteredKey: true },
      schema: {
        tags,
        security: [{ ownerJwt: [] }, { apiKey: [] }],
        summary: "List team rooms: all of the tenant's for the owner, those the key's device participates in for an API key",
        headers: workspaceHeader("API-key callers: only this workspace's team rooms (the key must be a member)"),
        querystring: Type.Object({ workspace_id: Type.Optional(Uuid) }),
        response: { 200: Type.Object({ team_rooms: Type.Array(Summary) }), ...errorResponses(400, 401, 403) },
      },
    },
    async (req) => {
      if (unregisteredKeyOnOpenRoute(req)) return { team_rooms: [] };
      const { tenantId, viewer } = workspaceViewerOf(req);
      return { team_rooms: await teamRooms.list(tenantId, viewer, req.query.workspace_id) };
    },
  );
};
