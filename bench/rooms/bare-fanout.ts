/**
 * Baseline, the ceiling: a bare `ws` room fan-out with no persistence, authentication, policy
 * evaluation or validation beyond JSON parsing. It speaks the frames of Parley's rooms (DESIGN
 * §8.5): a `room_message` frame `{event, data: {room_id, message_type, priority, envelopes:
 * [{recipient_device_id, header_blob, ciphertext}], client_ref}}` is fanned out as one
 * `room_message` frame per envelope to the recipient's socket, shaped like Parley's, and answered
 * with `room_message_ack {room_message_id, deliveries, client_ref}`. Sockets name their device with
 * `?device_id=`.
 */
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

export interface BareFanout {
  url: string;
  close(): Promise<void>;
}

interface Envelope {
  recipient_device_id?: string;
  header_blob?: string;
  ciphertext?: string;
}

interface RoomFrame {
  event?: string;
  data?: { room_id?: string; message_type?: string; priority?: string; envelopes?: Envelope[]; client_ref?: string };
}

/** Start the fan-out server on 127.0.0.1:0. */
export async function startBareFanout(): Promise<BareFanout> {
  const byDevice = new Map<string, WebSocket>();

  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, maxPayload: 1024 * 1024 });
  wss.on('connection', (ws, req) => {
    const deviceId = new URL(req.url ?? '/', 'http://x').searchParams.get('device_id') ?? '';
    byDevice.set(deviceId, ws);
    ws.on('close', () => {
      if (byDevice.get(deviceId) === ws) byDevice.delete(deviceId);
    });
    ws.on('error', () => undefined);
    ws.on('message', (raw) => {
      let frame: RoomFrame;
      try {
        frame = JSON.parse(raw.toString());
      } catch {
        ws.send(JSON.stringify({ event: 'error', data: { detail: 'frame is not valid JSON', status: 400 } }));
        return;
      }
      if (frame.event === 'pong') return;
      const d = frame.data;
      if (frame.event !== 'room_message' || !d || !Array.isArray(d.envelopes)) {
        ws.send(JSON.stringify({ event: 'error', data: { detail: 'bad frame', status: 400, client_ref: d?.client_ref } }));
        return;
      }
      const roomMessageId = randomUUID();
      const timestamp = new Date().toISOString();
      const deliveries: { recipient_device_id: string; outcome: string }[] = [];
      for (const e of d.envelopes) {
        const recipient = e.recipient_device_id ?? '';
        const target = byDevice.get(recipient);
        const out = {
          room_id: d.room_id,
          room_message_id: roomMessageId,
          sender_device_id: deviceId,
          header: e.header_blob,
          ciphertext: e.ciphertext,
          message_type: d.message_type ?? 'text',
          priority: d.priority ?? 'normal',
          timestamp,
        };
        if (target && target.readyState === target.OPEN) target.send(JSON.stringify({ event: 'room_message', data: out }));
        deliveries.push({ recipient_device_id: recipient, outcome: 'delivered' });
      }
      ws.send(JSON.stringify({ event: 'room_message_ack', data: { room_message_id: roomMessageId, deliveries, client_ref: d.client_ref } }));
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
