/**
 * bench/mcp: tool-call latency of the MCP tool server.
 *
 * Set-up: the real app (buildApp) on a fresh PostgreSQL database, RATE_LIMITS=off,
 * LOG_LEVEL=silent, listening on 127.0.0.1. One tenant; two API-key agents x and y, each running
 * the SDK's agent runtime (`startApiKeyAgent`: key material registered over the socket) and its
 * local plugin in THIS process, each bound to a certified hub identity; x holds an SPT grant for
 * the benchmarked skill; an A2A channel x -> y approved by the owner and opened with the default
 * protocol (MLS: x claims y's KeyPackage and sends the Welcome as its key exchange). x's tool server is `parley-mcp` as a child process over stdio (tsx), driven
 * by the official SDK's MCP client, exactly as an agent host runs it.
 *
 * Per sample, in turn (`--requests` (300) samples after 30 warm-up ones, one at a time):
 *   check_policy  mcp   `tools/call svc_check_policy {skillName}`: stdio JSON-RPC, argument
 *                       check, the `svc.tool` span, `POST /api/v1/skills/check` with the API key;
 *                 rest  baseline: `POST /api/v1/skills/check {skill}` with the same API key, `fetch`
 *                       from this process (keep-alive), answer read and parsed;
 *   send_message  mcp   `tools/call svc_send_message {text, hubAddress}`: stdio, the tool server's
 *                       call to the plugin over loopback (bearer token), the plugin's MLS
 *                       encryption and state write, `POST /api/v1/a2a/channels/{id}/messages`;
 *                 rest  baseline: the same `POST /api/v1/a2a/channels/{id}/messages` with the API
 *                       key and an opaque 64-byte envelope (what the plugin sends, minus encryption).
 * Reported: p50 / p99 / mean in ms per path and the ratio mcp / rest. Spans the tool server
 * exports (`POST /telemetry/ingest`, batched every 500 ms) run in the background during the run.
 *
 * Runs only against 127.0.0.1; creates a fresh database and drops it at the end.
 *
 *   npm run bench:mcp -- [--requests 300] [--database-url postgres://postgres@127.0.0.1:5432/postgres]
 * Environment equivalents: BENCH_REQUESTS, BENCH_DATABASE_URL (or DATABASE_URL).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { pluginAgents, summary, timed, type PluginAgents } from '../plugin-agents.js';
import { assertLoopback, benchArgs, num, runMain } from '../relay/cli.js';
import { fmt, printTable, ratio } from '../relay/report.js';
import { call, machineLines, newTenant, startBenchServer } from '../relay/setup.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const MCP_CLI = path.join(ROOT, 'packages/mcp/src/cli.ts');
const SKILL = 'bench-skill';

function expectOk(r: CallToolResult, what: string): void {
  if (r.isError) throw new Error(`${what} failed: ${JSON.stringify(r.content)}`);
}

async function main(): Promise<number> {
  const arg = benchArgs(import.meta.url, ['requests']);
  const requests = num('--requests', arg('requests', 'BENCH_REQUESTS'), 300);
  const adminUrl = arg('database-url', 'BENCH_DATABASE_URL') ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  assertLoopback(adminUrl);
  const server = await startBenchServer(adminUrl);
  const stops: (() => Promise<unknown>)[] = [];
  let agents: PluginAgents | undefined;
  try {
    const { app } = server;
    const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
    const owner = await newTenant(app, 'bench-mcp-owner@example.com', 'MCP bench');
    agents = pluginAgents(server, owner.auth, 'mcp');
    const x = await agents.add('x');
    const y = await agents.add('y');
    await call(app, 'POST', '/grants', 201, owner.auth, { skill: SKILL, device_id: x.rt.deviceId });

    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--conditions=parley-source', '--import', 'tsx', MCP_CLI],
      env: { ...getDefaultEnvironment(), PARLEY_ENDPOINT: base, PARLEY_AGENT_ID: `did:hub:${x.address}`, PARLEY_API_KEY: x.key, PARLEY_PLUGIN_URL: x.plugin.url, PARLEY_STATE_DIR: x.dir },
      cwd: ROOT,
      stderr: 'inherit',
    });
    const mcp = new Client({ name: 'bench', version: '1.0.0' });
    await mcp.connect(transport);
    stops.push(() => mcp.close());
    const tool = async (name: string, args: Record<string, unknown>) => expectOk((await mcp.callTool({ name, arguments: args })) as CallToolResult, name);

    const opened = (await mcp.callTool({ name: 'svc_open_channel', arguments: { peerAgent: y.address, waitSeconds: 0 } })) as CallToolResult;
    expectOk(opened, 'svc_open_channel');
    const channelId = (opened.structuredContent as { channelId: string }).channelId;
    await call(app, 'POST', `/a2a/channels/${channelId}/approve`, 200, owner.auth);
    const open = (await mcp.callTool({ name: 'svc_open_channel', arguments: { peerAgent: y.address, waitSeconds: 30 } })) as CallToolResult;
    if ((open.structuredContent as { status: string }).status !== 'open') throw new Error(`channel not open: ${JSON.stringify(open.structuredContent)}`);

    const rest = async (route: string, body: unknown, expect: number) => {
      const res = await fetch(`${base}${route}`, { method: 'POST', headers: { 'x-api-key': x.key, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      await res.json();
      if (res.status !== expect) throw new Error(`${route}: ${res.status}`);
    };
    const envelope = { header_blob: Buffer.alloc(64, 1).toString('base64'), ciphertext: Buffer.alloc(64, 2).toString('base64') };
    const paths = {
      'check_policy mcp': () => tool('svc_check_policy', { skillName: SKILL }),
      'check_policy rest': () => rest('/api/v1/skills/check', { skill: SKILL }, 200),
      'send_message mcp': () => tool('svc_send_message', { text: 'benchmark message', hubAddress: y.address }),
      'send_message rest': () => rest(`/api/v1/a2a/channels/${channelId}/messages`, envelope, 201),
    } as const;
    const samples: Record<keyof typeof paths, number[]> = { 'check_policy mcp': [], 'check_policy rest': [], 'send_message mcp': [], 'send_message rest': [] };
    for (let i = 0; i < 30 + requests; i++) {
      for (const [name, fn] of Object.entries(paths) as [keyof typeof paths, () => Promise<void>][]) {
        const ms = await timed(fn);
        if (i >= 30) samples[name].push(ms);
      }
    }

    console.log(`\n## bench/mcp — ${requests} sequential calls per path (after 30 warm-up), one run\n`);
    for (const line of await machineLines(server.sql)) console.log(line);
    const rows: string[][] = [];
    for (const tool of ['check_policy', 'send_message'] as const) {
      const m = summary(samples[`${tool} mcp`]);
      const r = summary(samples[`${tool} rest`]);
      rows.push([`svc_${tool}`, 'mcp (stdio)', fmt(m.p50, 2), fmt(m.p99, 2), fmt(m.mean, 2), '']);
      rows.push(['', 'rest (direct)', fmt(r.p50, 2), fmt(r.p99, 2), fmt(r.mean, 2), `p50 ${ratio(m.p50, r.p50)}, p99 ${ratio(m.p99, r.p99)}`]);
    }
    console.log(printTable(['tool', 'path', 'p50 ms', 'p99 ms', 'mean ms', 'mcp / rest'], rows));
    return 0;
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    await agents?.close();
    await server.dispose();
  }
}

runMain(main);
