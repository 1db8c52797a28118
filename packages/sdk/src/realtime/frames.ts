/**
 * Raw socket frames next to a {@link RealtimeClient} (contract §5 rule 4, §6.1; design §7), without
 * changing the client: `client_key_register` (API-key sockets, trust on first use) and the A2A
 * frames `a2a_key_exchange` / `a2a_message` have no method of their own on the client.
 *
 * - {@link frameTap} wraps a WebSocket constructor and remembers the socket the client opened
 *   last, so a frame can be written on it;
 * - {@link FrameLink} sends a frame once the client is `open` (authenticated, caught up) and
 *   resolves with the service's answer event (matched by `client_ref`, or by event name for
 *   frames answered without one), rejecting with the `error` frame that carries the same
 *   `client_ref`. Service events the client does not know arrive as its `event` events.
 */
import type { RealtimeClient } from './client.js';
import { RealtimeError, type WebSocketLike, type WebSocketLikeConstructor } from './types.js';

/** A WebSocket constructor that remembers the socket it made last. */
export interface FrameTap {
  /** Pass this to the RealtimeClient as `WebSocket`. */
  WebSocket: WebSocketLikeConstructor;
  /** Write `{event, data}` on the current socket; false when it is not open. */
  sendFrame(event: string, data: unknown): boolean;
}

/** Wrap `WS` (see the file comment). */
export function frameTap(WS: WebSocketLikeConstructor): FrameTap {
  let current: WebSocketLike | undefined;
  const Tapped = function (this: unknown, url: string): WebSocketLike {
    const ws = new WS(url);
    current = ws;
    return ws;
  } as unknown as WebSocketLikeConstructor;
  return {
    WebSocket: Tapped,
    sendFrame(event, data) {
      const ws = current;
      if (!ws || ws.readyState !== 1) return false;
      try {
        ws.send(JSON.stringify({ event, data }));
        return true;
      } catch {
        return false;
      }
    },
  };
}

/** Options of {@link FrameLink.request}. */
export interface FrameRequestOptions {
  /** Give up after this many ms (default 15 000). */
  timeoutMs?: number;
  /** Match the answer by event name only (frames answered without `client_ref`, e.g. `client_key_register`). */
  noClientRef?: boolean;
  /** Send even when the client is not `open` yet (only authenticated): used for registration. */
  beforeOpen?: boolean;
}

const randomRef = () => globalThis.crypto.randomUUID();
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Request / answer over raw frames of a realtime client (see the file comment). */
export class FrameLink {
  constructor(
    private readonly realtime: RealtimeClient,
    private readonly tap: FrameTap,
  ) {}

  /** Resolves when the realtime client is `open` (rejects after `timeoutMs`). */
  whenOpen(timeoutMs = 15_000): Promise<void> {
    if (this.realtime.state === 'open') return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        off();
        reject(new RealtimeError('closed', `the realtime connection did not open within ${timeoutMs} ms (state ${this.realtime.state})`));
      }, timeoutMs);
      const off = this.realtime.on('stateChange', (s) => {
        if (s.state === 'open') {
          clearTimeout(timer);
          off();
          resolve();
        } else if (s.state === 'revoked' || s.state === 'unauthorized' || s.state === 'closed') {
          clearTimeout(timer);
          off();
          reject(new RealtimeError(s.state, `the realtime connection ended (${s.state})`));
        }
      });
    });
  }

  /**
   * Send frame `event` with `data` (plus a fresh `client_ref` unless `noClientRef`) and resolve
   * with the data of the answer event `answer`.
   * @throws RealtimeError `server` (error frame: `status`, detail), `ack_timeout`, `closed`.
   */
  async request<T = Record<string, unknown>>(event: string, data: Record<string, unknown>, answer: string, options: FrameRequestOptions = {}): Promise<T> {
    const timeoutMs = options.timeoutMs ?? 15_000;
    if (!options.beforeOpen) await this.whenOpen(timeoutMs);
    const ref = options.noClientRef ? undefined : randomRef();
    return new Promise<T>((resolve, reject) => {
      const offs: (() => void)[] = [];
      const done = () => {
        clearTimeout(timer);
        for (const off of offs) off();
      };
      const timer = setTimeout(() => {
        done();
        reject(new RealtimeError('ack_timeout', `no ${answer} within ${timeoutMs} ms`, ref !== undefined ? { clientRef: ref } : {}));
      }, timeoutMs);
      offs.push(
        this.realtime.on('event', (e) => {
          if (e.event !== answer || !isObject(e.data)) return;
          if (ref !== undefined && e.data.client_ref !== ref) return;
          done();
          resolve(e.data as T);
        }),
        this.realtime.on('error', (err) => {
          const matches = ref !== undefined ? err.clientRef === ref : err.code === 'server' && err.clientRef === undefined;
          if (!matches) return;
          done();
          reject(err);
        }),
      );
      if (!this.tap.sendFrame(event, ref !== undefined ? { ...data, client_ref: ref } : data)) {
        done();
        reject(new RealtimeError('closed', `cannot send ${event}: the socket is not open`));
      }
    });
  }
}
