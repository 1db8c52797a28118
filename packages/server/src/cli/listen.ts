/**
 * `npm run cli -- listen`: a WebSocket client for trying the service by hand (README tour). It
 * connects to the gateway, prints `connected`, then catches up: a device token's listener reads
 * the device's message history (`GET /api/v1/devices/{id}/messages`, newest page) and prints, as
 * `{"event":"message","data":…,"missed":true}`, each message to the device that was never
 * delivered (sent while no socket of it was connected; reading it marks it delivered). Then it
 * prints one line starting with `ready`, after which everything arrives live: every frame is
 * printed as received (JSON, one per line; pings are answered), each message once. It ends when
 * the socket closes, printing `closed <code> <reason>`.
 *
 * Scripts wait for the `ready` line (`npm run cli -- wait-for`) before doing what the listener
 * should see. Owner sockets (owner token and `--device-id`) do not catch up: owners read
 * conversation history (`GET /api/v1/conversations/{id}/messages`).
 */
import WebSocket from 'ws';
import { decodeJwt } from 'jose';

/** What {@link listen} needs. */
export interface ListenOptions {
  /** Service base URL (`http://host:port`); the socket URL is derived from it unless `wsUrl` is given. */
  baseUrl: string;
  /** Full gateway URL without query (`ws://host:port/api/v1/ws`), when not derived from `baseUrl`. */
  wsUrl?: string;
  /** A device JWT, or an owner JWT with `deviceId` (the owner's ACTIVE device). */
  token: string;
  deviceId?: string;
  /** Where lines go (default: stdout / stderr). */
  out?: (line: string) => void;
  err?: (line: string) => void;
}

/** A message as the history route answers it (only the fields used here). */
interface HistoryMessage {
  message_id: string;
  sender_device_id: string;
  delivered_at: string | null;
}

/** The device a device JWT names (`sub` of a `typ: "device"` token), else undefined. */
function deviceOfToken(token: string): string | undefined {
  try {
    const claims = decodeJwt(token);
    return claims.typ === 'device' && typeof claims.sub === 'string' ? claims.sub : undefined;
  } catch {
    return undefined;
  }
}

/** Messages to `deviceId` in its newest history page that no socket of it had received. */
async function missedMessages(baseUrl: string, token: string, deviceId: string): Promise<HistoryMessage[]> {
  const res = await fetch(`${baseUrl}/api/v1/devices/${encodeURIComponent(deviceId)}/messages?limit=200`, { headers: { authorization: `Bearer ${token}` } });
  const body = (await res.json().catch(() => ({}))) as { messages?: HistoryMessage[]; detail?: string };
  if (!res.ok) throw new Error(`catching up failed: ${res.status} ${body.detail ?? ''}`.trim());
  return (body.messages ?? []).filter((m) => m.sender_device_id !== deviceId && m.delivered_at === null);
}

/**
 * Connect, catch up, then print every frame until the socket closes (see the file comment).
 * Resolves with the exit status: 0 once the socket closed, 1 when it could not connect or the
 * catch-up failed.
 */
export function listen(opts: ListenOptions): Promise<number> {
  const out = opts.out ?? ((line: string) => console.log(line));
  const err = opts.err ?? ((line: string) => console.error(line));
  const base = opts.baseUrl.replace(/\/+$/, '');
  const query = new URLSearchParams({ token: opts.token, ...(opts.deviceId ? { device_id: opts.deviceId } : {}) });
  const device = opts.deviceId ? undefined : deviceOfToken(opts.token);
  const printed = new Set<string>();
  let opened = false;
  return new Promise((resolve) => {
    const ws = new WebSocket(`${opts.wsUrl ?? `${base.replace(/^http/, 'ws')}/api/v1/ws`}?${query.toString()}`);
    ws.on('open', () => {
      opened = true;
      out('connected');
      if (!device) {
        out('ready (owner socket: no catch-up; history is at GET /api/v1/conversations/{id}/messages)');
        return;
      }
      missedMessages(base, opts.token, device).then(
        (missed) => {
          const fresh = missed.filter((m) => !printed.has(m.message_id));
          for (const m of fresh) {
            printed.add(m.message_id);
            out(JSON.stringify({ event: 'message', data: m, missed: true }));
          }
          out(`ready: caught up on ${fresh.length} missed message${fresh.length === 1 ? '' : 's'}`);
        },
        (e: unknown) => {
          err((e as Error).message);
          ws.terminate();
          resolve(1);
        },
      );
    });
    ws.on('message', (raw) => {
      const text = raw.toString();
      let frame: { event?: string; data?: { message_id?: unknown } } = {};
      try {
        frame = JSON.parse(text) as typeof frame;
      } catch {
        /* printed as received */
      }
      if (frame.event === 'ping') ws.send(JSON.stringify({ event: 'pong', data: {} }));
      const id = frame.event === 'message' && typeof frame.data?.message_id === 'string' ? frame.data.message_id : undefined;
      if (id !== undefined) {
        if (printed.has(id)) return;
        printed.add(id);
      }
      out(text);
    });
    ws.on('close', (code, reason) => {
      if (opened) out(`closed ${code} ${reason.toString()}`);
      resolve(0);
    });
    ws.on('error', (e) => {
      if (opened) {
        err(e.message);
        return;
      }
      err(`cannot connect to ${base}: ${e.message} (is the service running there? set PORT or PUBLIC_URL as the service has them, or pass --url)`);
      resolve(1);
    });
  });
}
