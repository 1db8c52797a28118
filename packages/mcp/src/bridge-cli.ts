#!/usr/bin/env node
/**
 * `parley-bridge <hub-name> [--token <spt>] [--api-key <key>] [--endpoint <url>] [--config]`
 * (contract §4.19): bridge a local stdio MCP client to a rented agent, or print the host
 * configuration (`--config`). `--api-key` (or PARLEY_API_KEY) subscribes when no token is given.
 * The local plugin is found as the tool server finds it (PARLEY_PLUGIN_URL, PARLEY_PLUGIN_TOKEN,
 * PARLEY_STATE_DIR). Exit status 2 on usage errors, 1 when the bridge cannot start.
 */
import { parseArgs } from 'node:util';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { runIfMain } from '@parley/sdk/node';
import { createBridge } from './bridge.js';
import { API_KEY_PATTERN, ConfigError, DEFAULT_ENDPOINT, DEFAULT_STATE_DIR, pluginUrl } from './config.js';
import { describeToolFailure } from './errors.js';
import { bridgeHostConfig } from './host-config.js';
import { hubAddressOf } from './tools/common.js';

export const USAGE = 'usage: parley-bridge <hub-name> [--token <spt>] [--api-key <key>] [--endpoint <url>] [--config]';

/** Run the bridge; returns the exit status. `out` receives `--config` output (stdout). */
export async function main(argv: string[], env: Record<string, string | undefined> = process.env, io = { out: (s: string) => process.stdout.write(s), err: (l: string) => console.error(l) }): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { token: { type: 'string' }, 'api-key': { type: 'string' }, endpoint: { type: 'string' }, config: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h', default: false } },
    });
  } catch (err) {
    io.err(`parley-bridge: ${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.err(USAGE);
    return 0;
  }
  if (positionals.length !== 1) {
    io.err(`parley-bridge: one hub name is required\n${USAGE}`);
    return 2;
  }
  let hub: string;
  try {
    hub = hubAddressOf(positionals[0]!);
  } catch (err) {
    io.err(`parley-bridge: ${(err as Error).message}`);
    return 2;
  }
  const endpoint = (values.endpoint ?? env.PARLEY_ENDPOINT ?? DEFAULT_ENDPOINT).replace(/\/+$/, '');
  if (values.config) {
    io.out(`${JSON.stringify(bridgeHostConfig(hub, endpoint, values.token), null, 2)}\n`);
    return 0;
  }
  const apiKey = values['api-key'] ?? env.PARLEY_API_KEY;
  if (apiKey !== undefined && !API_KEY_PATTERN.test(apiKey)) {
    io.err('parley-bridge: the API key is malformed: expected svc_agent_sk_{prod|staging|dev}_ followed by 64 hex characters');
    return 2;
  }
  try {
    const bridge = await createBridge({
      hub,
      endpoint,
      ...(values.token ? { token: values.token } : {}),
      ...(apiKey ? { apiKey, credentials: { kind: 'api_key' as const, apiKey } } : {}),
      pluginUrl: pluginUrl(env.PARLEY_PLUGIN_URL || undefined),
      pluginToken: env.PARLEY_PLUGIN_TOKEN || undefined,
      stateDir: env.PARLEY_STATE_DIR || DEFAULT_STATE_DIR,
    });
    io.err(`parley-bridge: bridging to did:hub:${hub} (skills: ${bridge.skills.join(', ')})`);
    const transport = new StdioServerTransport();
    const closed = new Promise<void>((resolve) => process.stdin.once('end', resolve));
    await bridge.server.connect(transport);
    await closed;
    return 0;
  } catch (err) {
    io.err(`parley-bridge: ${describeToolFailure(err, endpoint).message}`);
    return err instanceof ConfigError ? 2 : 1;
  }
}

runIfMain(import.meta.url, 'parley-bridge', (argv) => main(argv));
