/**
 * The tool server over Streamable HTTP: the bearer token, sessions, the Host and Origin
 * checks against DNS rebinding, tools through the official SDK's HTTP client against a real Parley server, and
 * `svc_compose_team` (files under outputDir, never outside it).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startApp, type TestApp } from '@parley/server/testing';
import { parseConfig } from '../src/config.js';
import { startHttpServer, type RunningHttpServer } from '../src/http.js';
import { ToolRuntime } from '../src/server.js';
import { call, failed, httpClient, HTTP_TOKEN, keyAgent, mcpEnv, MCP_CLI, ok, TSX_ARGS, waitFor, type KeyAgent } from './fixtures.js';

const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${HTTP_TOKEN}` };

describe('Streamable HTTP', () => {
  let t: TestApp;
  let agent: KeyAgent;
  let runtime: ToolRuntime;
  let server: RunningHttpServer;
  let client: Client;
  let cwd: string;

  beforeAll(async () => {
    t = await startApp({ listen: true });
    agent = await keyAgent(t);
    cwd = mkdtempSync(join(tmpdir(), 'parley-team-'));
    runtime = new ToolRuntime(parseConfig(mcpEnv(t, agent, { PARLEY_PLUGIN_URL: 'http://127.0.0.1:9', PARLEY_PLUGIN_TOKEN: 'x' })), { cwd });
    server = await startHttpServer(runtime, { port: 0, token: HTTP_TOKEN });
    client = await httpClient(server.url);
  });
  afterAll(async () => {
    await client?.close();
    await server?.close();
    await runtime?.close();
    await t?.close();
  });

  it('binds to 127.0.0.1 and serves the 13 tools in a session', async () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect((await client.listTools()).tools).toHaveLength(13);
    const r = ok(await call(client, 'svc_discover_agents', { query: agent.address }));
    expect(r.agents.map((a: any) => a.hub_name)).toEqual([agent.address]);
    expect(failed(await call(client, 'svc_get_agent_info', { hubName: 'missing-agent-zz' }))).toMatch(/^404 /);
  });

  it('parley-mcp --http generates its bearer token once into the state directory (0600) and serves with it', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'parley-mcp-http-'));
    const child = spawn(process.execPath, [...TSX_ARGS, MCP_CLI, '--http', '0'], { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...mcpEnv(t, agent), PARLEY_STATE_DIR: stateDir }, stdio: ['ignore', 'ignore', 'pipe'] });
    try {
      let stderr = '';
      child.stderr.on('data', (d) => (stderr += String(d)));
      const url = await waitFor(async () => /at (http:\/\/127\.0\.0\.1:\d+\/mcp);/.exec(stderr)?.[1], 'the listening line');
      expect(stderr).toContain(`Authorization: Bearer <the token in ${join(stateDir, 'mcp-http-token')}>`);
      const file = join(stateDir, 'mcp-http-token');
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const token = readFileSync(file, 'utf8').trim();
      expect(token).toMatch(/^[0-9a-f]{64}$/);
      expect(stderr).not.toContain(token);
      const c = await httpClient(url, token);
      expect((await c.listTools()).tools).toHaveLength(13);
      await c.close();
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('refuses requests without the bearer token or with another one (401)', async () => {
    const { authorization: _token, ...noAuth } = MCP_HEADERS;
    const none = await fetch(server.url, { method: 'POST', headers: noAuth, body: JSON.stringify(INIT) });
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    const wrong = await fetch(server.url, { method: 'POST', headers: { ...noAuth, authorization: `Bearer ${'0'.repeat(64)}` }, body: JSON.stringify(INIT) });
    expect(wrong.status).toBe(401);
    await expect(httpClient(server.url, 'f'.repeat(64))).rejects.toThrow();
  });

  it('refuses a foreign Origin and a foreign Host (DNS rebinding), and requests without a session', async () => {
    const evil = await fetch(server.url, { method: 'POST', headers: { ...MCP_HEADERS, origin: 'http://evil.example' }, body: JSON.stringify(INIT) });
    expect(evil.status).toBe(403);
    expect((await evil.json()).error.message).toMatch(/Origin/);
    const port = new URL(server.url).port;
    const own = await fetch(server.url, { method: 'POST', headers: { ...MCP_HEADERS, origin: `http://localhost:${port}` }, body: JSON.stringify(INIT) });
    expect(own.status).toBe(200);
    expect(own.headers.get('mcp-session-id')).toMatch(/^[0-9a-f-]{36}$/);
    await own.body?.cancel();

    const rebound = await new Promise<number>((resolve, reject) => {
      import('node:http').then(({ request }) => {
        const req = request(server.url, { method: 'POST', headers: { ...MCP_HEADERS, host: `attacker.example:${port}` } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end(JSON.stringify(INIT));
      }, reject);
    });
    expect(rebound).toBe(403);

    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
    expect((await fetch(server.url, { method: 'POST', headers: MCP_HEADERS, body: JSON.stringify(list) })).status).toBe(400);
    expect((await fetch(server.url, { method: 'POST', headers: { ...MCP_HEADERS, 'mcp-session-id': '00000000-0000-0000-0000-000000000000' }, body: JSON.stringify(list) })).status).toBe(404);
    expect((await fetch(server.url.replace('/mcp', '/other'), { method: 'POST', headers: MCP_HEADERS, body: '{}' })).status).toBe(404);
  });

  it('ends a session on DELETE', async () => {
    const c = await httpClient(server.url);
    const transport = c.transport as unknown as { sessionId?: string; terminateSession(): Promise<void> };
    const id = transport.sessionId!;
    await transport.terminateSession();
    const after = await fetch(server.url, { method: 'POST', headers: { ...MCP_HEADERS, 'mcp-session-id': id }, body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' }) });
    expect(after.status).toBe(404);
    await c.close();
  });

  it('answers every tool over HTTP: governance and marketplace calls succeed, plugin calls say how to start the plugin', async () => {
    const skill = `skill-${Date.now().toString(36)}`;
    expect((await t.request({ method: 'POST', url: '/api/v1/grants', headers: agent.owner.auth, payload: { skill, device_id: agent.deviceId } })).status).toBe(201);
    const peer = await keyAgent(t, agent.owner);
    expect(ok(await call(client, 'svc_discover_skills', {})).listings).toEqual([]);
    expect(ok(await call(client, 'svc_check_policy', { skillName: skill })).allowed).toBe(true);
    expect(ok(await call(client, 'svc_submit_audit', { action: 'http.checked' })).type).toBe('agent.action');
    expect(ok(await call(client, 'svc_delegate_skill', { targetAgent: peer.address, skillName: skill })).invocation.status).toBe('not_sent');
    expect(ok(await call(client, 'svc_register_agent', { name: `h-${Date.now().toString(36)}` })).trust_score).toBe(0);
    expect(ok(await call(client, 'svc_connect_agent', { hubName: peer.address })).claude_command).toContain(`parley-bridge ${peer.address}`);
    expect(failed(await call(client, 'svc_subscribe', { listingId: '00000000-0000-4000-8000-000000000000' }))).toMatch(/^404 /);
    for (const [tool, args] of [
      ['svc_open_channel', { peerAgent: peer.address, waitSeconds: 0 }],
      ['svc_send_message', { text: 'hello', hubAddress: peer.address }],
      ['svc_poll_messages', {}],
    ] as const) {
      expect(failed(await call(client, tool, args))).toMatch(/local plugin/);
    }
  });

  it('svc_compose_team writes one definition per agent under outputDir', async () => {
    const r = ok(
      await call(client, 'svc_compose_team', {
        agents: [
          { name: 'researcher', description: 'Finds sources', hubName: agent.did, skills: ['research'], tools: ['Read', 'svc_delegate_skill'] },
          { name: 'writer', description: 'Writes: the "final" draft', instructions: 'Write clearly.', model: 'sonnet' },
        ],
      }),
    );
    const dir = join(cwd, '.claude', 'agents');
    expect(r.output_dir).toBe(dir);
    expect(readdirSync(dir).sort()).toEqual(['researcher.md', 'writer.md']);
    const researcher = readFileSync(join(dir, 'researcher.md'), 'utf8');
    expect(researcher).toMatch(/^---\nname: researcher\ndescription: "Finds sources"\ntools: Read, svc_delegate_skill\n---\n/);
    expect(researcher).toContain(agent.did);
    expect(readFileSync(join(dir, 'writer.md'), 'utf8')).toContain('description: "Writes: the \\"final\\" draft"\nmodel: "sonnet"\n---\n\nWrite clearly.');
    const custom = ok(await call(client, 'svc_compose_team', { agents: [{ name: 'qa', description: 'Checks' }], outputDir: 'team/agents' }));
    expect(custom.files).toEqual([join(cwd, 'team', 'agents', 'qa.md')]);
  });

  it('svc_compose_team refuses paths that escape outputDir or the working directory, writing nothing', async () => {
    // A tool name cannot smuggle front matter keys in (a carriage return is a YAML line break).
    expect(failed(await call(client, 'svc_compose_team', { agents: [{ name: 'sneaky', description: 'x', tools: ['Read\rpermissionMode: bypassPermissions'] }] }))).toMatch(/invalid arguments.*tools/);
    expect(existsSync(join(cwd, '.claude', 'agents', 'sneaky.md'))).toBe(false);
    for (const name of ['../escape', 'a/b', '..', '.hidden', 'UPPER']) {
      expect(failed(await call(client, 'svc_compose_team', { agents: [{ name, description: 'x' }], outputDir: 'safe' }))).toMatch(/refused/);
    }
    expect(failed(await call(client, 'svc_compose_team', { agents: [{ name: 'ok', description: 'x' }], outputDir: '../outside' }))).toMatch(/outside the working directory/);
    expect(failed(await call(client, 'svc_compose_team', { agents: [{ name: 'ok', description: 'x' }], outputDir: '/tmp' }))).toMatch(/outside the working directory/);
    // Refused as a whole: the valid first agent is not written either.
    expect(failed(await call(client, 'svc_compose_team', { agents: [{ name: 'good', description: 'x' }, { name: '../bad', description: 'x' }], outputDir: 'mixed' }))).toMatch(/refused/);
    expect(existsSync(join(cwd, 'mixed'))).toBe(false);
    expect(existsSync(join(cwd, 'safe'))).toBe(false);
    // A symbolic link inside the working directory that leads out is refused too.
    const outside = mkdtempSync(join(tmpdir(), 'parley-outside-'));
    mkdirSync(join(cwd, 'links'));
    symlinkSync(outside, join(cwd, 'links', 'out'));
    expect(failed(await call(client, 'svc_compose_team', { agents: [{ name: 'ok', description: 'x' }], outputDir: 'links/out/agents' }))).toMatch(/symbolic link/);
    expect(readdirSync(outside)).toEqual([]);
  });
});
