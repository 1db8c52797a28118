/**
 * Messaging tools (SPEC §4.19, §4.13, §6.1): `svc_open_channel`, `svc_send_message` and
 * `svc_poll_messages` go through the local plugin (`parley-agent run`), which alone holds the
 * agent's keys and end-to-end sessions (MLS by default, or X3DH + Double Ratchet): the tool
 * server hands it plaintext over loopback and never sees a session key; the service only ever
 * receives ciphertext. When the plugin is not running the tools say how to start it.
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
    'Send an end-to-end encrypted message through the local plugin: to another agent (hubAddress, over the open channel with it, or channelId) or in a conversation with the owner (conversationId). The plugin encrypts; the service only relays ciphertext and applies both tenants’ policies (the answer says delivered, held, notified or blocked).',
  input: Type.Object({
    text: Type.String({ minLength: 1, maxLength: 65_536 }),
    hubAddress: Type.Optional(Type.String({ minLength: 3, maxLength: 40, description: 'the agent to write to (hub name or DID), over the open channel with it' })),
    channelId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    conversationId: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'a conversation with an owner device' })),
    roomId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    messageType: Type.Optional(Type.String({ minLength: 1, maxLength: 40, description: 'SPEC §2.4 message type: text (default), status_alert, action_confirmation, artifact, …' })),
    parentSpanId: Type.Optional(ParentSpanId),
  }),
  output: Type.Object({
    message_id: Type.String(),
    channel_id: OrNull(Type.String()),
    conversation_id: OrNull(Type.String()),
    outcome: Type.String(),
    protocol: Type.String(),
    timestamp: Type.String(),
    trace_id: Type.String(),
  }),
  async run(args, ctx) {
    const targets = [args.hubAddress, args.channelId, args.conversationId, args.roomId].filter((t) => t !== undefined);
    if (targets.length !== 1) throw new ToolError('name exactly one of hubAddress, channelId, conversationId or roomId', 400);
    if (args.roomId !== undefined) throw new ToolError('room messages are not sent by the plugin yet: send to an agent (hubAddress / channelId) or an owner conversation (conversationId)', 400);
    const sent = await ctx.plugin.send({
      text: args.text,
      ...(args.hubAddress !== undefined ? { hub_address: hubAddressOf(args.hubAddress) } : {}),
      ...(args.channelId !== undefined ? { channel_id: args.channelId } : {}),
      ...(args.conversationId !== undefined ? { conversation_id: args.conversationId } : {}),
      ...(args.messageType !== undefined ? { message_type: args.messageType } : {}),
      traceparent: ctx.span.traceparent,
    });
    return { ...sent, trace_id: ctx.span.traceId };
  },
  text: (r) => `Message ${r.message_id} ${r.outcome} (${r.protocol}${r.channel_id ? `, channel ${r.channel_id}` : ''}).`,
});

const Message = Type.Object({
  message_id: Type.String(),
  channel_id: OrNull(Type.String()),
  conversation_id: OrNull(Type.String()),
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
    'Read the decrypted messages the local plugin received (kept while nobody polls, up to 500), oldest first: all, or of one channel or conversation, after `since` (an ISO timestamp, or the next_since of the previous answer), at most `limit` (default 50).',
  input: Type.Object({
    channelId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    conversationId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    roomId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    since: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
  }),
  output: Type.Object({ messages: Type.Array(Message), count: Type.Integer(), next_since: OrNull(Type.String()) }),
  annotations: { readOnlyHint: true },
  async run(args, ctx) {
    if (args.roomId !== undefined) throw new ToolError('room messages are not kept by the plugin yet: poll a channel, a conversation, or everything', 400);
    const page = await ctx.plugin.poll({
      ...(args.channelId !== undefined ? { channel_id: args.channelId } : {}),
      ...(args.conversationId !== undefined ? { conversation_id: args.conversationId } : {}),
      ...(args.since !== undefined ? { since: args.since } : {}),
      limit: args.limit ?? 50,
    });
    const messages = page.messages.map((m) => ({
      message_id: m.message_id,
      channel_id: m.channel_id,
      conversation_id: m.conversation_id,
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
  text: (r) => (r.count === 0 ? 'No new messages.' : r.messages.map((m) => `[${m.timestamp}] ${m.from}: ${m.text ?? `(${m.content_type ?? 'undecodable'} content)`}`).join('\n') + (r.next_since ? `\n(next_since: ${r.next_since})` : '')),
});
