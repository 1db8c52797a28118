/**
 * Host configuration blocks (contract §4.19 `svc_subscribe` / `svc_connect_agent` / the bridge's
 * `--config`; design §8.29): the `mcpServers` entry an MCP host (Claude Code, Cursor, Windsurf,
 * any client reading the common `mcpServers` JSON) pastes to reach a rented agent through
 * `parley-bridge <hub> --token <spt>`, and the equivalent one-line `claude mcp add` command.
 */

/** One `mcpServers` entry (stdio). */
export interface StdioServerEntry {
  command: string;
  args: string[];
  env?: Record<string, string>;
}

/** A ready-to-paste host configuration. */
export interface HostConfig {
  mcpServers: Record<string, StdioServerEntry>;
}

/** The bridge's arguments for `hub` with an SPT (or auto-subscribing with the API key from the environment). */
export function bridgeEntry(hub: string, endpoint: string, sptToken?: string): StdioServerEntry {
  const args = [hub, '--endpoint', endpoint];
  if (sptToken) return { command: 'parley-bridge', args: [...args, '--token', sptToken] };
  return { command: 'parley-bridge', args, env: { PARLEY_API_KEY: '<your svc_agent_sk_… key: the bridge subscribes with it>' } };
}

/** `{mcpServers: {<hub>: bridge}}`. */
export function bridgeHostConfig(hub: string, endpoint: string, sptToken?: string): HostConfig {
  return { mcpServers: { [hub]: bridgeEntry(hub, endpoint, sptToken) } };
}

/** Single-quote a shell word. */
function sh(word: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The `claude mcp add` command that installs the same entry in Claude Code. */
export function claudeCommand(name: string, entry: StdioServerEntry): string {
  const env = Object.entries(entry.env ?? {}).map(([k, v]) => `-e ${k}=${sh(v)}`);
  return ['claude mcp add', sh(name), ...env, '--', sh(entry.command), ...entry.args.map(sh)].join(' ');
}
