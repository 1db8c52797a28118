/**
 * bench/cluster: relay throughput through HAProxy to 1 instance and to 2 instances, measured in
 * the same run, and recovery after one of two instances is killed (design §8.32).
 *
 * Each throughput scenario starts its own cluster (packages/server/src/cluster/run.ts
 * `startCluster`: HAProxy round robin, no sticky sessions, instances from the TypeScript sources)
 * on a fresh PostgreSQL database (created and dropped by the run) and the given Redis, provisions
 * N pairs over HTTP through the load balancer (bench/relay/setup.ts `provisionPairs`) and runs the
 * relay benchmark's load generator (bench/relay/load.ts, a separate process: closed loop, at most
 * `window` unacknowledged messages per socket) with every socket connected through HAProxy.
 * Throughput counts messages delivered to their recipient inside the measured window; every
 * message is acknowledged (committed) first. With 2 instances round robin alternates the
 * connections, so an agent and its owner device land on different instances and every message
 * crosses the Redis bus: the worst case for a pair.
 *
 * Recovery (bench/cluster/recovery.ts) runs on the 2-instance cluster after its throughput run:
 * every owner device sends to its agent at a steady rate, instance i2 is killed with SIGKILL, and
 * the time until every dropped socket is connected again through HAProxy and every acknowledged
 * message has reached its agent (live, or by the cursor catch-up a client does) is reported.
 *
 * Redis has no key or channel prefix setting: instances of this run share the Redis server with
 * anything else using it; their device ids and sockets are fresh, so nothing else receives their
 * events. Rate limits are off (RATE_LIMITS=off), logs at warn. Loopback only. The machine's CPUs
 * are shared by the instances, PostgreSQL, Redis, HAProxy and the load generator: on a small
 * machine a second instance adds little CPU, and the ratio says how much the cluster costs or
 * gains there, not what it gains on separate hosts.
 *
 *   npm run bench:cluster -- [--pairs 20] [--duration 5] [--warmup 2] [--window 8]
 *                            [--scenarios one,two,recovery] [--recovery-rate 20]
 *                            [--database-url postgres://postgres@127.0.0.1:5432/postgres]
 *                            [--redis-url redis://127.0.0.1:6379] [--port <LB port>]
 * Environment equivalents: BENCH_PAIRS, BENCH_DURATION_S, BENCH_WARMUP_S, BENCH_WINDOW,
 * BENCH_SCENARIOS, BENCH_RECOVERY_RATE, BENCH_DATABASE_URL, BENCH_REDIS_URL, BENCH_PORT.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { DevIdentityProvider } from '../../packages/server/src/auth/dev-idp.js';
import { startCluster, type RunningCluster } from '../../packages/server/src/cluster/run.js';
import { assertLoopback, benchArgs, commonOptions, num, runMain } from '../relay/cli.js';
import type { LoadResult, LoadSpec } from '../relay/common.js';
import { fmt, latencyText, printTable, ratio } from '../relay/report.js';
import { ResourceSampler } from '../relay/resources.js';
import { call, createDatabase, forkLoad, httpInjector, machineLines, provisionPairs } from '../relay/setup.js';
import { runRecovery, type RecoveryResult } from './recovery.js';
import { SERVICE_NODE_FLAGS } from '../../packages/server/src/ops/node-flags.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../..');

const arg = benchArgs(import.meta.url, ['pairs', 'redis-url', 'port', 'recovery-rate']);
const common = commonOptions(arg, { durationS: 5, warmupS: 2, window: 8, rate: 0, scenarios: ['one', 'two', 'recovery'] });
const opts = {
  ...common,
  pairs: Math.floor(num('pairs', arg('pairs', 'BENCH_PAIRS'), 20)),
  redisUrl: arg('redis-url', 'BENCH_REDIS_URL') ?? 'redis://127.0.0.1:6379',
  port: Math.floor(num('port', arg('port', 'BENCH_PORT'), 20_000 + Math.floor(Math.random() * 400) * 10)),
  recoveryRate: num('recovery-rate', arg('recovery-rate', 'BENCH_RECOVERY_RATE'), 20),
};
assertLoopback(opts.redisUrl);
if (opts.durationS + opts.warmupS > 20) throw new Error('warm-up + duration is capped at 20 s per scenario to keep the run short');
if (opts.pairs > 200) throw new Error('pairs is capped at 200');

/** One scenario's cluster on a fresh database: the cluster, its database and a connection to it. */
interface Stage {
  cluster: RunningCluster;
  sql: pg.Client;
  ownerToken: string;
  pairs: Awaited<ReturnType<typeof provisionPairs>>;
  dispose(): Promise<void>;
}

/** The stage being run; Ctrl-C / SIGTERM stop its cluster and drop its database before exiting 130. */
let current: Stage | undefined;
let interrupting = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    // `npm run` relays the signal a second time: ignore repeats while cleaning up.
    if (interrupting) return;
    interrupting = true;
    console.error(`\n${signal}: stopping the cluster and dropping the bench database`);
    void (current?.dispose() ?? Promise.resolve()).finally(() => process.exit(130));
  });
}

/** Start `instances` instances behind HAProxy on a fresh database and provision the pairs through the load balancer. */
async function stage(instances: number, label: string): Promise<Stage> {
  const database = await createDatabase(opts.adminUrl);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-bench-cluster-'));
  let cluster: RunningCluster | undefined;
  const sql = new pg.Client({ connectionString: database.url });
  sql.on('error', () => undefined);
  const dispose = async () => {
    await sql.end().catch(() => undefined);
    await cluster?.stop().catch(() => undefined);
    await database.drop().catch((err: unknown) => console.error('could not drop the bench database:', err));
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    cluster = await startCluster({
      instances,
      host: '127.0.0.1',
      port: opts.port,
      databaseUrl: database.url,
      redisUrl: opts.redisUrl,
      dataDir,
      command: [process.execPath, ...SERVICE_NODE_FLAGS, '--conditions=parley-source', '--import', 'tsx', path.join(repoRoot, 'packages/server/src/main.ts')],
      env: { LOG_LEVEL: 'warn', RATE_LIMITS: 'off' },
      output: 'ignore',
    });
    await sql.connect();
    const ownerToken = await (await DevIdentityProvider.load(dataDir)).mint('bench-owner@example.com');
    const auth = { authorization: `Bearer ${ownerToken}` };
    const lb = httpInjector(cluster.url);
    await call(lb, 'POST', '/tenants', 201, auth, { name: `Cluster bench ${label}` });
    const t = Date.now();
    const pairs = await provisionPairs(lb, auth, opts.pairs);
    console.log(`# ${label}: ${instances} instance(s) up behind HAProxy on ${cluster.url}; ${opts.pairs} pairs provisioned through it in ${Date.now() - t} ms`);
    return { cluster, sql, ownerToken, pairs, dispose };
  } catch (err) {
    await dispose();
    throw err;
  }
}

/** The relay load (bench/relay/load.ts) with every socket connected through the load balancer. */
async function throughput(s: Stage, label: string): Promise<{ result: LoadResult; cpu: string }> {
  const ws = `${s.cluster.url.replace(/^http/, 'ws')}/api/v1/ws`;
  const pairs = s.pairs.pairs.map((p, i) => ({
    ...p,
    agent: { ...p.agent, url: `${ws}?token=${s.pairs.agentJwts[i]}` },
    owner: { ...p.owner, url: `${ws}?token=${s.ownerToken}&device_id=${p.owner.deviceId}` },
  }));
  const spec: LoadSpec = {
    mode: 'ws',
    label,
    pairs,
    window: opts.window,
    phases: [{ name: 'saturation', rate: undefined, warmupMs: opts.warmupS * 1000, durationMs: opts.durationS * 1000, maxMessages: opts.messages }],
    drainTimeoutMs: 15_000,
    ciphertextBytes: opts.ciphertextBytes,
  };
  const pids = () => s.cluster.instances.map((i) => i.process.pid).filter((p): p is number => p !== undefined);
  const sampler = new ResourceSampler(s.sql, pids);
  const result = await forkLoad<LoadSpec, LoadResult>(path.join(repoRoot, 'bench/relay/load.ts'), spec, sampler, 120_000, repoRoot);
  const res = sampler.results.get(`${label}/saturation`);
  const pct = (v: number | undefined) => (v === undefined ? '-' : `${v.toFixed(0)}%`);
  const p = result.phases[0]!;
  const cpu = `instances ${pct(res?.serverCpuPct)}, load generator ${pct((100 * p.clientCpuMs) / p.measuredMs)}, postgres backends ${pct(res?.pgCpuPct)}, machine ${pct(res?.machineCpuPct)}`;
  return { result, cpu };
}

async function main(): Promise<number> {
  const started = Date.now();
  const rows: { label: string; result: LoadResult; cpu: string }[] = [];
  let recovery: RecoveryResult | undefined;
  let ok = true;
  const admin = new pg.Client({ connectionString: opts.adminUrl });
  await admin.connect();
  const machine = [
    ...(await machineLines(admin)),
    `pairs N=${opts.pairs} (${2 * opts.pairs} sockets through HAProxy), window ${opts.window}, warm-up ${opts.warmupS} s + measured ${opts.durationS} s per scenario; Redis ${opts.redisUrl}; load average at start ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`,
  ];
  await admin.end();
  console.log(machine.map((l) => `# ${l}`).join('\n'));

  for (const [instances, name] of [
    [1, 'one'],
    [2, 'two'],
  ] as const) {
    const wantRecovery = instances === 2 && opts.scenarios.has('recovery');
    if (!opts.scenarios.has(name) && !wantRecovery) continue;
    const label = `HAProxy -> ${instances} instance${instances > 1 ? 's' : ''}`;
    const s = await stage(instances, label);
    current = s;
    try {
      if (opts.scenarios.has(name)) {
        const r = await throughput(s, label);
        rows.push({ label, ...r });
        const x = r.result;
        if (!x.drained || x.errors > 0 || x.acked !== x.sent || x.delivered !== x.sent) ok = false;
      }
      if (wantRecovery) {
        recovery = await runRecovery({
          lbUrl: s.cluster.url,
          pairs: s.pairs.pairs,
          agentJwts: s.pairs.agentJwts,
          ownerToken: s.ownerToken,
          instances: s.cluster.instances,
          victim: 'i2',
          ratePerPair: opts.recoveryRate,
          beforeMs: 3000,
          deadlineMs: 30_000,
          retryMs: 100,
          reorderWindowMs: 2000,
        });
        if (recovery.lost > 0 || !Number.isFinite(recovery.caughtUpMs)) ok = false;
      }
    } finally {
      current = undefined;
      await s.dispose();
    }
  }

  if (rows.length > 0) {
    const base = rows.find((r) => r.label.endsWith('1 instance'))?.result.phases[0]!.msgsPerSec;
    console.log(`\nrelay throughput through HAProxy (closed loop, window ${opts.window}; messages acknowledged and delivered per second)`);
    const markdown = printTable(
      ['scenario', 'msgs/s', 'p50 ms', 'p99 ms', 'vs 1 instance'],
      rows.map(({ label, result }) => {
        const p = result.phases[0]!;
        return [label, fmt(p.msgsPerSec, 0), fmt(p.latency.p50, 2), fmt(p.latency.p99, 2), ratio(p.msgsPerSec, base)];
      }),
    );
    console.log('\ndetails:');
    for (const { label, result: r, cpu } of rows) {
      const p = r.phases[0]!;
      console.log(`  ${label}: ${r.connections} sockets (connected in ${fmt(r.connectMs, 0)} ms); sent ${r.sent}, acked ${r.acked}, delivered ${r.delivered}, errors ${r.errors}${r.firstError ? ` (first: ${r.firstError})` : ''}${r.drained ? '' : ', NOT DRAINED'}`);
      console.log(`    ${p.measuredMessages} msgs in ${fmt(p.measuredMs / 1000, 2)} s; ${latencyText(p.latency)}`);
      console.log(`    CPU (% of one core; ${os.cpus().length} cores): ${cpu}`);
    }
    console.log('\nmarkdown:');
    console.log(markdown);
  }
  if (recovery) {
    const r = recovery;
    console.log(`\nrecovery: kill -9 of i2 with ${r.sockets} sockets connected (${Object.entries(r.placement).map(([k, v]) => `${k}: ${v}`).join(', ')}), ${opts.recoveryRate} msgs/s per pair`);
    console.log(`  dropped sockets: ${r.dropped.agents} agents, ${r.dropped.owners} owner devices`);
    console.log(`  all dropped sockets reconnected through HAProxy after ${fmt(r.reconnectedMs, 0)} ms (median ${fmt(r.reconnectP50Ms, 0)} ms)`);
    console.log(`  every message acknowledged before then received after ${fmt(r.caughtUpMs, 0)} ms (${r.fetchedFromHistory} of them by cursor catch-up)`);
    console.log(`  sent ${r.sent}, acked ${r.acked}, unacked ${r.unacked} (in flight on the killed instance), lost ${r.lost}, errors ${r.errors}${r.firstError ? ` (first: ${r.firstError})` : ''}`);
    if (r.lostSamples.length > 0) console.log(`  lost (first ${r.lostSamples.length}; ms after the kill): ${JSON.stringify(r.lostSamples)}`);
  }
  console.log(`\n=> ${ok ? 'OK' : 'FAILED'}; total run time ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return ok ? 0 : 1;
}

runMain(main);
