/**
 * A2A channel lifecycle (module comment of service.ts): request (-> pending, or -> approved at
 * once when a marketplace rental backs it), list, the responder owner's approve (-> approved) and
 * reject (-> rejected), either party's revoke (-> revoked).
 */
import { randomUUID } from 'node:crypto';
import type { A2aChannel, A2aChannelApprovedEvent, RequestA2aChannelRequest, RequestedA2aChannel } from '@parley/protocol';
import type { Tx } from '../../db/client.js';
import { withTenant } from '../../db/tenant.js';
import { badRequest, conflict, forbidden, notFound } from '../../lib/errors.js';
import { getDevice, type DeviceRow } from '../devices/index.js';
import { asTier, tierRank, type TrustTier as Tier } from '@parley/protocol';
import { appendAuditToParties, type AuditInput, type PartyEvent, twoPartyEvents } from '../audit/index.js';
import { activeRentalOf, getListing } from '../marketplace/index.js';
import { agreementGate, factsOf, inScope, peerOf, roleOf, toChannelOut, type A2aActor, type A2aCore } from './internal.js';
import * as repo from './repo.js';

/**
 * Request a channel to `responder_hub_address` (-> `pending`); the responder tenant's owners get
 * `a2a_channel_requested`. The initiator is the calling agent's device (API key or agent device JWT) or, for an owner, the ACTIVE
 * agent device named by `initiator_device_id`.
 *
 * Rental-backed channels (docs/decisions.md "A2A channels backed by rentals"): across tenants
 * WITHOUT an active federation agreement, an `active` marketplace rental by the initiator's
 * tenant of the responder's hub identity authorizes the channel instead — no trust tier is
 * required of the initiator, a named `capability` must be one of the listing's, the rental is
 * recorded on the channel (`rental_id`) and the channel is approved at once (actor
 * `rental:<id>`; both devices get `a2a_channel_approved` as after an owner's approval).
 * @throws 400 `initiator_device_id` missing (owner) or not an agent device, or a channel to
 *   itself; 403 the initiator has no hub identity, its trust tier is below `certified`
 *   (`enterprise` across tenants; the detail names the tier), no active federation agreement
 *   (nor rental), a trust score below the agreement's floor, or a capability the agreement (or
 *   the rented listing) does not allow;
 *   404 unknown initiator device or hub address; 409 initiator or responder device not ACTIVE,
 *   or an open channel already joins the two agents.
 */
export async function request(core: A2aCore, actor: A2aActor, input: RequestA2aChannelRequest): Promise<RequestedA2aChannel> {
  const initiatorDeviceId = initiatorOf(actor, input.initiator_device_id);
  const peer = await core.deps.hubs.findByAddress(input.responder_hub_address);
  const federated = peer !== null && peer.tenantId !== actor.tenantId;
  const agreement = federated ? await core.deps.federation.activeAgreementBetween(actor.tenantId, peer.tenantId) : null;
  const home = actor.tenantId;
  const channel = await withTenant(core.deps.db, home, async (tx) => {
    if (actor.kind === 'owner') checkAgent(await getDevice(tx, initiatorDeviceId), 'initiator_device_id');
    const mine = await core.deps.hubs.findByDevice(tx, initiatorDeviceId);
    if (!mine) throw forbidden('the initiating agent has no hub identity: register one bound to its device (POST /hub/register with device_id) first');
    if (!peer) throw notFound('hub address');
    if (!peer.deviceId) throw conflict(`hub address ${peer.hubAddress} is not bound to an agent device`);
    const responderDeviceId = peer.deviceId;
    if (responderDeviceId === initiatorDeviceId) throw badRequest('an agent cannot open a channel to itself');
    const rd = await inScope(tx, home, peer.tenantId, () => getDevice(tx, responderDeviceId));
    if (!rd || rd.status !== 'ACTIVE') throw conflict(`hub address ${peer.hubAddress} is not bound to an ACTIVE agent device`);
    // Across tenants without an agreement, the initiator's tenant may rent the responder (the agreement path wins when both exist).
    const rented = federated && !agreement ? await activeRentalOf(tx, home, peer.id) : undefined;
    const rental = rented?.partnerTenantId === peer.tenantId ? rented : undefined;
    if (rental) {
      if (input.capability !== undefined) {
        // The rented listing is read in the developer's scope: a paused listing still governs its rentals.
        const listing = await inScope(tx, home, peer.tenantId, () => getListing(tx, rental.listingId));
        const offered = (listing?.capabilities as string[] | undefined) ?? [];
        if (!offered.includes(input.capability)) throw forbidden(`the rented listing offers only the capabilities ${offered.join(', ') || '(none)'}; ${input.capability} is not one of them`);
      }
    } else {
      const need: Tier = federated ? 'enterprise' : 'certified';
      const have = asTier(mine.trustTier);
      if (tierRank(have) < tierRank(need)) {
        throw forbidden(`${federated ? 'a federated (cross-tenant) A2A channel' : 'A2A channel initiation'} needs trust tier ${need} (contract §3.3); ${mine.hubAddress} is ${have}`);
      }
    }
    if (federated && !rental) {
      if (!agreement) throw forbidden('no active federation agreement between the two tenants (contract §4.13)');
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
      rentalId: rental?.id ?? null,
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
          ...(rental ? { rental_id: rental.id } : {}),
        },
      }),
    );
    if (!rental) return { channel: row!, approved: null };
    // The rental is the responder side's consent: approved in the same transaction, in both chains as `rental:<id>`.
    const approver = rentalActor(rental.id);
    const approved = await approveIn(tx, home, row!, (event) => [home, peer.tenantId].map((tenantId) => ({ tenantId, event: { ...event, actor: approver } })));
    return { channel: approved.channel, approved };
  });
  const out = { channel_id: channel.channel.id, ...toChannelOut(channel.channel) };
  await core.deps.notifier.toOwners(channel.channel.partnerTenantId, 'a2a_channel_requested', out);
  if (channel.approved) await announceApproved(core, channel.approved);
  return out;
}

/** The audit actor of an approval granted by a marketplace rental (both tenants' chains). */
export const rentalActor = (rentalId: string) => `rental:${rentalId}`;

/** Channels of the caller: an owner sees every channel of its tenant, an agent its own; optional `status` filter. */
export function list(core: A2aCore, actor: A2aActor, status?: string): Promise<A2aChannel[]> {
  return withTenant(core.deps.db, actor.tenantId, async (tx) =>
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
export async function approve(core: A2aCore, tenantId: string, id: string, actor = 'owner'): Promise<A2aChannel> {
  await agreementGate(core, await factsOf(core, tenantId, id));
  const approved = await withTenant(core.deps.db, tenantId, async (tx) => {
    const c = await lockForResponder(tx, tenantId, id, 'approve');
    return approveIn(tx, tenantId, c, (event) => twoPartyEvents(tenantId, c.tenantId, actor, event));
  });
  await announceApproved(core, approved);
  return toChannelOut(approved.channel);
}

/** An approved channel and both parties' devices (for their keys in `a2a_channel_approved`). */
interface Approved {
  channel: repo.ChannelRow;
  devices: { initiator: DeviceRow | undefined; responder: DeviceRow | undefined };
}

/**
 * pending -> approved inside `tx` (scoped to `scope`, one of the two tenants; `c` locked or just
 * inserted): the update, `a2a_channel.approved` in the chains `audit` names (with `rental_id` for
 * a rental-backed channel), and both devices read in their own tenant's scope.
 */
async function approveIn(tx: Tx, scope: string, c: repo.ChannelRow, audit: (event: Omit<AuditInput, 'actor'>) => PartyEvent[]): Promise<Approved> {
  const channel = await repo.updateChannel(tx, c.id, { status: 'approved', approvedAt: new Date() });
  const data = { from: c.status, to: 'approved', ...(c.rentalId ? { rental_id: c.rentalId } : {}) };
  await appendAuditToParties(tx, scope, audit({ type: 'a2a_channel.approved', subject: c.id, data }));
  const initiator = await inScope(tx, scope, c.tenantId, () => getDevice(tx, c.initiatorDeviceId));
  const responder = await inScope(tx, scope, c.partnerTenantId, () => getDevice(tx, c.responderDeviceId));
  return { channel, devices: { initiator, responder } };
}

/**
 * After commit: each device gets `a2a_channel_approved {channel_id, role, peer_hub_address,
 * peer_device_id, peer_identity_public_key, peer_ephemeral_public_key}`.
 */
async function announceApproved(core: A2aCore, { channel, devices }: Approved): Promise<void> {
  for (const role of ['initiator', 'responder'] as const) {
    const keys: DeviceRow | undefined = devices[role === 'initiator' ? 'responder' : 'initiator'];
    await core.deps.notifier.toDevices(role === 'initiator' ? channel.tenantId : channel.partnerTenantId, [role === 'initiator' ? channel.initiatorDeviceId : channel.responderDeviceId], 'a2a_channel_approved', approvedEvent(channel, role, keys));
  }
}

/** The `a2a_channel_approved` data for the party of `role`: its role, the peer's address, device and keys. */
function approvedEvent(channel: repo.ChannelRow, role: 'initiator' | 'responder', peerDevice: DeviceRow | undefined): A2aChannelApprovedEvent {
  const peer = peerOf(channel, role);
  return {
    channel_id: channel.id,
    role,
    peer_hub_address: peer.hubAddress,
    peer_device_id: peer.deviceId,
    peer_identity_public_key: peerDevice?.identityPublicKey ?? null,
    peer_ephemeral_public_key: peerDevice?.ephemeralPublicKey ?? null,
  };
}

/**
 * What `a2a_channel_approved` told the calling party, again (for a party that missed it): its
 * role and the peer's hub address, device and keys, read in the peer tenant's scope.
 * @throws 403 the agent is not a party, or the channel's agreement or rental ended; 404 not
 *   visible; 409 the channel is not approved or active, or the peer device is not ACTIVE.
 */
export async function peerKeys(core: A2aCore, agent: { tenantId: string; deviceId: string }, id: string): Promise<A2aChannelApprovedEvent> {
  // The channel's agreement or rental must still hold, as for its key exchange and messages.
  await agreementGate(core, await factsOf(core, agent.tenantId, id));
  return withTenant(core.deps.db, agent.tenantId, async (tx) => {
    const c = await repo.getChannel(tx, id);
    if (!c) throw notFound('channel');
    const role = roleOf(c, agent.deviceId);
    if (c.status !== 'approved' && c.status !== 'active') throw conflict(`channel ${id} is ${c.status}: peer keys are given once it is approved`);
    const peer = peerOf(c, role);
    const device = await inScope(tx, agent.tenantId, peer.tenantId, () => getDevice(tx, peer.deviceId));
    if (!device || device.status !== 'ACTIVE') throw conflict(`the peer device of channel ${id} is not ACTIVE`);
    return approvedEvent(c, role, device);
  });
}

/**
 * The responder tenant's owner declines: pending -> rejected (terminal); the initiator device
 * gets `a2a_channel_rejected {channel_id}`.
 * @throws 403 initiator side's owner; 404 not visible; 409 not pending.
 */
export async function reject(core: A2aCore, tenantId: string, id: string, actor = 'owner'): Promise<A2aChannel> {
  const channel = await withTenant(core.deps.db, tenantId, async (tx) => {
    const c = await lockForResponder(tx, tenantId, id, 'reject');
    const updated = await repo.updateChannel(tx, id, { status: 'rejected', closedAt: new Date(), closedReason: 'rejected' });
    await appendAuditToParties(tx, tenantId, twoPartyEvents(tenantId, c.tenantId, actor, { type: 'a2a_channel.rejected', subject: id, data: { from: c.status, to: 'rejected' } }));
    return updated;
  });
  await core.deps.notifier.toDevices(channel.tenantId, [channel.initiatorDeviceId], 'a2a_channel_rejected', { channel_id: channel.id });
  return toChannelOut(channel);
}

/**
 * Either party ends the channel: pending | approved | active -> revoked (terminal). An owner may
 * revoke any channel of its tenant, an agent only its own. Both devices get
 * `a2a_channel_revoked {channel_id}`.
 * @throws 403 an agent that is not a party; 404 not visible; 409 rejected or already revoked.
 */
export async function revoke(core: A2aCore, actor: A2aActor, id: string): Promise<A2aChannel> {
  const channel = await withTenant(core.deps.db, actor.tenantId, async (tx) => {
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
  await core.deps.notifier.toDevices(channel.tenantId, [channel.initiatorDeviceId], 'a2a_channel_revoked', data);
  await core.deps.notifier.toDevices(channel.partnerTenantId, [channel.responderDeviceId], 'a2a_channel_revoked', data);
  return toChannelOut(channel);
}

/**
 * The initiating device of a request: an agent's own device (naming another one is 403), or the
 * owner's `initiator_device_id` (400 when missing).
 */
function initiatorOf(actor: A2aActor, named: string | undefined): string {
  if (actor.kind === 'agent') {
    if (named !== undefined && named.toLowerCase() !== actor.deviceId) throw forbidden('an agent requests channels for its own device only; leave out initiator_device_id');
    return actor.deviceId;
  }
  if (!named) throw badRequest('initiator_device_id is required when an owner requests a channel: name the initiating agent device');
  return named.toLowerCase();
}

/** An owner-named initiator must be an ACTIVE agent device of the tenant. */
function checkAgent(d: DeviceRow | undefined, field: string): void {
  if (!d) throw notFound('device');
  if (d.kind !== 'agent') throw badRequest(`${field} must name an agent device`);
  if (d.status !== 'ACTIVE') throw conflict(`device is ${d.status}; only an ACTIVE agent device can open a channel`);
}

/** Lock a pending channel for the responder owner's decision (403 initiator side, 404, 409). */
async function lockForResponder(tx: Tx, tenantId: string, id: string, verb: string): Promise<repo.ChannelRow> {
  const c = await repo.getChannel(tx, id, true);
  if (!c) throw notFound('channel');
  if (c.partnerTenantId !== tenantId) throw forbidden(`only an owner of the responder's tenant can ${verb} this channel`);
  if (c.status !== 'pending') throw conflict(`channel is ${c.status}`);
  return c;
}
