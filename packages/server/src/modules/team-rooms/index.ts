/** Team rooms (contract §2.5, §4.13): rooms of a workspace. The area's public surface. */
import type { Db } from '../../db/client.js';
import { API_PREFIX, type Area } from '../../http/area.js';
import type { RoomContext } from '../rooms/index.js';
import type { WorkspaceService } from '../workspaces/index.js';
import { teamRoomRoutes } from './routes.js';
import { TeamRoomService } from './service.js';

/** Team room routes over the rooms and workspaces areas. */
export function createTeamRooms(d: { db: Db; rooms: RoomContext; workspaces: WorkspaceService }): Area {
  return {
    async routes(app) {
      await app.register(teamRoomRoutes, { prefix: API_PREFIX, teamRooms: new TeamRoomService(d) });
    },
  };
}
