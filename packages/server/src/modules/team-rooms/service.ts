/**
 * Team rooms (contract §2.5, §4.13): rooms that belong to a workspace (`rooms.workspace_id`), created
 * through the room module (`createRoom`, so members, pairwise conversations, policies
 * and events are those of any room). Participants are members of the workspace or owner devices
 * of the tenant (the humans overseeing the team); anything else is a 400.
 *
 * Listing: owners see every active team room of the tenant (optionally one workspace's); an
 * API-key agent sees the team rooms of its workspaces in which its device participates, only the
 * `X-Workspace-Id` workspace's when that header is sent.
 */
import type { CreateTeamRoomRequest, TeamRoom, TeamRoomSummary } from '@parley/protocol';
import type { Db } from '../../db/client.js';
import { withTenant } from '../../db/tenant.js';
import { badRequest } from '../../lib/errors.js';
import { createRoom, type RoomContext } from '../rooms/index.js';
import { devicesByIds, memberIds, type WorkspaceService } from '../workspaces/index.js';
import * as repo from './repo.js';

/** Who lists team rooms: the owner (whole tenant) or an agent device (its own rooms). */
export type TeamRoomViewer = { kind: 'owner' } | { kind: 'agent'; deviceId: string; workspaceId: string | null };

export interface TeamRoomServiceDeps {
  db: Db;
  /** The room area's context: a team room is a room created through `createRoom`. */
  rooms: RoomContext;
  workspaces: Pick<WorkspaceService, 'mustGet'>;
}

const summary = (r: repo.TeamRoomRow): TeamRoomSummary => ({ id: r.id, name: r.name, participant_count: r.participantCount, workspace_id: r.workspaceId });

export class TeamRoomService {
  constructor(private readonly deps: TeamRoomServiceDeps) {}

  /**
   * Create a team room: the room (201 shape of `POST /rooms`) with `id` = `room_id`.
   * The membership check and the room creation are two transactions: a member removed from the
   * workspace in between still joins (the owner can remove it from the room).
   * @throws 404 unknown workspace; 400 a participant that is neither a workspace member nor an
   *   owner device of the tenant (and `createRoom`'s 400s: not ACTIVE, more than 100 members).
   */
  async create(tenantId: string, createdBy: string, input: CreateTeamRoomRequest): Promise<TeamRoom> {
    const ids = [...new Set(input.member_device_ids.map((d) => d.toLowerCase()))];
    await withTenant(this.deps.db, tenantId, async (tx) => {
      await this.deps.workspaces.mustGet(tx, input.workspace_id);
      const members = await memberIds(tx, input.workspace_id, ids);
      const rest = ids.filter((id) => !members.has(id));
      const owners = new Set((await devicesByIds(tx, rest)).filter((d) => d.kind === 'owner').map((d) => d.id));
      const bad = rest.filter((id) => !owners.has(id));
      if (bad.length > 0) throw badRequest(`team room participants must be members of the workspace or owner devices: ${bad.join(', ')}`);
    });
    const room = await createRoom(this.deps.rooms, tenantId, createdBy, { ...input, member_device_ids: ids });
    return { id: room.room_id, ...room };
  }

  /** Active team rooms visible to `viewer`, oldest first; `workspaceId` narrows to one workspace. */
  list(tenantId: string, viewer: TeamRoomViewer, workspaceId?: string): Promise<TeamRoomSummary[]> {
    return withTenant(this.deps.db, tenantId, async (tx) => {
      if (viewer.kind === 'owner') return (await repo.listTeamRooms(tx, { workspaceId })).map(summary);
      if (viewer.workspaceId && workspaceId && viewer.workspaceId !== workspaceId) return [];
      return (await repo.listTeamRooms(tx, { workspaceId: viewer.workspaceId ?? workspaceId, deviceId: viewer.deviceId })).map(summary);
    });
  }
}
