/**
 * Policies and held messages (contract §2.7, §3.8, §4.9; design §8.3, §8.5).
 *
 * - CRUD of a tenant's policies (`POST /policies {name, scope?, priority?, conditions, action,
 *   enabled?}`); a room scope must name a room of the tenant (404 otherwise).
 * - {@link PolicyDecider} for the message paths (rooms, A2A, rental rooms): evaluation inside the
 *   caller's tenant-scoped transaction against the tenant's cached compiled policies, one
 *   `policy_evaluations` record per non-allow (message, recipient) and allow counts (decide.ts).
 * - Held messages: `held` -> `approved` (the releaser registered for the item's kind delivers it,
 *   after commit) | `denied` | `expired` (after `heldTtlMs`, 72 h by default). Denied and expired
 *   items lose their ciphertext (the envelope or A2A message keeps metadata only, outcome
 *   `blocked`). A decision on an item that is no longer `held` answers 409.
 */
import { randomUUID } from 'node:crypto';
import type { CreatePolicyRequest, HeldMessage, HeldMessageStatus, Policy, PolicyAction, PolicyAlertEvent, PolicyConditions, UpdatePolicyRequest } from '@parley/protocol';
import type { Db, Tx } from '../../db/client.js';
import { crossTenant, withTenant } from '../../db/tenant.js';
import { appendAudit } from '../audit/index.js';
import { badRequest, conflict, notFound } from '../../lib/errors.js';
import type { Notifier } from '../../realtime/notifier.js';
import { CompiledPolicies } from './compiled.js';
import { decideAll, evaluateAll, evaluateCached, type Decided, type RatesOf } from './decide.js';
import type { Evaluation } from './engine.js';
import * as repo from './repo.js';
import type { DecideItem, HeldRecord, HeldReleaser, HoldInput, PolicyDecider } from './types.js';

/** Which message path releases a held item. */
export type HeldKind = 'room' | 'a2a' | 'rental';

/** Where errors of releasers go (no message content is ever logged). */
export interface PolicyLog {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface PolicyServiceDeps {
  db: Db;
  notifier: Notifier;
  /** How long a message stays held before it expires, in milliseconds (HELD_MESSAGE_TTL_HOURS). */
  heldTtlMs: number;
  /**
   * The tenant's held-message TTL in milliseconds, read inside the holding transaction (the
   * `held_message_ttl_hours` tenant setting, design §8.22); `heldTtlMs` when absent.
   */
  heldTtlMsOf?: (tx: Tx, tenantId: string) => Promise<number>;
  log?: PolicyLog;
}

const toPolicyOut = (p: repo.PolicyRow): Policy => ({
  policy_id: p.id,
  name: p.name,
  scope: { room_id: p.scopeRoomId, skill: p.scopeSkill },
  priority: p.priority,
  conditions: p.conditions as PolicyConditions,
  action: p.action as PolicyAction,
  enabled: p.enabled,
  created_at: p.createdAt.toISOString(),
  updated_at: p.updatedAt.toISOString(),
});


/** The status a held row answers with: a lapsed `held` row is `expired` even before the job ran. */
const effectiveStatus = (h: repo.HeldRow, now: Date): HeldMessageStatus =>
  h.status === 'held' && h.expiresAt <= now ? 'expired' : (h.status as HeldMessageStatus);

const toHeldOut = (h: repo.HeldRow, now = new Date()): HeldMessage => ({
  held_message_id: h.id,
  room_id: h.roomId,
  channel_id: h.channelId,
  rental_id: h.rentalId,
  sender_device_id: h.senderDeviceId,
  recipient_device_id: h.recipientDeviceId,
  policy_id: h.policyId,
  message_type: h.messageType,
  priority: h.priority,
  status: effectiveStatus(h, now),
  created_at: h.createdAt.toISOString(),
  expires_at: h.expiresAt.toISOString(),
  decided_at: h.decidedAt?.toISOString() ?? null,
});

/** The held row as handed to its releaser (only the fields that are set). */
function toRecord(h: repo.HeldRow): HeldRecord {
  return {
    id: h.id,
    tenantId: h.tenantId,
    ...(h.roomId ? { roomId: h.roomId } : {}),
    ...(h.envelopeId ? { envelopeId: h.envelopeId } : {}),
    ...(h.channelId ? { channelId: h.channelId } : {}),
    ...(h.a2aMessageId ? { a2aMessageId: h.a2aMessageId } : {}),
    ...(h.rentalId ? { rentalId: h.rentalId } : {}),
    ...(h.rentalMessageId ? { rentalMessageId: h.rentalMessageId } : {}),
    senderDeviceId: h.senderDeviceId,
    recipientDeviceId: h.recipientDeviceId,
    policyId: h.policyId,
    messageType: h.messageType,
    priority: h.priority,
  };
}

/** A held item belongs to a rental room, to A2A (a channel or an A2A message), else to rooms. */
const kindOf = (h: repo.HeldRow): HeldKind => (h.rentalMessageId ? 'rental' : h.channelId || h.a2aMessageId ? 'a2a' : 'room');

/** Normalise a wire scope; 400 when it names both a room and a skill. */
function scopeColumns(scope: CreatePolicyRequest['scope']): { scopeRoomId: string | null; scopeSkill: string | null } {
  const roomId = scope?.room_id ?? null;
  const skill = scope?.skill ?? null;
  if (roomId && skill) throw badRequest('scope names a room or a skill, not both');
  return { scopeRoomId: roomId?.toLowerCase() ?? null, scopeSkill: skill };
}

export class PolicyService implements PolicyDecider {
  private readonly releasers = new Map<HeldKind, HeldReleaser>();
  private readonly compiled = new CompiledPolicies();

  constructor(private readonly deps: PolicyServiceDeps) {}

  // ------------------------------------------------------------------ policies (CRUD)

  /** Create a policy. @throws 400 for a scope naming both a room and a skill; 404 for an unknown room. */
  create(tenantId: string, input: CreatePolicyRequest, actor = 'owner'): Promise<Policy> {
    const scope = scopeColumns(input.scope);
    return withTenant(this.deps.db, tenantId, async (tx) => {
      await this.mustSeeRoom(tx, scope.scopeRoomId);
      const now = new Date();
      const [row] = await repo.insertPolicy(tx, {
        id: randomUUID(),
        tenantId,
        name: input.name,
        ...scope,
        priority: input.priority ?? 0,
        conditions: input.conditions,
        action: input.action,
        enabled: input.enabled ?? true,
        createdAt: now,
        updatedAt: now,
      });
      await appendAudit(tx, tenantId, { type: 'policy.created', actor, subject: row!.id, data: { name: input.name, action: input.action } });
      return toPolicyOut(row!);
    });
  }

  /** The tenant's policies in evaluation order (priority descending, then oldest first). */
  list(tenantId: string): Promise<Policy[]> {
    return withTenant(this.deps.db, tenantId, async (tx) => (await repo.listPolicies(tx)).map(toPolicyOut));
  }

  /** One policy. @throws 404 when unknown in this tenant. */
  get(tenantId: string, id: string): Promise<Policy> {
    return withTenant(this.deps.db, tenantId, async (tx) => toPolicyOut(await this.mustGetPolicy(tx, id)));
  }

  /**
   * Change any subset of a policy's fields (`scope: null` or `{}` makes it tenant-wide).
   * @throws 404 for an unknown policy or scope room; 400 for a scope naming a room and a skill.
   */
  update(tenantId: string, id: string, patch: UpdatePolicyRequest, actor = 'owner'): Promise<Policy> {
    const scope = patch.scope !== undefined ? scopeColumns(patch.scope) : undefined;
    return withTenant(this.deps.db, tenantId, async (tx) => {
      await this.mustGetPolicy(tx, id);
      if (scope) await this.mustSeeRoom(tx, scope.scopeRoomId);
      const [row] = await repo.updatePolicy(tx, id, {
        ...(patch.name !== undefined ? { name: patch.name } : {}),
        ...(scope ?? {}),
        ...(patch.priority !== undefined ? { priority: patch.priority } : {}),
        ...(patch.conditions !== undefined ? { conditions: patch.conditions } : {}),
        ...(patch.action !== undefined ? { action: patch.action } : {}),
        ...(patch.enabled !== undefined ? { enabled: patch.enabled } : {}),
        updatedAt: new Date(),
      });
      await appendAudit(tx, tenantId, { type: 'policy.updated', actor, subject: id, data: { fields: Object.keys(patch).sort() } });
      return toPolicyOut(row!);
    });
  }

  /** Delete a policy. @throws 404 when unknown in this tenant. */
  async delete(tenantId: string, id: string, actor = 'owner'): Promise<void> {
    const deleted = await withTenant(this.deps.db, tenantId, async (tx) => {
      const rows = await repo.deletePolicy(tx, id);
      if (rows.length > 0) await appendAudit(tx, tenantId, { type: 'policy.deleted', actor, subject: id });
      return rows;
    });
    if (deleted.length === 0) throw notFound('policy');
  }

  // ------------------------------------------------------------------ PolicyDecider

  /**
   * {@link decideAll} for items of one sender: `senderRate` (that sender's message count over the
   * last minute) is called at most once, only when a compiled policy `usesRate`, and fills every
   * item without a rate (see {@link PolicyDecider.decide}).
   */
  decide(tx: Tx, tenantId: string, items: DecideItem[], senderRate?: () => Promise<number>): Promise<Evaluation[]> {
    const ratesOf = senderRate
      ? async (list: readonly DecideItem[]) => {
          const rate = await senderRate();
          return list.map(() => rate);
        }
      : undefined;
    return decideAll(this.compiled, tx, tenantId, items, ratesOf);
  }

  /**
   * See decide.ts {@link evaluateAll}: the evaluations of items of several senders and messages (a
   * room group-commit flush) and the inserts of their records, which the caller runs in `tx`.
   */
  evaluateAll(tx: Tx, tenantId: string, items: readonly DecideItem[], ratesOf?: RatesOf, epoch?: number): Promise<Decided> {
    return evaluateAll(this.compiled, tx, tenantId, items, ratesOf, epoch);
  }

  /** See decide.ts {@link evaluateCached}: {@link evaluateAll} with no I/O, when the cached set is current at `epoch` and reads nothing more. */
  evaluateCached(tenantId: string, items: readonly DecideItem[], epoch: number): Decided | undefined {
    return evaluateCached(this.compiled, tenantId, items, epoch);
  }

  /** How many policy sets this instance compiled so far (compiled.ts; tests and diagnostics). */
  get compiles(): number {
    return this.compiled.compiles;
  }

  /** Insert a `held` held message expiring after the tenant's held-message TTL; answers its id. */
  async hold(tx: Tx, tenantId: string, input: HoldInput): Promise<string> {
    const [id] = await this.holdAll(tx, tenantId, [input]);
    return id!;
  }

  /**
   * Insert `held` held messages expiring after the tenant's held-message TTL (`heldTtlMsOf`, else
   * `heldTtlMs`), in one statement; answers their ids in order.
   */
  async holdAll(tx: Tx, tenantId: string, inputs: HoldInput[]): Promise<string[]> {
    const ttlMs = this.deps.heldTtlMsOf ? await this.deps.heldTtlMsOf(tx, tenantId) : this.deps.heldTtlMs;
    const expiresAt = new Date(Date.now() + ttlMs);
    const rows = inputs.map((input) => ({
      id: randomUUID(),
      tenantId,
      roomId: input.roomId ?? null,
      envelopeId: input.envelopeId ?? null,
      channelId: input.channelId ?? null,
      a2aMessageId: input.a2aMessageId ?? null,
      rentalId: input.rentalId ?? null,
      rentalMessageId: input.rentalMessageId ?? null,
      senderDeviceId: input.senderDeviceId,
      recipientDeviceId: input.recipientDeviceId,
      policyId: input.policyId,
      messageType: input.messageType,
      priority: input.priority,
      status: 'held',
      expiresAt,
    }));
    await repo.insertHeld(tx, rows);
    return rows.map((r) => r.id);
  }

  /** Send `policy_alert` with `data` to the tenant's owner sockets (and webhooks). Call after commit. */
  alert(tenantId: string, data: PolicyAlertEvent): Promise<void> {
    return this.deps.notifier.toOwners(tenantId, 'policy_alert', data);
  }

  // ------------------------------------------------------------------ held messages

  /**
   * Set the function that delivers approved held items of a kind (rooms: `'room'`, A2A: `'a2a'`, rental rooms: `'rental'`);
   * a later registration for the same kind replaces the earlier one.
   */
  registerReleaser(kind: HeldKind, fn: HeldReleaser): void {
    this.releasers.set(kind, fn);
  }

  /** Held messages of a status (default `held`), oldest first, by their effective status. */
  listHeld(tenantId: string, opts: { status?: HeldMessageStatus } = {}): Promise<HeldMessage[]> {
    const now = new Date();
    return withTenant(this.deps.db, tenantId, async (tx) => (await repo.listHeld(tx, opts.status ?? 'held', now)).map((h) => toHeldOut(h, now)));
  }

  /**
   * held -> approved by owner `sub`; after commit the releaser of the item's kind delivers it (a
   * releaser failure is logged: the approval stands). @throws 404 unknown; 409 when not `held`.
   */
  async approve(tenantId: string, sub: string, id: string): Promise<HeldMessage> {
    const row = await this.settle(tenantId, sub, id, 'approved');
    await this.release(row);
    return toHeldOut(row);
  }

  /** held -> denied by owner `sub`; the held ciphertext is dropped. @throws 404 unknown; 409 when not `held`. */
  async deny(tenantId: string, sub: string, id: string): Promise<HeldMessage> {
    return toHeldOut(await this.settle(tenantId, sub, id, 'denied'));
  }

  /**
   * Expire every `held` message with `expires_at` <= `now`, in all tenants, dropping its held
   * ciphertext. Answers how many expired.
   */
  expireDue(now = new Date()): Promise<number> {
    return crossTenant(this.deps.db, 'maintenance: held-message expiry across tenants', async (tx) => {
      const rows = await repo.expireDueHeld(tx, now);
      await repo.wipeHeldPayloads(tx, rows);
      return rows.length;
    });
  }

  /**
   * One decision in one transaction. A lapsed `held` row is expired (and wiped) in the same
   * transaction, then answered 409 once that has committed.
   */
  private async settle(tenantId: string, sub: string, id: string, to: 'approved' | 'denied'): Promise<repo.HeldRow> {
    const result = await withTenant(this.deps.db, tenantId, async (tx) => {
      const held = await repo.getHeldForUpdate(tx, id);
      if (!held) throw notFound('held message');
      if (held.status !== 'held') throw conflict(`held message is already ${held.status}`);
      const now = new Date();
      const expired = held.expiresAt <= now;
      const row = await repo.updateHeld(tx, id, expired ? { status: 'expired', decidedAt: now } : { status: to, decidedAt: now, decidedBy: sub });
      if (row.status !== 'approved') await repo.wipeHeldPayloads(tx, [row]);
      if (!expired) await appendAudit(tx, tenantId, { type: to === 'approved' ? 'held_message.approved' : 'held_message.denied', actor: sub, subject: id });
      return row;
    });
    if (result.status === 'expired') throw conflict('held message is already expired');
    return result;
  }

  private async release(row: repo.HeldRow): Promise<void> {
    const kind = kindOf(row);
    const releaser = this.releasers.get(kind);
    if (!releaser) {
      this.deps.log?.warn({ held_message_id: row.id, kind }, 'approved held message has no releaser for its kind');
      return;
    }
    try {
      await releaser(toRecord(row));
    } catch (err) {
      this.deps.log?.error({ err, held_message_id: row.id, kind }, 'releasing an approved held message failed');
    }
  }

  private async mustGetPolicy(tx: Tx, id: string): Promise<repo.PolicyRow> {
    const p = await repo.getPolicy(tx, id);
    if (!p) throw notFound('policy');
    return p;
  }

  private async mustSeeRoom(tx: Tx, roomId: string | null): Promise<void> {
    if (roomId && !(await repo.roomExists(tx, roomId))) throw notFound('room');
  }
}
