/**
 * Baseline 1, the ceiling: a bare `ws` relay with no persistence, no authentication and no
 * validation beyond JSON parsing (the server skeleton: bare-server.ts). It speaks the same frames as
 * Parley's gateway: a `message` frame `{event, data: {conversation_id, header_blob, ciphertext,
 * client_ref}}` is relayed to the other side as a `message` frame shaped like Parley's stored
 * message, and answered with `message_ack`. Sockets name their device with `?device_id=`.
 */
import { randomUUID } from 'node:crypto';
import { startBareServer, type BareServer } from './bare-server.js';
import type { Pair } from './common.js';

interface ConvInfo {
  agent: string;
  owner: string;
  groupId: string;
  topicId: string;
}

interface MessageIn {
  conversation_id?: string;
  header_blob?: string;
  ciphertext?: string;
  client_ref?: string;
}

/** Start the relay on 127.0.0.1:0 for the conversations of `pairs`. */
export async function startBareRelay(pairs: Pair[]): Promise<BareServer> {
  const convs = new Map<string, ConvInfo>();
  for (const p of pairs) convs.set(p.conversationId, { agent: p.agent.deviceId, owner: p.owner.deviceId, groupId: p.groupId, topicId: p.topicId });
  let seq = 0;
  return startBareServer<MessageIn>((frame, from) => {
    const d = frame.data;
    const conv = d?.conversation_id ? convs.get(d.conversation_id) : undefined;
    if (frame.event !== 'message' || !d || !conv) return from.refuse(d?.client_ref);
    const out = {
      message_id: randomUUID(),
      conversation_id: d.conversation_id,
      sender_device_id: from.deviceId,
      header_blob: d.header_blob,
      ciphertext: d.ciphertext,
      timestamp: new Date().toISOString(),
      message_type: 'text',
      priority: 'normal',
      topic_id: conv.topicId,
      message_group_id: conv.groupId,
      cursor: String(++seq),
    };
    from.deliver(from.deviceId === conv.agent ? conv.owner : conv.agent, 'message', out);
    from.reply('message_ack', { message_id: out.message_id, timestamp: out.timestamp, cursor: out.cursor, client_ref: d.client_ref });
  });
}
