/**
 * Node.js-only parts of the SDK (`@parley/sdk/node`): things that need `node:fs` and therefore
 * cannot live in the browser-safe main entry point.
 */
export { FileSessionStore, type FileSessionStoreOptions } from './file-store.js';
export type { SessionStore } from '../storage.js';
export * from './realtime.js';
export {
  enrollAgentDevice,
  startEchoAgent,
  loadAgentState,
  describeMessage,
  AgentStateError,
  IDENTITY_KEY,
  AGENT_KEY,
  INVITE_TOKEN,
  type AgentRecord,
  type AgentExit,
  type EchoAgent,
  type EnrollAgentDeviceOptions,
  type StartEchoAgentOptions,
} from './agent.js';
