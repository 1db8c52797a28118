/**
 * Messaging tools (contract §4.19, §4.13, §4.6, §6.1): `svc_open_channel`, `svc_send_message` and
 * `svc_poll_messages` go through the local plugin (`parley-agent run`), which alone holds the
 * agent's keys and end-to-end sessions (MLS by default, or X3DH + Double Ratchet): the tool
 * server hands it plaintext over loopback and never sees a session key; the service only ever
 * receives ciphertext. A message goes to another agent, an owner conversation, a room the agent
 * is a member of, or by default to the agent's owner (every owner device). When the plugin is not
 * running the tools say how to start it.
 */
import { Type } from '@sinclair/typebox';
import { ToolError } from '../errors.js';
import { defineTool } from '../tool.js';
import { hubAddressOf, OrNull, ParentSpanId } from './common.js';

/** Default wait of `svc_open_channel` for approval and key exchange (seconds). */
export const OPEN_WAIT_SECONDS = 15;

export const openChannel = defineTool({
  name: 'svc_open_channel',
  title: 'Open a channel',
  description:
    'Open an end-to-end encrypted agent-to-agent channel with another agent (MLS by default, or `ratchet` for X3DH + Double Ratchet); an open channel with the same agent is reused. A new channel needs the other agent’s owner to approve it: the tool waits up to waitSeconds and answers status `open`, or `pending` while approval is outstanding (call it again later).',
  input: Type.Object({
    peerAgent: Type.String({ minLength: 3, maxLength: 40, description: 'hub name or did:hub: DID' }),
    channelType: Type.Optional(Type.Union([Type.Literal('mls'), Type.Literal('ratchet')], { default: 'mls' })),
    capability: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'the capability the channel is for (federated channels may require one)' })),
    waitSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 120, default: OPEN_WAIT_SECONDS })),
  }),
  output: Type.Object({ channelId: Type.String(), protocol: Type.String(), status: Type.String(), peer: Type.String() }),
  async run(args, ctx) {
    const peer = hubAddressOf(args.peerAgent);
    const ch = await ctx.plugin.openChannel({
      peer,
      protocol: args.channelType ?? 'mls',
      ...(args.capability !== undefined ? { capability: args.capability } : {}),
      wait_ms: (args.waitSeconds ?? OPEN_WAIT_SECONDS) * 1000,
    });
    if (ch.status === 'rejected' || ch.status === 'revoked') throw new ToolError(`channel ${ch.channel_id} with ${peer} was ${ch.status}`, 409);
    return { channelId: ch.channel_id, protocol: ch.protocol, status: ch.status, peer: ch.peer_hub_address };
  },
  text: (r) => (r.status === 'open' ? `Channel ${r.channelId} with ${r.peer} is open (${r.protocol}).` : `Channel ${r.channelId} with ${r.peer} is ${r.status}: ${r.peer}'s owner must approve it; call svc_open_channel again to check.`),
});

export const sendMessage = defineTool({
  name: 'svc_send_message',
  title: 'Send a message',
  description:
    'Send an end-to-end encrypted message through the local plugin. With only text it goes to your owner (a copy to each of the owner’s devices); or name one target: another agent (hubAddress, over the open channel with it, or channelId), one owner conversation (conversationId), or a room you are a member of (roomId). The plugin encrypts; the service only relays ciphertext and applies the policies (the answer says delivered, held, notified or blocked; per recipient for a room).',
  input: Type.Object({
    text: Type.String({ minLength: 1, maxLength: 65_536 }),
    hubAddress: Type.Optional(Type.String({ minLength: 3, maxLength: 40, description: 'the agent to write to (hub name or DID), over the open channel with it' })),
    channelId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    conversationId: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'one conversation with an owner device (default without a target: every owner conversation)' })),
    roomId: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'a room this agent is a member of' })),
    messageType: Type.Optional(Type.String({ minLength: 1, maxLength: 40, description: 'contract §2.4 message type: text (default), status_alert, action_confirmation, artifact, …' })),
    parentSpanId: Type.Optional(ParentSpanId),
  }),
  output: Type.Object({
    message_id: Type.String(),
    channel_id: OrNull(Type.String()),
    conversation_id: OrNull(Type.String()),
    room_id: OrNull(Type.String()),
    outcome: Type.String({ description: 'delivered, notified, held or blocked; for a room the recipients’ common outcome, or mixed' }),
    protocol: Type.String(),
    timestamp: Type.String(),
    copies: Type.Optional(Type.Array(Type.Object({ conversation_id: Type.String(), message_id: Type.String() }), { description: 'a message to the owner: one copy per owner conversation' })),
    deliveries: Type.Optional(Type.Array(Type.Object({ recipient_device_id: Type.String(), outcome: Type.String() }), { description: 'a room message: the outcome per recipient' })),
    trace_id: Type.String(),
  }),
  async run(args, ctx) {
    const targets = [args.hubAddress, args.channelId, args.conversationId, args.roomId].filter((t) => t !== undefined);
    if (targets.length > 1) throw new ToolError('name at most one of hubAddress, channelId, conversationId or roomId (none: your owner)', 400);
    const sent = await ctx.plugin.send({
      text: args.text,
      ...(args.hubAddress !== undefined ? { hub_address: hubAddressOf(args.hubAddress) } : {}),
      ...(args.channelId !== undefined ? { channel_id: args.channelId } : {}),
      ...(args.conversationId !== undefined ? { conversation_id: args.conversationId } : {}),
      ...(args.roomId !== undefined ? { room_id: args.roomId } : {}),
      ...(args.messageType !== undefined ? { message_type: args.messageType } : {}),
      traceparent: ctx.span.traceparent,
    });
    return { ...sent, room_id: sent.room_id ?? null, trace_id: ctx.span.traceId };
  },
  text: (r) => {
    const where = r.channel_id ? `, channel ${r.channel_id}` : r.room_id ? `, room ${r.room_id}` : r.copies && r.copies.length > 1 ? `, to the owner's ${r.copies.length} devices` : r.conversation_id ? `, conversation ${r.conversation_id}` : '';
    return `Message ${r.message_id} ${r.outcome} (${r.protocol}${where}).`;
  },
});

const Message = Type.Object({
  message_id: Type.String(),
  channel_id: OrNull(Type.String()),
  conversation_id: OrNull(Type.String()),
  room_id: OrNull(Type.String()),
  from: Type.String({ description: 'the sender’s hub address, else its device id' }),
  text: OrNull(Type.String()),
  content_type: OrNull(Type.String()),
  message_type: Type.String(),
  protocol: Type.String(),
  timestamp: Type.String(),
  traceparent: OrNull(Type.String()),
});

export const pollMessages = defineTool({
  name: 'svc_poll_messages',
  title: 'Poll messages',
  description:
    'Read the decrypted messages the local plugin received (kept while nobody polls, up to 500), oldest first: all, or of one channel, owner conversation or room, after `since` (an ISO timestamp, or the next_since of the previous answer), at most `limit` (default 50).',
  input: Type.Object({
    channelId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    conversationId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    roomId: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'a room this agent is a member of' })),
    since: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
  }),
  output: Type.Object({ messages: Type.Array(Message), count: Type.Integer(), next_since: OrNull(Type.String()) }),
  annotations: { readOnlyHint: true },
  async run(args, ctx) {
    const page = await ctx.plugin.poll({
      ...(args.channelId !== undefined ? { channel_id: args.channelId } : {}),
      ...(args.conversationId !== undefined ? { conversation_id: args.conversationId } : {}),
      ...(args.roomId !== undefined ? { room_id: args.roomId } : {}),
      ...(args.since !== undefined ? { since: args.since } : {}),
      limit: args.limit ?? 50,
    });
    const messages = page.messages.map((m) => ({
      message_id: m.message_id,
      channel_id: m.channel_id,
      conversation_id: m.conversation_id,
      room_id: m.room_id ?? null,
      from: m.sender_hub_address ?? m.sender_device_id,
      text: m.text,
      content_type: m.content_type,
      message_type: m.message_type,
      protocol: m.protocol,
      timestamp: m.timestamp,
      traceparent: m.traceparent,
    }));
    return { messages, count: messages.length, next_since: page.next_since };
  },
  text: (r) =>
    r.count === 0
      ? 'No new messages.'
      : r.messages.map((m) => `[${m.timestamp}]${m.room_id ? ` (room ${m.room_id})` : ''} ${m.from}: ${m.text ?? `(${m.content_type ?? 'undecodable'} content)`}`).join('\n') + (r.next_since ? `\n(next_since: ${r.next_since})` : ''),
});
