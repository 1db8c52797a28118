/**
 * Node-only: a {@link WebSocketLikeConstructor} backed by the `ws` package, for
 * `RealtimeClient` on Node versions without a global WebSocket (Node 20) or when `ws` options
 * (proxy agent, TLS settings, headers) are needed.
 */
import { WebSocket, type ClientOptions } from 'ws';
import type { WebSocketLikeConstructor } from '../realtime/types.js';

/**
 * A WebSocket constructor using the `ws` package, with optional `ws` client options applied to
 * every connection (e.g. `{ agent }` for a proxy, `{ headers }`, `{ rejectUnauthorized }`,
 * `{ maxPayload }` in bytes).
 *
 * @example
 * new RealtimeClient({ url, token, WebSocket: nodeWebSocket() });
 */
export function nodeWebSocket(options: ClientOptions = {}): WebSocketLikeConstructor {
  return class NodeWebSocket extends WebSocket {
    constructor(url: string) {
      super(url, options);
    }
  };
}
