/**
 * bench/a2a: latency of an A2A 1.0 JSON-RPC call through two Parley plugins, next to the same call
 * made straight to the agent's own A2A server, in the same run (docs/performance.md "A2A through
 * two plugins").
 *
 * Set-up: the real app (buildApp) on a fresh PostgreSQL database, RATE_LIMITS=off,
 * LOG_LEVEL=silent, listening on 127.0.0.1. One tenant; two API-key agents x and y, each running
 * the SDK's agent runtime (`startApiKeyAgent`, state sealed with a key file, fsync on) and its
 * local plugin in THIS process, each bound to a certified hub identity; y's plugin answers A2A
 * calls from an official `@a2a-js/sdk` server (express, `DefaultRequestHandler`, an echo executor)
 * on 127.0.0.1 (`startPlugin({ a2aUpstream })`). The first call through x's plugin requests the
 * A2A channel x -> y (answered "pending"); the owner approves it and both sides wait for it to be
 * open (default protocol: MLS).
 *
 * One call at a time, the official `@a2a-js/sdk` client (JSON-RPC transport, keep-alive `fetch`)
 * sends, direct and parley in turn: `--requests` (300) `SendMessage` samples per path after 30
 * warm-up ones, then `--stream-requests` (100; 0 skips) `SendStreamingMessage` samples after 10
 * (apart, because y -> x work on a stream's many frames would delay the send that follows it):
 *   send    direct  `SendMessage` to the official server; the answer is its echo message;
 *           parley  the same `SendMessage` to `{plugin x}/a2a/{y}` (client built from the card
 *                   x's plugin serves, bearer plugin token): x's plugin seals the JSON-RPC request
 *                   as a `req` frame in the channel's MLS session, saves its state and POSTs the
 *                   ciphertext to `/api/v1/a2a/channels/{id}/messages`; the service relays it over
 *                   y's socket; y decrypts, saves, POSTs the request to the official server, seals
 *                   the answer as a `res` frame and sends it back the same way; x decrypts it and
 *                   answers the client;
 *   stream  direct  `SendStreamingMessage` "stream N" (`--stream-events`, 5): a task, N working
 *                   status updates and the completed one over SSE, read to the end;
 *           parley  the same through both plugins (each SSE event is its own channel message).
 * Every answer is checked (echo text; number of stream events). Reported: p50 / p99 / mean in ms
 * per path, p50 and p99 ratios parley / direct, the ms parley adds at p50; the target (send only):
 * parley p50 at most 3x direct p50 and under 25 ms added.
 *
 * Then `--phase-samples` (100; 0 skips) further `SendMessage` calls through Parley are timed by
 * phase (not part of the figures above): the bench wraps, on the instances it runs, x's and y's
 * channel send (`sendPlaintext`), MLS seal, REST send, socket arrival, decrypted delivery and
 * state-store writes, and the upstream server notes when it got the request and answered. Printed:
 * the median time of each point since the client's call, the median step between points, and per
 * call the state writes, the service's SQL statements and this process's CPU time (bench/a2a/phases.ts).
 *
 * Runs only against 127.0.0.1; creates a fresh database and drops it at the end.
 *
 * `--fsync off` turns off the fsync of both agents' state writes (a diagnostic: agents run with it
 * on); `--cpu-profile FILE` writes a V8 CPU profile of this process over the phase samples.
 *
 *   npm run bench:a2a -- [--requests 300] [--stream-requests 100] [--stream-events 5]
 *                        [--phase-samples 100] [--fsync on|off] [--cpu-profile FILE]
 *                        [--database-url postgres://postgres@127.0.0.1:5432/postgres]
 * Environment equivalents: BENCH_REQUESTS, BENCH_STREAM_REQUESTS, BENCH_STREAM_EVENTS,
 * BENCH_PHASE_SAMPLES, BENCH_FSYNC, BENCH_CPU_PROFILE, BENCH_DATABASE_URL (or DATABASE_URL).
 */
import type { Server } from 'node:http';
import type { Client } from '@a2a-js/sdk/client';
import { A2A_PARLEY_ERRORS } from '../../packages/sdk/src/node/index.js';
import { pluginAgents, summary, timed, type PluginAgent, type PluginAgents } from '../plugin-agents.js';
import { assertLoopback, benchArgs, num, runMain } from '../relay/cli.js';
import { fmt, printTable, ratio } from '../relay/report.js';
import { call, machineLines, newTenant, startBenchServer } from '../relay/setup.js';
import { officialClient, sendChecked, sendRequest, startUpstream, streamChecked } from './official.js';
import { profilePhases } from './phases.js';

const WARMUP = 30;
const STREAM_WARMUP = 10;
const TARGET_RATIO = 3;
const TARGET_ADDED_MS = 25;

/** Request the channel x -> y through a first call (answered "pending"), approve it as the owner, wait until both sides have it open. */
async function openChannel(server: Awaited<ReturnType<typeof startBenchServer>>, ownerAuth: Record<string, string>, client: Client, x: PluginAgent, y: PluginAgent): Promise<void> {
  const refused = await client.sendMessage(sendRequest('hello')).then(
    () => undefined,
    (e: unknown) => e as { envelopeCode?: number; message?: string },
  );
  if (refused?.envelopeCode !== A2A_PARLEY_ERRORS.channel_pending) throw new Error(`the first call should be answered "channel pending", got ${JSON.stringify(refused?.message ?? 'an answer')}`);
  const channel = x.rt.channels.findByPeer(y.address);
  if (!channel) throw new Error('no channel requested');
  await call(server.app, 'POST', `/a2a/channels/${channel.channel_id}/approve`, 200, ownerAuth);
  const [xs, ys] = await Promise.all([x.rt.channels.waitOpen(channel.channel_id, 30_000), y.rt.channels.waitOpen(channel.channel_id, 30_000)]);
  if (!xs?.open || !ys?.open) throw new Error(`channel ${channel.channel_id} not open`);
}

async function main(): Promise<number> {
  const arg = benchArgs(import.meta.url, ['requests', 'stream-requests', 'stream-events', 'phase-samples', 'cpu-profile', 'fsync']);
  const requests = num('--requests', arg('requests', 'BENCH_REQUESTS'), 300);
  const streamEvents = num('--stream-events', arg('stream-events', 'BENCH_STREAM_EVENTS'), 5);
  const streamRaw = arg('stream-requests', 'BENCH_STREAM_REQUESTS');
  const streamRequests = streamRaw === '0' ? 0 : num('--stream-requests', streamRaw, 100);
  const phaseRaw = arg('phase-samples', 'BENCH_PHASE_SAMPLES');
  const phaseSamples = phaseRaw === '0' ? 0 : num('--phase-samples', phaseRaw, 100);
  const cpuProfile = arg('cpu-profile', 'BENCH_CPU_PROFILE');
  const fsyncArg = arg('fsync', 'BENCH_FSYNC') ?? 'on';
  if (fsyncArg !== 'on' && fsyncArg !== 'off') throw new Error(`--fsync must be on or off, got "${fsyncArg}"`);
  const adminUrl = arg('database-url', 'BENCH_DATABASE_URL') ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  assertLoopback(adminUrl);
  const server = await startBenchServer(adminUrl);
  let agents: PluginAgents | undefined;
  let upstream: Server | undefined;
  try {
    const owner = await newTenant(server.app, 'bench-a2a-owner@example.com', 'A2A bench');
    let upstreamSeen: ((what: 'in' | 'out') => void) | undefined;
    const up = await startUpstream((what) => upstreamSeen?.(what));
    upstream = up.server;
    agents = pluginAgents(server, owner.auth, 'a2a', { fsync: fsyncArg === 'on' });
    const x = await agents.add('x');
    const y = await agents.add('y', { a2aUpstream: up.url });

    const direct = await officialClient(up.url);
    const parley = await officialClient(`${x.plugin.url}/a2a/${y.address}/`, x.plugin.token);
    await openChannel(server, owner.auth, parley, x, y);

    let seq = 0;
    type PathName = 'send direct' | 'send parley' | 'stream direct' | 'stream parley';
    const samples: Record<PathName, number[]> = { 'send direct': [], 'send parley': [], 'stream direct': [], 'stream parley': [] };
    /** `warmup + n` rounds of the `paths` in turn; the samples of the last `n` rounds are kept. */
    const measure = async (n: number, warmup: number, paths: Partial<Record<PathName, () => Promise<void>>>) => {
      for (let i = 0; i < warmup + n; i++) {
        for (const [name, fn] of Object.entries(paths) as [PathName, () => Promise<void>][]) {
          const ms = await timed(fn);
          if (i >= warmup) samples[name].push(ms);
        }
      }
    };
    await measure(requests, WARMUP, { 'send direct': () => sendChecked(direct, `hello ${seq++}`), 'send parley': () => sendChecked(parley, `hello ${seq++}`) });
    // Streams after the sends: the receiving side's work on a stream's many frames would otherwise delay the next send.
    if (streamRequests > 0) await measure(streamRequests, STREAM_WARMUP, { 'stream direct': () => streamChecked(direct, streamEvents), 'stream parley': () => streamChecked(parley, streamEvents) });

    console.log(
      `\n## bench/a2a — SendMessage: ${requests} sequential calls per path (after ${WARMUP} warm-up); SendStreamingMessage: ${streamRequests} (after ${STREAM_WARMUP}); one run, direct and parley interleaved; agent state fsync ${fsyncArg}\n`,
    );
    for (const line of await machineLines(server.sql)) console.log(line);
    const rows: string[][] = [];
    for (const kind of streamRequests > 0 ? (['send', 'stream'] as const) : (['send'] as const)) {
      const p = summary(samples[`${kind} parley`]);
      const d = summary(samples[`${kind} direct`]);
      const label = kind === 'send' ? 'SendMessage' : `SendStreamingMessage (${streamEvents + 2} events)`;
      rows.push([label, 'parley (two plugins)', fmt(p.p50, 2), fmt(p.p99, 2), fmt(p.mean, 2), `p50 ${ratio(p.p50, d.p50)}, p99 ${ratio(p.p99, d.p99)}`, fmt(p.p50 - d.p50, 2)]);
      rows.push(['', 'direct', fmt(d.p50, 2), fmt(d.p99, 2), fmt(d.mean, 2), '', '']);
    }
    console.log(printTable(['call', 'path', 'p50 ms', 'p99 ms', 'mean ms', 'parley / direct', 'added ms p50'], rows));
    const p = summary(samples['send parley']);
    const d = summary(samples['send direct']);
    const met = p.p50 <= TARGET_RATIO * d.p50 && p.p50 - d.p50 < TARGET_ADDED_MS;
    console.log(
      `\ntarget (SendMessage): parley p50 <= ${TARGET_RATIO}x direct p50 and < ${TARGET_ADDED_MS} ms added: ${met ? 'MET' : 'NOT MET'} ` +
        `(${ratio(p.p50, d.p50)}, ${fmt(p.p50 - d.p50, 2)} ms added)`,
    );

    if (phaseSamples > 0) {
      await profilePhases({ x, y, client: parley, samples: phaseSamples, upstreamSeen: (f) => (upstreamSeen = f), ...(cpuProfile ? { cpuProfile } : {}) });
    }
    return met ? 0 : 1;
  } finally {
    await agents?.close();
    upstream?.close();
    await server.dispose();
  }
}

runMain(main);
