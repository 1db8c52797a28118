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
 * delivered by `release` (messages.ts) once an owner approves it.
 *
 * Federated messages always carry a W3C `traceparent` (generated when the sender sent none).
 *
 * Audit (docs/decisions.md "Audit coverage"): request, approve, reject and revoke record
 * `a2a_channel.requested | approved | rejected | revoked` (subject: the channel id) in the
 * transaction of the transition, in the acting tenant's chain (actor: owner `sub`,
 * `api_key:<id>` or `device:<id>`) and, for a federated channel, also in the other tenant's chain
 * (actor `tenant:<acting tenant id>`).
 *
 * The operations live beside this file, one per part: channels.ts (request, list, approve,
 * reject, revoke, peer keys), key-exchange.ts (the handshake), messages.ts (send, history,
 * release); each takes the {@link A2aCore} opened here (internal.ts).
 */
import { newCore, type A2aCore, type A2aDeps } from './internal.js';
import { release } from './messages.js';

/**
 * The dependencies and channel-facts cache every A2A operation runs with; registers the `a2a`
 * releaser (an approved held message is delivered by `release`, messages.ts).
 */
export function openA2a(deps: A2aDeps): A2aCore {
  const core = newCore(deps);
  deps.policies.registerReleaser('a2a', (held) => release(core, held));
  return core;
}
