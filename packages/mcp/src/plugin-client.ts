/**
 * The tool server's client of the local plugin (`@parley/sdk/node` plugin-api.ts): the
 * plugin (`parley-agent run`) holds the agent's keys and end-to-end sessions, so the messaging
 * tools hand it plaintext over loopback and it sends ciphertext only. The bearer token is
 * `PARLEY_PLUGIN_TOKEN`, else read from `<PARLEY_STATE_DIR>/plugin-token` at each call (the plugin
 * writes it when it first starts, possibly after this server started). The URL is
 * `PARLEY_PLUGIN_URL`, else the one the running plugin notes in `<PARLEY_STATE_DIR>/plugin.json`
 * (a loopback URL only), else {@link DEFAULT_MCP_PLUGIN_URL}, also found at each call.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isLoopbackUrl, PLUGIN_INFO_FILE, PLUGIN_TOKEN_FILE, type OpenChannelBody, type PluginChannel, type PluginMessagePage, type PluginSendResult, type PollQuery, type SendMessageBody } from '@parley/sdk/node';
import { DEFAULT_MCP_PLUGIN_URL, type McpConfig } from './config.js';
import { ToolError } from './errors.js';

/** How long a plugin call may take (ms): longer than the longest `wait_ms` (120 s) of opening a channel. */
export const PLUGIN_TIMEOUT_MS = 130_000;

/** The settings the plugin client needs. */
export type PluginSettings = Pick<McpConfig, 'pluginUrl' | 'pluginToken' | 'stateDir' | 'endpoint'> & { credentials?: McpConfig['credentials'] };

/**
 * The plugin's base URL: `pluginUrl` when given, else the `url` of `<stateDir>/plugin.json` (what
 * the running plugin notes; ignored unless loopback), else {@link DEFAULT_MCP_PLUGIN_URL}.
 */
export async function locatePlugin(config: Pick<PluginSettings, 'pluginUrl' | 'stateDir'>): Promise<string> {
  if (config.pluginUrl) return config.pluginUrl;
  try {
    const info = JSON.parse(await readFile(join(config.stateDir, PLUGIN_INFO_FILE), 'utf8')) as { url?: unknown };
    if (typeof info.url === 'string' && isLoopbackUrl(info.url)) return info.url.replace(/\/+$/, '');
  } catch {
    /* not running, or never started here: the default */
  }
  return DEFAULT_MCP_PLUGIN_URL;
}

/** How to start the plugin, for the answers of tools that need it. */
export function startPluginHint(config: PluginSettings): string {
  const cred = config.credentials?.kind === 'device' ? '' : ' --api-key $PARLEY_API_KEY';
  const port = new URL(config.pluginUrl ?? DEFAULT_MCP_PLUGIN_URL).port;
  return `start it with \`parley-agent run${cred} --server ${config.endpoint} --state-dir ${config.stateDir} --plugin-port ${port} --key-file KEYFILE\` (or with PARLEY_PASSPHRASE set; from the repository: \`npm run agent -- run …\`), then retry`;
}

/** Calls of the plugin's `/v1` API; every failure is a {@link ToolError} that says what to do. */
export class PluginClient {
  constructor(private readonly config: PluginSettings) {}

  private async token(): Promise<string> {
    if (this.config.pluginToken) return this.config.pluginToken;
    const file = join(this.config.stateDir, PLUGIN_TOKEN_FILE);
    try {
      return (await readFile(file, 'utf8')).trim();
    } catch {
      throw new ToolError(`the local plugin's token was not found at ${file}: the plugin has not run with this state directory; ${startPluginHint(this.config)}`);
    }
  }

  private async request<T>(method: 'GET' | 'POST', path: string, body?: unknown, query?: Record<string, string | number | undefined>): Promise<T> {
    const token = await this.token();
    const base = await locatePlugin(this.config);
    const url = new URL(`${base}/v1${path}`);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(PLUGIN_TIMEOUT_MS),
      });
    } catch (err) {
      if ((err as Error).name === 'TimeoutError') {
        throw new ToolError(`the local plugin at ${base} did not answer ${method} /v1${path} within ${PLUGIN_TIMEOUT_MS / 1000} s; a message may have been sent anyway: check with svc_poll_messages before retrying`);
      }
      throw new ToolError(`the local plugin is not running at ${base}; ${startPluginHint(this.config)}`);
    }
    const text = await res.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    if (!res.ok) {
      const detail = (json as { detail?: unknown } | undefined)?.detail;
      const why = typeof detail === 'string' ? detail : text.slice(0, 200) || res.statusText;
      if (res.status === 401) throw new ToolError(`the local plugin refused the token (${why}); set PARLEY_PLUGIN_TOKEN or PARLEY_STATE_DIR to the plugin's state directory`, 401);
      throw new ToolError(`${res.status} ${why}`, res.status);
    }
    return json as T;
  }

  openChannel(body: OpenChannelBody): Promise<PluginChannel> {
    return this.request('POST', '/channels', body);
  }

  listChannels(): Promise<{ channels: PluginChannel[] }> {
    return this.request('GET', '/channels');
  }

  send(body: SendMessageBody): Promise<PluginSendResult> {
    return this.request('POST', '/messages', body);
  }

  poll(query: PollQuery): Promise<PluginMessagePage> {
    return this.request('GET', '/messages', undefined, query as Record<string, string | number | undefined>);
  }
}
