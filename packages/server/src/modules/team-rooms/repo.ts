/** Team-room queries: rooms with a `workspace_id` (tenant-scoped transactions). */
import { and, asc, count, eq, exists, isNotNull, isNull, type SQL } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { devices, roomMembers, rooms, workspaceMembers } from '../../db/schema/index.js';

/** A team room as listed: its live participant count (deleted devices do not count). */
export interface TeamRoomRow {
  id: string;
  name: string;
  workspaceId: string;
  participantCount: number;
}

/** Which team rooms to list. */
export interface TeamRoomFilter {
  /** Only this workspace's. */
  workspaceId?: string;
  /** Only rooms this device participates in, of workspaces it is a member of. */
  deviceId?: string;
}

/** Active (not archived) team rooms, oldest first, narrowed by `filter`. */
export async function listTeamRooms(tx: Tx, filter: TeamRoomFilter): Promise<TeamRoomRow[]> {
  const where: (SQL | undefined)[] = [isNotNull(rooms.workspaceId), isNull(rooms.archivedAt)];
  if (filter.workspaceId) where.push(eq(rooms.workspaceId, filter.workspaceId));
  if (filter.deviceId) {
    const deviceId = filter.deviceId;
    where.push(
      exists(tx.select({ x: roomMembers.deviceId }).from(roomMembers).where(and(eq(roomMembers.roomId, rooms.id), eq(roomMembers.deviceId, deviceId)))),
      exists(
        tx
          .select({ x: workspaceMembers.deviceId })
          .from(workspaceMembers)
          .where(and(eq(workspaceMembers.workspaceId, rooms.workspaceId), eq(workspaceMembers.deviceId, deviceId))),
      ),
    );
  }
  const rows = await tx
    .select({ id: rooms.id, name: rooms.name, workspaceId: rooms.workspaceId, n: count(devices.id) })
    .from(rooms)
    .leftJoin(roomMembers, eq(roomMembers.roomId, rooms.id))
    .leftJoin(devices, and(eq(devices.id, roomMembers.deviceId), isNull(devices.deletedAt)))
    .where(and(...where))
    .groupBy(rooms.id)
    .orderBy(asc(rooms.createdAt), asc(rooms.id));
  return rows.map((r) => ({ id: r.id, name: r.name, workspaceId: r.workspaceId!, participantCount: Number(r.n) }));
}
