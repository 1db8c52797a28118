/**
 * Agent-to-agent channels (contract §2.11, §3.3, §3.5, §4.13, §6.1; design §8.5; docs/decisions.md
 * "A2A channels").
 *
 * A channel joins two agent devices that each hold a hub identity. It is a two-party row:
 * `tenant_id` is the initiator's tenant, `partner_tenant_id` the responder's (equal for a
 * same-tenant channel); a channel between two tenants is *federated* and needs an active
 * federation agreement for as long as it carries traffic — or, without an agreement, an `active`
 * marketplace rental by the initiator's tenant of the responder's hub identity: such a channel
 * records the rental (`rental_id`), needs no trust tier of the initiator, is approved at once
 * (actor `rental:<id>`) and carries traffic only while the rental stays active
 * (docs/decisions.md "A2A channels backed by rentals").
 *
 * States: `pending` (requested) -> `approved` (the responder's owner approved; both devices get
 * `a2a_channel_approved` with the peer's keys) -> `active` (both sides sent their opaque
 * `a2a_key_exchange`; both get `a2a_channel_activated` with a fresh conversation id).
 * `pending` -> `rejected` by the responder's owner; `pending | approved | active` -> `revoked`
 * by either party. `rejected` and `revoked` are terminal (409).
 *
 * Messages are ciphertext only. Each one is evaluated by the policies of the sender's tenant and,
 * on a federated channel, of the recipient's tenant too, in ONE transaction that switches tenant
 * scope between the steps ({@link switchTenant}); the stricter outcome wins (contract §4.13, §4.16).
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
import type { A2aChannel, A2aChannelApprovedEvent, A2aKeyExchangeAck, A2aMessageInput, A2aMessagePage, A2aSendResult, RequestA2aChannelRequest, RequestedA2aChannel } from '@parley/protocol';
import type { HeldRecord } from '../policies/types.js';
import * as channels from './channels.js';
import { newCore, type A2aActor, type A2aCore, type A2aDeps, type A2aSender } from './internal.js';
import { keyExchange, type KeyExchangeInput } from './key-exchange.js';
import * as messages from './messages.js';

export { checkTraceparent, newTraceparent, toChannelOut, type A2aActor, type A2aDeps, type A2aPolicies, type A2aSender } from './internal.js';
export type { KeyExchangeInput } from './key-exchange.js';
export type { A2aMessage, A2aMessageInput, A2aOutcome, A2aSendResult } from '@parley/protocol';

/**
 * The A2A module's entry point: each operation lives in the file of its part (channels.ts,
 * key-exchange.ts, messages.ts) and shares the dependencies and the channel-facts cache of this
 * instance ({@link A2aCore}, internal.ts).
 */
export class A2aService {
  private readonly core: A2aCore;

  constructor(deps: A2aDeps) {
    this.core = newCore(deps);
    deps.policies.registerReleaser('a2a', (held) => this.release(held));
  }

  /**
   * Request a channel to `responder_hub_address` (-> `pending`, or -> `approved` at once when an
   * active rental of the responder by the initiator's tenant backs it: see channels.ts); the
   * responder tenant's owners get `a2a_channel_requested`. The initiator is the calling agent's device (API key or agent device JWT) or, for an owner, the ACTIVE
   * agent device named by `initiator_device_id`.
   * @throws 400 `initiator_device_id` missing (owner) or not an agent device, or a channel to
   *   itself; 403 the initiator has no hub identity, its trust tier is below `certified`
   *   (`enterprise` across tenants; the detail names the tier), no active federation agreement
   *   (nor rental), a trust score below the agreement's floor, or a capability the agreement (or
   *   the rented listing) does not allow;
   *   404 unknown initiator device or hub address; 409 initiator or responder device not ACTIVE,
   *   or an open channel already joins the two agents.
   */
  request(actor: A2aActor, input: RequestA2aChannelRequest): Promise<RequestedA2aChannel> {
    return channels.request(this.core, actor, input);
  }

  /** Channels of the caller: an owner sees every channel of its tenant, an agent its own; optional `status` filter. */
  list(actor: A2aActor, status?: string): Promise<A2aChannel[]> {
    return channels.list(this.core, actor, status);
  }

  /**
   * The responder tenant's owner approves: pending -> approved. Each device gets
   * `a2a_channel_approved {channel_id, role, peer_hub_address, peer_device_id,
   * peer_identity_public_key, peer_ephemeral_public_key}`.
   * @throws 403 the caller is the initiator side's owner, or the federation agreement ended;
   *   404 not visible to the tenant; 409 not pending.
   */
  approve(tenantId: string, id: string, actor = 'owner'): Promise<A2aChannel> {
    return channels.approve(this.core, tenantId, id, actor);
  }

  /**
   * The responder tenant's owner declines: pending -> rejected (terminal); the initiator device
   * gets `a2a_channel_rejected {channel_id}`.
   * @throws 403 initiator side's owner; 404 not visible; 409 not pending.
   */
  reject(tenantId: string, id: string, actor = 'owner'): Promise<A2aChannel> {
    return channels.reject(this.core, tenantId, id, actor);
  }

  /**
   * Either party ends the channel: pending | approved | active -> revoked (terminal). An owner may
   * revoke any channel of its tenant, an agent only its own. Both devices get
   * `a2a_channel_revoked {channel_id}`.
   * @throws 403 an agent that is not a party; 404 not visible; 409 rejected or already revoked.
   */
  revoke(actor: A2aActor, id: string): Promise<A2aChannel> {
    return channels.revoke(this.core, actor, id);
  }

  /** `GET /a2a/channels/{id}/peer`: the calling party's role and the peer's keys (channels.ts `peerKeys`). */
  peerKeys(agent: { tenantId: string; deviceId: string }, id: string): Promise<A2aChannelApprovedEvent> {
    return channels.peerKeys(this.core, agent, id);
  }

  /**
   * One side's opaque handshake while the channel is `approved`: stored (so an offline peer finds
   * it in the history), relayed to the peer as `a2a_key_exchange {channel_id, message_id,
   * sender_device_id, header_blob, ciphertext, timestamp}`. When both sides have sent one the
   * channel becomes `active` with a fresh conversation id and both devices get
   * `a2a_channel_activated {channel_id, conversation_id}`. Sending again before that replaces
   * nothing: the peer simply receives the newer handshake too.
   * @throws 400 bad base64; 403 not a party, or the federation agreement (or the rental) ended;
   *   404 unknown channel; 409 the channel is not approved; 413 ciphertext too large.
   */
  keyExchange(sender: A2aSender, input: KeyExchangeInput): Promise<A2aKeyExchangeAck> {
    return keyExchange(this.core, sender, input);
  }

  /**
   * Send one message on an active channel. Policies of the sender's tenant (and, federated, of the
   * recipient's) decide in one transaction; the stricter outcome wins. `delivered` / `notified`:
   * the recipient (and the sender's other sockets) get `a2a_message`; `notified` also alerts the
   * owners of each tenant whose policy said notify (`policy_alert` with `channel_id`); `held`: a
   * held message in the tenant whose policy held it (the recipient's when both did), delivered on
   * approval; `blocked`: nothing is delivered and no ciphertext is kept.
   * @throws 400 bad base64 or traceparent; 403 not a party, or the federation agreement (or the
   *   rental) ended; 404 unknown channel; 409 the channel is not active; 413 ciphertext too large.
   */
  send(sender: A2aSender, channelId: string, input: A2aMessageInput, excludeSocket?: string): Promise<A2aSendResult> {
    return messages.send(this.core, sender, channelId, input, excludeSocket);
  }

  /**
   * A party agent's view of the channel history: delivered messages and key exchanges, oldest
   * first. Without `since` the latest `limit`; with `since` (a `next_cursor` or an ISO timestamp,
   * exclusive) the next `limit` after it. Messages addressed to the caller are marked delivered.
   * A held message joins the history when released, after everything delivered before its
   * release (cursors stay gap-free).
   * @throws 400 bad `since`; 403 not a party; 404 unknown channel.
   */
  history(agent: A2aSender, channelId: string, q: { since?: string; limit?: number }): Promise<A2aMessagePage> {
    return messages.history(this.core, agent, channelId, q);
  }

  /**
   * The releaser registered with the policy module: an owner approved a held A2A message, so it
   * becomes `delivered` (with a fresh cursor position) and goes to the recipient, if the channel
   * is still active. Runs after the approval committed, in the holding tenant's scope.
   */
  release(held: HeldRecord): Promise<void> {
    return messages.release(this.core, held);
  }
}
