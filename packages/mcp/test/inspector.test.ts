/**
 * The MCP Inspector CLI (`@modelcontextprotocol/inspector-cli`, a client independent of our
 * tests' own) against the `parley-mcp` command over stdio: it lists the 13 tools and calls two.
 */
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '@parley/server/testing';
import { keyAgent, mcpEnv, MCP_CLI, TSX_ARGS, type KeyAgent } from './fixtures.js';

const run = promisify(execFile);
// inspector-cli 1.0.3 finds its own package.json relative to the working directory: run it from its build directory.
const INSPECTOR = join(dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/inspector-cli/package.json')), 'build', 'index.js');

describe('MCP Inspector CLI', () => {
  let t: TestApp;
  let agent: KeyAgent;
  beforeAll(async () => {
    t = await startApp({ listen: true });
    agent = await keyAgent(t);
  });
  afterAll(() => t?.close());

  const inspect = async (...method: string[]) => {
    const { stdout } = await run(process.execPath, [INSPECTOR, process.execPath, ...method, '--', ...TSX_ARGS, MCP_CLI], { env: { ...process.env, ...mcpEnv(t, agent) }, timeout: 60_000, cwd: dirname(INSPECTOR) });
    return JSON.parse(stdout);
  };

  it('lists the 13 tools and calls svc_discover_agents and svc_connect_agent', async () => {
    const [list, discovered, connect] = await Promise.all([
      inspect('--method', 'tools/list'),
      inspect('--method', 'tools/call', '--tool-name', 'svc_discover_agents', '--tool-arg', `query=${agent.address}`),
      inspect('--method', 'tools/call', '--tool-name', 'svc_connect_agent', '--tool-arg', `hubName=${agent.address}`),
    ]);
    expect(list.tools).toHaveLength(13);
    expect(list.tools.every((x: { name: string }) => x.name.startsWith('svc_'))).toBe(true);
    expect(discovered.isError).toBeFalsy();
    expect(discovered.structuredContent.agents[0]).toMatchObject({ hub_name: agent.address, did: agent.did });
    expect(connect.structuredContent.mcp_config.mcpServers[agent.address].command).toBe('parley-bridge');
  });
});
