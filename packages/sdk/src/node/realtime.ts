/**
 * Node-only realtime helpers (re-exported by `@parley/sdk/node` once wired): the `ws`-backed
 * WebSocket factory for `RealtimeClient`.
 */
export { nodeWebSocket } from './ws.js';
