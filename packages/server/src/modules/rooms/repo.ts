/** Room queries (tenant-scoped transactions; contract §2.5, §4.6; design §8.5). */
import { and, asc, count, desc, eq, gt, gte, inArray, isNull, sql, type SQL } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { arrayLiteral, UUIDS, WORDS } from '../../db/array-literal.js';
import { bytesOf, col, unnestRows } from '../../db/unnest.js';
import { policyEpochOf } from '../policies/index.js';
import { RECEIVES } from '../webhooks/index.js';
import {
  devices,
  heldMessages,
  mlsKeyPackages,
  policies,
  readMarks,
  roomConversations,
  roomEnvelopes,
  roomReceiptBatches,
  roomMembers,
  roomMessages,
  rooms,
  workspaces,
} from '../../db/schema/index.js';

export type RoomRow = typeof rooms.$inferSelect;
export type MemberRow = typeof roomMembers.$inferSelect;
export type RoomConversationRow = typeof roomConversations.$inferSelect;
export type RoomMessageRow = typeof roomMessages.$inferSelect;
export type EnvelopeRow = typeof roomEnvelopes.$inferSelect;

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

/** A room as a send sees it (design §8.5): see {@link sendContexts}. */
export interface SendRoom {
  securityLevel: string;
  archived: boolean;
  /** Every member with its kind (no keys: the send needs none). */
  members: { deviceId: string; kind: string }[];
  /**
   * The members that receive webhooks (webhooks/repo.ts `RECEIVES`) as the flush read them: only
   * they are offered `room.message` webhook rows (usually none, so the write joins no devices).
   */
  webhooks: Set<string>;
}

/** What a group-commit flush of room messages reads before it writes, in one statement: see {@link sendContexts}. */
export interface SendContexts {
  /** The listed rooms that exist, by id. */
  rooms: Map<string, SendRoom>;
  /** The hub identity bound to each listed sender that has one (the oldest), by device id. */
  senderHubs: Map<string, { hubAddress: string; trustTier: string }>;
  /** The version of the tenant's policy set (policies/repo.ts `policyEpochOf`), for the decisions. */
  policyEpoch: number;
}

/** A row of {@link sendContextsStatement}. */
export interface SendContextRow {
  k: string;
  room_id: string | null;
  security_level: string | null;
  archived: boolean | null;
  device_id: string | null;
  kind: string | null;
  hub_address: string | null;
  trust_tier: string | null;
  epoch: string | number | null;
  webhook: boolean | null;
}

/**
 * The listed rooms (security level, archived, members' device ids and kinds, and which members
 * receive webhooks), the hub address and trust tier of the listed senders, and the version of the
 * tenant's policy set, as ONE statement
 * (one row per member, one per sender identity, one for the version; read them with
 * {@link sendContextsOf}). Rooms are not locked: sends do not serialise against each other here.
 * Always the same text (a prepared statement's).
 */
export function sendContextsStatement(tenantId: string, roomIds: readonly string[], senderIds: readonly string[]): SQL {
  return sql`
    select 'm' as k, r.id as room_id, r.security_level, r.archived_at is not null as archived, m.device_id, m.kind, null::text as hub_address, null::text as trust_tier, null::bigint as epoch,
      coalesce(${RECEIVES}, false) as webhook
    from rooms r left join room_members m on m.room_id = r.id left join devices d on d.id = m.device_id
    where r.id = any(${arrayLiteral(roomIds, UUIDS)}::uuid[])
    union all
    select * from (
      select distinct on (device_id) 'h', null::uuid, null::text, null::boolean, device_id, null::text, hub_address, trust_tier, null::bigint, null::boolean
      from hub_identities where device_id = any(${arrayLiteral(senderIds, UUIDS)}::uuid[])
      order by device_id, created_at, id
    ) h
    union all
    select 'e', null, null, null, null, null, null, null, ${policyEpochOf(tenantId)}, null`;
}

/** The rows of {@link sendContextsStatement} as rooms, sender identities and the policy-set version. */
export function sendContextsOf(rows: readonly SendContextRow[]): SendContexts {
  const out: SendContexts = { rooms: new Map(), senderHubs: new Map(), policyEpoch: 0 };
  for (const r of rows) {
    if (r.k === 'e') out.policyEpoch = Number(r.epoch);
    else if (r.k === 'h') {
      if (r.device_id && r.hub_address !== null && r.trust_tier !== null) out.senderHubs.set(r.device_id, { hubAddress: r.hub_address, trustTier: r.trust_tier });
    } else {
      let room = out.rooms.get(r.room_id!);
      if (!room) out.rooms.set(r.room_id!, (room = { securityLevel: r.security_level!, archived: r.archived!, members: [], webhooks: new Set() }));
      if (r.device_id && r.kind) room.members.push({ deviceId: r.device_id, kind: r.kind });
      if (r.device_id && r.webhook) room.webhooks.add(r.device_id);
    }
  }
  return out;
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

/** Room messages each listed device sent since `since` (all rooms of the tenant), by device (0 when none), in one statement. */
export async function sentSinceBySender(tx: Tx, deviceIds: readonly string[], since: Date): Promise<Map<string, number>> {
  const rows = await tx
    .select({ sender: roomMessages.senderDeviceId, n: count() })
    .from(roomMessages)
    .where(and(inArray(roomMessages.senderDeviceId, [...deviceIds]), gte(roomMessages.createdAt, since)))
    .groupBy(roomMessages.senderDeviceId);
  const out = new Map(deviceIds.map((d) => [d, 0]));
  for (const r of rows) out.set(r.sender, Number(r.n));
  return out;
}

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

/** held -> delivered at release `position`; answers false when the envelope was no longer held. */
export async function releaseHeldEnvelope(tx: Tx, id: string, position: number, at: Date): Promise<boolean> {
  const rows = await tx
    .update(roomEnvelopes)
    .set({ outcome: 'delivered', deliveredAt: at, releaseSeq: position })
    .where(and(eq(roomEnvelopes.id, id), eq(roomEnvelopes.outcome, 'held')))
    .returning({ id: roomEnvelopes.id });
  return rows.length > 0;
}

/** The read marks of a room's members (receipts: "read up to" a release position), by reader device. */
export async function readMarksOf(tx: Tx, roomId: string): Promise<Map<string, { upTo: number; readAt: Date }>> {
  const rows = await tx.select({ reader: readMarks.readerDeviceId, upTo: readMarks.upTo, readAt: readMarks.readAt }).from(readMarks).where(eq(readMarks.threadId, roomId));
  return new Map(rows.map((r) => [r.reader, { upTo: r.upTo, readAt: r.readAt }]));
}

/** An envelope with when its recipient received it (the first `room_receipt_batches` row naming it; null: not yet, or no recipient). */
export type ReceivedEnvelopeRow = EnvelopeRow & { receivedAt: Date | null };

/** Envelopes of the listed room messages, with their delivered receipts. */
export async function envelopesOf(tx: Tx, roomMessageIds: string[]): Promise<ReceivedEnvelopeRow[]> {
  if (roomMessageIds.length === 0) return [];
  // Qualified by hand: drizzle writes the columns of a one-table select unqualified, and inside
  // the subquery `room_message_id` would then name the receipt row's own column.
  const receivedAt = sql`(select min(r.received_at) from room_receipt_batches r
    where r.room_message_id = room_envelopes.room_message_id and room_envelopes.recipient_device_id = any(r.recipient_device_ids))`;
  const rows = await tx
    .select({ envelope: roomEnvelopes, receivedAt: receivedAt.mapWith(roomReceiptBatches.receivedAt) })
    .from(roomEnvelopes)
    .where(inArray(roomEnvelopes.roomMessageId, roomMessageIds));
  return rows.map((r) => ({ ...r.envelope, receivedAt: r.receivedAt }));
}

/** Outcomes under which an envelope reached (or may reach) its recipient. */
export const RELEASED = ['delivered', 'notified'];

/** The room release lock, then the next release position (the subquery runs first). */
const lockedPosition = (roomId: string) =>
  sql`select nextval('room_release_seq') as pos from (select pg_advisory_xact_lock(hashtextextended(${`room_release:${roomId}`}, 0))) as l`;

/**
 * The next release position of a room (design §8.5 member timelines): takes a transaction-scoped
 * lock per room first, so a room's positions commit in the order they were taken and a member
 * paging by cursor never sees position N+1 before N. Call it late in the transaction (the lock is
 * held until commit).
 */
export async function nextReleasePosition(tx: Tx, roomId: string): Promise<number> {
  // Both drivers answer `{rows}` for raw statements.
  const result = (await tx.execute(lockedPosition(roomId))) as unknown as { rows: { pos: string | number }[] };
  return Number(result.rows[0]!.pos);
}

/** A room message as the send path stores it (`created_at` given; `seq` and `release_seq` set by the database). */
export type NewRoomMessage = Pick<RoomMessageRow, 'id' | 'tenantId' | 'roomId' | 'senderDeviceId' | 'messageType' | 'priority' | 'createdAt'>;

/**
 * An envelope row of a send: its recipient (null for the MLS carrier), bytes (null when none are
 * kept) and outcome; `delivered` and `notified` ones are released at the message's position.
 */
export interface NewEnvelope {
  id: string;
  recipientDeviceId: string | null;
  headerBlob: Buffer | null;
  ciphertext: Buffer | null;
  outcome: string;
}

/** A room message of a flush with its envelope rows. */
export interface NewSend {
  message: NewRoomMessage;
  envelopes: NewEnvelope[];
}


/**
 * Store the room messages of a group-commit flush (all of one tenant, created at `at`) and their
 * envelopes, each message at the next release position of its room, in ONE statement: the
 * release locks of the flush's rooms (design §8.5; taken in room-id order, so flushes and held
 * releases never wait on each other in a cycle), then one release position per message (drawn
 * after every lock is held, assigned in flush order: a room's positions follow its messages'
 * order), the messages with their `release_seq` (inserted in flush order, so `seq` follows it too)
 * and the envelopes from array parameters (`unnest`, all bytes in one binary parameter), released ones
 * (`delivered` / `notified`) with `delivered_at` = `at` and `release_seq` = their message's
 * position. `also` are more inserts of the flush (CTE bodies: policy records, webhook rows), run
 * by the same statement. Answers `{i, pos}` per message (read them with {@link positionsOf}).
 * Run it last but for the commit: the locks are held until then. The same text for the same
 * number of `also` bodies of the same texts (a prepared statement's).
 */
export function insertAtNextPositionsStatement(tenantId: string, at: Date, sends: readonly NewSend[], also: readonly SQL[] = []): SQL {
  const lockKeys = [...new Set(sends.map((s) => s.message.roomId))].sort().map((roomId) => `room_release:${roomId}`);
  // The envelope rows of the flush, and beside them the 1-based index of each one's message (no copy of the rows).
  const envelopes: NewEnvelope[] = sends.flatMap((s) => s.envelopes);
  const messageIndex: number[] = sends.flatMap((s, i) => s.envelopes.map(() => i + 1));
  const messages = unnestRows(
    sends.map((s) => s.message),
    [
      col<NewRoomMessage>('id', 'uuid', (m) => m.id),
      col<NewRoomMessage>('room_id', 'uuid', (m) => m.roomId),
      col<NewRoomMessage>('sender_device_id', 'uuid', (m) => m.senderDeviceId),
      col<NewRoomMessage>('message_type', 'text', (m) => m.messageType),
      col<NewRoomMessage>('priority', 'text', (m) => m.priority),
    ],
    'm',
    'i',
  );
  const rows = unnestRows(
    envelopes,
    [
      col<NewEnvelope>('id', 'uuid', (e) => e.id),
      col<NewEnvelope>('mi', 'int', (_e, k) => messageIndex[k]),
      col<NewEnvelope>('recipient', 'uuid', (e) => e.recipientDeviceId),
      col<NewEnvelope>('header', 'bytes', (e) => e.headerBlob),
      col<NewEnvelope>('ciphertext', 'bytes', (e) => e.ciphertext),
      col<NewEnvelope>('outcome', 'text', (e) => e.outcome),
    ],
    'e',
  );
  const when = sql`${at.toISOString()}::timestamptz`;
  const released = sql`e.outcome in ('delivered', 'notified')`;
  return sql`
      with m as materialized (select * from ${messages}),
      locks as materialized (
        select count(pg_advisory_xact_lock(hashtextextended(k, 0))) as n from unnest(${arrayLiteral(lockKeys, WORDS)}::text[]) as k
      ),
      drawn as materialized (
        select nextval('room_release_seq') as pos from locks, generate_series(1, ${sends.length}::int)
      ),
      pos as materialized (
        select row_number() over (order by pos) as i, pos from drawn
      ),
      msg as (
        insert into room_messages (id, tenant_id, room_id, sender_device_id, message_type, priority, created_at, release_seq)
        select m.id, ${tenantId}::uuid, m.room_id, m.sender_device_id, m.message_type, m.priority, ${when}, pos.pos
        from m join pos on pos.i = m.i
        order by m.i
      ),
      env as (
        insert into room_envelopes (id, tenant_id, room_message_id, recipient_device_id, header_blob, ciphertext, outcome, delivered_at, release_seq)
        select e.id, ${tenantId}::uuid, m.id, e.recipient, ${bytesOf('e', 'header')}, ${bytesOf('e', 'ciphertext')}, e.outcome,
               case when ${released} then ${when} end, case when ${released} then pos.pos end
        from ${rows} join m on m.i = e.mi join pos on pos.i = e.mi
      )${sql.join(
        also.map((body, k) => sql`, ${sql.raw(`also${k + 1}`)} as (${body})`),
        sql``,
      )}
      select i, pos from pos order by i`;
}

/** The release positions answered by {@link insertAtNextPositionsStatement}, in flush order. */
export const positionsOf = (rows: readonly { i: string | number; pos: string | number }[]): number[] => rows.map((r) => Number(r.pos));

/**
 * Deny the `held` (not lapsed) held messages of a room addressed to a device (it left the room);
 * answers them for {@link wipeHeldPayloads}-style cleanup. A later approval then answers 409.
 */
export const denyHeldTo = (tx: Tx, roomId: string, deviceId: string, now: Date) =>
  tx
    .update(heldMessages)
    .set({ status: 'denied', decidedAt: now, decidedBy: 'system:member_removed' })
    .where(and(eq(heldMessages.roomId, roomId), eq(heldMessages.recipientDeviceId, deviceId), eq(heldMessages.status, 'held'), gt(heldMessages.expiresAt, now)))
    .returning({ envelopeId: heldMessages.envelopeId, a2aMessageId: heldMessages.a2aMessageId });

export interface TimelinePage {
  /** Exclusive lower bound: a cursor (owner view: `seq`; member view: release position), or a timestamp. */
  since?: { cursor: number } | { at: Date };
  limit: number;
}

/**
 * One page of a room's messages in the owner view, oldest first: without `since` the latest
 * `limit`, with it the next `limit` after it (design §7 history paging; the cursor is `seq`).
 */
export async function timeline(tx: Tx, roomId: string, page: TimelinePage): Promise<RoomMessageRow[]> {
  const where: SQL[] = [eq(roomMessages.roomId, roomId)];
  if (page.since && 'cursor' in page.since) where.push(gt(roomMessages.seq, page.since.cursor));
  else if (page.since) where.push(gt(roomMessages.createdAt, page.since.at));
  const rows = await tx
    .select()
    .from(roomMessages)
    .where(and(...where))
    .orderBy(page.since ? asc(roomMessages.seq) : desc(roomMessages.seq))
    .limit(page.limit);
  if (!page.since) rows.reverse();
  return rows;
}

/** A message of a member timeline at the member's position. */
export interface MemberEntry {
  row: RoomMessageRow;
  /** The release position: the envelope's `release_seq` (received) or the message's (sent). */
  position: number;
}

/**
 * One page of a device's member timeline, oldest first, by release position (design §8.5): the
 * messages it sent (at their send) and those released to it (at their release: a held envelope
 * joins when approved, after everything released before). A timestamp `since` compares the
 * release time (`delivered_at`, or `created_at` for sent messages).
 */
export async function memberTimeline(tx: Tx, roomId: string, deviceId: string, page: TimelinePage): Promise<MemberEntry[]> {
  const after = !page.since ? sql`true` : 'cursor' in page.since ? sql`p.pos > ${page.since.cursor}` : sql`p.at > ${page.since.at.toISOString()}::timestamptz`;
  const result = (await tx.execute(sql`
    select p.id, p.pos from (
      select m.id, m.release_seq as pos, m.created_at as at from room_messages m
      where m.room_id = ${roomId} and m.sender_device_id = ${deviceId} and m.release_seq is not null
      union all
      select e.room_message_id, e.release_seq, e.delivered_at from room_envelopes e join room_messages m on m.id = e.room_message_id
      where e.recipient_device_id = ${deviceId} and m.room_id = ${roomId} and e.release_seq is not null
    ) as p
    where ${after}
    order by p.pos ${page.since ? sql`asc` : sql`desc`}
    limit ${page.limit}`)) as unknown as { rows: { id: string; pos: string | number }[] };
  const positions = result.rows.map((r) => ({ id: r.id, position: Number(r.pos) }));
  if (!page.since) positions.reverse();
  if (positions.length === 0) return [];
  const rows = await tx
    .select()
    .from(roomMessages)
    .where(inArray(roomMessages.id, positions.map((p) => p.id)));
  const byId = new Map(rows.map((r) => [r.id, r]));
  return positions.map((p) => ({ row: byId.get(p.id)!, position: p.position }));
}
