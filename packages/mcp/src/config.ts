/**
 * Configuration of the MCP tool server (contract §4.19; design §8.27): from the environment, with the
 * same names as flags (`PARLEY_AGENT_ID` = `--agent-id`). Parsed once at start; a missing or
 * malformed setting stops the server with one clear line ({@link ConfigError}), never at the
 * first tool call.
 *
 * | variable | flag | meaning |
 * |---|---|---|
 * | `PARLEY_ENDPOINT` | `--endpoint` | service base URL (default `http://127.0.0.1:8080`) |
 * | `PARLEY_AGENT_ID` | `--agent-id` | `did:hub:<address>` (required) |
 * | `PARLEY_API_KEY` | `--api-key` | `svc_agent_sk_{env}_{64 hex}` (required unless a private key is given) |
 * | `PARLEY_PRIVATE_KEY` | `--private-key` | the agent device's Ed25519 private key, 64 hex (with `PARLEY_DEVICE_ID`) |
 * | `PARLEY_DEVICE_ID` | `--device-id` | the enrolled agent device (UUID), with a private key |
 * | `PARLEY_SKILLS_DIR` | `--skills-dir` | skills this agent offers (one `.json` or `.md` file each) |
 * | `PARLEY_PLUGIN_URL` | `--plugin-url` | the local plugin (default: the URL the plugin of the state directory notes in its `plugin.json`, else `http://127.0.0.1:18791`) |
 * | `PARLEY_PLUGIN_TOKEN` | `--plugin-token` | the plugin's token (default: read from `<state dir>/plugin-token`) |
 * | `PARLEY_STATE_DIR` | `--state-dir` | the state directory of the agent whose plugin the tool server uses (default `.parley/mcp`) |
 * | `PARLEY_HTTP_TOKEN` | `--http-token` | with `--http`: the bearer token clients send (default: generated once into `<state dir>/mcp-http-token`) |
 */
import { statSync } from 'node:fs';
import { isLoopbackUrl } from '@parley/sdk/node';
import { hubAddress } from './hub-names.js';

/** The default service base URL (design §3, §8.27). */
export const DEFAULT_ENDPOINT = 'http://127.0.0.1:8080';
/**
 * The default state directory of the tool server's agent (relative to the working directory: the
 * repository root for `npm run mcp`): its own, apart from the service's `DATA_DIR` and from
 * `parley-agent`'s default `./agent-state`.
 */
export const DEFAULT_STATE_DIR = '.parley/mcp';
/** The default plugin port of the tool server's agent (`parley-agent run --plugin-port 18791`; its own default is 18790). */
export const DEFAULT_MCP_PLUGIN_PORT = 18791;
/** The plugin URL used when none is given and the state directory names none. */
export const DEFAULT_MCP_PLUGIN_URL = `http://127.0.0.1:${DEFAULT_MCP_PLUGIN_PORT}`;
/** contract §5 rule 4: the API key format. */
export const API_KEY_PATTERN = /^svc_agent_sk_(prod|staging|dev)_[0-9a-f]{64}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** How the tool server authenticates to the service. */
export type McpCredentials = { kind: 'api_key'; apiKey: string } | { kind: 'device'; deviceId: string; privateKeyHex: string };

/** The parsed configuration. */
export interface McpConfig {
  /** Service base URL without a trailing slash. */
  endpoint: string;
  /** `did:hub:<address>`. */
  agentId: string;
  /** The address part of {@link agentId}. */
  hubAddress: string;
  credentials: McpCredentials;
  skillsDir: string | undefined;
  /** Plugin base URL without a trailing slash, when given; else found at each call (plugin-client.ts). */
  pluginUrl: string | undefined;
  pluginToken: string | undefined;
  stateDir: string;
  /** Bearer token of the Streamable HTTP mode, when given (else generated, see the CLI). */
  httpToken: string | undefined;
}

/** A setting is missing or malformed; `message` is one line naming it and what to do. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** The settings by their environment name; flags are mapped onto these names by the CLI. */
export type McpSettings = Partial<Record<(typeof SETTING_NAMES)[number], string>>;

/** Environment names of the settings, in the table's order. */
export const SETTING_NAMES = [
  'PARLEY_ENDPOINT',
  'PARLEY_AGENT_ID',
  'PARLEY_API_KEY',
  'PARLEY_PRIVATE_KEY',
  'PARLEY_DEVICE_ID',
  'PARLEY_SKILLS_DIR',
  'PARLEY_PLUGIN_URL',
  'PARLEY_PLUGIN_TOKEN',
  'PARLEY_STATE_DIR',
  'PARLEY_HTTP_TOKEN',
] as const;

/** `PARLEY_AGENT_ID` → `--agent-id`. */
export function flagName(setting: (typeof SETTING_NAMES)[number]): string {
  return `--${setting.slice('PARLEY_'.length).toLowerCase().replace(/_/g, '-')}`;
}

function httpUrl(name: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`${name} must be an http(s) URL, got "${value}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(`${name} must be an http(s) URL, got "${value}"`);
  return value.replace(/\/+$/, '');
}

/**
 * `PARLEY_PLUGIN_URL` checked: the plugin's token, plaintext messages and SPTs go there, so only a
 * loopback address (127.0.0.0/8, ::1, localhost) over http is accepted. Undefined stays undefined.
 * @throws ConfigError otherwise.
 */
export function pluginUrl(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const url = httpUrl('PARLEY_PLUGIN_URL', value);
  if (!isLoopbackUrl(url)) throw new ConfigError(`PARLEY_PLUGIN_URL must be a loopback address (127.0.0.1, ::1 or localhost): the plugin's token and plaintext go there; got "${url}"`);
  return url;
}

/** `PARLEY_HTTP_TOKEN` checked: at least 32 visible ASCII characters without spaces. @throws ConfigError */
function httpToken(value: string | undefined): string | undefined {
  if (value !== undefined && !/^[\x21-\x7e]{32,512}$/.test(value)) throw new ConfigError('PARLEY_HTTP_TOKEN must be 32-512 visible ASCII characters without spaces (e.g. openssl rand -hex 32)');
  return value;
}

/**
 * Parse and check the settings (an environment, or flags mapped to environment names; empty
 * values count as absent).
 * @throws ConfigError with one line naming the setting (e.g. `PARLEY_AGENT_ID is required: …`).
 */
export function parseConfig(settings: McpSettings): McpConfig {
  const get = (k: (typeof SETTING_NAMES)[number]) => {
    const v = settings[k]?.trim();
    return v ? v : undefined;
  };
  const endpoint = httpUrl('PARLEY_ENDPOINT', get('PARLEY_ENDPOINT') ?? DEFAULT_ENDPOINT);
  const agentId = get('PARLEY_AGENT_ID');
  if (!agentId) throw new ConfigError('PARLEY_AGENT_ID is required: the agent\'s hub DID, e.g. did:hub:my-agent (flag --agent-id)');
  const address = agentId.toLowerCase().startsWith('did:hub:') ? hubAddress(agentId) : undefined;
  if (!address) throw new ConfigError(`PARLEY_AGENT_ID must be did:hub:<address> (3-32 of a-z, 0-9, -), got "${agentId}"`);

  const apiKey = get('PARLEY_API_KEY');
  const privateKey = get('PARLEY_PRIVATE_KEY');
  const deviceId = get('PARLEY_DEVICE_ID');
  let credentials: McpCredentials;
  if (apiKey !== undefined) {
    if (!API_KEY_PATTERN.test(apiKey)) throw new ConfigError('PARLEY_API_KEY is malformed: expected svc_agent_sk_{prod|staging|dev}_ followed by 64 hex characters');
    credentials = { kind: 'api_key', apiKey };
  } else if (privateKey !== undefined) {
    if (!/^[0-9a-fA-F]{64}$/.test(privateKey)) throw new ConfigError('PARLEY_PRIVATE_KEY must be the Ed25519 private key (seed) in hex: 64 hex characters');
    if (!deviceId) throw new ConfigError('PARLEY_DEVICE_ID is required with PARLEY_PRIVATE_KEY: the enrolled agent device id (UUID)');
    if (!UUID.test(deviceId)) throw new ConfigError(`PARLEY_DEVICE_ID must be a UUID, got "${deviceId}"`);
    credentials = { kind: 'device', deviceId: deviceId.toLowerCase(), privateKeyHex: privateKey.toLowerCase() };
  } else {
    throw new ConfigError('PARLEY_API_KEY is required (or PARLEY_PRIVATE_KEY with PARLEY_DEVICE_ID): create one with POST /api/v1/api-keys or svc_register_agent');
  }

  const skillsDir = get('PARLEY_SKILLS_DIR');
  if (skillsDir !== undefined) {
    let isDir = false;
    try {
      isDir = statSync(skillsDir).isDirectory();
    } catch {
      /* reported below */
    }
    if (!isDir) throw new ConfigError(`PARLEY_SKILLS_DIR is not a directory: ${skillsDir}`);
  }
  return {
    endpoint,
    agentId: agentId.toLowerCase(),
    hubAddress: address,
    credentials,
    skillsDir,
    pluginUrl: pluginUrl(get('PARLEY_PLUGIN_URL')),
    pluginToken: get('PARLEY_PLUGIN_TOKEN'),
    stateDir: get('PARLEY_STATE_DIR') ?? DEFAULT_STATE_DIR,
    httpToken: httpToken(get('PARLEY_HTTP_TOKEN')),
  };
}
