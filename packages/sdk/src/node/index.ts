/**
 * Node.js-only parts of the SDK (`@parley/sdk/node`): things that need `node:fs` and therefore
 * cannot live in the browser-safe main entry point.
 */
export { FileSessionStore, type FileSessionStoreOptions } from './file-store.js';
export { SealedFileSessionStore, MANIFEST_FILE } from './sealed-file-store.js';
export {
  KeyFileSource,
  PassphraseSource,
  SealedStoreError,
  DEFAULT_SCRYPT,
  SEALING_KEY_BYTES,
  type SealedStoreErrorCode,
  type SealingKey,
  type SealingKeyKind,
  type SealingKeyRequest,
  type SealingKeySource,
  type ScryptParams,
} from './sealing-keys.js';
export { chooseStoreProtection, openAgentStore, openStateStore, type StateStore, type StateStoreOptions, type StoreChoice, type StoreProtection } from './state-store.js';
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
export * from './plugin-api.js';
export {
  startApiKeyAgent,
  loadApiKeyRecord,
  API_KEY_PATTERN,
  API_AGENT_KEY,
  type AgentRuntime,
  type ApiKeyAgentRecord,
  type StartApiKeyAgentOptions,
} from './runtime.js';
export {
  runAgent,
  DEFAULT_SERVER,
  type AgentMessage,
  type DecisionHandler,
  type MessageHandler,
  type Reply,
  type RunAgentOptions,
} from './run-agent.js';
export type { AgentMessageHook, AgentParts } from './message-hook.js';
export { connectOwner, type ConnectOwnerOptions, type OwnerClient } from './owner.js';
export { openChannelLayer } from './a2a-layer.js';
export { openRoomLayer } from './room-layer.js';
export { followOwnerDevices, isOwnerDeviceLinked, OWNER_DEVICE_LINKED, type FollowOwnerDevicesOptions } from './owner-devices.js';
export {
  startPlugin,
  ensurePluginToken,
  ensureTokenFile,
  writeFileAtomic,
  isLoopbackAddress,
  isLoopbackHost,
  isLoopbackUrl,
  tokenMatches,
  pluginChannel,
  pluginMessage,
  PLUGIN_INFO_FILE,
  type PluginBackend,
  type RunningPlugin,
  type StartPluginOptions,
} from './plugin.js';
export { PluginInbox, parseSince, INBOX_KEY } from './inbox.js';
export { A2A_PARLEY_ERRORS, A2aParleyError, type A2aParleyCause } from './a2a-errors.js';
export { serveA2aUpstream, refuseA2aCalls, checkA2aUpstream, type A2aUpstreamOptions } from './a2a-upstream.js';
export { createA2aProxy, traceparentFor, type A2aProxy, type A2aProxyOptions } from './a2a-proxy.js';
export { remoteAgentCard, cardGate, RemoteCardError } from './a2a-remote-card.js';
export { A2A_FRAME_PREFIX, encodeA2aFrame, decodeA2aFrame, isA2aFrame, type A2aFrame } from './a2a-tunnel.js';
export { status as agentStatus, doctor as agentDoctor, type DiagnosticsIo } from './diagnostics.js';
export * from './plugin-api.js';
export { invokedDirectly, runCommand, runIfMain } from './entry.js';
export {
  registerHubIdentity,
  readHubIdentityNote,
  hubAddressFrom,
  mcpEnvironmentLines,
  HUB_IDENTITY_FILE,
  type HubIdentityNote,
  type HubRegistration,
  type HubRegisterOptions,
} from './hub-register.js';
export { checkHubIdentity, type DoctorCheck, type HubCheckInput } from './hub-check.js';
export * from './witness/index.js';
