/**
 * What the room operations share (management.ts, send.ts, timeline.ts): the service's
 * dependencies and state, room lookups, the answers' room shapes, and the `room_message` event
 * and `room.message` webhook of a stored message.
 */
import type { DeliveryOutcome, PolicyAlertEvent, Room, RoomMessageEvent, RoomMessageResult, RoomSecurityLevel, RoomSummary } from '@parley/protocol';
import type { DecodedBlobs } from '../../lib/envelope.js';
import type { AppError } from '../../lib/errors.js';
import type { Db, Tx } from '../../db/client.js';
import { conflict, notFound } from '../../lib/errors.js';
import type { Notifier } from '../../realtime/notifier.js';
import type { Decided, RatesOf } from '../policies/index.js';
import type { DecideItem, HeldReleaser, PolicyDecider } from '../policies/index.js';
import { enqueueInTx } from '../webhooks/index.js';
import type { TenantWriter } from '../../db/tenant-writer.js';
import type { EnvelopeRef } from '../receipts/index.js';
import type { TenantBatcher } from '../../db/batcher.js';
import type { ReleaseOrder, Turn } from './release-order.js';
import * as repo from './repo.js';

export type DeviceKind = 'owner' | 'agent';

/** What the room module needs from the policy module (src/modules/policies: `PolicyService`). */
export interface RoomPolicies extends PolicyDecider {
  /**
   * The policies' decisions on the items of several senders and messages (a group-commit flush),
   * with one rate per item from `ratesOf` (called at most once, only when an enabled policy has
   * `rate_per_minute_over`) and the tenant's policy-set version `epoch` read in `tx`; answers one
   * Evaluation per item in order and the inserts of their records (CTE bodies), which the caller
   * runs in `tx` (policies/decide.ts `evaluateAll`).
   */
  evaluateAll(tx: Tx, tenantId: string, items: readonly DecideItem[], ratesOf?: RatesOf, epoch?: number): Promise<Decided>;
  /**
   * `evaluateAll` with no I/O for a caller that read the policy-set version `epoch` itself:
   * undefined when the cached compiled set is not that version's or a policy needs a read.
   */
  evaluateCached(tenantId: string, items: readonly DecideItem[], epoch: number): Decided | undefined;
  /** Register the function that delivers an approved held message of a kind. */
  registerReleaser(kind: 'room', releaser: HeldReleaser): void;
}

export interface RoomServiceDeps {
  db: Db;
  notifier: Notifier;
  /** The policy engine; the service registers its `room` releaser on it. */
  policies: RoomPolicies;
  /**
   * The tenant's default room security level, read inside the creating transaction (the
   * `default_room_security_level` tenant setting, design §8.22); `standard` when absent.
   */
  defaultSecurityLevel?: (tx: Tx, tenantId: string) => Promise<RoomSecurityLevel>;
  maxCiphertextBytes: number;
  listDefault: number;
  listMax: number;
  /** The pipelined tenant writer (db/tenant-writer.ts) of the group commit's read and write; drizzle transactions without it. */
  writer?: TenantWriter;
  /** Delivered receipts of envelopes a member fetched with its timeline (receipts/room-deliveries.ts). */
  deliveries?: { fetched(tenantId: string, refs: readonly EnvelopeRef[]): Promise<void> };
}

/** The state every room operation runs with: the dependencies, the group commit of sends and this instance's publish order of room messages. */
export interface RoomContext {
  readonly deps: RoomServiceDeps;
  /** This instance's publish order of room messages (release-position order per room). */
  readonly order: ReleaseOrder;
  /** The group commit of room messages (flush.ts). */
  readonly sends: TenantBatcher<QueuedSend, FlushOutcome>;
  /** How a flush reads and writes (`deps.writer`, or drizzle transactions). */
  readonly tenantWriter: TenantWriter;
  /** Settles once the last chained flush write sent (flush.ts) has been answered. */
  chained: Promise<unknown>;
}

/** The 403 detail of a room message whose sender is not a member. */
export const SENDER_NOT_A_MEMBER = 'the sending device is not a member of this room';
/** Outcomes under which the envelope goes to its recipient now. */
export const released = (o: DeliveryOutcome) => o === 'delivered' || o === 'notified';

/** The fields of a room message shared by its `room_message` events and its `room.message` webhook body. */
export interface MessageFields {
  room_id: string;
  room_message_id: string;
  sender_device_id: string;
  message_type: string;
  priority: string;
  timestamp: string;
}

/** The {@link MessageFields} of a stored message (compute once per message, not per recipient). */
export const messageFields = (m: repo.NewRoomMessage): MessageFields => ({
  room_id: m.roomId,
  room_message_id: m.id,
  sender_device_id: m.senderDeviceId,
  message_type: m.messageType,
  priority: m.priority,
  timestamp: m.createdAt.toISOString(),
});

/** An envelope's header and ciphertext in base64, as received (sent on as is) or encoded from the stored bytes. */
export interface WireBlobs {
  header: string;
  ciphertext: string;
}

/** The `room_message` event of one envelope of the message of `f` (`cursor`: the recipient's release position). */
export const roomMessageEvent = (f: MessageFields, blobs: WireBlobs, cursor: string): RoomMessageEvent => ({
  room_id: f.room_id,
  room_message_id: f.room_message_id,
  sender_device_id: f.sender_device_id,
  message_type: f.message_type,
  priority: f.priority,
  timestamp: f.timestamp,
  header: blobs.header,
  ciphertext: blobs.ciphertext,
  cursor,
});

/**
 * Enqueue the `room.message` webhook of a message for its released `recipients` inside the
 * sending (or releasing) transaction: the body has no per-recipient field, so one statement
 * covers them all (the Notifier's webhook sink skips `room_message`, webhooks/outbox.ts).
 */
export const enqueueWebhooks = (tx: Tx, tenantId: string, m: repo.NewRoomMessage, recipients: string[]) =>
  recipients.length === 0 ? Promise.resolve(0) : enqueueInTx(tx, tenantId, { deviceIds: recipients }, 'room_message', messageFields(m));

export async function mustGet(tx: Tx, id: string, forUpdate = false): Promise<repo.RoomRow> {
  const room = await repo.getRoom(tx, id, forUpdate);
  if (!room) throw notFound('room');
  return room;
}

/** The room (row-locked when `lock`: membership changes serialise, sends do not); 409 when archived. */
export async function mustGetOpen(tx: Tx, id: string, lock: boolean): Promise<repo.RoomRow> {
  const room = await mustGet(tx, id, lock);
  if (room.archivedAt) throw conflict('the room is archived');
  return room;
}

export async function summaries(tx: Tx, rooms: repo.RoomRow[]): Promise<RoomSummary[]> {
  const ids = rooms.map((r) => r.id);
  const members = await repo.membersOf(tx, ids);
  const mls = await repo.mlsDevices(tx, [...new Set(members.map((m) => m.deviceId))]);
  const scoped = await repo.policiesOfRooms(tx, ids);
  return rooms.map((r) => {
    const own = members.filter((m) => m.roomId === r.id);
    return {
      room_id: r.id,
      conversation_id: r.timelineId,
      name: r.name,
      security_level: r.securityLevel as RoomSecurityLevel,
      workspace_id: r.workspaceId,
      archived: r.archivedAt !== null,
      created_at: r.createdAt.toISOString(),
      mls_capable: own.length > 0 && own.every((m) => mls.has(m.deviceId)),
      members: own.map((m) => ({
        device_id: m.deviceId,
        kind: m.kind as DeviceKind,
        identity_public_key: m.identityPublicKey,
        ephemeral_public_key: m.ephemeralPublicKey,
        fingerprint: m.fingerprint,
      })),
      policies: scoped.filter((p) => p.roomId === r.id).map((p) => p.id),
    };
  });
}

/** A room with its pairwise conversations (between current members). */
export async function details(tx: Tx, room: repo.RoomRow): Promise<Room> {
  const [summary] = await summaries(tx, [room]);
  const current = new Set(summary!.members.map((m) => m.device_id));
  const conversations = (await repo.conversationsOf(tx, room.id))
    .filter((c) => current.has(c.deviceA) && current.has(c.deviceB))
    .map((c) => ({ conversation_id: c.id, device_ids: [c.deviceA, c.deviceB] }));
  return { ...summary!, conversations };
}

/** An envelope of a send, validated and decoded (send.ts); `recipient` null = the MLS envelope (`*`); `wire`: its base64 as received, published as is. */
export interface DecodedEnvelope extends DecodedBlobs {
  recipient: string | null;
  wire: WireBlobs;
}

/** A validated room message waiting for its group commit. */
export interface QueuedSend {
  roomId: string;
  senderDeviceId: string;
  messageType: string;
  priority: string;
  envelopes: DecodedEnvelope[];
}

/** Recipients that get the same bytes (one pairwise envelope, or the MLS envelope's released recipients), in base64. */
export interface Release {
  recipients: string[];
  wire: WireBlobs;
}

/** A committed send: what it answers, what it publishes after commit, and its place in its room's publish queue. */
export interface Committed {
  msg: repo.NewRoomMessage;
  position: number;
  result: RoomMessageResult;
  releases: Release[];
  alerts: PolicyAlertEvent[];
  /** Call `done()` once published (or abandoned): later sends of the room wait for it. */
  turn: Turn;
}

/** The outcome of one send of a flush: committed, or refused on its own (nothing of it written). */
export type FlushOutcome = { ok: Committed } | { error: AppError };
