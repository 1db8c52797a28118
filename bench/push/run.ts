/**
 * bench/push: Web Push delivery by the service's push worker (design §8.36 "Push delivery"), next
 * to the `web-push` library sending the same pushes itself, in the same run (docs/performance.md
 * "Push delivery").
 *
 * Set-up: the real app (`startApp` of @parley/server/testing) listening on 127.0.0.1, on PGlite in
 * memory (as `npm start` runs by default) or, with a database URL, on a fresh PostgreSQL database
 * (dropped at the end); LOG_LEVEL=silent, RATE_LIMITS=off, WEBHOOK_ALLOW_PRIVATE and
 * WEBHOOK_ALLOW_HTTP on (the double is a loopback `http:` endpoint); the push worker's timing as
 * configured (WEBHOOK_POLL_MS 1000 by default, the service default; `--poll-ms` sets it). A Web
 * Push service double in a child process (double.ts: answers 201, notes when each request
 * arrives). One tenant with `max(--pushes, rate x (warm-up + duration))` owner devices, none
 * connected, each with a browser push subscription (fresh P-256 and auth keys) whose endpoint is
 * the double, and one ACTIVE agent with a conversation with each of them.
 *
 * 1. Throughput (`--pushes`, 2000): the agent creates one decision (`POST /decisions`); the
 *    service wakes every owner device (`decision_created` -> one `decision_request` outbox row per
 *    registration) and the push worker drains the outbox to the double: claims 50 due rows per
 *    poll (`FOR UPDATE SKIP LOCKED`), sends them at once (aes128gcm encryption, VAPID JWT, POST
 *    through the SSRF guard, a new connection per push), records each outcome in its own
 *    transaction, and polls again at once after a full batch. Baseline: `webPush.sendNotification`
 *    with the same VAPID key, subscriptions, payload shape and options (TTL 24 h, urgency high,
 *    topic, aes128gcm), `--concurrency` (50, the worker's batch) requests in flight, over a
 *    keep-alive agent (the library's default `https.globalAgent` keeps connections alive); and the
 *    same with a new connection per push, as the worker connects (diagnostic). The rate of each is
 *    measured at the double: (pushes - 1) / (last arrival - first arrival). 200 library sends warm
 *    up the shared code first. Target: worker rate >= 0.5x the keep-alive baseline.
 * 2. Latency (`--rate` 50/s for `--duration` 20 s after `--warmup` 2 s): the agent's socket sends
 *    `message` frames at a steady rate, each to the conversation of another owner device (distinct
 *    registrations: no collapse window merges them); the time from the send (and from its
 *    `message_ack`, sent once the message is committed) to the push's request arriving at the
 *    double, p50 / p90 / p99 / max over the messages after the warm-up. Target: p99 from the send
 *    under 1 s.
 * Exit status 1 when a target is not met.
 *
 *   npm run bench:push -- [--pushes 2000] [--concurrency 50] [--rate 50] [--duration 20]
 *                         [--warmup 2] [--poll-ms 1000] [--scenarios throughput,latency]
 *                         [--database-url postgres://postgres@127.0.0.1:5432/postgres]
 * Environment equivalents: BENCH_PUSHES, BENCH_CONCURRENCY, BENCH_RATE, BENCH_DURATION_S,
 * BENCH_WARMUP_S, BENCH_POLL_MS, BENCH_SCENARIOS, BENCH_DATABASE_URL (or TEST_DATABASE_URL,
 * DATABASE_URL); without a database URL the app runs on PGlite in memory.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import https from 'node:https';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'drizzle-orm';
import webpush from 'web-push';
import { WebSocket } from 'ws';
import { withTenant } from '@parley/server/testing';
import { PUSH_TTL_SECONDS } from '../../packages/server/src/modules/push/payload.js';
import { loadVapidKey, type VapidDetails } from '../../packages/server/src/modules/push/vapid.js';
import { benchArgs, num, runMain } from '../relay/cli.js';
import { Samples, type LatencySummary } from '../relay/common.js';
import { fmt, printTable, ratio } from '../relay/report.js';
import { call } from '../relay/setup.js';
import { epochMs, type Arrival } from './double.js';
import { machineLine, pushWorld, startBenchApp, startDouble, type BenchApp, type Double, type PushWorld } from './setup.js';

const TARGET_RATIO = 0.5;
const TARGET_P99_MS = 1000;
const WARMUP_SENDS = 200;

/**
 * An `https.Agent` that connects over plain TCP: `webPush.sendNotification` always makes its
 * request with node:https and takes only an `https.Agent`, so with this agent it speaks HTTP/1.1
 * to the loopback `http:` double, as the worker does (WEBHOOK_ALLOW_HTTP).
 */
class PlainTcpAgent extends https.Agent {
  override createConnection(options: https.RequestOptions): Duplex {
    // The agent takes the returned socket as created (the callback is for asynchronous creation).
    return net.createConnection(options as net.NetConnectOpts);
  }
}

/** How one sender's pushes arrived at the double. */
interface Drain {
  pushes: number;
  /** Pushes per second between the first and the last arrival. */
  rate: number;
  /** First to last arrival (ms). */
  spanMs: number;
  /** TCP connections the double accepted for them. */
  connections: number;
  /** From the start (the decision's POST, the first library call) to the last arrival (ms). */
  totalMs: number;
}

/** {@link Drain} of `arrivals` (all `n` pushes, each to another registration), started at `t0`. */
function drainOf(what: string, arrivals: Arrival[], connections: number, n: number, t0: number): Drain {
  const paths = new Set(arrivals.map(([p]) => p));
  if (arrivals.length !== n || paths.size !== n) throw new Error(`${what}: ${arrivals.length} pushes to ${paths.size} registrations arrived, expected ${n}`);
  const at = arrivals.map(([, a]) => a).sort((a, b) => a - b);
  const spanMs = at[n - 1]! - at[0]!;
  return { pushes: n, rate: ((n - 1) * 1000) / spanMs, spanMs, connections, totalMs: at[n - 1]! - t0 };
}

/** The worker drains: one decision wakes every owner device; the worker sends the outbox's rows to the double. */
async function workerDrain(b: BenchApp, w: PushWorld, dbl: Double, n: number): Promise<Drain & { outbox: string }> {
  const t0 = epochMs();
  await call(b.t.app, 'POST', '/decisions', 201, { authorization: `Bearer ${w.agent.jwt}` }, { title: 'Bench decision', options: [{ option_id: 'ok', label: 'OK', risk_level: 'low' }] });
  const { arrivals, connections } = await dbl.arrivals(n, 120_000);
  const drain = drainOf('push worker', arrivals, connections, n, t0);
  // The outcomes of the last batch may still be being recorded: wait (up to 5 s) until no row is pending.
  let rows: { status: string; n: number }[] = [];
  for (const until = epochMs() + 5000; epochMs() < until; await sleep(50)) {
    const res = (await withTenant(b.db, w.tenantId, (tx) =>
      tx.execute(sql`select status, count(*)::int as n from push_deliveries where kind = 'decision_request' group by status order by status`),
    )) as unknown as { rows: { status: string; n: number }[] };
    rows = res.rows;
    if (!rows.some((r) => r.status === 'pending')) break;
  }
  return { ...drain, outbox: rows.map((r) => `${r.status} ${r.n}`).join(', ') };
}

/**
 * `webPush.sendNotification` of the first `n` registrations' pushes, `concurrency` at a time, over
 * a keep-alive agent or a new connection per push; the payload is the worker's for a decision.
 */
async function libraryDrain(w: PushWorld, vapid: VapidDetails, dbl: Double, n: number, concurrency: number, keepAlive: boolean): Promise<Drain> {
  const agent = new PlainTcpAgent({ keepAlive });
  const decisionId = randomUUID();
  let next = 0;
  let failures = 0;
  let firstError = '';
  const t0 = epochMs();
  const sender = async () => {
    while (next < n) {
      const i = next++;
      const d = w.devices[i]!;
      const payload = { event: 'decision_request', decision_id: decisionId, tenant_id: w.tenantId, device_id: d.deviceId, count: 1 };
      try {
        await webpush.sendNotification(d.subscription, JSON.stringify(payload), {
          vapidDetails: vapid,
          TTL: PUSH_TTL_SECONDS,
          urgency: 'high',
          topic: 'decision_request',
          contentEncoding: 'aes128gcm',
          agent,
        });
      } catch (err) {
        failures++;
        firstError ||= err instanceof Error ? err.message : String(err);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, sender));
  agent.destroy();
  if (failures > 0) throw new Error(`web-push: ${failures} of ${n} sends failed (${firstError})`);
  const { arrivals, connections } = await dbl.arrivals(n, 60_000);
  return drainOf('web-push', arrivals, connections, n, t0);
}

/** What the latency phase measured (ms). */
interface LatencyResult {
  sendToPush: LatencySummary;
  ackToPush: LatencySummary;
  sendToAck: LatencySummary;
  /** Messages sent per second, as achieved. */
  sentRate: number;
  missing: number;
}

/** Open the agent's socket and wait until the service has authenticated it (its `pong`). */
async function agentSocket(b: BenchApp, jwt: string): Promise<WebSocket> {
  const ws = new WebSocket(`${b.t.wsUrl}?token=${jwt}`, { perMessageDeflate: false });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  let onPong: ((raw: Buffer) => void) | undefined;
  const pong = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the agent socket was not authenticated')), 10_000);
    onPong = (raw) => {
      if ((JSON.parse(raw.toString()) as { event: string }).event !== 'pong') return;
      clearTimeout(timer);
      resolve();
    };
    ws.on('message', onPong);
  });
  ws.send('{"event":"ping","data":{}}');
  await pong.finally(() => ws.off('message', onPong!));
  return ws;
}

/** Steady `rate` messages/s, each to another owner device, and the time each push took to arrive. */
async function latencyPhase(b: BenchApp, w: PushWorld, dbl: Double, o: { rate: number; durationS: number; warmupS: number }): Promise<LatencyResult> {
  const total = Math.round(o.rate * (o.warmupS + o.durationS));
  const skip = Math.round(o.rate * o.warmupS);
  const sentAt = new Float64Array(total).fill(NaN);
  const ackAt = new Float64Array(total).fill(NaN);
  const errors: string[] = [];
  const ws = await agentSocket(b, w.agent.jwt);
  ws.on('message', (raw: Buffer) => {
    const now = epochMs();
    const f = JSON.parse(raw.toString()) as { event: string; data: { client_ref?: string } };
    if (f.event === 'message_ack') ackAt[Number(f.data.client_ref)] = now;
    else if (f.event === 'error') errors.push(JSON.stringify(f.data));
    else if (f.event === 'ping') ws.send('{"event":"pong","data":{}}');
  });
  const header = randomBytes(32).toString('base64');
  const ciphertext = randomBytes(200).toString('base64');
  const start = epochMs() + 20;
  for (let i = 0; i < total; i++) {
    const wait = start + (i * 1000) / o.rate - epochMs();
    if (wait > 0) await sleep(wait);
    sentAt[i] = epochMs();
    ws.send(JSON.stringify({ event: 'message', data: { conversation_id: w.devices[i]!.conversationId, header_blob: header, ciphertext, priority: 'normal', client_ref: String(i) } }));
  }
  const { arrivals } = await dbl.arrivals(total, 30_000);
  ws.close();
  if (errors.length > 0) throw new Error(`${errors.length} messages refused: ${errors[0]}`);
  const sendToPush = new Samples();
  const ackToPush = new Samples();
  const sendToAck = new Samples();
  const seen = new Set<number>();
  for (const [p, at] of arrivals) {
    const i = Number(p.split('/').pop());
    if (!Number.isInteger(i) || i < 0 || i >= total || seen.has(i)) throw new Error(`unexpected push to ${p}`);
    seen.add(i);
    if (i < skip) continue;
    sendToPush.add(at - sentAt[i]!);
    ackToPush.add(at - ackAt[i]!);
  }
  for (let i = 0; i < total; i++) if (Number.isNaN(ackAt[i]!)) throw new Error(`message ${i} was not acknowledged`);
  for (let i = skip; i < total; i++) sendToAck.add(ackAt[i]! - sentAt[i]!);
  return {
    sendToPush: sendToPush.summary(),
    ackToPush: ackToPush.summary(),
    sendToAck: sendToAck.summary(),
    sentRate: ((total - 1) * 1000) / (sentAt[total - 1]! - sentAt[0]!),
    missing: total - arrivals.length,
  };
}

/** A whole-number option that may be 0. */
const count = (name: string, raw: string | undefined, fallback: number) => (raw === '0' ? 0 : num(name, raw, fallback));

async function main(): Promise<number> {
  const arg = benchArgs(import.meta.url, ['pushes', 'concurrency', 'poll-ms']);
  const pushes = Math.floor(num('--pushes', arg('pushes', 'BENCH_PUSHES'), 2000));
  const concurrency = Math.floor(num('--concurrency', arg('concurrency', 'BENCH_CONCURRENCY'), 50));
  const rate = num('--rate', arg('rate', 'BENCH_RATE'), 50);
  const durationS = num('--duration', arg('duration', 'BENCH_DURATION_S'), 20);
  const warmupS = count('--warmup', arg('warmup', 'BENCH_WARMUP_S'), 2);
  const pollMs = arg('poll-ms', 'BENCH_POLL_MS');
  if (pollMs !== undefined) num('--poll-ms', pollMs, 1000);
  const scenarios = new Set((arg('scenarios', 'BENCH_SCENARIOS') ?? 'throughput,latency').split(',').map((s) => s.trim()));
  for (const s of scenarios) if (s !== 'throughput' && s !== 'latency') throw new Error(`unknown scenario "${s}" (throughput, latency)`);
  const adminUrl = arg('database-url', 'BENCH_DATABASE_URL') ?? process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL;

  const dbl = await startDouble();
  let b: BenchApp | undefined;
  try {
    b = await startBenchApp(adminUrl, pollMs ? { WEBHOOK_POLL_MS: pollMs } : {});
    const { config } = b.t;
    const devices = Math.max(scenarios.has('throughput') ? pushes : 0, scenarios.has('latency') ? Math.round(rate * (warmupS + durationS)) : 0);
    const setupStart = epochMs();
    const w = await pushWorld(b, dbl.url, devices);
    const stray = await dbl.arrivals(0, 0);
    if (stray.arrivals.length > 0) throw new Error(`${stray.arrivals.length} pushes arrived before the measurements`);

    console.log(`\n## bench/push — Web Push delivery to a loopback push-service double (${devices} owner devices with a registration, set up in ${fmt((epochMs() - setupStart) / 1000)} s)\n`);
    console.log(machineLine());
    console.log(`database: ${b.backend}`);
    console.log(
      `push worker: WEBHOOK_POLL_MS=${config.webhooks.pollMs}${pollMs ? '' : ' (service default)'}, batch 50 (again at once after a full batch), WEBHOOK_TIMEOUT_MS=${config.webhooks.timeoutMs}`,
    );
    let met = true;

    if (scenarios.has('throughput')) {
      const vapid = await loadVapidKey(b.db, b.t.app.parley.secrets, config.push.vapidSubject);
      await libraryDrain(w, vapid, dbl, Math.min(WARMUP_SENDS, pushes), concurrency, true);
      const worker = await workerDrain(b, w, dbl, pushes);
      const keepAlive = await libraryDrain(w, vapid, dbl, pushes, concurrency, true);
      const perPush = await libraryDrain(w, vapid, dbl, pushes, concurrency, false);
      console.log(`\n### Throughput: ${pushes} pushes, each to another registration\n`);
      printTable(
        ['sender', 'in flight', 'pushes/s', 'vs web-push', 'first -> last ms', 'start -> last ms', 'connections'],
        [
          ['Parley push worker (decision -> outbox -> worker)', '50 per poll', fmt(worker.rate, 0), ratio(worker.rate, keepAlive.rate), fmt(worker.spanMs, 0), fmt(worker.totalMs, 0), String(worker.connections)],
          ['web-push sendNotification, keep-alive (baseline)', String(concurrency), fmt(keepAlive.rate, 0), '1.00x', fmt(keepAlive.spanMs, 0), fmt(keepAlive.totalMs, 0), String(keepAlive.connections)],
          ['web-push sendNotification, connection per push', String(concurrency), fmt(perPush.rate, 0), ratio(perPush.rate, keepAlive.rate), fmt(perPush.spanMs, 0), fmt(perPush.totalMs, 0), String(perPush.connections)],
        ],
      );
      console.log(`outbox rows of the decision afterwards: ${worker.outbox}`);
      const ok = worker.rate >= TARGET_RATIO * keepAlive.rate;
      met &&= ok;
      console.log(`\ntarget (throughput): worker >= ${TARGET_RATIO}x web-push: ${ok ? 'MET' : 'NOT MET'} (${ratio(worker.rate, keepAlive.rate)})`);
    }

    if (scenarios.has('latency')) {
      const l = await latencyPhase(b, w, dbl, { rate, durationS, warmupS });
      console.log(`\n### Latency: ${rate} messages/s for ${durationS} s after ${warmupS} s of warm-up, each to another owner device (sent ${fmt(l.sentRate, 1)}/s)\n`);
      const row = (name: string, s: LatencySummary) => [name, String(s.count), fmt(s.p50, 1), fmt(s.p90, 1), fmt(s.p99, 1), fmt(s.max, 1), fmt(s.mean, 1)];
      printTable(
        ['from -> to', 'samples', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'mean ms'],
        [row('message sent -> push at the double', l.sendToPush), row('message_ack (committed) -> push', l.ackToPush), row('message sent -> message_ack', l.sendToAck)],
      );
      const ok = l.missing === 0 && l.sendToPush.p99 < TARGET_P99_MS;
      met &&= ok;
      console.log(
        `\ntarget (latency): p99 from the send < ${TARGET_P99_MS} ms: ${ok ? 'MET' : 'NOT MET'} (p99 ${fmt(l.sendToPush.p99, 1)} ms${l.missing > 0 ? `, ${l.missing} pushes missing` : ''}; WEBHOOK_POLL_MS=${config.webhooks.pollMs})`,
      );
    }
    return met ? 0 : 1;
  } finally {
    await b?.close();
    await dbl.close();
  }
}

runMain(main);
