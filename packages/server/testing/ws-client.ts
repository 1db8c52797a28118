/**
 * Promise-based WebSocket test client over the real `ws` package (design §7 frames `{event, data}`).
 *
 * - `openWs` resolves once the socket is accepted (the service accepts refused sockets too and
 *   closes them with 4001 / 4003 / 4401, so refusal tests use `openWs` then `waitClose`).
 * - `connectWs` also waits until the service has authenticated the socket: it sends `ping` and
 *   waits for the `pong` answer, which the gateway sends only after authentication (frames that
 *   arrive earlier are queued). After it resolves, bus events addressed to the device reach it.
 * - `next(predicate)` takes the oldest received frame matching the predicate (buffered or future)
 *   and fails after a timeout or when the socket closes first.
 */
import { WebSocket, type RawData } from 'ws';

/** Frame data is whatever JSON the service sent; tests assert its shape. */
 
type AnyData = any;

export interface Frame<D = AnyData> {
  event: string;
  data: D;
}

export type FramePredicate = (f: Frame) => boolean;
export type FrameMatcher = string | FramePredicate;

export interface CloseInfo {
  code: number;
  reason: string;
}

export interface WsOptions {
  /** Answer every service `ping` frame with a `pong` frame. */
  autoPong?: boolean;
}

/** Build `<base>?token=…&device_id=…` (undefined parameters are left out). */
export function wsAddress(base: string, query: Record<string, string | undefined>): string {
  const u = new URL(base);
  for (const [k, v] of Object.entries(query)) if (v !== undefined) u.searchParams.set(k, v);
  return u.toString();
}

const matcher = (m: FrameMatcher): FramePredicate => (typeof m === 'string' ? (f) => f.event === m : m);

interface Waiter {
  pred: FramePredicate;
  resolve(f: Frame): void;
  reject(e: Error): void;
  timer: NodeJS.Timeout;
}

export class WsClient {
  /** Every frame received, in order (consumed or not). */
  readonly received: Frame[] = [];
  /** Received frames not yet taken by `next`. */
  private readonly buffer: Frame[] = [];
  private readonly waiters = new Set<Waiter>();
  private closeInfo: CloseInfo | undefined;
  private closeWaiters: Array<(c: CloseInfo) => void> = [];
  autoPong: boolean;

  constructor(
    readonly ws: WebSocket,
    opts: WsOptions = {},
  ) {
    this.autoPong = opts.autoPong ?? false;
    ws.on('message', (raw: RawData) => this.onMessage(raw.toString()));
    ws.on('close', (code: number, reason: Buffer) => {
      this.closeInfo = { code, reason: reason.toString() };
      for (const w of this.waiters) {
        clearTimeout(w.timer);
        w.reject(new Error(`socket closed (${code} ${this.closeInfo.reason}) before a matching frame arrived`));
      }
      this.waiters.clear();
      for (const r of this.closeWaiters.splice(0)) r(this.closeInfo);
    });
    ws.on('error', () => undefined);
  }

  private onMessage(text: string): void {
    let frame: Frame;
    try {
      frame = JSON.parse(text) as Frame;
    } catch {
      frame = { event: '__not_json__', data: text };
    }
    this.received.push(frame);
    if (this.autoPong && frame.event === 'ping') this.send('pong', {});
    for (const w of this.waiters) {
      if (w.pred(frame)) {
        clearTimeout(w.timer);
        this.waiters.delete(w);
        w.resolve(frame);
        return;
      }
    }
    this.buffer.push(frame);
  }

  get isOpen(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  /** Close code and reason once closed, else undefined. */
  get closed(): CloseInfo | undefined {
    return this.closeInfo;
  }

  send(event: string, data?: unknown): void {
    this.ws.send(JSON.stringify(data === undefined ? { event } : { event, data }));
  }

  sendRaw(text: string): void {
    this.ws.send(text);
  }

  /** The oldest unconsumed frame matching `m` (an event name or a predicate), waiting up to `timeoutMs`. */
  next<D = AnyData>(m: FrameMatcher, timeoutMs = 3000): Promise<Frame<D>> {
    const pred = matcher(m);
    const i = this.buffer.findIndex(pred);
    if (i >= 0) return Promise.resolve(this.buffer.splice(i, 1)[0]!);
    if (this.closeInfo) return Promise.reject(new Error(`socket already closed (${this.closeInfo.code}); no matching frame`));
    return new Promise((resolve, reject) => {
      const w: Waiter = {
        pred,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.waiters.delete(w);
          const seen = this.received.map((f) => f.event).join(', ') || 'none';
          reject(new Error(`no matching frame within ${timeoutMs} ms (frames received: ${seen})`));
        }, timeoutMs),
      };
      this.waiters.add(w);
    });
  }

  /** Unconsumed frames matching `m` received so far (without consuming them). */
  buffered(m: FrameMatcher): Frame[] {
    return this.buffer.filter(matcher(m));
  }

  /** Resolve with the close code, or reject when the socket is still open after `timeoutMs`. */
  waitClose(timeoutMs = 3000): Promise<CloseInfo> {
    if (this.closeInfo) return Promise.resolve(this.closeInfo);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`socket still open after ${timeoutMs} ms`)), timeoutMs);
      this.closeWaiters.push((c) => {
        clearTimeout(timer);
        resolve(c);
      });
    });
  }

  /** Round trip through the service: `ping` -> `pong`. Rejects when the socket closes instead. */
  async roundTrip(timeoutMs = 3000): Promise<void> {
    this.send('ping', {});
    await this.next('pong', timeoutMs);
  }

  /** Close from the client side and wait for the close handshake (terminate after 1 s). */
  async close(): Promise<void> {
    if (this.closeInfo || this.ws.readyState === WebSocket.CLOSED) return;
    const done = new Promise<void>((resolve) => this.closeWaiters.push(() => resolve()));
    const kill = setTimeout(() => this.ws.terminate(), 1000);
    this.ws.close();
    await done;
    clearTimeout(kill);
  }
}

/** Open a socket; resolves once the upgrade is accepted (authentication may still refuse it). */
export function openWs(url: string, opts: WsOptions = {}, timeoutMs = 5000): Promise<WsClient> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    // Attach listeners before any frame can arrive.
    const client = new WsClient(ws, opts);
    const timer = setTimeout(() => {
      ws.terminate();
      reject(new Error(`connect timeout after ${timeoutMs} ms`));
    }, timeoutMs);
    ws.once('open', () => {
      clearTimeout(timer);
      resolve(client);
    });
    ws.once('unexpected-response', (_req, res) => {
      clearTimeout(timer);
      reject(new Error(`upgrade refused with HTTP ${res.statusCode}`));
    });
    ws.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

/** Open a socket and wait until the service has authenticated it (see the file comment). */
export async function connectWs(url: string, opts: WsOptions = {}, timeoutMs = 5000): Promise<WsClient> {
  const client = await openWs(url, opts, timeoutMs);
  try {
    await client.roundTrip(timeoutMs);
  } catch (err) {
    await client.close();
    throw new Error(`socket not authenticated: ${(err as Error).message}`, { cause: err });
  }
  return client;
}

/** Tracks the sockets of a test so that they are all closed afterwards. */
export class WsPool {
  private readonly clients = new Set<WsClient>();

  async open(url: string, opts?: WsOptions): Promise<WsClient> {
    return this.track(await openWs(url, opts));
  }

  async connect(url: string, opts?: WsOptions): Promise<WsClient> {
    return this.track(await connectWs(url, opts));
  }

  track(c: WsClient): WsClient {
    this.clients.add(c);
    return c;
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.clients].map((c) => c.close()));
    this.clients.clear();
  }
}
