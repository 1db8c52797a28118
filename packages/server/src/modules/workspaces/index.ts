/** Workspaces (contract §2.5, §4.13): the area's public surface; team rooms use its members and viewer. */
import type { Db } from '../../db/client.js';
import { API_PREFIX, type Area } from '../../http/area.js';
import { workspaceRoutes } from './routes.js';
import { WorkspaceService } from './service.js';

export { devicesByIds, memberIds } from './repo.js';
export { workspaceViewerOf } from './routes.js';
export type { WorkspaceService } from './service.js';

/** The workspaces area and its service. */
export interface WorkspacesArea extends Area {
  workspaces: WorkspaceService;
}

/** Workspaces. */
export function createWorkspaces(d: { db: Db }): WorkspacesArea {
  const workspaces = new WorkspaceService(d.db);
  return {
    workspaces,
    async routes(app) {
      await app.register(workspaceRoutes, { prefix: API_PREFIX, workspaces });
    },
  };
}
