/**
 * Room management (contract §4.6; design §8.5): create a room with its members and pairwise
 * conversations, list and read rooms, update them, add and remove members, and announce
 * membership changes (`room_joined`, `member_joined`, `member_left`).
 */
import { randomUUID } from 'node:crypto';
import { MAX_MEMBERS, type CreateRoomRequest, type MemberJoinedEvent, type MemberLeftEvent, type Room, type RoomJoinedEvent, type RoomSummary, type UpdateRoomRequest } from '@parley/protocol';
import type { Tx } from '../../db/client.js';
import { withTenant } from '../../db/tenant.js';
import { badRequest, conflict, forbidden, notFound } from '../../lib/errors.js';
import { requireOwnerDeviceOf } from '../devices/index.js';
import { wipeHeldPayloads } from '../policies/index.js';
import { details, mustGet, mustGetOpen, SENDER_NOT_A_MEMBER, summaries, type DeviceKind, type RoomContext } from './internal.js';
import * as repo from './repo.js';

const pairKey = (a: string, b: string): [string, string] => (a < b ? [a, b] : [b, a]);

/**
 * Create a room with its members and one pairwise conversation per member pair, in one
 * transaction; members get `room_joined`, owners `member_joined` per member. Used by
 * `POST /rooms` and by team rooms (`workspace_id` set). Without `security_level` the room gets
 * the tenant's `default_room_security_level` setting.
 *
 * `creatorDeviceId` (`X-Device-Id` of `POST /rooms`): the creating owner's device joins the
 * room as a member whether or not it is listed, so the owner can post to the room it created
 * (docs/decisions.md "The creating owner device joins its room"). It must be an owner device
 * registered by `createdBy`.
 * @throws 400 when a member is not an ACTIVE device of the tenant or there are more than 100;
 *   404 for an unknown workspace or creator device; 403 a creator device that is not one of
 *   `createdBy`'s owner devices, or is revoked.
 */
export async function createRoom(ctx: RoomContext, tenantId: string, createdBy: string, input: CreateRoomRequest, creatorDeviceId?: string): Promise<Room> {
  const ids = [...new Set([...input.member_device_ids, ...(creatorDeviceId ? [creatorDeviceId] : [])].map((d) => d.toLowerCase()))];
  if (ids.length < 1 || ids.length > MAX_MEMBERS) throw badRequest(`a room has 1 to ${MAX_MEMBERS} members`);
  const room = await withTenant(ctx.deps.db, tenantId, async (tx) => {
    if (input.workspace_id && !(await repo.workspaceExists(tx, input.workspace_id))) throw notFound('workspace');
    if (creatorDeviceId) await requireOwnerDeviceOf(tx, createdBy, creatorDeviceId);
    const kinds = await activeKinds(tx, ids);
    const [row] = await repo.insertRoom(tx, {
      id: randomUUID(),
      tenantId,
      timelineId: randomUUID(),
      name: input.name,
      securityLevel: input.security_level ?? (await ctx.deps.defaultSecurityLevel?.(tx, tenantId)) ?? 'standard',
      workspaceId: input.workspace_id ?? null,
      createdBy,
    });
    await repo.insertMembers(tx, ids.map((deviceId) => ({ roomId: row!.id, tenantId, deviceId, kind: kinds.get(deviceId)! })));
    const pairs: [string, string][] = [];
    for (let i = 0; i < ids.length; i++) for (let j = i + 1; j < ids.length; j++) pairs.push(pairKey(ids[i]!, ids[j]!));
    await repo.insertConversations(tx, pairs.map(([a, b]) => ({ id: randomUUID(), tenantId, roomId: row!.id, deviceA: a, deviceB: b })));
    return details(tx, row!);
  });
  await announceJoined(ctx, tenantId, room, ids, []);
  return room;
}

/** Active (not archived) rooms, oldest first, without their conversations. */
export function listRooms(ctx: RoomContext, tenantId: string): Promise<RoomSummary[]> {
  return withTenant(ctx.deps.db, tenantId, async (tx) => summaries(tx, await repo.listActiveRooms(tx)));
}

/**
 * Room details with members and conversations. `memberDeviceId` set = a device reading for
 * itself, which must be a member (403).
 * @throws 404 when unknown (or another tenant's).
 */
export function getRoom(ctx: RoomContext, tenantId: string, id: string, memberDeviceId?: string): Promise<Room> {
  return withTenant(ctx.deps.db, tenantId, async (tx) => {
    const room = await details(tx, await mustGet(tx, id));
    if (memberDeviceId && !room.members.some((m) => m.device_id === memberDeviceId)) throw forbidden('the device is not a member of this room');
    return room;
  });
}

/**
 * Rename, change the security level, and/or scope existing policies to the room (their
 * `scope_room_id` is set; a policy scoped to another room moves here).
 * @throws 404 unknown room or policy, 409 for a policy scoped to a skill.
 */
export function updateRoom(ctx: RoomContext, tenantId: string, id: string, input: UpdateRoomRequest): Promise<Room> {
  return withTenant(ctx.deps.db, tenantId, async (tx) => {
    let room = await mustGet(tx, id, true);
    if (input.name !== undefined || input.security_level !== undefined) {
      [room] = (await repo.updateRoom(tx, id, { name: input.name ?? room.name, securityLevel: input.security_level ?? room.securityLevel })) as [repo.RoomRow];
    }
    if (input.policies && input.policies.length > 0) {
      const ids = [...new Set(input.policies.map((p) => p.toLowerCase()))];
      const found = await repo.policiesByIds(tx, ids);
      if (found.length !== ids.length) throw notFound('policy');
      if (found.some((p) => p.scopeSkill !== null)) throw conflict('a policy scoped to a skill cannot be scoped to a room');
      await repo.scopePolicies(tx, id, ids);
    }
    return details(tx, room);
  });
}

/**
 * Add an ACTIVE device of the tenant, with a pairwise conversation to every member. The new
 * member gets `room_joined`; owners and the other agent members `member_joined`.
 * @throws 400 not an ACTIVE device, 404 unknown room, 409 already a member, archived or full room.
 */
export async function addMember(ctx: RoomContext, tenantId: string, roomId: string, deviceId: string): Promise<Room> {
  const id = deviceId.toLowerCase();
  const joined = await withTenant(ctx.deps.db, tenantId, async (tx) => {
    const row = await mustGetOpen(tx, roomId, true);
    const members = await repo.membersOf(tx, [roomId]);
    if (members.some((m) => m.deviceId === id)) throw conflict('the device is already a member of this room');
    return join(tx, tenantId, row, members, id, async () => (await activeKinds(tx, [id])).get(id)!);
  });
  await announceJoined(ctx, tenantId, joined.room, [id], joined.others);
  return joined.room;
}

/**
 * Make the sender of a room message a member when it is an ACTIVE owner device of the tenant
 * (docs/decisions.md "An owner device joins the room it sends into"): nothing when it already is
 * a member; otherwise it joins as {@link addMember} adds a device (pairwise conversations,
 * `room_joined` to it, `member_joined` to owners and the agent members), before its message is
 * sent. Any other non-member is refused as the send would refuse it.
 * @throws 403 not a member and not an ACTIVE owner device of the tenant; 404 unknown room; 409
 *   archived or full room.
 */
export async function joinOwnerSender(ctx: RoomContext, tenantId: string, roomId: string, deviceId: string): Promise<void> {
  const id = deviceId.toLowerCase();
  const joined = await withTenant(ctx.deps.db, tenantId, async (tx) => {
    if (await repo.getMember(tx, roomId, id)) return undefined;
    const row = await mustGetOpen(tx, roomId, true);
    const members = await repo.membersOf(tx, [roomId]);
    if (members.some((m) => m.deviceId === id)) return undefined;
    const [device] = await repo.devicesByIds(tx, [id]);
    if (device?.kind !== 'owner' || device.status !== 'ACTIVE') throw forbidden(SENDER_NOT_A_MEMBER);
    return join(tx, tenantId, row, members, id, async () => 'owner');
  });
  if (joined) await announceJoined(ctx, tenantId, joined.room, [id], joined.others);
}

/**
 * Insert member `id` (its kind from `kindOf`, asked once the room is known not to be full) with a
 * pairwise conversation to each of `members` (the room's current ones, room row-locked).
 * @throws 409 full room; what `kindOf` throws.
 */
async function join(
  tx: Tx,
  tenantId: string,
  row: repo.RoomRow,
  members: repo.MemberWithKeys[],
  id: string,
  kindOf: () => Promise<DeviceKind>,
): Promise<{ room: Room; others: repo.MemberWithKeys[] }> {
  if (members.length >= MAX_MEMBERS) throw conflict(`a room has at most ${MAX_MEMBERS} members`);
  await repo.insertMembers(tx, [{ roomId: row.id, tenantId, deviceId: id, kind: await kindOf() }]);
  await repo.insertConversations(
    tx,
    members.map((m) => {
      const [a, b] = pairKey(id, m.deviceId);
      return { id: randomUUID(), tenantId, roomId: row.id, deviceA: a, deviceB: b };
    }),
  );
  return { room: await details(tx, row), others: members };
}

/**
 * Remove a member (its conversations and messages stay for the history). Messages still held
 * for it in this room are denied in the same transaction (their ciphertext dropped; approving
 * one later answers 409). Owners, the removed device and the remaining agent members get
 * `member_left {room_id, device_id}`.
 * @throws 404 unknown room or not a member.
 */
export async function removeMember(ctx: RoomContext, tenantId: string, roomId: string, deviceId: string): Promise<void> {
  const id = deviceId.toLowerCase();
  const { removed, rest } = await withTenant(ctx.deps.db, tenantId, async (tx) => {
    await mustGet(tx, roomId, true);
    const [removed] = await repo.deleteMember(tx, roomId, id);
    if (!removed) throw notFound('room member');
    await wipeHeldPayloads(tx, await repo.denyHeldTo(tx, roomId, id, new Date()));
    return { removed, rest: await repo.membersOf(tx, [roomId]) };
  });
  const data: MemberLeftEvent = { room_id: roomId, device_id: id };
  const agents = [...rest, removed].filter((m) => m.kind === 'agent').map((m) => m.deviceId);
  if (agents.length > 0) await ctx.deps.notifier.toDevices(tenantId, agents, 'member_left', data);
  await ctx.deps.notifier.toOwners(tenantId, 'member_left', data);
}

/** Kind of each listed device; 400 unless every one is an ACTIVE device of the tenant. */
async function activeKinds(tx: Tx, ids: string[]): Promise<Map<string, DeviceKind>> {
  const found = new Map((await repo.devicesByIds(tx, ids)).map((d) => [d.id, d]));
  for (const id of ids) {
    if (found.get(id)?.status !== 'ACTIVE') throw badRequest(`device ${id} is not an ACTIVE device of this tenant`);
  }
  return new Map(ids.map((id) => [id, found.get(id)!.kind as DeviceKind]));
}

/**
 * After commit: each new member gets `room_joined {room_id, conversation_id, name,
 * security_level, members, conversations}` (its own pairwise conversations); owners and the
 * existing agent members get `member_joined {room_id, device_id}` per new member.
 */
async function announceJoined(ctx: RoomContext, tenantId: string, room: Room, joined: string[], existing: { deviceId: string; kind: string }[]): Promise<void> {
  const { notifier } = ctx.deps;
  for (const id of joined) {
    const data: RoomJoinedEvent = {
      room_id: room.room_id,
      conversation_id: room.conversation_id,
      name: room.name,
      security_level: room.security_level,
      members: room.members,
      conversations: room.conversations.filter((c) => c.device_ids.includes(id)),
    };
    await notifier.toDevices(tenantId, [id], 'room_joined', data);
  }
  const agents = existing.filter((m) => m.kind === 'agent').map((m) => m.deviceId);
  for (const id of joined) {
    const data: MemberJoinedEvent = { room_id: room.room_id, device_id: id };
    await notifier.toOwners(tenantId, 'member_joined', data);
    if (agents.length > 0) await notifier.toDevices(tenantId, agents, 'member_joined', data);
  }
}
