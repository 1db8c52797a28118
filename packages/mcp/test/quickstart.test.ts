/**
 * The MCP quick start of the README ("Agent hosts (MCP)"), its commands run as processes from the
 * repository root against a started service (PGlite), with state directories of the test's own
 * in place of `.parley/mcp`:
 * - an owner token (`npm run -s cli -- owner-token`, service address from `PORT`) and a tenant;
 * - `npm run -s agent -- hub-register` on an empty state directory registers the agent and its API
 *   key (kept sealed) and prints the MCP server's environment; repeated, it changes nothing;
 * - `npm run -s agent -- run` binds the identity at its first connection and serves the plugin
 *   (any free port: the MCP server finds it through the state directory);
 * - `parley-agent doctor` passes; for an API-key agent without a hub identity it fails with one
 *   line naming the missing hub address and its fix, and passes once `hub-register` bound the
 *   agent's device (no key made by hand);
 * - an MCP client over stdio on `npm run -s mcp` lists the tools and calls one that goes through
 *   the plugin; `npm run -s inspect` (the MCP Inspector CLI) calls a tool from the repository root;
 * - `npm run -s bridge -- …` passes its arguments, and so does the `parley-bridge` launcher.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { startApp, type TestApp } from '@parley/server/testing';
import { addr, call, ok } from './fixtures.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const API_KEY = /^svc_agent_sk_dev_[0-9a-f]{64}$/;
/** Each part starts several Node processes (npm, tsx): about 30 s on an idle machine, more on a busy one. */
const TIMEOUT_MS = 180_000;

/** Only what a shell at the repository root would pass on, plus `env`. */
const baseEnv = (env: Record<string, string>) => ({ PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env });

/** Run `command <args>` in the repository root to its end. */
function run(command: string, args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: ROOT, env: baseEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += String(d)));
    child.stderr.on('data', (d) => (stderr += String(d)));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Run `npm <args>` in the repository root to its end. */
const npm = (args: string[], env: Record<string, string>) => run('npm', args, env);

/** The `export NAME='value'` lines of `hub-register`, as a map. */
function exportsOf(stdout: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of stdout.trim().split('\n')) {
    const m = /^export ([A-Z_]+)='([^']*)'$/.exec(line);
    expect(m, `not an export line: ${line}`).not.toBeNull();
    out[m![1]!] = m![2]!;
  }
  return out;
}

describe('MCP quick start, as processes', () => {
  let t: TestApp;
  let work: string;
  let cli: Record<string, string>;
  let endpoint: string;
  let owner: string;
  const agents: ChildProcess[] = [];

  beforeAll(async () => {
    t = await startApp({ listen: true });
    work = mkdtempSync(join(tmpdir(), 'parley-quickstart-'));
    endpoint = t.baseUrl;
    // The service's address as the README derives it: PORT (no PUBLIC_URL); DATA_DIR holds the development sign-in key.
    cli = { PORT: new URL(t.baseUrl).port, DATA_DIR: t.config.dataDir };
    const token = await npm(['run', '-s', 'cli', '--', 'owner-token', '--sub', 'alice@example.com'], cli);
    expect(token.code, token.stderr).toBe(0);
    owner = token.stdout.trim();
    const tenant = await fetch(`${endpoint}/api/v1/tenants`, { method: 'POST', headers: { authorization: `Bearer ${owner}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Acme' }) });
    expect(tenant.status).toBe(201);
  }, TIMEOUT_MS);

  afterAll(async () => {
    // Each agent runs in a process group of its own (npm, sh, tsx, node): stop the whole group.
    await Promise.all(
      agents.map(
        (a) =>
          new Promise<void>((resolve) => {
            if (a.exitCode !== null || a.signalCode !== null) return resolve();
            a.once('close', () => resolve());
            process.kill(-a.pid!, 'SIGTERM');
          }),
      ),
    );
    await t?.close();
    rmSync(work, { recursive: true, force: true });
  }, TIMEOUT_MS);

  /** `npm run -s agent -- run …` in the background, its output in `<name>.log`; resolves once its plugin listens. */
  async function runAgent(name: string, stateDir: string, keyFile: string, extra: string[] = []): Promise<void> {
    const log = join(work, `${name}.log`);
    const fd = openSync(log, 'w');
    agents.push(spawn('npm', ['run', '-s', 'agent', '--', 'run', '--state-dir', stateDir, '--plugin-port', '0', ...extra], { cwd: ROOT, env: baseEnv({ PARLEY_KEY_FILE: keyFile }), stdio: ['ignore', fd, fd], detached: true }));
    closeSync(fd);
    // The README's wait: the plugin notes its URL in <state dir>/plugin.json once it listens.
    const waited = await npm(['run', '-s', 'cli', '--', 'wait-for', '--file', join(stateDir, 'plugin.json'), '--line', '{"url"', '--timeout', '30'], cli);
    expect(waited.code, `${waited.stderr}\n${readFileSync(log, 'utf8')}`).toBe(0);
  }

  const doctor = (stateDir: string, keyFile: string, env: Record<string, string> = {}) => npm(['run', '-s', 'agent', '--', 'doctor', '--state-dir', stateDir], { PARLEY_KEY_FILE: keyFile, ...env });

  // Three independent parts on one service, side by side: each is a chain of processes.
  it.concurrent('registers the agent without hand-made keys, runs its plugin, passes doctor and serves MCP tools', async () => {
    const address = addr('qs');
    const stateDir = join(work, 'mcp');
    const keyFile = join(work, 'mcp.key');
    const register = () =>
      npm(['run', '-s', 'agent', '--', 'hub-register', '--hub-address', address, '--display-name', 'Quick start agent', '--owner-token', owner, '--server', endpoint, '--state-dir', stateDir], { PARLEY_KEY_FILE: keyFile });
    const first = await register();
    expect(first.code, first.stderr).toBe(0);
    const env = exportsOf(first.stdout);
    expect(env).toMatchObject({ PARLEY_ENDPOINT: endpoint, PARLEY_AGENT_ID: `did:hub:${address}`, PARLEY_STATE_DIR: stateDir });
    expect(env.PARLEY_API_KEY).toMatch(API_KEY);
    // Kept sealed at rest: no file of the state directory holds the key in clear.
    for (const f of readdirSync(stateDir)) expect(readFileSync(join(stateDir, f), 'utf8')).not.toContain(env.PARLEY_API_KEY);
    // Pasting the block again changes nothing and prints the same environment.
    const again = await register();
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain(`did:hub:${address} is already registered`);
    expect(exportsOf(again.stdout)).toEqual(env);

    await runAgent('mcp', stateDir, keyFile);
    const checked = await doctor(stateDir, keyFile, { PARLEY_AGENT_ID: env.PARLEY_AGENT_ID! });
    expect(checked.code, checked.stdout).toBe(0);
    expect(checked.stdout).toContain(`ok    hub identity did:hub:${address} registered, its owner key is this agent's identity key`);

    // An MCP client over stdio on `npm run -s mcp` with that environment and nothing else: the
    // plugin (on a port of its own choosing) is found through PARLEY_STATE_DIR.
    const client = new Client({ name: 'quickstart-test', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: 'npm', args: ['run', '-s', 'mcp'], cwd: ROOT, env: baseEnv(env), stderr: 'pipe' }));
    try {
      const { tools } = await client.listTools();
      expect(tools.map((x) => x.name)).toEqual(expect.arrayContaining(['svc_get_agent_info', 'svc_poll_messages', 'svc_register_agent']));
      expect(ok(await call(client, 'svc_get_agent_info', { hubName: address }))).toMatchObject({ hub_name: address, did: `did:hub:${address}`, display_name: 'Quick start agent' });
      expect(ok(await call(client, 'svc_poll_messages'))).toMatchObject({ messages: [], count: 0 });
    } finally {
      await client.close();
    }
  }, TIMEOUT_MS);

  it.concurrent('doctor fails on the missing hub address, and passes once hub-register bound the running agent', async () => {
    const stateDir = join(work, 'key-agent');
    const keyFile = join(work, 'key-agent.key');
    const created = await fetch(`${endpoint}/api/v1/api-keys`, { method: 'POST', headers: { authorization: `Bearer ${owner}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'key agent' }) });
    expect(created.status).toBe(201);
    const apiKey = ((await created.json()) as { key: string }).key;
    await runAgent('key-agent', stateDir, keyFile, ['--api-key', apiKey, '--server', endpoint]);

    const before = await doctor(stateDir, keyFile);
    expect(before.code).toBe(1);
    expect(before.stdout.split('\n').filter((l) => l.startsWith('FAIL'))).toEqual([
      `FAIL  no hub address for this agent: the MCP tool server needs PARLEY_AGENT_ID=did:hub:<address> — fix: register it: parley-agent hub-register --hub-address NAME --owner-token OWNER_JWT --state-dir ${stateDir}, then give the MCP tool server PARLEY_AGENT_ID=did:hub:<address>`,
    ]);

    const address = addr('qsb');
    const bound = await npm(['run', '-s', 'agent', '--', 'hub-register', '--hub-address', `did:hub:${address}`, '--owner-token', owner, '--state-dir', stateDir], { PARLEY_KEY_FILE: keyFile });
    expect(bound.code, bound.stderr).toBe(0);
    expect(bound.stderr).toMatch(new RegExp(`registered did:hub:${address}, bound to device [0-9a-f-]{36}`));
    const env = exportsOf(bound.stdout);
    expect(env).toEqual({ PARLEY_ENDPOINT: endpoint, PARLEY_AGENT_ID: `did:hub:${address}`, PARLEY_STATE_DIR: stateDir, PARLEY_API_KEY: apiKey });

    const [after, wrong, inspected] = await Promise.all([
      doctor(stateDir, keyFile),
      doctor(stateDir, keyFile, { PARLEY_AGENT_ID: 'did:hub:someone-else' }),
      // The Inspector CLI from the repository root, on `npm run -s mcp` with the printed environment.
      npm(['run', '-s', 'inspect', '--', '--method', 'tools/call', '--tool-name', 'svc_get_agent_info', '--tool-arg', `hubName=${address}`], env),
    ]);
    expect(after.code, after.stdout).toBe(0);
    expect(after.stdout).toContain(`ok    hub identity did:hub:${address} registered, its owner key is this agent's identity key`);
    expect(wrong.code).toBe(1);
    expect(wrong.stdout).toContain(`FAIL  the hub address given (did:hub:someone-else) is not the one registered for this state directory (did:hub:${address}) — fix: export PARLEY_AGENT_ID=did:hub:${address}`);
    expect(inspected.code, inspected.stderr).toBe(0);
    expect(JSON.parse(inspected.stdout).structuredContent).toMatchObject({ hub_name: address, did: `did:hub:${address}` });
  }, TIMEOUT_MS);

  it.concurrent('runs parley-bridge without npm link: npm run bridge and the bin launcher pass their arguments', async () => {
    const [help, config, launched] = await Promise.all([
      npm(['run', '-s', 'bridge', '--', '--help'], {}),
      npm(['run', '-s', 'bridge', '--', 'research-bot', '--config', '--endpoint', endpoint], {}),
      // What `npx parley-bridge` runs once `npm ci` linked it (the launcher runs the built command).
      run(process.execPath, ['packages/mcp/bin/parley-bridge.js', 'research-bot', '--config'], {}),
    ]);
    expect(help.code).toBe(0);
    expect(help.stderr).toContain('usage: parley-bridge <hub-name>');
    expect(config.code, config.stderr).toBe(0);
    expect(JSON.parse(config.stdout).mcpServers['research-bot']).toMatchObject({ command: 'parley-bridge', args: ['research-bot', '--endpoint', endpoint] });
    expect(launched.code, launched.stderr).toBe(0);
    expect(JSON.parse(launched.stdout).mcpServers['research-bot'].args).toEqual(['research-bot', '--endpoint', 'http://127.0.0.1:8080']);
  }, TIMEOUT_MS);
});
