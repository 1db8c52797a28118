#!/usr/bin/env node
/**
 * `parley-mcp`: the Parley MCP tool server (contract §4.19; design §8.27).
 *
 *   parley-mcp [--http [PORT]] [--host 127.0.0.1] [--allowed-origin ORIGIN]… [--endpoint URL]
 *              [--agent-id did:hub:…] [--api-key KEY | --private-key HEX --device-id UUID]
 *              [--skills-dir DIR] [--plugin-url URL] [--plugin-token TOKEN] [--state-dir DIR]
 *
 * stdio by default (the host starts it as a child process); `--http` serves Streamable HTTP on
 * 127.0.0.1:PORT/mcp (default 8765) to clients sending `Authorization: Bearer <token>`: the token of
 * `PARLEY_HTTP_TOKEN`, else one generated once into `<state dir>/mcp-http-token` (mode 0600). Every setting may come from the environment (PARLEY_*) or
 * the flag of the same name; flags win. A missing or malformed setting stops it at start with one
 * line on stderr and exit status 2. Nothing but MCP goes to stdout.
 */
import { join } from 'node:path';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { ensureTokenFile, runIfMain } from '@parley/sdk/node';
import { ConfigError, flagName, parseConfig, SETTING_NAMES, type McpSettings } from './config.js';
import { DEFAULT_HTTP_PORT, MCP_HTTP_TOKEN_FILE, startHttpServer } from './http.js';
import { createMcpServer, ToolRuntime } from './server.js';

/** Usage text. */
export const USAGE = `usage: parley-mcp [--http [PORT]] [--host ADDR] [--allowed-origin ORIGIN] [--http-token TOKEN]
       [--endpoint URL] [--agent-id did:hub:NAME] [--api-key KEY | --private-key HEX --device-id UUID]
       [--skills-dir DIR] [--plugin-url URL] [--plugin-token TOKEN] [--state-dir DIR]
settings also come from PARLEY_ENDPOINT, PARLEY_AGENT_ID, PARLEY_API_KEY, PARLEY_PRIVATE_KEY,
PARLEY_DEVICE_ID, PARLEY_SKILLS_DIR, PARLEY_PLUGIN_URL, PARLEY_PLUGIN_TOKEN, PARLEY_STATE_DIR, PARLEY_HTTP_TOKEN`;

/** Parsed command line. */
export interface McpArgs {
  settings: McpSettings;
  http: number | undefined;
  host: string | undefined;
  allowedOrigins: string[];
  help: boolean;
}

/**
 * Parse `argv` (without node and script) over `env`.
 * @throws ConfigError for an unknown flag or a flag without its value.
 */
export function parseArgs(argv: string[], env: Record<string, string | undefined>): McpArgs {
  const settings: McpSettings = {};
  for (const k of SETTING_NAMES) if (env[k] !== undefined) settings[k] = env[k];
  const byFlag = new Map(SETTING_NAMES.map((k) => [flagName(k), k]));
  const out: McpArgs = { settings, http: undefined, host: undefined, allowedOrigins: [], help: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const [flag, inline] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = () => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new ConfigError(`${flag} needs a value`);
      return v;
    };
    if (flag === '--help' || flag === '-h') out.help = true;
    else if (flag === '--http') {
      const next = inline ?? (/^\d+$/.test(argv[i + 1] ?? '') ? argv[++i] : undefined);
      out.http = next === undefined ? DEFAULT_HTTP_PORT : Number(next);
      if (!Number.isInteger(out.http) || out.http < 0 || out.http > 65535) throw new ConfigError(`--http port must be 0-65535, got ${next}`);
    } else if (flag === '--host') out.host = value();
    else if (flag === '--allowed-origin') out.allowedOrigins.push(value());
    else if (byFlag.has(flag)) settings[byFlag.get(flag)!] = value();
    else throw new ConfigError(`unknown option ${flag}`);
  }
  return out;
}

/** Where the command writes its own lines (stdout belongs to MCP on stdio). */
export interface McpCliIo {
  err: (line: string) => void;
}

/**
 * Run the tool server until its transport closes (stdio) or a signal arrives (HTTP).
 * @returns the exit status (2: configuration error).
 */
export async function main(argv: string[], env: Record<string, string | undefined> = process.env, io: McpCliIo = { err: (l) => console.error(l) }): Promise<number> {
  let args: McpArgs;
  let runtime: ToolRuntime;
  try {
    args = parseArgs(argv, env);
    if (args.help) {
      io.err(USAGE);
      return 0;
    }
    runtime = new ToolRuntime(parseConfig(args.settings));
  } catch (err) {
    if (err instanceof ConfigError) {
      io.err(`parley-mcp: ${err.message}`);
      return 2;
    }
    throw err;
  }
  if (args.http !== undefined) {
    const given = runtime.config.httpToken;
    const token = given ?? (await ensureTokenFile(runtime.config.stateDir, MCP_HTTP_TOKEN_FILE));
    const running = await startHttpServer(runtime, { port: args.http, token, ...(args.host ? { host: args.host } : {}), allowedOrigins: args.allowedOrigins });
    const where = given ? 'PARLEY_HTTP_TOKEN' : join(runtime.config.stateDir, MCP_HTTP_TOKEN_FILE);
    io.err(`parley-mcp: ${runtime.config.agentId} serving MCP (Streamable HTTP) at ${running.url}; clients send Authorization: Bearer <the token in ${where}>`);
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    await running.close();
  } else {
    const transport = new StdioServerTransport();
    const closed = new Promise<void>((resolve) => {
      transport.onclose = resolve;
      process.stdin.once('end', resolve);
    });
    await createMcpServer(runtime).connect(transport);
    await closed;
  }
  await runtime.close();
  return 0;
}

runIfMain(import.meta.url, 'parley-mcp', (argv) => main(argv));
