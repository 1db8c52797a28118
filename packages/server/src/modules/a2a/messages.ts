/**
 * A2A messages (module comment of service.ts): send under both tenants' policies, the party
 * agents' history, delivery, and the release of held messages. A delivered message's `a2a_message`
 * webhook deliveries commit in the transaction that stores (or releases) it, so a relayed message
 * is one transaction (the Notifier's webhook sink skips the event, webhooks/outbox.ts `IN_TX_EVENTS`).
 */
import { randomUUID } from 'node:crypto';
import type { A2aMessage, A2aMessageInput, A2aMessagePage, A2aOutcome, A2aSendResult } from '@parley/protocol';
import type { Tx } from '../../db/client.js';
import { switchTenant, withTenant } from '../../db/tenant.js';
import { decodeEnvelope } from '../../lib/envelope.js';
import { conflict, notFound } from '../../lib/errors.js';
import { pageLimit, parseSince } from '../../lib/paging.js';
import { enqueueInTx } from '../webhooks/index.js';
import { stricter, type Evaluation, type EvaluationContext, type PolicyAction } from '../policies/index.js';
import { asTier } from '@parley/protocol';
import type { HeldRecord } from '../policies/index.js';
import {
  agreementGate,
  checkTraceparent,
  factsOf,
  isFederated,
  newTraceparent,
  peerOf,
  roleOf,
  toMessageOut,
  type A2aCore,
  type A2aSender,
  type ChannelFacts,
} from './internal.js';
import * as repo from './repo.js';

const OUTCOME: Record<PolicyAction, A2aOutcome> = { allow: 'delivered', notify: 'notified', hold: 'held', block: 'blocked' };

/**
 * Send one message on an active channel. Policies of the sender's tenant (and, federated, of the
 * recipient's) decide in one transaction; the stricter outcome wins. `delivered` / `notified`:
 * the recipient (and the sender's other sockets) get `a2a_message`; `notified` also alerts the
 * owners of each tenant whose policy said notify (`policy_alert` with `channel_id`); `held`: a
 * held message in the tenant whose policy held it (the recipient's when both did), delivered on
 * approval; `blocked`: nothing is delivered and no ciphertext is kept.
 * @throws 400 bad base64 or traceparent; 403 not a party, or the federation agreement (or the rental) ended;
 *   404 unknown channel; 409 the channel is not active; 413 ciphertext too large.
 */
export async function send(core: A2aCore, sender: A2aSender, channelId: string, input: A2aMessageInput, excludeSocket?: string): Promise<A2aSendResult> {
  const facts = await factsOf(core, sender.tenantId, channelId);
  const role = roleOf(facts, sender.deviceId);
  await agreementGate(core, facts);
  const federated = isFederated(facts);
  const traceparent = input.traceparent !== undefined ? checkTraceparent(input.traceparent) : federated ? newTraceparent() : null;
  const blobs = decodeEnvelope(input, core.deps.maxCiphertextBytes);
  const peer = peerOf(facts, role);
  const home = sender.tenantId;
  const id = randomUUID();
  const now = new Date();
  const messageType = input.message_type ?? 'text';
  const priority = input.priority ?? 'normal';

  const { row, heldMessageId, alerts } = await withTenant(core.deps.db, home, async (tx) => {
    const c = await repo.getChannel(tx, channelId);
    if (!c) throw notFound('channel');
    if (c.status !== 'active') throw conflict(`messages need an active channel; this one is ${c.status}`);
    const identity = await core.deps.hubs.findByDevice(tx, sender.deviceId);
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
    const decisions: { tenantId: string; evaluation: Evaluation }[] = [{ tenantId: home, evaluation: await evaluate(core, tx, home, ctx, id) }];
    if (federated) {
      await switchTenant(tx, peer.tenantId);
      decisions.push({ tenantId: peer.tenantId, evaluation: await evaluate(core, tx, peer.tenantId, ctx, id) });
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
      headerBlob: kept ? blobs.header : null,
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
      heldMessageId = await core.deps.policies.hold(tx, holder.tenantId, {
        channelId: c.id,
        a2aMessageId: id,
        senderDeviceId: sender.deviceId,
        recipientDeviceId: peer.deviceId,
        policyId: holder.evaluation.policyId,
        messageType,
        priority,
      });
    }
    if (action === 'allow' || action === 'notify') await enqueueWebhooks(tx, c, row!, federated ? undefined : home);
    const alerts = action === 'notify' ? decisions.filter((d) => d.evaluation.outcome === 'notify') : [];
    return { row: row!, heldMessageId, alerts };
  });

  const out = toMessageOut(row);
  if (row.outcome === 'delivered' || row.outcome === 'notified') await deliver(core, facts, row, out, excludeSocket);
  for (const a of alerts) {
    await core.deps.policies.alert(a.tenantId, {
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
export async function history(core: A2aCore, agent: A2aSender, channelId: string, q: { since?: string; limit?: number }): Promise<A2aMessagePage> {
  const limit = pageLimit(q.limit, core.deps);
  const since = q.since === undefined ? undefined : parseSince(q.since);
  const after = since === undefined ? {} : 'seq' in since ? { afterSeq: since.seq } : { afterTime: since.at };
  const rows = await withTenant(core.deps.db, agent.tenantId, async (tx) => {
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
export async function release(core: A2aCore, held: HeldRecord): Promise<void> {
  const messageId = held.a2aMessageId;
  if (!messageId) return;
  const found = await withTenant(core.deps.db, held.tenantId, async (tx) => {
    const row = await repo.releaseMessage(tx, messageId);
    if (!row || row.outcome !== 'delivered' || !row.ciphertext) return undefined;
    const channel = await repo.getChannel(tx, row.channelId);
    if (channel?.status === 'active') await enqueueWebhooks(tx, channel, row, held.tenantId);
    return channel ? { row, channel } : undefined;
  });
  if (found?.channel.status === 'active') await deliver(core, found.channel, found.row, toMessageOut(found.row));
}

/** The tenants of a message's recipient and sender. */
function tenantsOf(c: ChannelFacts, row: repo.A2aMessageRow): { recipientTenant: string; senderTenant: string } {
  const recipientTenant = row.recipientDeviceId === c.responderDeviceId ? c.partnerTenantId : c.tenantId;
  return { recipientTenant, senderTenant: recipientTenant === c.tenantId ? c.partnerTenantId : c.tenantId };
}

/**
 * Enqueue the `a2a_message` webhook deliveries of a delivered message in `tx`: the recipient's
 * device and the sender's (its other sockets get the message too), each in its own tenant's scope
 * (one statement when both are in one tenant). `scopedTo`: the tenant `tx` is scoped to, when
 * known (else it is switched first); the scope is left where the last insert ran.
 */
async function enqueueWebhooks(tx: Tx, c: ChannelFacts, row: repo.A2aMessageRow, scopedTo: string | undefined): Promise<void> {
  const { recipientTenant, senderTenant } = tenantsOf(c, row);
  const out = toMessageOut(row);
  const audiences =
    recipientTenant === senderTenant
      ? [{ tenantId: recipientTenant, deviceIds: [row.recipientDeviceId, row.senderDeviceId] }]
      : [
          { tenantId: recipientTenant, deviceIds: [row.recipientDeviceId] },
          { tenantId: senderTenant, deviceIds: [row.senderDeviceId] },
        ];
  let scope = scopedTo;
  for (const a of audiences) {
    if (scope !== a.tenantId) await switchTenant(tx, a.tenantId);
    scope = a.tenantId;
    await enqueueInTx(tx, a.tenantId, { deviceIds: a.deviceIds }, 'a2a_message', out);
  }
}

/** Push a delivered message to the recipient and to the sender's other sockets (their webhooks were enqueued with it: {@link enqueueWebhooks}). */
async function deliver(core: A2aCore, c: ChannelFacts, row: repo.A2aMessageRow, out: A2aMessage, excludeSocket?: string): Promise<void> {
  const { recipientTenant, senderTenant } = tenantsOf(c, row);
  await core.deps.notifier.toDevices(recipientTenant, [row.recipientDeviceId], 'a2a_message', out);
  await core.deps.notifier.toDevices(senderTenant, [row.senderDeviceId], 'a2a_message', out, excludeSocket);
}

/**
 * One policy decision in `tenantId`'s scope (the transaction must be scoped to it). The sender's
 * rate is counted only when a policy reads it, once per message: the count is kept on `ctx`, so
 * the peer tenant's decision reuses the home tenant's.
 */
async function evaluate(core: A2aCore, tx: Tx, tenantId: string, ctx: EvaluationContext, subjectId: string): Promise<Evaluation> {
  const senderRate = async () => (ctx.senderRatePerMinute ??= await repo.countSentSince(tx, ctx.senderDeviceId, new Date(ctx.now.getTime() - 60_000)));
  const [evaluation] = await core.deps.policies.decide(tx, tenantId, [{ ctx, subjectKind: 'a2a_message', subjectId, defaultOutcome: 'allow' }], senderRate);
  return evaluation!;
}
