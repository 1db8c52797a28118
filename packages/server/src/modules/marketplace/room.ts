/**
 * The rental room (contract §4.16 "renting creates a cross-tenant encrypted room; each tenant keeps
 * its own ratchet sessions and its own hash-chained audit log; when policies of both tenants
 * apply, the stricter wins"). The room of a rental (`room_id` = the rental id) joins the renter's
 * ACTIVE owner devices and the rented agent device; a message is a set of envelopes, one
 * ciphertext per recipient of the other side (pairwise sessions the clients keep), relayed and
 * stored as opaque bytes in the two-party `marketplace_rental_messages`.
 *
 * Sending (REST): the renter's owner device (`X-Device-Id`) or the agent (device JWT or API key).
 * Per envelope, in one transaction, the policies of BOTH tenants decide (`svc.policy.evaluate`
 * records in each) and the stricter outcome wins: delivered / notified go to the recipient's
 * sockets as `rental_message` (and `policy_alert` to the owners of each tenant that said notify);
 * held becomes a held message of the tenant whose policy held it (the recipient's when both did),
 * delivered when its owner approves; blocked keeps no ciphertext. While the rental is suspended
 * (trust drop) every message not blocked is held by the rental and delivered when it resumes.
 */
import { randomUUID } from 'node:crypto';
import type { RentalMember, RentalMembers, RentalMessage, RentalMessageInput, RentalMessagePage, RentalMessageQuery, RentalSendResult } from '@parley/protocol';
import { and, asc, desc, eq, gt, inArray, isNull, or } from 'drizzle-orm';
import type { Db, Tx } from '../../db/client.js';
import { devices, marketplaceRentalMessages as M } from '../../db/schema/index.js';
import { switchTenant, withTenant } from '../../db/tenant.js';
import { blobsOut, decodeEnvelope } from '../../lib/envelope.js';
import { badRequest, conflict, forbidden, notFound } from '../../lib/errors.js';
import type { MessageRate } from '../../lib/message-rate.js';
import { pageLimit } from '../../lib/paging.js';
import type { Notifier } from '../../realtime/notifier.js';
import { stricter, type Evaluation, type EvaluationContext, type PolicyAction } from '../policies/index.js';
import type { HeldRecord, PolicyDecider } from '../policies/index.js';
import { requireOwnerDeviceOf } from '../devices/index.js';
import { getHubIdentity } from '../hub/index.js';
import { asTier } from '@parley/protocol';
import * as rentalsRepo from './rentals-repo.js';

type MessageRow = typeof M.$inferSelect;

/**
 * Who acts in a rental room: a tenant and its device (null: an owner without X-Device-Id, reads
 * only). `ownerSub` is set for an owner JWT: its `X-Device-Id` must then name one of that owner's
 * own owner devices (as conversations and rooms check), never the agent; a device JWT or API key
 * (`ownerSub` null) acts as its own device.
 */
export interface RoomCaller {
  tenantId: string;
  deviceId: string | null;
  ownerSub: string | null;
}

/** Statuses whose room is open for messages; `suspended` holds them. */
const OPEN = ['active', 'suspended'];
const OUTCOME: Record<PolicyAction, 'delivered' | 'notified' | 'held' | 'blocked'> = { allow: 'delivered', notify: 'notified', hold: 'held', block: 'blocked' };

const toMessage = (m: MessageRow): RentalMessage => ({
  message_id: m.id,
  rental_id: m.rentalId,
  sender_device_id: m.senderDeviceId,
  recipient_device_id: m.recipientDeviceId,
  ...blobsOut(m),
  message_type: m.messageType,
  priority: m.priority,
  timestamp: m.createdAt.toISOString(),
  cursor: String(m.seq),
});

export class RentalRoom {
  constructor(private readonly deps: { db: Db; notifier: Notifier; policies: PolicyDecider; messageRate: MessageRate; maxCiphertextBytes: number; listDefault: number; listMax: number }) {}

  /** The room's members with their keys (either party). @throws 404 not visible; 409 never activated. */
  members(c: RoomCaller, rentalId: string): Promise<RentalMembers> {
    return withTenant(this.deps.db, c.tenantId, async (tx) => {
      const r = await rentalsRepo.getRental(tx, rentalId);
      if (!r) throw notFound('rental');
      if (!r.agentDeviceId) throw conflict('the rental has no room yet (it was never activated)');
      const members = await this.membersIn(tx, r, c.tenantId);
      return { rental_id: r.id, room_id: r.id, members };
    });
  }

  /**
   * Send envelopes (module comment). @throws 400 bad base64, a recipient outside the other side,
   * an owner without X-Device-Id; 403 the device is not a member; 404 not visible; 409 the
   * rental is not active or suspended, or its term (`ends_at`) has passed; 413 a ciphertext above
   * the limit; 429 the sender's message budget (contract §8) is spent.
   */
  async send(c: RoomCaller, rentalId: string, input: RentalMessageInput): Promise<RentalSendResult> {
    if (!c.deviceId) throw badRequest('header X-Device-Id must name your owner device');
    const sender = c.deviceId;
    const blobs = input.envelopes.map((e, i) => ({ recipient: e.recipient_device_id.toLowerCase(), ...decodeEnvelope(e, this.deps.maxCiphertextBytes, `envelopes[${i}].`) }));
    const now = new Date();
    const messageType = input.message_type ?? 'text';
    const priority = input.priority ?? 'normal';
    const result = await withTenant(this.deps.db, c.tenantId, async (tx) => {
      const r = await rentalsRepo.getRental(tx, rentalId);
      if (!r) throw notFound('rental');
      if (!OPEN.includes(r.status) || !r.agentDeviceId) throw conflict(`the rental room is closed: the rental is ${r.status}`);
      // The term job completes a rental some time after its end; the room closes at the end itself.
      if (r.endsAt && r.endsAt <= now) throw conflict(`the rental room is closed: the rental's term ended at ${r.endsAt.toISOString()}`);
      const members = await this.membersIn(tx, r, c.tenantId);
      const me = await this.actorIn(tx, c, sender, members);
      // Counted once the sender is known to be the caller's member device (contract §8, lib/message-rate.ts).
      await this.deps.messageRate.consume(sender);
      const others = new Map(members.filter((m) => m.side !== me.side).map((m) => [m.device_id, m]));
      for (const b of blobs) if (!others.has(b.recipient)) throw badRequest(`recipient ${b.recipient} is not a member of the other side of the rental room`);
      const identity = me.side === 'developer' ? await this.identityOf(tx, r) : null;
      const out: RentalSendResult['deliveries'] = [];
      const delivered: MessageRow[] = [];
      const alerts: { tenantId: string; evaluation: Evaluation; recipient: string }[] = [];
      for (const b of blobs) {
        const id = randomUUID();
        const ctx: EvaluationContext = {
          roomId: null,
          messageType,
          priority,
          senderKind: me.kind,
          recipientKind: others.get(b.recipient)!.kind,
          senderDeviceId: sender,
          recipientDeviceId: b.recipient,
          senderHubAddress: identity?.hubAddress ?? null,
          senderTier: asTier(identity?.trustTier),
          ...(identity ? { senderTrustScore: identity.trustScore } : {}),
          crossTenant: true,
          now,
        };
        const decisions: { tenantId: string; evaluation: Evaluation }[] = [];
        for (const tenantId of [c.tenantId, c.tenantId === r.tenantId ? r.partnerTenantId : r.tenantId]) {
          await switchTenant(tx, tenantId);
          const [evaluation] = await this.deps.policies.decide(tx, tenantId, [{ ctx, subjectKind: 'rental_message', subjectId: id, defaultOutcome: 'allow' }]);
          decisions.push({ tenantId, evaluation: evaluation! });
        }
        await switchTenant(tx, c.tenantId);
        let action = decisions.map((d) => d.evaluation.outcome).reduce(stricter);
        const suspended = r.status === 'suspended' && action !== 'block';
        if (suspended) action = 'hold';
        const kept = action !== 'block';
        const [row] = await tx
          .insert(M)
          .values({
            id,
            tenantId: r.tenantId,
            partnerTenantId: r.partnerTenantId,
            rentalId: r.id,
            senderDeviceId: sender,
            recipientDeviceId: b.recipient,
            headerBlob: kept ? b.header : null,
            ciphertext: kept ? b.ciphertext : null,
            messageType,
            priority,
            outcome: OUTCOME[action],
            holdReason: action === 'hold' ? (suspended ? 'suspension' : 'policy') : null,
            createdAt: now,
          })
          .returning();
        let heldMessageId: string | undefined;
        if (action === 'hold' && !suspended) {
          const holder = decisions.filter((d) => d.evaluation.outcome === 'hold').at(-1)!;
          await switchTenant(tx, holder.tenantId);
          heldMessageId = await this.deps.policies.hold(tx, holder.tenantId, {
            rentalId: r.id,
            rentalMessageId: id,
            senderDeviceId: sender,
            recipientDeviceId: b.recipient,
            policyId: holder.evaluation.policyId,
            messageType,
            priority,
          });
          await switchTenant(tx, c.tenantId);
        }
        if (action === 'allow' || action === 'notify') delivered.push(row!);
        if (action === 'notify') for (const d of decisions) if (d.evaluation.outcome === 'notify') alerts.push({ ...d, recipient: b.recipient });
        out.push({ recipient_device_id: b.recipient, message_id: id, outcome: OUTCOME[action], ...(heldMessageId ? { held_message_id: heldMessageId } : {}) });
      }
      return { r, out, delivered, alerts };
    });
    await this.deliver(result.r, result.delivered);
    for (const a of result.alerts) {
      await this.deps.policies.alert(a.tenantId, { room_id: null, policy_id: a.evaluation.policyId, sender_device_id: sender, recipient_device_id: a.recipient, message_type: messageType });
    }
    return { rental_id: rentalId, deliveries: result.out, timestamp: now.toISOString() };
  }

  /**
   * The caller device's relayed messages (sent or received), oldest first, after `since`;
   * messages to it are marked delivered. @throws 400 an owner without X-Device-Id; 403 not a member; 404.
   */
  history(c: RoomCaller, rentalId: string, q: RentalMessageQuery): Promise<RentalMessagePage> {
    if (!c.deviceId) throw badRequest('header X-Device-Id must name your owner device');
    const me = c.deviceId;
    const limit = pageLimit(q.limit, this.deps);
    return withTenant(this.deps.db, c.tenantId, async (tx) => {
      const r = await rentalsRepo.getRental(tx, rentalId);
      if (!r) throw notFound('rental');
      if (!r.agentDeviceId) throw forbidden('this device is not a member of the rental room');
      await this.actorIn(tx, c, me, await this.membersIn(tx, r, c.tenantId));
      const rows = await tx
        .select()
        .from(M)
        .where(
          and(
            eq(M.rentalId, r.id),
            inArray(M.outcome, ['delivered', 'notified']),
            or(eq(M.senderDeviceId, me), eq(M.recipientDeviceId, me)),
            q.since !== undefined ? gt(M.seq, Number(q.since)) : undefined,
          ),
        )
        .orderBy(asc(M.seq))
        .limit(limit);
      const mine = rows.filter((m) => m.recipientDeviceId === me && !m.deliveredAt).map((m) => m.id);
      if (mine.length) await tx.update(M).set({ deliveredAt: new Date() }).where(inArray(M.id, mine));
      const messages = rows.map(toMessage);
      return { messages, next_cursor: messages.at(-1)?.cursor ?? q.since ?? null };
    });
  }

  /** The releaser of held rental messages (registered with the policy module): an owner approved one. */
  async release(held: HeldRecord): Promise<void> {
    if (!held.rentalMessageId) return;
    const found = await withTenant(this.deps.db, held.tenantId, async (tx) => {
      const [row] = await tx
        .update(M)
        .set({ outcome: 'delivered', releasedAt: new Date() })
        .where(and(eq(M.id, held.rentalMessageId!), eq(M.outcome, 'held')))
        .returning();
      const r = row ? await rentalsRepo.getRental(tx, row.rentalId) : undefined;
      return row && r ? { row, r } : undefined;
    });
    if (found && found.r.status === 'active') await this.deliver(found.r, [found.row]);
  }

  /** Deliver the messages a suspension held, once the rental is active again (the monitor, after commit). */
  async releaseSuspended(rentalId: string, renterTenantId: string): Promise<number> {
    const found = await withTenant(this.deps.db, renterTenantId, async (tx) => {
      const r = await rentalsRepo.getRental(tx, rentalId);
      if (!r || r.status !== 'active') return null;
      const rows = await tx
        .update(M)
        .set({ outcome: 'delivered', holdReason: null, releasedAt: new Date() })
        .where(and(eq(M.rentalId, rentalId), eq(M.outcome, 'held'), eq(M.holdReason, 'suspension')))
        .returning();
      return { r, rows: rows.sort((a, b) => a.seq - b.seq) };
    });
    if (!found) return 0;
    await this.deliver(found.r, found.rows);
    return found.rows.length;
  }

  /** `rental_message` to each recipient's sockets (and the sender's other sockets). */
  private async deliver(r: rentalsRepo.RentalRow, rows: MessageRow[]): Promise<void> {
    for (const m of rows) {
      const out = toMessage(m);
      const toAgent = m.recipientDeviceId === r.agentDeviceId;
      await this.deps.notifier.toDevices(toAgent ? r.partnerTenantId : r.tenantId, [m.recipientDeviceId], 'rental_message', out);
      await this.deps.notifier.toDevices(toAgent ? r.tenantId : r.partnerTenantId, [m.senderDeviceId], 'rental_message', out);
    }
  }

  /**
   * The member acting for `c` as `deviceId` (`tx` in `c.tenantId`'s scope): an owner's `X-Device-Id` must name
   * one of its own owner devices (404 unknown, 403 another's or not an owner device, 403 revoked)
   * and act as an owner member; a device JWT or API key acts as its own device.
   * @throws 403 when the device is not a member of the room on the caller's side.
   */
  private async actorIn(tx: Tx, c: RoomCaller, deviceId: string, members: RentalMember[]): Promise<RentalMember> {
    if (c.ownerSub) await requireOwnerDeviceOf(tx, c.ownerSub, deviceId);
    const me = members.find((m) => m.device_id === deviceId && m.tenant_id === c.tenantId && (!c.ownerSub || m.kind === 'owner'));
    if (!me) throw forbidden('this device is not a member of the rental room');
    return me;
  }

  /** The rented agent's identity; `tx` must be in the developer's scope (the agent is the sender). */
  private identityOf(tx: Tx, r: rentalsRepo.RentalRow) {
    return getHubIdentity(tx, r.identityId);
  }

  /** Members of both sides, read in each tenant's own scope; `tx` ends in `home`'s scope. */
  private async membersIn(tx: Tx, r: rentalsRepo.RentalRow, home: string): Promise<RentalMember[]> {
    const cols = { id: devices.id, tenantId: devices.tenantId, kind: devices.kind, identityPublicKey: devices.identityPublicKey, ephemeralPublicKey: devices.ephemeralPublicKey, fingerprint: devices.fingerprint };
    await switchTenant(tx, r.tenantId);
    const owners = await tx
      .select(cols)
      .from(devices)
      .where(and(eq(devices.kind, 'owner'), eq(devices.status, 'ACTIVE'), isNull(devices.deletedAt)))
      .orderBy(desc(devices.enrolledAt));
    await switchTenant(tx, r.partnerTenantId);
    const agent = await tx
      .select(cols)
      .from(devices)
      .where(and(eq(devices.id, r.agentDeviceId!), eq(devices.status, 'ACTIVE')));
    await switchTenant(tx, home);
    const member = (d: (typeof owners)[number], side: 'renter' | 'developer'): RentalMember => ({
      device_id: d.id,
      tenant_id: d.tenantId,
      side,
      kind: d.kind === 'owner' ? 'owner' : 'agent',
      identity_public_key: d.identityPublicKey,
      ephemeral_public_key: d.ephemeralPublicKey,
      fingerprint: d.fingerprint,
    });
    return [...agent.map((d) => member(d, 'developer')), ...owners.map((d) => member(d, 'renter'))];
  }
}
