/**
 * The skeleton of the bare `ws` baselines (bench/relay/bare-relay.ts, bench/rooms/bare-fanout.ts):
 * a WebSocket server on 127.0.0.1:0 with no persistence and no authentication, where each socket
 * names its device with `?device_id=`. It parses every frame (answering invalid JSON with Parley's
 * `error` frame), ignores `pong` and hands the rest to the baseline's handler.
 */
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

/** A running baseline: its WebSocket URL (append `?device_id=`) and how to stop it. */
export interface BareServer {
  url: string;
  close(): Promise<void>;
}

/** What a baseline's handler can do with a frame from the socket of `deviceId`. */
export interface BareSocket {
  deviceId: string;
  /** Send `{event, data}` back on this socket. */
  reply(event: string, data: object): void;
  /** Send `{event, data}` to the socket of device `to`, when it is connected. */
  deliver(to: string, event: string, data: object): void;
  /** Answer Parley's 400 `error` frame for a frame the baseline does not take. */
  refuse(clientRef: string | undefined): void;
}

/** Start a baseline on 127.0.0.1:0 that passes every parsed frame (but `pong`) to `handle`. */
export async function startBareServer<D>(handle: (frame: { event?: string; data?: D }, from: BareSocket) => void): Promise<BareServer> {
  const byDevice = new Map<string, WebSocket>();
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, maxPayload: 1024 * 1024 });
  wss.on('connection', (ws, req) => {
    const deviceId = new URL(req.url ?? '/', 'http://x').searchParams.get('device_id') ?? '';
    byDevice.set(deviceId, ws);
    ws.on('close', () => {
      if (byDevice.get(deviceId) === ws) byDevice.delete(deviceId);
    });
    ws.on('error', () => undefined);
    const from: BareSocket = {
      deviceId,
      reply: (event, data) => ws.send(JSON.stringify({ event, data })),
      deliver: (to, event, data) => {
        const target = byDevice.get(to);
        if (target && target.readyState === target.OPEN) target.send(JSON.stringify({ event, data }));
      },
      refuse: (clientRef) => from.reply('error', { detail: 'bad frame', status: 400, client_ref: clientRef }),
    };
    ws.on('message', (raw) => {
      let frame: { event?: string; data?: D };
      try {
        frame = JSON.parse(raw.toString());
      } catch {
        from.reply('error', { detail: 'frame is not valid JSON', status: 400 });
        return;
      }
      if (frame.event !== 'pong') handle(frame, from);
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
