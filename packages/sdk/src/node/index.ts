/**
 * Node.js-only parts of the SDK (`@parley/sdk/node`): things that need `node:fs` and therefore
 * cannot live in the browser-safe main entry point.
 */
export { FileSessionStore, type FileSessionStoreOptions } from './file-store.js';
export type { SessionStore } from '../storage.js';
export * from './realtime.js';
