/**
 * Agent-to-agent channels (SPEC §2.11, §3.3, §3.5, §4.13, §6.1; DESIGN §8.5; docs/decisions.md
 * "A2A channels").
 *
 * A channel joins two agent devices that each hold a hub identity. It is a two-party row:
 * `tenant_id` is the initiator's tenant, `partner_tenant_id` the responder's (equal for a
 * same-tenant channel); a channel between two tenants is *federated* and needs an active
 * federation agreement for as long as it carries traffic.
 *
 * States: `pending` (requested) -> `approved` (the responder's owner approved; both devices get
 * `a2a_channel_approved` with the peer's keys) -> `active` (both sides sent their opaque
 * `a2a_key_exchange`; both get `a2a_channel_activated` with a fresh conversation id).
 * `pending` -> `rejected` by the responder's owner; `pending | approved | active` -> `revoked`
 * by either party. `rejected` and `revoked` are terminal (409).
 *
 * Messages are ciphertext only. Each one is evaluated by the policies of the sender's tenant and,
 * on a federated channel, of the recipient's tenant too, in ONE transaction that switches tenant
 * scope between the steps ({@link switchTenant}); the stricter outcome wins (SPEC §4.13, §4.16).
 * A held message lives in the tenant whose policy held it (the recipient's when both did) and is
 * delivered by {@link A2aService.release} once an owner approves it.
 *
 * Federated messages always carry a W3C `traceparent` (generated when the sender sent none).
 *
 * Audit (docs/decisions.md "Audit coverage"): request, approve, reject and revoke record
 * `a2a_channel.requested | approved | rejected | revoked` (subject: the channel id) in the
 * transaction of the transition, in the acting tenant's chain (actor: owner `sub`,
 * `api_key:<id>` or `device:<id>`) and, for a federated channel, also in the other tenant's chain
 * (actor `tenant:<acting tenant id>`).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Db, Tx } from '../../db/client.js';
import { switchTenant, withTenant } from '../../db/tenant.js';
import { AppError, ErrorCode, badRequest, conflict, forbidden, notFound } from '../../lib/errors.js';
import type { Notifier } from '../../realtime/notifier.js';
import { BoundedCache, decodeBase64 } from '../conversations/messages.js';
import { pageLimit, parseSince } from '../../lib/paging.js';
import { getDevice, type DeviceRow } from '../devices/repo.js';
import type { FederationService } from '../federation/service.js';
import type { HubService } from '../hub/service.js';
import { stricter, type Evaluation, type EvaluationContext, type PolicyAction } from '../policies/engine.js';
import { asTier, tierRank, type Tier } from '../trust/types.js';
import type { HeldRecord, HeldReleaser, PolicyDecider } from '../policies/types.js';
import { appendAuditToParties, twoPartyEvents } from '../audit/parties.js';
import * as repo from './repo.js';

/** The policy module as A2A uses it: the decider contract plus the releaser registry. */
export interface A2aPolicies extends PolicyDecider {
  registerReleaser(kind: 'a2a', fn: HeldReleaser): void;
}

export interface A2aDeps {
  db: Db;
  notifier: Notifier;
  hubs: Pick<HubService, 'findByAddress' | 'findByDevice'>;
  federation: Pick<FederationService, 'activeAgreementBetween'>;
  policies: A2aPolicies;
  /** Largest accepted `ciphertext` (bytes, after base64 decoding); 413 above. */
  maxCiphertextBytes: number;
  /** History page size: default and maximum `limit`. */
  listDefault: number;
  listMax: number;
}

/**
 * Who acts on a channel route: an owner of a tenant, or an agent device (device JWT or API key).
 * `actor` is the audit actor of the principal (audit/parties.ts `auditActor`).
 */
export type A2aActor = { kind: 'owner'; tenantId: string; actor: string } | { kind: 'agent'; tenantId: string; deviceId: string; actor: string };

/** The agent device behind a frame or an agent REST call. */
export interface A2aSender {
  tenantId: string;
  deviceId: string;
}

/**
 * A channel on the wire. SPEC §2.11 names its fields in camelCase (channelId,
 * initiatorHubAddress, responderHubAddress, conversationId, status), so every field of a channel
 * object is camelCase; the envelopes around it (`channel_id`, `channels`) stay snake_case.
 */
export interface ChannelOut {
  channelId: string;
  initiatorHubAddress: string;
  responderHubAddress: string;
  /** Set when the channel becomes active (key exchange complete); null before. */
  conversationId: string | null;
  status: repo.ChannelStatus;
  capability: string | null;
  /** True when the two agents belong to different tenants (a federation agreement governs it). */
  federated: boolean;
  agreementId: string | null;
  createdAt: string;
  approvedAt: string | null;
  activatedAt: string | null;
}

/** `POST /a2a/channels/request` body (DESIGN §8.5). */
export interface ChannelRequest {
  responder_hub_address: string;
  /** Owners name the initiating agent device; an API key always initiates as its own device. */
  initiator_device_id?: string;
  /** The capability the channel is for; must be allowed by a federation agreement that lists capabilities. */
  capability?: string;
}

/** An opaque handshake (e.g. an X3DH initial message or an MLS Welcome), base64 fields. */
export interface KeyExchangeInput {
  channel_id: string;
  header_blob: string;
  ciphertext: string;
}

/** One message from a party agent; base64 fields, SPEC §2.4 `message_type` / `priority`. */
export interface A2aSendInput {
  header_blob: string;
  ciphertext: string;
  message_type?: string;
  priority?: string;
  /** W3C Trace Context `00-<32 hex>-<16 hex>-<2 hex>`; generated on federated channels when absent. */
  traceparent?: string;
}

/** The `a2a_message` receive frame and a history entry (`cursor`: opaque, usable as `since`). */
export interface A2aMessageOut {
  channel_id: string;
  message_id: string;
  sender_device_id: string;
  header_blob: string;
  ciphertext: string;
  message_type: string;
  priority: string;
  timestamp: string;
  traceparent: string | null;
  cursor: string;
}

export type A2aOutcome = 'delivered' | 'notified' | 'held' | 'blocked';

/** Answer to a send (REST 201 body; the `a2a_message_ack` frame data). */
export interface A2aSendResult {
  message_id: string;
  channel_id: string;
  outcome: A2aOutcome;
  held_message_id?: string;
  timestamp: string;
  traceparent: string | null;
}

/** The immutable parties of a channel (cached per viewing tenant). */
type ChannelFacts = Pick<
  repo.ChannelRow,
  'id' | 'tenantId' | 'partnerTenantId' | 'initiatorDeviceId' | 'responderDeviceId' | 'initiatorHubAddress' | 'responderHubAddress'
>;
type Role = 'initiator' | 'responder';

const OUTCOME: Record<PolicyAction, A2aOutcome> = { allow: 'delivered', notify: 'notified', hold: 'held', block: 'blocked' };
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;

/** Map a stored channel to its wire form. */
export function toChannelOut(c: repo.ChannelRow): ChannelOut {
  return {
    channelId: c.id,
    initiatorHubAddress: c.initiatorHubAddress,
    responderHubAddress: c.responderHubAddress,
    conversationId: c.conversationId,
    status: c.status as repo.ChannelStatus,
    capability: c.capability,
    federated: c.tenantId !== c.partnerTenantId,
    agreementId: c.agreementId,
    createdAt: c.createdAt.toISOString(),
    approvedAt: c.approvedAt?.toISOString() ?? null,
    activatedAt: c.activatedAt?.toISOString() ?? null,
  };
}

function toMessageOut(m: repo.A2aMessageRow): A2aMessageOut {
  return {
    channel_id: m.channelId,
    message_id: m.id,
    sender_device_id: m.senderDeviceId,
    header_blob: (m.headerBlob ?? Buffer.alloc(0)).toString('base64'),
    ciphertext: (m.ciphertext ?? Buffer.alloc(0)).toString('base64'),
    message_type: m.messageType,
    priority: m.priority,
    timestamp: m.createdAt.toISOString(),
    traceparent: m.traceparent,
    cursor: String(m.seq),
  };
}

/**
 * Validate a W3C Trace Context `traceparent` (version 00, lowercase hex, trace-id and parent-id
 * not all zeros). @throws 400 otherwise.
 */
export function checkTraceparent(v: string): string {
  const m = TRACEPARENT.exec(v);
  if (!m || /^0+$/.test(m[1]!) || /^0+$/.test(m[2]!)) {
    throw badRequest('traceparent must be W3C Trace Context "00-<32 hex trace-id>-<16 hex parent-id>-<2 hex flags>" (lowercase; ids not all zeros)');
  }
  return v;
}

/** A fresh sampled `traceparent` with random trace and parent ids. */
export function newTraceparent(): string {
  return `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01`;
}

const isFederated = (c: ChannelFacts) => c.tenantId !== c.partnerTenantId;

/** The party side of `deviceId`. @throws 403 when the device is not one of the two agents. */
function roleOf(c: ChannelFacts, deviceId: string): Role {
  if (deviceId === c.initiatorDeviceId) return 'initiator';
  if (deviceId === c.responderDeviceId) return 'responder';
  throw forbidden('this agent is not a party of the channel');
}

/** The other side of `role`: its device, tenant and hub address. */
function peerOf(c: ChannelFacts, role: Role) {
  return role === 'initiator'
    ? { deviceId: c.responderDeviceId, tenantId: c.partnerTenantId, hubAddress: c.responderHubAddress }
    : { deviceId: c.initiatorDeviceId, tenantId: c.tenantId, hubAddress: c.initiatorHubAddress };
}

/**
 * Run `fn` with the transaction scoped to `tenantId`, then return to `home` (no switch when they
 * are equal). On failure the transaction rolls back, so the scope needs no restoring.
 */
async function inScope<T>(tx: Tx, home: string, tenantId: string, fn: () => Promise<T>): Promise<T> {
  if (tenantId === home) return fn();
  await switchTenant(tx, tenantId);
  const out = await fn();
  await switchTenant(tx, home);
  return out;
}

export class A2aService {
  private readonly facts = new BoundedCache<ChannelFacts>(50_000);

  constructor(private readonly deps: A2aDeps) {
    deps.policies.registerReleaser('a2a', (held) => this.release(held));
  }

  /**
   * Request a channel to `responder_hub_address` (-> `pending`); the responder tenant's owners get
   * `a2a_channel_requested`. The initiator is the API key's device or, for an owner, the ACTIVE
   * agent device named by `initiator_device_id`.
   * @throws 400 `initiator_device_id` missing (owner) or not an agent device, or a channel to
   *   itself; 403 the initiator has no hub identity, its trust tier is below `certified`
   *   (`enterprise` across tenants; the detail names the tier), no active federation agreement,
   *   a trust score below the agreement's floor, or a capability the agreement does not allow;
   *   404 unknown initiator device or hub address; 409 initiator or responder device not ACTIVE,
   *   or an open channel already joins the two agents.
   */
  async request(actor: A2aActor, input: ChannelRequest): Promise<ChannelOut & { channel_id: string }> {
    const initiatorDeviceId = this.initiatorOf(actor, input.initiator_device_id);
    const peer = await this.deps.hubs.findByAddress(input.responder_hub_address);
    const federated = peer !== null && peer.tenantId !== actor.tenantId;
    const agreement = federated ? await this.deps.federation.activeAgreementBetween(actor.tenantId, peer.tenantId) : null;
    const home = actor.tenantId;
    const channel = await withTenant(this.deps.db, home, async (tx) => {
      if (actor.kind === 'owner') this.checkAgent(await getDevice(tx, initiatorDeviceId), 'initiator_device_id');
      const mine = await this.deps.hubs.findByDevice(tx, initiatorDeviceId);
      if (!mine) throw forbidden('the initiating agent has no hub identity: register one bound to its device (POST /hub/register with device_id) first');
      if (!peer) throw notFound('hub address');
      if (!peer.deviceId) throw conflict(`hub address ${peer.hubAddress} is not bound to an agent device`);
      const responderDeviceId = peer.deviceId;
      if (responderDeviceId === initiatorDeviceId) throw badRequest('an agent cannot open a channel to itself');
      const rd = await inScope(tx, home, peer.tenantId, () => getDevice(tx, responderDeviceId));
      if (!rd || rd.status !== 'ACTIVE') throw conflict(`hub address ${peer.hubAddress} is not bound to an ACTIVE agent device`);
      const need: Tier = federated ? 'enterprise' : 'certified';
      const have = asTier(mine.trustTier);
      if (tierRank(have) < tierRank(need)) {
        throw forbidden(`${federated ? 'a federated (cross-tenant) A2A channel' : 'A2A channel initiation'} needs trust tier ${need} (SPEC §3.3); ${mine.hubAddress} is ${have}`);
      }
      if (federated) {
        if (!agreement) throw forbidden('no active federation agreement between the two tenants (SPEC §4.13)');
        for (const h of [mine, peer]) {
          if ((h.trustScore ?? 0) < agreement.trust_floor) throw forbidden(`trust score of ${h.hubAddress} is below the federation agreement's trust floor ${agreement.trust_floor}`);
        }
        const allowed = agreement.allowed_capabilities;
        if (allowed.length > 0 && (!input.capability || !allowed.includes(input.capability))) {
          throw forbidden(`the federation agreement allows only the capabilities ${allowed.join(', ')}; name one as capability`);
        }
      }
      await repo.lockPair(tx, initiatorDeviceId, responderDeviceId);
      const open = await repo.openChannelBetween(tx, initiatorDeviceId, responderDeviceId);
      if (open) throw conflict(`an open channel (${open.id}, ${open.status}) already joins these agents`);
      const [row] = await repo.insertChannel(tx, {
        id: randomUUID(),
        tenantId: home,
        partnerTenantId: peer.tenantId,
        initiatorHubAddress: mine.hubAddress,
        responderHubAddress: peer.hubAddress,
        initiatorDeviceId,
        responderDeviceId,
        capability: input.capability ?? null,
        agreementId: agreement?.id ?? null,
        status: 'pending',
        createdAt: new Date(),
      });
      await appendAuditToParties(
        tx,
        home,
        twoPartyEvents(home, peer.tenantId, actor.actor, {
          type: 'a2a_channel.requested',
          subject: row!.id,
          data: {
            initiator_hub_address: mine.hubAddress,
            responder_hub_address: peer.hubAddress,
            initiator_device_id: initiatorDeviceId,
            responder_device_id: responderDeviceId,
            capability: row!.capability,
            federated,
          },
        }),
      );
      return row!;
    });
    const out = { channel_id: channel.id, ...toChannelOut(channel) };
    await this.deps.notifier.toOwners(channel.partnerTenantId, 'a2a_channel_requested', out);
    return out;
  }

  /** Channels of the caller: an owner sees every channel of its tenant, an agent its own; optional `status` filter. */
  list(actor: A2aActor, status?: string): Promise<ChannelOut[]> {
    return withTenant(this.deps.db, actor.tenantId, async (tx) =>
      (await repo.listChannels(tx, { ...(actor.kind === 'agent' ? { deviceId: actor.deviceId } : {}), ...(status ? { status } : {}) })).map(toChannelOut),
    );
  }

  /**
   * The responder tenant's owner approves: pending -> approved. Each device gets
   * `a2a_channel_approved {channel_id, role, peer_hub_address, peer_device_id,
   * peer_identity_public_key, peer_ephemeral_public_key}`.
   * @throws 403 the caller is the initiator side's owner, or the federation agreement ended;
   *   404 not visible to the tenant; 409 not pending.
   */
  async approve(tenantId: string, id: string, actor = 'owner'): Promise<ChannelOut> {
    await this.agreementGate(await this.factsOf(tenantId, id));
    const { channel, devices } = await withTenant(this.deps.db, tenantId, async (tx) => {
      const c = await this.lockForResponder(tx, tenantId, id, 'approve');
      const channel = await repo.updateChannel(tx, id, { status: 'approved', approvedAt: new Date() });
      await appendAuditToParties(tx, tenantId, twoPartyEvents(tenantId, c.tenantId, actor, { type: 'a2a_channel.approved', subject: id, data: { from: c.status, to: 'approved' } }));
      const initiator = await inScope(tx, tenantId, c.tenantId, () => getDevice(tx, c.initiatorDeviceId));
      const responder = await getDevice(tx, c.responderDeviceId);
      return { channel, devices: { initiator, responder } };
    });
    for (const role of ['initiator', 'responder'] as const) {
      const peer = peerOf(channel, role);
      const keys: DeviceRow | undefined = devices[role === 'initiator' ? 'responder' : 'initiator'];
      await this.deps.notifier.toDevices(role === 'initiator' ? channel.tenantId : channel.partnerTenantId, [role === 'initiator' ? channel.initiatorDeviceId : channel.responderDeviceId], 'a2a_channel_approved', {
        channel_id: channel.id,
        role,
        peer_hub_address: peer.hubAddress,
        peer_device_id: peer.deviceId,
        peer_identity_public_key: keys?.identityPublicKey ?? null,
        peer_ephemeral_public_key: keys?.ephemeralPublicKey ?? null,
      });
    }
    return toChannelOut(channel);
  }

  /**
   * The responder tenant's owner declines: pending -> rejected (terminal); the initiator device
   * gets `a2a_channel_rejected {channel_id}`.
   * @throws 403 initiator side's owner; 404 not visible; 409 not pending.
   */
  async reject(tenantId: string, id: string, actor = 'owner'): Promise<ChannelOut> {
    const channel = await withTenant(this.deps.db, tenantId, async (tx) => {
      const c = await this.lockForResponder(tx, tenantId, id, 'reject');
      const updated = await repo.updateChannel(tx, id, { status: 'rejected', closedAt: new Date(), closedReason: 'rejected' });
      await appendAuditToParties(tx, tenantId, twoPartyEvents(tenantId, c.tenantId, actor, { type: 'a2a_channel.rejected', subject: id, data: { from: c.status, to: 'rejected' } }));
      return updated;
    });
    await this.deps.notifier.toDevices(channel.tenantId, [channel.initiatorDeviceId], 'a2a_channel_rejected', { channel_id: channel.id });
    return toChannelOut(channel);
  }

  /**
   * Either party ends the channel: pending | approved | active -> revoked (terminal). An owner may
   * revoke any channel of its tenant, an agent only its own. Both devices get
   * `a2a_channel_revoked {channel_id}`.
   * @throws 403 an agent that is not a party; 404 not visible; 409 rejected or already revoked.
   */
  async revoke(actor: A2aActor, id: string): Promise<ChannelOut> {
    const channel = await withTenant(this.deps.db, actor.tenantId, async (tx) => {
      const c = await repo.getChannel(tx, id, true);
      if (!c) throw notFound('channel');
      if (actor.kind === 'agent') roleOf(c, actor.deviceId);
      if (!repo.OPEN_STATUSES.includes(c.status as repo.ChannelStatus)) throw conflict(`channel is ${c.status}`);
      const updated = await repo.updateChannel(tx, id, { status: 'revoked', closedAt: new Date(), closedReason: `revoked by ${actor.kind === 'owner' ? 'owner' : 'agent'} of tenant ${actor.tenantId}` });
      const other = c.tenantId === actor.tenantId ? c.partnerTenantId : c.tenantId;
      await appendAuditToParties(tx, actor.tenantId, twoPartyEvents(actor.tenantId, other, actor.actor, { type: 'a2a_channel.revoked', subject: id, data: { from: c.status, to: 'revoked' } }));
      return updated;
    });
    const data = { channel_id: channel.id };
    await this.deps.notifier.toDevices(channel.tenantId, [channel.initiatorDeviceId], 'a2a_channel_revoked', data);
    await this.deps.notifier.toDevices(channel.partnerTenantId, [channel.responderDeviceId], 'a2a_channel_revoked', data);
    return toChannelOut(channel);
  }

  /**
   * One side's opaque handshake while the channel is `approved`: stored (so an offline peer finds
   * it in the history), relayed to the peer as `a2a_key_exchange {channel_id, message_id,
   * sender_device_id, header_blob, ciphertext, timestamp}`. When both sides have sent one the
   * channel becomes `active` with a fresh conversation id and both devices get
   * `a2a_channel_activated {channel_id, conversation_id}`. Sending again before that replaces
   * nothing: the peer simply receives the newer handshake too.
   * @throws 400 bad base64; 403 not a party, or the federation agreement ended; 404 unknown
   *   channel; 409 the channel is not approved; 413 ciphertext too large.
   */
  async keyExchange(sender: A2aSender, input: KeyExchangeInput): Promise<{ channel_id: string; status: repo.ChannelStatus; conversation_id: string | null }> {
    const facts = await this.factsOf(sender.tenantId, input.channel_id);
    const role = roleOf(facts, sender.deviceId);
    await this.agreementGate(facts);
    const blobs = this.decode(input);
    const peer = peerOf(facts, role);
    const { channel, message } = await withTenant(this.deps.db, sender.tenantId, async (tx) => {
      const c = await repo.getChannel(tx, facts.id, true);
      if (!c) throw notFound('channel');
      if (c.status !== 'approved') throw conflict(`key exchange needs an approved channel; this one is ${c.status}`);
      const now = new Date();
      const [message] = await repo.insertMessage(tx, {
        id: randomUUID(),
        tenantId: c.tenantId,
        partnerTenantId: c.partnerTenantId,
        channelId: c.id,
        senderDeviceId: sender.deviceId,
        recipientDeviceId: peer.deviceId,
        ...blobs,
        messageType: repo.KEY_EXCHANGE_TYPE,
        priority: 'normal',
        traceparent: null,
        outcome: 'delivered',
        createdAt: now,
      });
      const initiatorKeysAt = c.initiatorKeysAt ?? (role === 'initiator' ? now : null);
      const responderKeysAt = c.responderKeysAt ?? (role === 'responder' ? now : null);
      const complete = initiatorKeysAt !== null && responderKeysAt !== null;
      const channel = await repo.updateChannel(tx, c.id, {
        initiatorKeysAt,
        responderKeysAt,
        ...(complete ? { status: 'active', conversationId: randomUUID(), activatedAt: now } : {}),
      });
      return { channel, message: message! };
    });
    const m = toMessageOut(message);
    const relay = { channel_id: m.channel_id, message_id: m.message_id, sender_device_id: m.sender_device_id, header_blob: m.header_blob, ciphertext: m.ciphertext, timestamp: m.timestamp };
    await this.deps.notifier.toDevices(peer.tenantId, [peer.deviceId], 'a2a_key_exchange', relay);
    if (channel.status === 'active') {
      const data = { channel_id: channel.id, conversation_id: channel.conversationId };
      await this.deps.notifier.toDevices(channel.tenantId, [channel.initiatorDeviceId], 'a2a_channel_activated', data);
      await this.deps.notifier.toDevices(channel.partnerTenantId, [channel.responderDeviceId], 'a2a_channel_activated', data);
    }
    return { channel_id: channel.id, status: channel.status as repo.ChannelStatus, conversation_id: channel.conversationId };
  }

  /**
   * Send one message on an active channel. Policies of the sender's tenant (and, federated, of the
   * recipient's) decide in one transaction; the stricter outcome wins. `delivered` / `notified`:
   * the recipient (and the sender's other sockets) get `a2a_message`; `notified` also alerts the
   * owners of each tenant whose policy said notify (`policy_alert` with `channel_id`); `held`: a
   * held message in the tenant whose policy held it (the recipient's when both did), delivered on
   * approval; `blocked`: nothing is delivered and no ciphertext is kept.
   * @throws 400 bad base64 or traceparent; 403 not a party, or the federation agreement ended;
   *   404 unknown channel; 409 the channel is not active; 413 ciphertext too large.
   */
  async send(sender: A2aSender, channelId: string, input: A2aSendInput, excludeSocket?: string): Promise<A2aSendResult> {
    const facts = await this.factsOf(sender.tenantId, channelId);
    const role = roleOf(facts, sender.deviceId);
    await this.agreementGate(facts);
    const federated = isFederated(facts);
    const traceparent = input.traceparent !== undefined ? checkTraceparent(input.traceparent) : federated ? newTraceparent() : null;
    const blobs = this.decode(input);
    const peer = peerOf(facts, role);
    const home = sender.tenantId;
    const id = randomUUID();
    const now = new Date();
    const messageType = input.message_type ?? 'text';
    const priority = input.priority ?? 'normal';

    const { row, heldMessageId, alerts } = await withTenant(this.deps.db, home, async (tx) => {
      const c = await repo.getChannel(tx, channelId);
      if (!c) throw notFound('channel');
      if (c.status !== 'active') throw conflict(`messages need an active channel; this one is ${c.status}`);
      const identity = await this.deps.hubs.findByDevice(tx, sender.deviceId);
      const ctx: EvaluationContext = {
        roomId: null,
        skill: c.capability,
        messageType,
        priority,
        senderKind: 'agent',
        recipientKind: 'agent',
        senderDeviceId: sender.deviceId,
        recipientDeviceId: peer.deviceId,
        senderHubAddress: identity?.hubAddress ?? (role === 'initiator' ? c.initiatorHubAddress : c.responderHubAddress),
        senderTier: asTier(identity?.trustTier),
        crossTenant: federated,
        now,
      };
      const decisions: { tenantId: string; evaluation: Evaluation }[] = [{ tenantId: home, evaluation: await this.evaluate(tx, home, ctx, id) }];
      if (federated) {
        await switchTenant(tx, peer.tenantId);
        decisions.push({ tenantId: peer.tenantId, evaluation: await this.evaluate(tx, peer.tenantId, ctx, id) });
      }
      const action = decisions.map((d) => d.evaluation.outcome).reduce(stricter);
      const kept = action !== 'block';
      const [row] = await repo.insertMessage(tx, {
        id,
        tenantId: c.tenantId,
        partnerTenantId: c.partnerTenantId,
        channelId: c.id,
        senderDeviceId: sender.deviceId,
        recipientDeviceId: peer.deviceId,
        headerBlob: kept ? blobs.headerBlob : null,
        ciphertext: kept ? blobs.ciphertext : null,
        messageType,
        priority,
        traceparent,
        outcome: OUTCOME[action],
        createdAt: now,
      });
      let heldMessageId: string | undefined;
      if (action === 'hold') {
        // The recipient's tenant holds it when its policy said hold (decisions are in order sender, recipient).
        const holder = decisions.filter((d) => d.evaluation.outcome === 'hold').at(-1)!;
        await switchTenant(tx, holder.tenantId);
        heldMessageId = await this.deps.policies.hold(tx, holder.tenantId, {
          channelId: c.id,
          a2aMessageId: id,
          senderDeviceId: sender.deviceId,
          recipientDeviceId: peer.deviceId,
          policyId: holder.evaluation.policyId,
          messageType,
          priority,
        });
      }
      const alerts = action === 'notify' ? decisions.filter((d) => d.evaluation.outcome === 'notify') : [];
      return { row: row!, heldMessageId, alerts };
    });

    const out = toMessageOut(row);
    if (row.outcome === 'delivered' || row.outcome === 'notified') await this.deliver(facts, row, out, excludeSocket);
    for (const a of alerts) {
      await this.deps.policies.alert(a.tenantId, {
        room_id: null,
        channel_id: channelId,
        policy_id: a.evaluation.policyId,
        sender_device_id: sender.deviceId,
        recipient_device_id: peer.deviceId,
        message_type: messageType,
      });
    }
    return {
      message_id: id,
      channel_id: channelId,
      outcome: row.outcome as A2aOutcome,
      ...(heldMessageId ? { held_message_id: heldMessageId } : {}),
      timestamp: out.timestamp,
      traceparent,
    };
  }

  /**
   * A party agent's view of the channel history: delivered messages and key exchanges, oldest
   * first. Without `since` the latest `limit`; with `since` (a `next_cursor` or an ISO timestamp,
   * exclusive) the next `limit` after it. Messages addressed to the caller are marked delivered.
   * A held message joins the history when released, after everything delivered before its
   * release (cursors stay gap-free).
   * @throws 400 bad `since`; 403 not a party; 404 unknown channel.
   */
  async history(agent: A2aSender, channelId: string, q: { since?: string; limit?: number }): Promise<{ messages: A2aMessageOut[]; next_cursor: string | null }> {
    const limit = pageLimit(q.limit, this.deps);
    const since = q.since === undefined ? undefined : parseSince(q.since);
    const after = since === undefined ? {} : 'seq' in since ? { afterSeq: since.seq } : { afterTime: since.at };
    const rows = await withTenant(this.deps.db, agent.tenantId, async (tx) => {
      const c = await repo.getChannel(tx, channelId);
      if (!c) throw notFound('channel');
      roleOf(c, agent.deviceId);
      const rows = await repo.messagePage(tx, channelId, { ...after, limit });
      const mine = rows.filter((m) => m.recipientDeviceId === agent.deviceId && !m.deliveredAt).map((m) => m.id);
      if (mine.length > 0) await repo.markDelivered(tx, agent.deviceId, mine);
      return rows;
    });
    if (q.since === undefined) rows.reverse();
    const messages = rows.map(toMessageOut);
    return { messages, next_cursor: messages.at(-1)?.cursor ?? null };
  }

  /**
   * The releaser registered with the policy module: an owner approved a held A2A message, so it
   * becomes `delivered` (with a fresh cursor position) and goes to the recipient, if the channel
   * is still active. Runs after the approval committed, in the holding tenant's scope.
   */
  async release(held: HeldRecord): Promise<void> {
    const messageId = held.a2aMessageId;
    if (!messageId) return;
    const found = await withTenant(this.deps.db, held.tenantId, async (tx) => {
      const row = await repo.releaseMessage(tx, messageId);
      if (!row || row.outcome !== 'delivered' || !row.ciphertext) return undefined;
      const channel = await repo.getChannel(tx, row.channelId);
      return channel ? { row, channel } : undefined;
    });
    if (found?.channel.status === 'active') await this.deliver(found.channel, found.row, toMessageOut(found.row));
  }

  /** Push a delivered message to the recipient and to the sender's other sockets. */
  private async deliver(c: ChannelFacts, row: repo.A2aMessageRow, out: A2aMessageOut, excludeSocket?: string): Promise<void> {
    const recipientTenant = row.recipientDeviceId === c.responderDeviceId ? c.partnerTenantId : c.tenantId;
    const senderTenant = recipientTenant === c.tenantId ? c.partnerTenantId : c.tenantId;
    await this.deps.notifier.toDevices(recipientTenant, [row.recipientDeviceId], 'a2a_message', out);
    await this.deps.notifier.toDevices(senderTenant, [row.senderDeviceId], 'a2a_message', out, excludeSocket);
  }

  /**
   * One policy decision in `tenantId`'s scope (the transaction must be scoped to it). The sender's
   * rate is counted only when a policy reads it, once per message: the count is kept on `ctx`, so
   * the peer tenant's decision reuses the home tenant's.
   */
  private async evaluate(tx: Tx, tenantId: string, ctx: EvaluationContext, subjectId: string): Promise<Evaluation> {
    const senderRate = async () => (ctx.senderRatePerMinute ??= await repo.countSentSince(tx, ctx.senderDeviceId, new Date(ctx.now.getTime() - 60_000)));
    const [evaluation] = await this.deps.policies.decide(tx, tenantId, [{ ctx, subjectKind: 'a2a_message', subjectId, defaultOutcome: 'allow' }], senderRate);
    return evaluation!;
  }

  /**
   * The initiating device of a request: an agent's own device (naming another one is 403), or the
   * owner's `initiator_device_id` (400 when missing).
   */
  private initiatorOf(actor: A2aActor, named: string | undefined): string {
    if (actor.kind === 'agent') {
      if (named !== undefined && named.toLowerCase() !== actor.deviceId) throw forbidden('an agent requests channels for its own device only; leave out initiator_device_id');
      return actor.deviceId;
    }
    if (!named) throw badRequest('initiator_device_id is required when an owner requests a channel: name the initiating agent device');
    return named.toLowerCase();
  }

  /** An owner-named initiator must be an ACTIVE agent device of the tenant. */
  private checkAgent(d: DeviceRow | undefined, field: string): void {
    if (!d) throw notFound('device');
    if (d.kind !== 'agent') throw badRequest(`${field} must name an agent device`);
    if (d.status !== 'ACTIVE') throw conflict(`device is ${d.status}; only an ACTIVE agent device can open a channel`);
  }

  /** Lock a pending channel for the responder owner's decision (403 initiator side, 404, 409). */
  private async lockForResponder(tx: Tx, tenantId: string, id: string, verb: string): Promise<repo.ChannelRow> {
    const c = await repo.getChannel(tx, id, true);
    if (!c) throw notFound('channel');
    if (c.partnerTenantId !== tenantId) throw forbidden(`only an owner of the responder's tenant can ${verb} this channel`);
    if (c.status !== 'pending') throw conflict(`channel is ${c.status}`);
    return c;
  }

  /** The immutable parties of a channel visible to `tenantId` (cached). @throws 404. */
  private async factsOf(tenantId: string, id: string): Promise<ChannelFacts> {
    const key = `${tenantId}:${id}`;
    const hit = this.facts.get(key);
    if (hit) return hit;
    const c = await withTenant(this.deps.db, tenantId, (tx) => repo.getChannel(tx, id));
    if (!c) throw notFound('channel');
    const facts: ChannelFacts = {
      id: c.id,
      tenantId: c.tenantId,
      partnerTenantId: c.partnerTenantId,
      initiatorDeviceId: c.initiatorDeviceId,
      responderDeviceId: c.responderDeviceId,
      initiatorHubAddress: c.initiatorHubAddress,
      responderHubAddress: c.responderHubAddress,
    };
    this.facts.set(key, facts);
    return facts;
  }

  /** A federated channel carries traffic only under an active agreement. @throws 403 once it expired or was revoked. */
  private async agreementGate(c: ChannelFacts): Promise<void> {
    if (!isFederated(c)) return;
    if (!(await this.deps.federation.activeAgreementBetween(c.tenantId, c.partnerTenantId))) {
      throw forbidden('the federation agreement between the two tenants has expired or was revoked: this federated channel is closed to traffic until it is renewed');
    }
  }

  /** Decode the base64 fields of a frame or body. @throws 400 bad base64, 413 ciphertext over the limit. */
  private decode(input: { header_blob: string; ciphertext: string }): { headerBlob: Buffer; ciphertext: Buffer } {
    const headerBlob = decodeBase64('header_blob', input.header_blob);
    const ciphertext = decodeBase64('ciphertext', input.ciphertext);
    if (ciphertext.length > this.deps.maxCiphertextBytes) throw new AppError(ErrorCode.PayloadTooLarge, `ciphertext exceeds ${this.deps.maxCiphertextBytes} bytes`);
    return { headerBlob, ciphertext };
  }
}
