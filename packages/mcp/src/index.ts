/**
 * @parley/mcp — the Parley MCP tool server (contract §4.19; design §8.27-§8.29) and the bridge.
 */
export { parseConfig, ConfigError, type McpConfig, type McpSettings, SETTING_NAMES, DEFAULT_ENDPOINT } from './config.js';
export { ToolRuntime, createMcpServer, SERVER_INFO } from './server.js';
export { startHttpServer, DEFAULT_HTTP_PORT, MCP_PATH, type HttpOptions, type RunningHttpServer } from './http.js';
export { TOOLS } from './tools/index.js';
export { ToolError } from './errors.js';
export { createBridge, type BridgeOptions } from './bridge.js';
export { bridgeHostConfig, claudeCommand, type HostConfig } from './host-config.js';
export { encodeInvocation, parseResult, type SkillInvocation, type SkillResult } from './invocation.js';
