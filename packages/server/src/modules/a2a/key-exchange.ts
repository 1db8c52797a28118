/** The A2A key exchange (module comment of service.ts): approved -> active once both sides sent one. */
import { randomUUID } from 'node:crypto';
import type { A2aKeyExchangeAck, KeyExchangeFrame } from '@parley/protocol';
import { withTenant } from '../../db/tenant.js';
import { decodeEnvelope } from '../../lib/envelope.js';
import { conflict, notFound } from '../../lib/errors.js';
import { agreementGate, factsOf, peerOf, roleOf, toMessageOut, type A2aCore, type A2aSender } from './internal.js';
import * as repo from './repo.js';

/** An opaque handshake (e.g. an X3DH initial message or an MLS Welcome), base64 fields: the `a2a_key_exchange` frame without `client_ref`. */
export type KeyExchangeInput = Omit<KeyExchangeFrame, 'client_ref'>;

/**
 * One side's opaque handshake while the channel is `approved`: stored (so an offline peer finds
 * it in the history), relayed to the peer as `a2a_key_exchange {channel_id, message_id,
 * sender_device_id, header_blob, ciphertext, timestamp}`. When both sides have sent one the
 * channel becomes `active` with a fresh conversation id and both devices get
 * `a2a_channel_activated {channel_id, conversation_id}`. Sending again before that replaces
 * nothing: the peer simply receives the newer handshake too.
 * @throws 400 bad base64; 403 not a party, or the federation agreement (or the rental) ended; 404 unknown
 *   channel; 409 the channel is not approved; 413 ciphertext too large.
 */
export async function keyExchange(core: A2aCore, sender: A2aSender, input: KeyExchangeInput): Promise<A2aKeyExchangeAck> {
  const facts = await factsOf(core, sender.tenantId, input.channel_id);
  const role = roleOf(facts, sender.deviceId);
  await agreementGate(core, facts);
  const { header, ciphertext } = decodeEnvelope(input, core.deps.maxCiphertextBytes);
  const peer = peerOf(facts, role);
  const { channel, message } = await withTenant(core.deps.db, sender.tenantId, async (tx) => {
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
      headerBlob: header,
      ciphertext,
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
  await core.deps.notifier.toDevices(peer.tenantId, [peer.deviceId], 'a2a_key_exchange', relay);
  if (channel.status === 'active') {
    const data = { channel_id: channel.id, conversation_id: channel.conversationId };
    await core.deps.notifier.toDevices(channel.tenantId, [channel.initiatorDeviceId], 'a2a_channel_activated', data);
    await core.deps.notifier.toDevices(channel.partnerTenantId, [channel.responderDeviceId], 'a2a_channel_activated', data);
  }
  return { channel_id: channel.id, status: channel.status as repo.ChannelStatus, conversation_id: channel.conversationId };
}
