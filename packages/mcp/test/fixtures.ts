/**
 * Test fixtures of the MCP tool server: a real Parley server (PGlite), API-key agents with a bound
 * hub identity (key material registered over the socket, contract §5 rule 4), and MCP clients of the
 * official SDK over stdio (the `parley-mcp` command as a child process) and Streamable HTTP.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { eq } from 'drizzle-orm';
import { expect } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { KeyFileSource, startApiKeyAgent, startPlugin, type AgentRuntime, type RunningPlugin } from '@parley/sdk/node';
import { schema, newOwner, type Owner, keyAgent as serverKeyAgent, type KeyAgent as ServerKeyAgent, hubOwnerKey, WsPool, type TestApp } from '@parley/server/testing';
const { hubIdentities } = schema;

/** The `parley-mcp` entry point (TypeScript source, run with tsx). */
export const MCP_CLI = fileURLToPath(new URL('../src/cli.ts', import.meta.url));
/** The `parley-bridge` entry point. */
export const BRIDGE_CLI = fileURLToPath(new URL('../src/bridge-cli.ts', import.meta.url));
/** Node arguments that run a TypeScript entry point of the workspace. */
export const TSX_ARGS = ['--conditions=parley-source', '--import', 'tsx'];

/** An API-key agent: its owner, key, bound device and hub address. */
export type KeyAgent = Pick<ServerKeyAgent, 'owner' | 'apiKey' | 'deviceId' | 'address' | 'did'>;

let seq = 0;
/** A unique hub address. */
export const addr = (prefix = 'mcp') => `${prefix}-${Date.now().toString(36)}-${++seq}-${randomBytes(2).toString('hex')}`;

/** Set an identity's tier and score directly (superuser; the trust engine is tested elsewhere). */
export async function setTier(t: TestApp, address: string, trustTier: string, trustScore: number | null): Promise<void> {
  await t.app.parley.database.db.update(hubIdentities).set({ trustTier, trustScore }).where(eq(hubIdentities.hubAddress, address));
}

/**
 * A new API key of `owner` (default: a new tenant) whose key material is registered over the
 * socket (closed afterwards), with a hub identity bound to its device (tier and score set directly).
 */
export async function keyAgent(t: TestApp, owner?: Owner, tier = 'certified', score: number | null = 0.9): Promise<KeyAgent> {
  const pool = new WsPool();
  try {
    return await serverKeyAgent(t, pool, owner ?? (await newOwner(t, 'MCP Co')), { tier, score, prefix: 'mcp', capabilities: ['research'] });
  } finally {
    pool.closeAll();
  }
}

/** The environment of a tool server acting as `agent` against `t`. */
export function mcpEnv(t: TestApp, agent: KeyAgent, extra: Record<string, string> = {}): Record<string, string> {
  return { PARLEY_ENDPOINT: t.baseUrl, PARLEY_AGENT_ID: agent.did, PARLEY_API_KEY: agent.apiKey, ...extra };
}

/** An MCP client of the official SDK connected over stdio to a `parley-mcp` child process. */
export async function stdioClient(env: Record<string, string>, cwd?: string): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...TSX_ARGS, MCP_CLI],
    env: { ...getDefaultEnvironment(), ...env },
    stderr: 'pipe',
    ...(cwd ? { cwd } : {}),
  });
  const client = new Client({ name: 'parley-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/** A bearer token for tests of the HTTP mode. */
export const HTTP_TOKEN = randomBytes(32).toString('hex');

/** An MCP client over Streamable HTTP sending `Authorization: Bearer <token>`. */
export async function httpClient(url: string, token = HTTP_TOKEN): Promise<Client> {
  const client = new Client({ name: 'parley-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}

/** Call a tool; answers its result (assumed CallToolResult). */
export async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/** The text of a tool result. */
export function textOf(r: CallToolResult): string {
  return r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

/** Assert success and answer the structured content. */
export function ok<T = Record<string, any>>(r: CallToolResult): T {
  expect(r.isError, textOf(r)).toBeFalsy();
  return r.structuredContent as T;
}

/** Assert a tool error and answer its text. */
export function failed(r: CallToolResult): string {
  expect(r.isError, JSON.stringify(r.structuredContent)).toBe(true);
  return textOf(r);
}

/** An API-key agent running the SDK's agent runtime and its local plugin (in this process). */
export interface PluginAgent extends KeyAgent {
  /** The bound hub identity's id. */
  identityId: string;
  stateDir: string;
  plugin: RunningPlugin;
  runtime: AgentRuntime;
  /** The environment of a tool server acting as this agent through its plugin. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

/**
 * Start an API-key agent (`startApiKeyAgent`: key material registered on first connect) and its
 * plugin on a free loopback port, then bind a certified hub identity to its device.
 */
export async function pluginAgent(t: TestApp, owner: Owner, score = 0.9, capabilities = ['research']): Promise<PluginAgent> {
  const created = await t.request({ method: 'POST', url: '/api/v1/api-keys', headers: owner.auth, payload: { name: 'plugin agent' } });
  expect(created.status).toBe(201);
  const apiKey = created.body.key as string;
  const stateDir = mkdtempSync(join(tmpdir(), 'parley-mcp-agent-'));
  const runtime = await startApiKeyAgent({ apiKey, server: t.baseUrl, stateDir, protection: new KeyFileSource(`${stateDir}.key`), fsync: false, log: () => undefined });
  await runtime.ready;
  const plugin = await startPlugin({ backend: runtime, stateDir, port: 0, fsync: false });
  const address = addr('plug');
  const reg = await t.request({ method: 'POST', url: '/api/v1/hub/register', headers: owner.auth, payload: { hub_address: address, display_name: `Agent ${address}`, device_id: runtime.deviceId, public_key: hubOwnerKey(), capabilities } });
  expect(reg.status, JSON.stringify(reg.body)).toBe(201);
  await setTier(t, address, 'certified', score);
  const agent: KeyAgent = { owner, apiKey, deviceId: runtime.deviceId, address, did: `did:hub:${address}` };
  return {
    ...agent,
    identityId: reg.body.id as string,
    stateDir,
    plugin,
    runtime,
    env: mcpEnv(t, agent, { PARLEY_PLUGIN_URL: plugin.url, PARLEY_STATE_DIR: stateDir }),
    async stop() {
      await plugin.close().catch(() => undefined);
      await runtime.stop().catch(() => undefined);
      rmSync(stateDir, { recursive: true, force: true });
      rmSync(`${stateDir}.key`, { force: true });
    },
  };
}

/** Poll `get` until it answers something (no fixed sleeps: 50 ms steps, `timeoutMs` at most). */
export async function waitFor<T>(get: () => Promise<T | undefined | false>, what: string, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await get();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Call the plugin API of `agent` directly (as the tool server does). */
export async function pluginCall<T = any>(agent: PluginAgent, method: 'GET' | 'POST', route: string, body?: unknown): Promise<T> {
  const res = await fetch(`${agent.plugin.url}/v1${route}`, {
    method,
    headers: { authorization: `Bearer ${agent.plugin.token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const json = (await res.json()) as T;
  if (!res.ok) throw new Error(`plugin ${method} ${route}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** Run a TypeScript entry point (`MCP_CLI`, `BRIDGE_CLI`) to its end with only PATH/HOME and `env`; stdin closed. */
export function runEntry(entry: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...TSX_ARGS, entry, ...args], { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += String(d)));
    child.stderr.on('data', (d) => (stderr += String(d)));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
