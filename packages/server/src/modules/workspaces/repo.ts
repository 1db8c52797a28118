/** Workspace queries (tenant-scoped transactions: RLS limits every query to the caller's tenant). */
import { and, asc, count, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { devices, workspaceMembers, workspaces } from '../../db/schema/index.js';

export type WorkspaceRow = typeof workspaces.$inferSelect;

/** A member as read with its device (deleted devices are no longer members). */
export interface MemberRow {
  deviceId: string;
  role: string;
  name: string;
  status: string;
  addedAt: Date;
}

/** Membership only counts devices that still exist (not soft-deleted). */
const liveMember = and(eq(devices.id, workspaceMembers.deviceId), isNull(devices.deletedAt));

export const insertWorkspace = (tx: Tx, row: typeof workspaces.$inferInsert) => tx.insert(workspaces).values(row).returning();

export async function getWorkspace(tx: Tx, id: string, forUpdate = false): Promise<WorkspaceRow | undefined> {
  const q = tx.select().from(workspaces).where(eq(workspaces.id, id));
  const [row] = forUpdate ? await q.for('update') : await q;
  return row;
}

/** Every workspace of the tenant with its live member count, oldest first. */
export async function listWithCounts(tx: Tx): Promise<(WorkspaceRow & { memberCount: number })[]> {
  const rows = await tx
    .select({ w: workspaces, n: count(devices.id) })
    .from(workspaces)
    .leftJoin(workspaceMembers, eq(workspaceMembers.workspaceId, workspaces.id))
    .leftJoin(devices, liveMember)
    .groupBy(workspaces.id)
    .orderBy(asc(workspaces.createdAt), asc(workspaces.id));
  return rows.map((r) => ({ ...r.w, memberCount: Number(r.n) }));
}

/** The workspaces a device belongs to, with its role there; `only` narrows to one workspace. */
export async function listOfDevice(tx: Tx, deviceId: string, only?: string): Promise<(WorkspaceRow & { role: string })[]> {
  const rows = await tx
    .select({ w: workspaces, role: workspaceMembers.role })
    .from(workspaceMembers)
    .innerJoin(workspaces, eq(workspaces.id, workspaceMembers.workspaceId))
    .where(and(eq(workspaceMembers.deviceId, deviceId), only ? eq(workspaces.id, only) : undefined))
    .orderBy(asc(workspaces.createdAt), asc(workspaces.id));
  return rows.map((r) => ({ ...r.w, role: r.role }));
}

/** Members of a workspace (live devices), in the order they were added. */
export const listMembers = (tx: Tx, workspaceId: string): Promise<MemberRow[]> =>
  tx
    .select({ deviceId: workspaceMembers.deviceId, role: workspaceMembers.role, name: devices.name, status: devices.status, addedAt: workspaceMembers.createdAt })
    .from(workspaceMembers)
    .innerJoin(devices, liveMember)
    .where(eq(workspaceMembers.workspaceId, workspaceId))
    .orderBy(asc(workspaceMembers.createdAt), asc(workspaceMembers.deviceId));

/** Live device ids among `deviceIds` that are members of the workspace. */
export async function memberIds(tx: Tx, workspaceId: string, deviceIds: string[]): Promise<Set<string>> {
  if (deviceIds.length === 0) return new Set();
  const rows = await tx
    .select({ id: workspaceMembers.deviceId })
    .from(workspaceMembers)
    .innerJoin(devices, liveMember)
    .where(and(eq(workspaceMembers.workspaceId, workspaceId), inArray(workspaceMembers.deviceId, deviceIds)));
  return new Set(rows.map((r) => r.id));
}

/** Add members, or change the role of existing ones. */
export const upsertMembers = (tx: Tx, rows: (typeof workspaceMembers.$inferInsert)[]) =>
  rows.length === 0
    ? Promise.resolve()
    : tx
        .insert(workspaceMembers)
        .values(rows)
        .onConflictDoUpdate({ target: [workspaceMembers.workspaceId, workspaceMembers.deviceId], set: { role: sql`excluded.role` } })
        .then(() => undefined);

export async function deleteMember(tx: Tx, workspaceId: string, deviceId: string): Promise<boolean> {
  const rows = await tx
    .delete(workspaceMembers)
    .where(and(eq(workspaceMembers.workspaceId, workspaceId), eq(workspaceMembers.deviceId, deviceId)))
    .returning({ id: workspaceMembers.deviceId });
  return rows.length > 0;
}

/** Kind and status of the given (non-deleted) devices of the tenant. */
export const devicesByIds = (tx: Tx, ids: string[]) =>
  ids.length === 0
    ? Promise.resolve([] as { id: string; kind: string; status: string }[])
    : tx
        .select({ id: devices.id, kind: devices.kind, status: devices.status })
        .from(devices)
        .where(and(inArray(devices.id, ids), isNull(devices.deletedAt)));
