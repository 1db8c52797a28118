/** Room queries (tenant-scoped transactions; SPEC §2.5, §4.6; DESIGN §8.5). */
import { and, asc, count, desc, eq, exists, gt, gte, inArray, isNull, or, sql, type SQL } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import {
  devices,
  hubIdentities,
  mlsKeyPackages,
  policies,
  roomConversations,
  roomEnvelopes,
  roomMembers,
  roomMessages,
  rooms,
  workspaces,
} from '../../db/schema.js';

export type RoomRow = typeof rooms.$inferSelect;
export type MemberRow = typeof roomMembers.$inferSelect;
export type RoomConversationRow = typeof roomConversations.$inferSelect;
export type RoomMessageRow = typeof roomMessages.$inferSelect;
export type EnvelopeRow = typeof roomEnvelopes.$inferSelect;
export type NewEnvelope = typeof roomEnvelopes.$inferInsert;

/** Outcome of the MLS carrier envelope (recipient null): the per-recipient outcomes live on rows without ciphertext. */
export const SHARED_OUTCOME = 'shared';

export const insertRoom = (tx: Tx, row: typeof rooms.$inferInsert) => tx.insert(rooms).values(row).returning();

export async function getRoom(tx: Tx, id: string, forUpdate = false): Promise<RoomRow | undefined> {
  const q = tx.select().from(rooms).where(eq(rooms.id, id));
  const [row] = forUpdate ? await q.for('update') : await q;
  return row;
}

/** Rooms not archived, oldest first. */
export const listActiveRooms = (tx: Tx) => tx.select().from(rooms).where(isNull(rooms.archivedAt)).orderBy(asc(rooms.createdAt));

export const updateRoom = (tx: Tx, id: string, set: Partial<typeof rooms.$inferInsert>) => tx.update(rooms).set(set).where(eq(rooms.id, id)).returning();

export async function workspaceExists(tx: Tx, id: string): Promise<boolean> {
  const [row] = await tx.select({ id: workspaces.id }).from(workspaces).where(eq(workspaces.id, id));
  return row !== undefined;
}

/** Non-deleted devices among `ids` (any status). */
export const devicesByIds = (tx: Tx, ids: string[]) =>
  ids.length === 0
    ? Promise.resolve([])
    : tx
        .select({ id: devices.id, kind: devices.kind, status: devices.status })
        .from(devices)
        .where(and(inArray(devices.id, ids), isNull(devices.deletedAt)));

export const insertMembers = (tx: Tx, rows: (typeof roomMembers.$inferInsert)[]) => (rows.length === 0 ? Promise.resolve() : tx.insert(roomMembers).values(rows).then(() => undefined));

/** A member with its device's public keys (members set up their pairwise sessions from them). */
export type MemberWithKeys = MemberRow & { identityPublicKey: string; ephemeralPublicKey: string; fingerprint: string };

/** Members of the listed rooms with their devices' public keys, oldest membership first. */
export const membersOf = (tx: Tx, roomIds: string[]): Promise<MemberWithKeys[]> =>
  roomIds.length === 0
    ? Promise.resolve([])
    : tx
        .select({
          roomId: roomMembers.roomId,
          tenantId: roomMembers.tenantId,
          deviceId: roomMembers.deviceId,
          kind: roomMembers.kind,
          joinedAt: roomMembers.joinedAt,
          identityPublicKey: devices.identityPublicKey,
          ephemeralPublicKey: devices.ephemeralPublicKey,
          fingerprint: devices.fingerprint,
        })
        .from(roomMembers)
        .innerJoin(devices, eq(devices.id, roomMembers.deviceId))
        .where(inArray(roomMembers.roomId, roomIds))
        .orderBy(asc(roomMembers.joinedAt), asc(roomMembers.deviceId));

export async function getMember(tx: Tx, roomId: string, deviceId: string): Promise<MemberRow | undefined> {
  const [row] = await tx
    .select()
    .from(roomMembers)
    .where(and(eq(roomMembers.roomId, roomId), eq(roomMembers.deviceId, deviceId)));
  return row;
}

export const deleteMember = (tx: Tx, roomId: string, deviceId: string) =>
  tx
    .delete(roomMembers)
    .where(and(eq(roomMembers.roomId, roomId), eq(roomMembers.deviceId, deviceId)))
    .returning();

/** Insert pairwise conversations (`device_a` < `device_b`), keeping the ones a former membership left. */
export const insertConversations = (tx: Tx, rows: (typeof roomConversations.$inferInsert)[]) =>
  rows.length === 0 ? Promise.resolve() : tx.insert(roomConversations).values(rows).onConflictDoNothing().then(() => undefined);

export const conversationsOf = (tx: Tx, roomId: string) =>
  tx.select().from(roomConversations).where(eq(roomConversations.roomId, roomId)).orderBy(asc(roomConversations.createdAt), asc(roomConversations.deviceA), asc(roomConversations.deviceB));

/** Devices among `ids` that published at least one MLS KeyPackage (claimed or not). */
export async function mlsDevices(tx: Tx, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await tx.selectDistinct({ deviceId: mlsKeyPackages.deviceId }).from(mlsKeyPackages).where(inArray(mlsKeyPackages.deviceId, ids));
  return new Set(rows.map((r) => r.deviceId));
}

/** Ids of the room-scoped policies of the listed rooms. */
export const policiesOfRooms = (tx: Tx, roomIds: string[]) =>
  roomIds.length === 0
    ? Promise.resolve([])
    : tx.select({ id: policies.id, roomId: policies.scopeRoomId }).from(policies).where(inArray(policies.scopeRoomId, roomIds)).orderBy(asc(policies.createdAt));

export const policiesByIds = (tx: Tx, ids: string[]) =>
  tx.select({ id: policies.id, scopeSkill: policies.scopeSkill }).from(policies).where(inArray(policies.id, ids)).for('update');

/** Scope the listed policies to a room. */
export const scopePolicies = (tx: Tx, roomId: string, ids: string[]) =>
  tx.update(policies).set({ scopeRoomId: roomId, updatedAt: new Date() }).where(inArray(policies.id, ids));

/** Hub address and trust tier of the identity bound to a device, if any. */
export async function hubIdentityOf(tx: Tx, deviceId: string): Promise<{ hubAddress: string; trustTier: string } | undefined> {
  const [row] = await tx
    .select({ hubAddress: hubIdentities.hubAddress, trustTier: hubIdentities.trustTier })
    .from(hubIdentities)
    .where(eq(hubIdentities.deviceId, deviceId))
    .limit(1);
  return row;
}

/** Room messages a device sent since `since` (all rooms of the tenant). */
export async function sentSince(tx: Tx, deviceId: string, since: Date): Promise<number> {
  const [row] = await tx
    .select({ n: count() })
    .from(roomMessages)
    .where(and(eq(roomMessages.senderDeviceId, deviceId), gte(roomMessages.createdAt, since)));
  return Number(row?.n ?? 0);
}

export const insertRoomMessage = (tx: Tx, row: typeof roomMessages.$inferInsert) => tx.insert(roomMessages).values(row).returning();
export const insertEnvelopes = (tx: Tx, rows: NewEnvelope[]) => tx.insert(roomEnvelopes).values(rows);

export async function getEnvelope(tx: Tx, id: string): Promise<EnvelopeRow | undefined> {
  const [row] = await tx.select().from(roomEnvelopes).where(eq(roomEnvelopes.id, id));
  return row;
}

export async function getRoomMessage(tx: Tx, id: string): Promise<RoomMessageRow | undefined> {
  const [row] = await tx.select().from(roomMessages).where(eq(roomMessages.id, id));
  return row;
}

/** The MLS carrier envelope (recipient null) of a room message, if any. */
export async function sharedEnvelope(tx: Tx, roomMessageId: string): Promise<EnvelopeRow | undefined> {
  const [row] = await tx
    .select()
    .from(roomEnvelopes)
    .where(and(eq(roomEnvelopes.roomMessageId, roomMessageId), isNull(roomEnvelopes.recipientDeviceId)));
  return row;
}

export const updateEnvelope = (tx: Tx, id: string, set: Partial<typeof roomEnvelopes.$inferInsert>) => tx.update(roomEnvelopes).set(set).where(eq(roomEnvelopes.id, id));

/** Envelopes of the listed room messages. */
export const envelopesOf = (tx: Tx, roomMessageIds: string[]) =>
  roomMessageIds.length === 0 ? Promise.resolve([] as EnvelopeRow[]) : tx.select().from(roomEnvelopes).where(inArray(roomEnvelopes.roomMessageId, roomMessageIds));

/** Outcomes under which an envelope reached (or may reach) its recipient. */
export const RELEASED = ['delivered', 'notified'];

export interface TimelinePage {
  /** Exclusive lower bound: a seq, or a timestamp. */
  since?: { seq: number } | { at: Date };
  limit: number;
  /** Only messages this device sent or received (a released envelope addressed to it). */
  visibleTo?: string;
}

/**
 * One page of a room's messages, oldest first: without `since` the latest `limit`, with it the
 * next `limit` after it (DESIGN §7 history paging; the cursor is `seq`).
 */
export async function timeline(tx: Tx, roomId: string, page: TimelinePage): Promise<RoomMessageRow[]> {
  const where: SQL[] = [eq(roomMessages.roomId, roomId)];
  if (page.since && 'seq' in page.since) where.push(gt(roomMessages.seq, page.since.seq));
  else if (page.since) where.push(gt(roomMessages.createdAt, page.since.at));
  if (page.visibleTo) {
    const me = page.visibleTo;
    const received = tx
      .select({ one: sql`1` })
      .from(roomEnvelopes)
      .where(and(eq(roomEnvelopes.roomMessageId, roomMessages.id), eq(roomEnvelopes.recipientDeviceId, me), inArray(roomEnvelopes.outcome, RELEASED)));
    where.push(or(eq(roomMessages.senderDeviceId, me), exists(received))!);
  }
  const rows = await tx
    .select()
    .from(roomMessages)
    .where(and(...where))
    .orderBy(page.since ? asc(roomMessages.seq) : desc(roomMessages.seq))
    .limit(page.limit);
  if (!page.since) rows.reverse();
  return rows;
}
