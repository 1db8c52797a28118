/**
 * Baseline 1, the ceiling: a bare `ws` relay with no persistence, no authentication and no
 * validation beyond JSON parsing. It speaks the same frames as Parley's gateway: a `message` frame
 * `{event, data: {conversation_id, header_blob, ciphertext, client_ref}}` is relayed to the other
 * side as a `message` frame shaped like Parley's stored message, and answered with `message_ack`.
 * Sockets name their device with `?device_id=`.
 */
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Pair } from './common.js';

export interface BareRelay {
  url: string;
  close(): Promise<void>;
}

interface ConvInfo {
  agent: string;
  owner: string;
  groupId: string;
  topicId: string;
}

export async function startBareRelay(pairs: Pair[]): Promise<BareRelay> {
  const convs = new Map<string, ConvInfo>();
  for (const p of pairs) convs.set(p.conversationId, { agent: p.agent.deviceId, owner: p.owner.deviceId, groupId: p.groupId, topicId: p.topicId });
  const byDevice = new Map<string, WebSocket>();
  let seq = 0;

  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, maxPayload: 1024 * 1024 });
  wss.on('connection', (ws, req) => {
    const deviceId = new URL(req.url ?? '/', 'http://x').searchParams.get('device_id') ?? '';
    byDevice.set(deviceId, ws);
    ws.on('close', () => {
      if (byDevice.get(deviceId) === ws) byDevice.delete(deviceId);
    });
    ws.on('error', () => undefined);
    ws.on('message', (raw) => {
      let frame: { event?: string; data?: { conversation_id?: string; header_blob?: string; ciphertext?: string; client_ref?: string } };
      try {
        frame = JSON.parse(raw.toString());
      } catch {
        ws.send(JSON.stringify({ event: 'error', data: { detail: 'frame is not valid JSON', status: 400 } }));
        return;
      }
      if (frame.event === 'pong') return;
      const d = frame.data;
      const conv = d?.conversation_id ? convs.get(d.conversation_id) : undefined;
      if (frame.event !== 'message' || !d || !conv) {
        ws.send(JSON.stringify({ event: 'error', data: { detail: 'bad frame', status: 400, client_ref: d?.client_ref } }));
        return;
      }
      const peer = deviceId === conv.agent ? conv.owner : conv.agent;
      const out = {
        message_id: randomUUID(),
        conversation_id: d.conversation_id,
        sender_device_id: deviceId,
        header_blob: d.header_blob,
        ciphertext: d.ciphertext,
        timestamp: new Date().toISOString(),
        message_type: 'text',
        priority: 'normal',
        topic_id: conv.topicId,
        message_group_id: conv.groupId,
        cursor: String(++seq),
      };
      const target = byDevice.get(peer);
      if (target && target.readyState === target.OPEN) target.send(JSON.stringify({ event: 'message', data: out }));
      ws.send(JSON.stringify({ event: 'message_ack', data: { message_id: out.message_id, timestamp: out.timestamp, cursor: out.cursor, client_ref: d.client_ref } }));
    });
  });
  await new Promise<void>((resolve, reject) => {
    wss.once('listening', resolve);
    wss.once('error', reject);
  });
  const { port } = wss.address() as AddressInfo;
  return {
    url: `ws://127.0.0.1:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const ws of wss.clients) ws.terminate();
        wss.close(() => resolve());
      }),
  };
}
