/**
 * Rooms (SPEC §2.5, §4.6, §6.1; DESIGN §8.5): a named set of member devices of one tenant, with
 * one pairwise conversation per member pair, a security level, room-scoped policies and an
 * aggregated timeline (`conversation_id` = the room's `timeline_id`).
 *
 * A room message is a set of envelopes, one per recipient (pairwise ciphertexts), or a single
 * MLS envelope addressed to `*`. Sending runs in one transaction: the room message and its
 * envelopes are stored and the policy engine decides per recipient (allow -> delivered,
 * notify -> notified, hold -> held, block -> blocked); after commit, released envelopes go to
 * their recipients' sockets as `room_message` frames and owners get `policy_alert` for notified
 * ones. Held envelopes are released by the policy module on approval through the `room` releaser.
 *
 * MLS storage: the `*` ciphertext is stored once, in a carrier envelope with recipient null and
 * outcome `shared`; each recipient gets an outcome row (recipient set, no ciphertext) that holds
 * its policy outcome, delivery time, held message and release position. The carrier loses its
 * ciphertext once every recipient row is blocked (database trigger, migration 0009).
 *
 * Timelines have two orders. The owner view lists every message by `seq` (send order). A member
 * device's view lists what it sent and what was released to it by release position
 * (`room_release_seq`): one position per message at send (the sender's, and every envelope
 * delivered or notified then), and a fresh one per held envelope at approval, so a device that
 * caught up before the approval still finds it after its cursor, exactly once. `room_message`
 * events and send answers carry that member cursor.
 */
import { randomUUID } from 'node:crypto';
import type { Db, Tx } from '../../db/client.js';
import { withTenant } from '../../db/tenant.js';
import { AppError, ErrorCode, badRequest, conflict, forbidden, notFound } from '../../lib/errors.js';
import type { Notifier } from '../../realtime/notifier.js';
import { decodeBase64 } from '../conversations/messages.js';
import { requireOwnerDeviceOf } from '../devices/service.js';
import { pageLimit, parseSince } from '../../lib/paging.js';
import { TIERS, type Evaluation, type PolicyAction, type Tier } from '../policies/engine.js';
import { wipeHeldPayloads } from '../policies/repo.js';
import type { DecideItem, HeldRecord, HeldReleaser, PolicyDecider } from '../policies/types.js';
import { enqueueInTx } from '../webhooks/outbox.js';
import { ReleaseOrder, type Turn } from './release-order.js';
import * as repo from './repo.js';

export const SECURITY_LEVELS = ['standard', 'strict'] as const;
export type SecurityLevel = (typeof SECURITY_LEVELS)[number];
export type DeviceKind = 'owner' | 'agent';
/** Per-recipient outcome of a room message (DESIGN §8.5). */
export type Outcome = 'delivered' | 'held' | 'blocked' | 'notified';

/** Most members a room may have (SPEC §4.6 leaves it open; DESIGN §8.5 keeps it at 100). */
export const MAX_MEMBERS = 100;
/** The recipient of an MLS room's single envelope. */
export const ALL_MEMBERS = '*';

const OUTCOME_OF: Record<PolicyAction, Outcome> = { allow: 'delivered', notify: 'notified', hold: 'held', block: 'blocked' };

/** What the room module needs from the policy module (src/modules/policies: `PolicyService`). */
export interface RoomPolicies extends PolicyDecider {
  /** Register the function that delivers an approved held message of a kind. */
  registerReleaser(kind: 'room', releaser: HeldReleaser): void;
}

/** `POST /rooms` body; `workspace_id` set makes a team room. */
export interface CreateRoomInput {
  name: string;
  member_device_ids: string[];
  security_level?: SecurityLevel;
  workspace_id?: string;
}

/** `PATCH /rooms/{id}` body: `policies` scopes existing policies of the tenant to the room. */
export interface UpdateRoomInput {
  name?: string;
  security_level?: SecurityLevel;
  policies?: string[];
}

/** A member with its device's public keys (hex) and fingerprint (DESIGN §7), for setting up pairwise sessions. */
export interface RoomMember {
  device_id: string;
  kind: DeviceKind;
  identity_public_key: string;
  ephemeral_public_key: string;
  fingerprint: string;
}

export interface RoomConversation {
  conversation_id: string;
  device_ids: [string, string];
}

/** A room as listed (`GET /rooms`). */
export interface RoomSummary {
  room_id: string;
  /** The room's aggregated timeline. */
  conversation_id: string;
  name: string;
  security_level: SecurityLevel;
  workspace_id: string | null;
  archived: boolean;
  created_at: string;
  /** True when every member published an MLS KeyPackage (an MLS group is possible; clients choose). */
  mls_capable: boolean;
  members: RoomMember[];
  /** Ids of the policies scoped to this room. */
  policies: string[];
}

/** A room with its pairwise conversations (between current members). */
export interface RoomDetails extends RoomSummary {
  conversations: RoomConversation[];
}

/** One envelope of a room message; `recipient_device_id` `*` = every other member (MLS). */
export interface EnvelopeInput {
  recipient_device_id: string;
  header_blob: string;
  ciphertext: string;
}

/** Body of `POST /rooms/{id}/messages` and of the `room_message` frame (without `room_id`, `client_ref`). */
export interface RoomSendInput {
  message_type?: string;
  priority?: string;
  envelopes: EnvelopeInput[];
}

export interface Delivery {
  recipient_device_id: string;
  outcome: Outcome;
  held_message_id?: string;
}

/** Answer to a room send (`room_message_ack` data without `client_ref`). */
export interface RoomSendResult {
  room_message_id: string;
  timestamp: string;
  /** The sender's member-timeline position (also the cursor of every envelope released at send). */
  cursor: string;
  deliveries: Delivery[];
}

/** The `room_message` frame a recipient receives (SPEC §6.1; DESIGN §8.5). */
export interface RoomMessageEvent {
  room_id: string;
  room_message_id: string;
  sender_device_id: string;
  /** The envelope's header_blob, base64. */
  header: string;
  ciphertext: string;
  message_type: string;
  priority: string;
  timestamp: string;
  /** The recipient's member-timeline position of this message (its release). */
  cursor: string;
}

/** One entry of the aggregated timeline (`GET /rooms/{id}/messages`). */
export interface TimelineEntry {
  room_message_id: string;
  sender_device_id: string;
  message_type: string;
  priority: string;
  timestamp: string;
  /** Owner view: the message's `seq`; member view: the viewer's release position. */
  cursor: string;
  deliveries: { recipient_device_id: string; outcome: string }[];
  /** The envelope addressed to the viewing device (or the MLS one), once released to it. */
  envelope?: { header_blob: string; ciphertext: string };
}

/**
 * Who reads a timeline: an owner (optionally as one of its devices: the owner view with that
 * device's envelopes) or a member device (`asMember`, `deviceId` required: the member view).
 */
export interface TimelineViewer {
  deviceId?: string;
  /** A member device reading for itself: must be a member, sees only its own messages and receipts, by release position. */
  asMember: boolean;
}

export interface TimelineQuery {
  since?: string;
  limit?: number;
}

/**
 * Hooks that let a socket pipeline its `room_message` frames while keeping their order
 * (rooms/frames.ts; DESIGN §8.5): the next frame may start once this one's release position is
 * taken, since its own position then comes later; and its frames are published after `after`.
 */
export interface SendOrder {
  /** Called once the message's release position is taken, or when the send failed before (at most once matters; later calls are no-ops for the caller). */
  positioned(): void;
  /** Settles once the same socket's previous send has published (or failed): this one publishes after it. */
  after?: Promise<unknown>;
}

export interface RoomServiceDeps {
  db: Db;
  notifier: Notifier;
  /** The policy engine; the service registers its `room` releaser on it. */
  policies: RoomPolicies;
  /**
   * The tenant's default room security level, read inside the creating transaction (the
   * `default_room_security_level` tenant setting, DESIGN §8.22); `standard` when absent.
   */
  defaultSecurityLevel?: (tx: Tx, tenantId: string) => Promise<SecurityLevel>;
  maxCiphertextBytes: number;
  listDefault: number;
  listMax: number;
}

interface DecodedEnvelope {
  recipient: string | null;
  header: Buffer;
  ciphertext: Buffer;
}

interface Release {
  recipients: string[];
  header: Buffer;
  ciphertext: Buffer;
}

interface SendMeta {
  senderDeviceId: string;
  messageType: string;
  priority: string;
  now: Date;
}

/** One recipient of a room message and the id of its envelope (or outcome row, for MLS). */
interface Target {
  envelopeId: string;
  recipient: string;
  kind: DeviceKind;
}

const b64 = (b: Buffer) => b.toString('base64');
/** Outcomes under which the envelope goes to its recipient now. */
const released = (o: Outcome) => o === 'delivered' || o === 'notified';

/**
 * The envelope rows of a room message: one per target with its outcome (ciphertext kept unless
 * blocked; the repo releases `delivered` / `notified` ones at the message's position); for MLS the
 * targets' rows carry no ciphertext and one carrier row (recipient null, outcome `shared`) holds
 * it, unless every recipient is blocked.
 */
function envelopeRows(targets: Target[], outcomes: Outcome[], envelopes: DecodedEnvelope[]): repo.NewEnvelope[] {
  const mls = envelopes[0]!.recipient === null;
  const byRecipient = new Map(envelopes.map((e) => [e.recipient, e]));
  const rows: repo.NewEnvelope[] = targets.map((t, i) => {
    const own = mls || outcomes[i] === 'blocked' ? undefined : byRecipient.get(t.recipient);
    return { id: t.envelopeId, recipientDeviceId: t.recipient, headerBlob: own?.header ?? null, ciphertext: own?.ciphertext ?? null, outcome: outcomes[i]! };
  });
  if (mls) {
    const keep = outcomes.some((o) => o !== 'blocked');
    const { header, ciphertext } = envelopes[0]!;
    rows.unshift({ id: randomUUID(), recipientDeviceId: null, headerBlob: keep ? header : null, ciphertext: keep ? ciphertext : null, outcome: repo.SHARED_OUTCOME });
  }
  return rows;
}
const pairKey = (a: string, b: string): [string, string] => (a < b ? [a, b] : [b, a]);

/** The fields of a room message shared by its `room_message` events and its `room.message` webhook body. */
const messageFields = (m: repo.NewRoomMessage) => ({
  room_id: m.roomId,
  room_message_id: m.id,
  sender_device_id: m.senderDeviceId,
  message_type: m.messageType,
  priority: m.priority,
  timestamp: m.createdAt.toISOString(),
});

/** The `room_message` event of one envelope (`position`: the recipient's release position). */
const roomMessageEvent = (m: repo.NewRoomMessage, header: Buffer, ciphertext: Buffer, position: number): RoomMessageEvent => ({
  ...messageFields(m),
  header: b64(header),
  ciphertext: b64(ciphertext),
  cursor: String(position),
});

/**
 * Enqueue the `room.message` webhook of a message for its released `recipients` inside the
 * sending (or releasing) transaction: the body has no per-recipient field, so one statement
 * covers them all (the Notifier's webhook sink skips `room_message`, webhooks/outbox.ts).
 */
const enqueueWebhooks = (tx: Tx, tenantId: string, m: repo.NewRoomMessage, recipients: string[]) =>
  recipients.length === 0 ? Promise.resolve(0) : enqueueInTx(tx, tenantId, { deviceIds: recipients }, 'room_message', messageFields(m));

export class RoomService {
  /** This instance's publish order of room messages (release-position order per room). */
  private readonly order = new ReleaseOrder();

  constructor(private readonly deps: RoomServiceDeps) {
    deps.policies.registerReleaser('room', (held) => this.release(held));
  }

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
  async create(tenantId: string, createdBy: string, input: CreateRoomInput, creatorDeviceId?: string): Promise<RoomDetails> {
    const ids = [...new Set([...input.member_device_ids, ...(creatorDeviceId ? [creatorDeviceId] : [])].map((d) => d.toLowerCase()))];
    if (ids.length < 1 || ids.length > MAX_MEMBERS) throw badRequest(`a room has 1 to ${MAX_MEMBERS} members`);
    const room = await withTenant(this.deps.db, tenantId, async (tx) => {
      if (input.workspace_id && !(await repo.workspaceExists(tx, input.workspace_id))) throw notFound('workspace');
      if (creatorDeviceId) await requireOwnerDeviceOf(tx, createdBy, creatorDeviceId);
      const kinds = await this.activeKinds(tx, ids);
      const [row] = await repo.insertRoom(tx, {
        id: randomUUID(),
        tenantId,
        timelineId: randomUUID(),
        name: input.name,
        securityLevel: input.security_level ?? (await this.deps.defaultSecurityLevel?.(tx, tenantId)) ?? 'standard',
        workspaceId: input.workspace_id ?? null,
        createdBy,
      });
      await repo.insertMembers(tx, ids.map((deviceId) => ({ roomId: row!.id, tenantId, deviceId, kind: kinds.get(deviceId)! })));
      const pairs: [string, string][] = [];
      for (let i = 0; i < ids.length; i++) for (let j = i + 1; j < ids.length; j++) pairs.push(pairKey(ids[i]!, ids[j]!));
      await repo.insertConversations(tx, pairs.map(([a, b]) => ({ id: randomUUID(), tenantId, roomId: row!.id, deviceA: a, deviceB: b })));
      return this.details(tx, row!);
    });
    await this.announceJoined(tenantId, room, ids, []);
    return room;
  }

  /** Active (not archived) rooms, oldest first, without their conversations. */
  list(tenantId: string): Promise<RoomSummary[]> {
    return withTenant(this.deps.db, tenantId, async (tx) => this.summaries(tx, await repo.listActiveRooms(tx)));
  }

  /**
   * Room details with members and conversations. `memberDeviceId` set = a device reading for
   * itself, which must be a member (403).
   * @throws 404 when unknown (or another tenant's).
   */
  get(tenantId: string, id: string, memberDeviceId?: string): Promise<RoomDetails> {
    return withTenant(this.deps.db, tenantId, async (tx) => {
      const room = await this.details(tx, await this.mustGet(tx, id));
      if (memberDeviceId && !room.members.some((m) => m.device_id === memberDeviceId)) throw forbidden('the device is not a member of this room');
      return room;
    });
  }

  /**
   * Rename, change the security level, and/or scope existing policies to the room (their
   * `scope_room_id` is set; a policy scoped to another room moves here).
   * @throws 404 unknown room or policy, 409 for a policy scoped to a skill.
   */
  update(tenantId: string, id: string, input: UpdateRoomInput): Promise<RoomDetails> {
    return withTenant(this.deps.db, tenantId, async (tx) => {
      let room = await this.mustGet(tx, id, true);
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
      return this.details(tx, room);
    });
  }

  /**
   * Add an ACTIVE device of the tenant, with a pairwise conversation to every member. The new
   * member gets `room_joined`; owners and the other agent members `member_joined`.
   * @throws 400 not an ACTIVE device, 404 unknown room, 409 already a member, archived or full room.
   */
  async addMember(tenantId: string, roomId: string, deviceId: string): Promise<RoomDetails> {
    const id = deviceId.toLowerCase();
    const { room, others } = await withTenant(this.deps.db, tenantId, async (tx) => {
      const row = await this.mustGetOpen(tx, roomId, true);
      const members = await repo.membersOf(tx, [roomId]);
      if (members.some((m) => m.deviceId === id)) throw conflict('the device is already a member of this room');
      if (members.length >= MAX_MEMBERS) throw conflict(`a room has at most ${MAX_MEMBERS} members`);
      const kinds = await this.activeKinds(tx, [id]);
      await repo.insertMembers(tx, [{ roomId, tenantId, deviceId: id, kind: kinds.get(id)! }]);
      await repo.insertConversations(
        tx,
        members.map((m) => {
          const [a, b] = pairKey(id, m.deviceId);
          return { id: randomUUID(), tenantId, roomId, deviceA: a, deviceB: b };
        }),
      );
      return { room: await this.details(tx, row), others: members };
    });
    await this.announceJoined(tenantId, room, [id], others);
    return room;
  }

  /**
   * Remove a member (its conversations and messages stay for the history). Messages still held
   * for it in this room are denied in the same transaction (their ciphertext dropped; approving
   * one later answers 409). Owners, the removed device and the remaining agent members get
   * `member_left {room_id, device_id}`.
   * @throws 404 unknown room or not a member.
   */
  async removeMember(tenantId: string, roomId: string, deviceId: string): Promise<void> {
    const id = deviceId.toLowerCase();
    const { removed, rest } = await withTenant(this.deps.db, tenantId, async (tx) => {
      await this.mustGet(tx, roomId, true);
      const [removed] = await repo.deleteMember(tx, roomId, id);
      if (!removed) throw notFound('room member');
      await wipeHeldPayloads(tx, await repo.denyHeldTo(tx, roomId, id, new Date()));
      return { removed, rest: await repo.membersOf(tx, [roomId]) };
    });
    const data = { room_id: roomId, device_id: id };
    const agents = [...rest, removed].filter((m) => m.kind === 'agent').map((m) => m.deviceId);
    if (agents.length > 0) await this.deps.notifier.toDevices(tenantId, agents, 'member_left', data);
    await this.deps.notifier.toOwners(tenantId, 'member_left', data);
  }

  /**
   * Fan out one room message (DESIGN §8.5). Rules: the sender is a member (403); each recipient
   * is another member (400), at most once; an MLS envelope (`*`) is the only envelope; base64
   * fields (400); ciphertext within the limit (413). Policies are evaluated per recipient in the
   * sending transaction, which ends by taking the message's release position (the answer's and
   * the events' `cursor`) while storing the message and its envelopes (one statement); the
   * `room.message` webhooks of the released recipients are enqueued in the same transaction.
   * Released envelopes are published after commit, all at once, in release-position order per
   * room (release-order.ts). `order` pipelines a socket's frames (rooms/frames.ts).
   * @throws 404 unknown room, 409 archived room.
   */
  async send(tenantId: string, senderDeviceId: string, roomId: string, input: RoomSendInput, order?: SendOrder): Promise<RoomSendResult> {
    const { policies, notifier } = this.deps;
    let turn: Turn | undefined;
    try {
      const envelopes = this.decode(input.envelopes);
      const mls = envelopes[0]!.recipient === null;
      const meta = { senderDeviceId, messageType: input.message_type ?? 'text', priority: input.priority ?? 'normal', now: new Date() };
      const { msg, position, result, releases, alerts } = await withTenant(this.deps.db, tenantId, async (tx) => {
        const room = await repo.sendContext(tx, roomId, senderDeviceId);
        if (!room) throw notFound('room');
        if (room.archived) throw conflict('the room is archived');
        const kinds = new Map(room.members.map((m) => [m.deviceId, m.kind as DeviceKind]));
        const senderKind = kinds.get(senderDeviceId);
        if (!senderKind) throw forbidden('the sending device is not a member of this room');
        const recipients = mls ? [...kinds.keys()].filter((d) => d !== senderDeviceId) : envelopes.map((e) => e.recipient!);
        for (const r of recipients) if (!kinds.has(r) || r === senderDeviceId) throw badRequest(`recipient ${r} is not another member of this room`);
        if (recipients.length === 0) throw badRequest('the room has no other member to send to');

        const msg: repo.NewRoomMessage = { id: randomUUID(), tenantId, roomId, senderDeviceId, messageType: meta.messageType, priority: meta.priority, createdAt: meta.now };
        const targets: Target[] = recipients.map((r) => ({ envelopeId: randomUUID(), recipient: r, kind: kinds.get(r)! }));
        const evaluations = await this.evaluate(tx, tenantId, { id: roomId, ...room }, { ...meta, senderKind }, targets);
        const outcomes = evaluations.map((e) => OUTCOME_OF[e.outcome]);
        await enqueueWebhooks(tx, tenantId, msg, targets.filter((_, i) => released(outcomes[i]!)).map((t) => t.recipient));

        // The message, its envelopes and its release position in one statement; from here to commit
        // the room's release lock is held: keep the rest short.
        const position = await repo.insertAtNextPosition(tx, msg, envelopeRows(targets, outcomes, envelopes));
        turn = this.order.enter(roomId);
        order?.positioned();
        const heldAt = targets.flatMap((_, i) => (outcomes[i] === 'held' ? [i] : []));
        const heldIds = await policies.holdAll(
          tx,
          tenantId,
          heldAt.map((i) => ({ roomId, envelopeId: targets[i]!.envelopeId, senderDeviceId, recipientDeviceId: targets[i]!.recipient, policyId: evaluations[i]!.policyId, messageType: meta.messageType, priority: meta.priority })),
        );
        const heldIdOf = new Map(heldAt.map((i, k) => [i, heldIds[k]!]));
        const deliveries: Delivery[] = targets.map((t, i) => ({
          recipient_device_id: t.recipient,
          outcome: outcomes[i]!,
          ...(heldIdOf.has(i) ? { held_message_id: heldIdOf.get(i)! } : {}),
        }));
        const byRecipient = new Map(envelopes.map((e) => [e.recipient, e]));
        const releases: Release[] = mls
          ? [{ ...envelopes[0]!, recipients: targets.filter((_, i) => released(outcomes[i]!)).map((t) => t.recipient) }]
          : targets.flatMap((t, i) => (released(outcomes[i]!) ? [{ ...byRecipient.get(t.recipient)!, recipients: [t.recipient] }] : []));
        const alerts = targets.flatMap((t, i) =>
          outcomes[i] === 'notified' ? [{ room_id: roomId, policy_id: evaluations[i]!.policyId, sender_device_id: senderDeviceId, recipient_device_id: t.recipient, message_type: meta.messageType }] : [],
        );
        const result: RoomSendResult = { room_message_id: msg.id, timestamp: meta.now.toISOString(), cursor: String(position), deliveries };
        return { msg, position, result, releases, alerts };
      });

      // After commit: publish in release order (earlier sends of the room, and the sender's earlier
      // frames, first), every recipient's frame at once (no webhook transaction per recipient).
      await turn!.ready;
      await order?.after;
      await Promise.all(releases.filter((r) => r.recipients.length > 0).map((r) => notifier.toDevices(tenantId, r.recipients, 'room_message', roomMessageEvent(msg, r.header, r.ciphertext, position))));
      turn!.done();
      for (const a of alerts) await policies.alert(tenantId, a);
      return result;
    } finally {
      turn?.done();
      order?.positioned();
    }
  }

  /**
   * Run the policy engine once per recipient (DESIGN §8.5): sender hub address and tier from
   * its hub identity (`unverified` without one), the sender's room-message count of the last
   * minute (this message included; counted only when a policy reads it), same tenant; by default
   * `hold` for an agent sender in a strict room, else `allow`.
   */
  private async evaluate(
    tx: Tx,
    tenantId: string,
    room: Pick<repo.SendContext, 'securityLevel' | 'senderHub'> & { id: string },
    meta: SendMeta & { senderKind: DeviceKind },
    targets: Target[],
  ): Promise<Evaluation[]> {
    const hub = room.senderHub;
    const tier: Tier = TIERS.includes(hub?.trustTier as Tier) ? (hub!.trustTier as Tier) : 'unverified';
    // The message is not stored yet: count it.
    const senderRate = async () => (await repo.sentSince(tx, meta.senderDeviceId, new Date(meta.now.getTime() - 60_000))) + 1;
    const defaultOutcome: PolicyAction = meta.senderKind === 'agent' && room.securityLevel === 'strict' ? 'hold' : 'allow';
    const items: DecideItem[] = targets.map((t) => ({
      subjectKind: 'room_envelope',
      subjectId: t.envelopeId,
      defaultOutcome,
      ctx: {
        roomId: room.id,
        messageType: meta.messageType,
        priority: meta.priority,
        senderKind: meta.senderKind,
        recipientKind: t.kind,
        senderDeviceId: meta.senderDeviceId,
        recipientDeviceId: t.recipient,
        senderHubAddress: hub?.hubAddress ?? null,
        senderTier: tier,
        crossTenant: false,
        now: meta.now,
      },
    }));
    return this.deps.policies.decide(tx, tenantId, items, senderRate);
  }

  /**
   * The aggregated timeline, oldest first with `since` / `limit` paging (DESIGN §7). Owners see
   * every message with every delivery outcome, by `seq` (the cursor). A member device sees the
   * messages it sent (with their outcomes) and the ones released to it (with its own outcome), by
   * its release position (the cursor; a timestamp `since` compares release times), so an
   * envelope approved later appears after what the device already read, once.
   * @throws 400 bad `since`, 403 a reading device that is not a member, 404 unknown room.
   */
  async timeline(tenantId: string, roomId: string, viewer: TimelineViewer, q: TimelineQuery): Promise<{ messages: TimelineEntry[]; next_cursor: string | null }> {
    const limit = pageLimit(q.limit, this.deps);
    const parsed = q.since === undefined ? undefined : parseSince(q.since);
    const since = parsed === undefined ? undefined : 'seq' in parsed ? { cursor: parsed.seq } : parsed;
    const me = viewer.deviceId;
    const messages = await withTenant(this.deps.db, tenantId, async (tx) => {
      await this.mustGet(tx, roomId);
      if (viewer.asMember && !(me && (await repo.getMember(tx, roomId, me)))) throw forbidden('the device is not a member of this room');
      const page = { ...(since ? { since } : {}), limit };
      const entries = viewer.asMember ? await repo.memberTimeline(tx, roomId, me!, page) : (await repo.timeline(tx, roomId, page)).map((row) => ({ row, position: row.seq }));
      const envelopes = await repo.envelopesOf(
        tx,
        entries.map((e) => e.row.id),
      );
      return entries.map(({ row: m, position }) => {
        const mine = envelopes.filter((e) => e.roomMessageId === m.id);
        const shared = mine.find((e) => e.recipientDeviceId === null);
        let deliveries = mine.filter((e) => e.recipientDeviceId !== null);
        if (viewer.asMember && m.senderDeviceId !== me) deliveries = deliveries.filter((e) => e.recipientDeviceId === me);
        const entry: TimelineEntry = {
          room_message_id: m.id,
          sender_device_id: m.senderDeviceId,
          message_type: m.messageType,
          priority: m.priority,
          timestamp: m.createdAt.toISOString(),
          cursor: String(position),
          deliveries: deliveries.map((e) => ({ recipient_device_id: e.recipientDeviceId!, outcome: e.outcome })),
        };
        const own = me ? deliveries.find((e) => e.recipientDeviceId === me && repo.RELEASED.includes(e.outcome)) : undefined;
        const carrier = own?.ciphertext ? own : own ? shared : undefined;
        if (carrier?.ciphertext && carrier.headerBlob) entry.envelope = { header_blob: b64(carrier.headerBlob), ciphertext: b64(carrier.ciphertext) };
        return entry;
      });
    });
    return { messages, next_cursor: messages.at(-1)?.cursor ?? null };
  }

  /**
   * The `room` releaser (called by the policy module after an approval committed): the held
   * envelope becomes delivered at a fresh release position (the recipient's member timeline lists
   * it after everything released before) and its `room_message` goes to the recipient. A
   * recipient that left the room in the meantime gets nothing: the envelope is dropped (outcome
   * `blocked`, no ciphertext). An envelope no longer held is left alone.
   */
  async release(held: HeldRecord): Promise<void> {
    const envelopeId = held.envelopeId;
    if (!envelopeId) return;
    let turn: Turn | undefined;
    try {
      const event = await withTenant(this.deps.db, held.tenantId, async (tx) => {
        const env = await repo.getEnvelope(tx, envelopeId);
        if (!env?.recipientDeviceId || env.outcome !== 'held') return undefined;
        const msg = await repo.getRoomMessage(tx, env.roomMessageId);
        if (!msg) return undefined;
        if (!(await repo.getMember(tx, msg.roomId, env.recipientDeviceId))) {
          await repo.updateEnvelope(tx, env.id, { outcome: 'blocked', headerBlob: null, ciphertext: null });
          return undefined;
        }
        const carrier = env.ciphertext ? env : await repo.sharedEnvelope(tx, env.roomMessageId);
        if (!carrier?.ciphertext || !carrier.headerBlob) return undefined;
        const position = await repo.nextReleasePosition(tx, msg.roomId);
        turn = this.order.enter(msg.roomId);
        if (!(await repo.releaseHeldEnvelope(tx, env.id, position, new Date()))) return undefined;
        await enqueueWebhooks(tx, held.tenantId, msg, [env.recipientDeviceId]);
        return { recipient: env.recipientDeviceId, out: roomMessageEvent(msg, carrier.headerBlob, carrier.ciphertext, position) };
      });
      if (!event) return;
      await turn!.ready;
      await this.deps.notifier.toDevices(held.tenantId, [event.recipient], 'room_message', event.out);
    } finally {
      turn?.done();
    }
  }

  /** Validate and decode envelopes (no database): `*` alone, distinct recipients, base64, size. */
  private decode(input: EnvelopeInput[]): DecodedEnvelope[] {
    if (input.length === 0) throw badRequest('envelopes must not be empty');
    const mls = input.some((e) => e.recipient_device_id === ALL_MEMBERS);
    if (mls && input.length !== 1) throw badRequest('an MLS envelope (recipient_device_id "*") must be the only envelope');
    const seen = new Set<string>();
    return input.map((e) => {
      const recipient = mls ? null : e.recipient_device_id.toLowerCase();
      if (recipient !== null) {
        if (seen.has(recipient)) throw badRequest(`more than one envelope for recipient ${recipient}`);
        seen.add(recipient);
      }
      const header = decodeBase64('header_blob', e.header_blob);
      const ciphertext = decodeBase64('ciphertext', e.ciphertext);
      if (ciphertext.length > this.deps.maxCiphertextBytes) throw new AppError(ErrorCode.PayloadTooLarge, `ciphertext exceeds ${this.deps.maxCiphertextBytes} bytes`);
      return { recipient, header, ciphertext };
    });
  }

  /** Kind of each listed device; 400 unless every one is an ACTIVE device of the tenant. */
  private async activeKinds(tx: Tx, ids: string[]): Promise<Map<string, DeviceKind>> {
    const found = new Map((await repo.devicesByIds(tx, ids)).map((d) => [d.id, d]));
    for (const id of ids) {
      if (found.get(id)?.status !== 'ACTIVE') throw badRequest(`device ${id} is not an ACTIVE device of this tenant`);
    }
    return new Map(ids.map((id) => [id, found.get(id)!.kind as DeviceKind]));
  }

  private async mustGet(tx: Tx, id: string, forUpdate = false): Promise<repo.RoomRow> {
    const room = await repo.getRoom(tx, id, forUpdate);
    if (!room) throw notFound('room');
    return room;
  }

  /** The room (row-locked when `lock`: membership changes serialise, sends do not); 409 when archived. */
  private async mustGetOpen(tx: Tx, id: string, lock: boolean): Promise<repo.RoomRow> {
    const room = await this.mustGet(tx, id, lock);
    if (room.archivedAt) throw conflict('the room is archived');
    return room;
  }

  private async summaries(tx: Tx, rooms: repo.RoomRow[]): Promise<RoomSummary[]> {
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
        security_level: r.securityLevel as SecurityLevel,
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

  private async details(tx: Tx, room: repo.RoomRow): Promise<RoomDetails> {
    const [summary] = await this.summaries(tx, [room]);
    const current = new Set(summary!.members.map((m) => m.device_id));
    const conversations = (await repo.conversationsOf(tx, room.id))
      .filter((c) => current.has(c.deviceA) && current.has(c.deviceB))
      .map((c) => ({ conversation_id: c.id, device_ids: [c.deviceA, c.deviceB] as [string, string] }));
    return { ...summary!, conversations };
  }

  /**
   * After commit: each new member gets `room_joined {room_id, conversation_id, name,
   * security_level, members, conversations}` (its own pairwise conversations); owners and the
   * existing agent members get `member_joined {room_id, device_id}` per new member.
   */
  private async announceJoined(tenantId: string, room: RoomDetails, joined: string[], existing: { deviceId: string; kind: string }[]): Promise<void> {
    const { notifier } = this.deps;
    for (const id of joined) {
      await notifier.toDevices(tenantId, [id], 'room_joined', {
        room_id: room.room_id,
        conversation_id: room.conversation_id,
        name: room.name,
        security_level: room.security_level,
        members: room.members,
        conversations: room.conversations.filter((c) => c.device_ids.includes(id)),
      });
    }
    const agents = existing.filter((m) => m.kind === 'agent').map((m) => m.deviceId);
    for (const id of joined) {
      const data = { room_id: room.room_id, device_id: id };
      await notifier.toOwners(tenantId, 'member_joined', data);
      if (agents.length > 0) await notifier.toDevices(tenantId, agents, 'member_joined', data);
    }
  }
}
