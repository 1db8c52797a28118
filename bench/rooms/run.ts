/**
 * bench/rooms: room fan-out (design §8.5): a 50-member room, delivered
 * messages/s and latency, next to a baseline measured in the same run (design §9):
 *
 *   1. bare `ws` fan-out: the same frames, the same client harness; the server parses each
 *      `room_message` frame, sends every envelope to its recipient's socket and acks the sender,
 *      with no persistence, authentication or policies (the ceiling);
 *   2. Parley: the real app (buildApp) on a fresh PostgreSQL database, RATE_LIMITS=off,
 *      LOG_LEVEL=silent; the tenant has no policies;
 *   3. Parley + policies: the same app and room after `--policies` (100) enabled tenant-wide
 *      policies were created through `POST /policies`, none of which matches the bench's traffic
 *      (they name message type 'artifact', priority 'urgent', owner recipients or an unknown
 *      sender; the bench sends 'text' at 'normal' between agents): the engine's cost on the hot path.
 *
 * Set-up: one tenant, M agent devices (invite -> enroll -> approve -> activate) and one room with
 * all M as members (`POST /rooms`). The clients run in a separate Node process (load.ts), one
 * socket per member; every member sends `room_message` frames with one envelope per other member
 * (M - 1 envelopes of a 24-byte header + 200-byte random ciphertext), at most `window`
 * unacknowledged per sender. On a small machine the load generator still shares the CPUs with the
 * server and PostgreSQL. Runs only against 127.0.0.1; creates a fresh database and drops it at the
 * end. After each Parley scenario the bench checks that room_messages gained one row per
 * acknowledged room message, room_envelopes M - 1 rows per room message, that every delivery
 * the acks announced reached its recipient, and that every delivery was evaluated once (a
 * policy_evaluations row, or one allow counted in policy_allow_counts); a failed check exits
 * with status 1. It also prints the
 * server's SQL statements and transactions per room message (counted by wrapping
 * `pg.Client.prototype.query` in this process) and the CPU split in each measured window.
 *
 * Two phases per scenario, on the same sockets: `saturation` (closed loop: each sender sends
 * whenever fewer than `window` of its room messages are unacknowledged; the most room messages/s,
 * and latency under that load, which is mostly queueing: members x window ÷ throughput) and `paced`
 * (open loop: `rate` room messages/s offered over all senders, latency counted from the scheduled
 * send time: the latency at a load every scenario sustains).
 *
 *   npm run bench:rooms -- [--members 50] [--senders M] [--window 1] [--duration 7] [--warmup 3]
 *                          [--rate 5 | --paced-fraction 0.5] [--paced-duration 4] [--policies 100] [--messages N]
 *                          [--scenarios ws,parley,policies]
 *                          [--database-url postgres://postgres@127.0.0.1:5432/postgres]
 * --duration / --warmup are the saturation phase's seconds; the paced phase warms up 1 s and
 * measures --paced-duration s; --rate 0 skips it; --paced-fraction f offers f x the room messages/s
 * the scenario's saturation phase measured (instead of --rate); --messages ends a measured window
 * early after N room messages. Environment equivalents: BENCH_MEMBERS, BENCH_SENDERS, BENCH_WINDOW,
 * BENCH_DURATION_S, BENCH_WARMUP_S, BENCH_RATE, BENCH_PACED_FRACTION, BENCH_PACED_S, BENCH_POLICIES, BENCH_MESSAGES,
 * BENCH_SCENARIOS, BENCH_DATABASE_URL (or DATABASE_URL).
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { benchArgs, commonOptions, num, runMain } from '../relay/cli.js';
import type { PhaseSpec } from '../relay/common.js';
import { fmt, latencyText, printTable, ratio, resourceLine, resourcesHeading } from '../relay/report.js';
import { ResourceSampler } from '../relay/resources.js';
import { countSql } from '../relay/sql-count.js';
import { call, enrollAgent, forkLoad, machineLines, newTenant, startBenchServer, type ActiveAgent } from '../relay/setup.js';
import { startBareFanout } from './bare-fanout.js';
import type { RoomLoadResult, RoomLoadSpec, RoomMember, RoomPhaseResult } from './common.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../..');

// ---------------------------------------------------------------- options

const arg = benchArgs(import.meta.url, ['members', 'senders', 'paced-duration', 'paced-fraction', 'policies']);
const members = Math.floor(num('members', arg('members', 'BENCH_MEMBERS'), 50));
const opts = {
  ...commonOptions(arg, { durationS: 7, warmupS: 3, window: 1, rate: 5, scenarios: ['ws', 'parley', 'policies'] }),
  members,
  senders: Math.floor(num('senders', arg('senders', 'BENCH_SENDERS'), members)),
  /** Measured seconds of the paced phase (after a 1 s warm-up: it starts from a drained system). */
  pacedS: num('paced-duration', arg('paced-duration', 'BENCH_PACED_S'), 4),
  policies: Math.floor(num('policies', arg('policies', 'BENCH_POLICIES'), 100)),
  /** When set (0 < f <= 1), the paced phase offers this fraction of the scenario's measured saturation rate instead of `rate`. */
  pacedFraction: ((f) => (f === undefined ? undefined : num('paced-fraction', f, 0.5)))(arg('paced-fraction', 'BENCH_PACED_FRACTION')),
};
if (opts.pacedFraction !== undefined && !(opts.pacedFraction > 0 && opts.pacedFraction <= 1)) throw new Error('paced-fraction must be in (0, 1]');
if (opts.members < 2 || opts.members > 200) throw new Error('members must be 2..200');
if (opts.senders > opts.members) throw new Error('senders must be <= members');
if (opts.policies > 500) throw new Error('policies is capped at 500');
const PACED_WARMUP_S = 1;
const pacedText = opts.pacedFraction ? `${opts.pacedFraction} x the scenario's saturation rate in room msgs/s` : `${opts.rate} room msgs/s`;
const pacedOn = Boolean(opts.rate || opts.pacedFraction);
if (opts.scenarios.size * (opts.durationS + opts.warmupS + (pacedOn ? PACED_WARMUP_S + opts.pacedS : 0)) > 60) {
  throw new Error('the planned phases (scenarios x (warm-up + duration + paced phase)) are capped at 60 s to keep the run bounded');
}

// ---------------------------------------------------------------- set-up

interface Fixture {
  tenantId: string;
  auth: Record<string, string>;
  roomId: string;
  agents: ActiveAgent[];
}

/** One tenant, M agents, one room with all of them. */
async function provision(app: FastifyInstance, m: number): Promise<Fixture> {
  const { tenantId, auth } = await newTenant(app, 'bench-owner@example.com', 'Rooms bench');
  const agents: ActiveAgent[] = [];
  for (let i = 0; i < m; i++) agents.push(await enrollAgent(app, auth, `agent-${i}`));
  const room = await call(app, 'POST', '/rooms', 201, auth, { name: 'bench room', member_device_ids: agents.map((a) => a.deviceId) });
  if ((room.members as unknown[]).length !== m) throw new Error(`the room has ${(room.members as unknown[]).length} members, expected ${m}`);
  return { tenantId, auth, roomId: room.room_id, agents };
}

/**
 * `n` enabled tenant-wide policies that never match the bench's traffic ('text' at 'normal' priority
 * between agents), in four shapes, with actions cycling through block, hold, notify and allow.
 * None uses `rate_per_minute_over`, which would add a per-message rate query.
 */
async function createPolicies(app: FastifyInstance, auth: Record<string, string>, n: number): Promise<void> {
  const actions = ['block', 'hold', 'notify', 'allow'];
  for (let i = 0; i < n; i++) {
    const conditions = [
      { message_types: ['artifact'] },
      { priorities: ['urgent'], sender_kinds: ['agent'] },
      { recipient_kinds: ['owner'], message_types: ['text', 'artifact'] },
      { sender_device_ids: [randomUUID()], message_types: ['text'] },
    ][i % 4];
    await call(app, 'POST', '/policies', 201, auth, { name: `bench-${i}`, conditions, action: actions[i % 4], priority: i % 10 });
  }
}


// ---------------------------------------------------------------- main

async function main(): Promise<number> {
  const started = Date.now();
  const server = await startBenchServer(opts.adminUrl);
  const { app, sql, wsUrl } = server;
  const sqlCounts = countSql();
  const results: RoomLoadResult[] = [];
  const checks: string[] = [];
  let ok = true;
  try {
    const t = Date.now();
    const fx = await provision(app, opts.members);
    const setupMs = Date.now() - t;
    const fanout = opts.members - 1;

    const machine = [
      ...(await machineLines(sql)),
      `room of M=${opts.members} agent members (${opts.members} sockets), ${opts.senders} senders, window ${opts.window} unacked room messages per sender; ` +
        `room message = ${fanout} envelopes of a 24-byte header + ${opts.ciphertextBytes}-byte ciphertext (base64 in JSON), message_type 'text'`,
      `saturation: warm-up ${opts.warmupS} s + measured ${opts.durationS} s${opts.messages ? ` or ${opts.messages} room messages` : ''}; ` +
        `paced: ${pacedOn ? `${pacedText} offered, warm-up ${PACED_WARMUP_S} s + measured ${opts.pacedS} s` : 'skipped'}; ` +
        `policies scenario: ${opts.policies} enabled non-matching policies`,
      `load generator: separate Node process (bench/rooms/load.ts); set-up of ${opts.members} agents + the room took ${setupMs} ms`,
      `load average at start: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')} (1/5/15 min)`,
    ];
    console.log(machine.map((l) => `# ${l}`).join('\n'));

    const phases: PhaseSpec[] = [
      { name: 'saturation', rate: undefined, warmupMs: opts.warmupS * 1000, durationMs: opts.durationS * 1000, maxMessages: opts.messages },
      ...(pacedOn ? [{ name: 'paced', rate: opts.rate || 1, warmupMs: PACED_WARMUP_S * 1000, durationMs: opts.pacedS * 1000, maxMessages: opts.messages }] : []),
    ];
    const drainTimeoutMs = 15_000;
    const base = {
      roomId: fx.roomId,
      senders: opts.senders,
      window: opts.window,
      phases,
      drainTimeoutMs,
      ciphertextBytes: opts.ciphertextBytes,
      messageType: 'text',
      ...(opts.pacedFraction ? { pacedFraction: opts.pacedFraction } : {}),
    };
    const timeoutMs = phases.reduce((ms, p) => ms + p.warmupMs + p.durationMs + drainTimeoutMs, 30_000);
    const sampler = new ResourceSampler(sql);
    const runLoad = (label: string, urls: RoomMember[]) =>
      forkLoad<RoomLoadSpec, RoomLoadResult>(path.join(here, 'load.ts'), { ...base, label, members: urls }, sampler, timeoutMs, repoRoot);
    const countRows = async () => {
      const { rows } = await sql.query<{ rm: string; re: string; pe: string; pa: string; pn: string }>(
        `select (select count(*) from room_messages) as rm, (select count(*) from room_envelopes) as re, (select count(*) from policy_evaluations) as pe,
                (select count(*) from policy_allow_counts) as pa, (select coalesce(sum(allows), 0) from policy_allow_counts) as pn`,
      );
      const r = rows[0]!;
      return { rm: Number(r.rm), re: Number(r.re), pe: Number(r.pe), pa: Number(r.pa), pn: Number(r.pn) };
    };
    const parleyUrls = fx.agents.map((a) => ({ deviceId: a.deviceId, url: `${wsUrl}?token=${a.jwt}` }));

    /** Run one Parley scenario and check what it stored against what the clients saw. */
    const runParley = async (label: string) => {
      await sql.query('checkpoint');
      const before = await countRows();
      const sqlBefore = { ...sqlCounts };
      const r = await runLoad(label, parleyUrls);
      const statements = sqlCounts.statements - sqlBefore.statements;
      const transactions = sqlCounts.transactions - sqlBefore.transactions;
      results.push(r);
      const after = await countRows();
      const rm = after.rm - before.rm;
      const re = after.re - before.re;
      const pe = after.pe - before.pe;
      const pa = after.pa - before.pa;
      const pn = after.pn - before.pn;
      checks.push(
        `${label}: ${r.sent} sent, ${r.acked} acked, ${r.expectedDeliveries} deliveries announced (${r.withheld} withheld), ${r.delivered} received, ${r.errors} errors; ` +
          `+${rm} room_messages, +${re} room_envelopes (expected ${fanout} x ${r.acked} = ${fanout * r.acked}), ` +
          `evaluations: +${pe} policy_evaluations rows (non-allow) + ${pn} allows counted in +${pa} policy_allow_counts rows = ${pe + pn} (expected ${fanout * r.acked})`,
      );
      const perMsg = (n: number) => (r.acked ? (n / r.acked).toFixed(1) : '-');
      checks.push(`  server SQL: ${statements} statements in ${transactions} transactions = ${perMsg(statements)} statements and ${perMsg(transactions)} transactions per room message`);
      const good =
        r.drained &&
        r.errors === 0 &&
        r.acked === r.sent &&
        r.withheld === 0 &&
        rm === r.acked &&
        re === fanout * r.acked &&
        r.expectedDeliveries === fanout * r.acked &&
        r.delivered === r.expectedDeliveries &&
        pe + pn === fanout * r.acked;
      if (!good) {
        ok = false;
        checks.push(`  ^ FAILED${r.firstError ? ` (first error: ${r.firstError})` : ''}${r.drained ? '' : ' (not drained)'}`);
      }
    };

    if (opts.scenarios.has('ws')) {
      const relay = await startBareFanout();
      try {
        results.push(await runLoad('bare ws fan-out (ceiling)', fx.agents.map((a) => ({ deviceId: a.deviceId, url: `${relay.url}?device_id=${a.deviceId}` }))));
      } finally {
        await relay.close();
      }
    }
    if (opts.scenarios.has('parley')) await runParley('Parley (PostgreSQL)');
    if (opts.scenarios.has('policies')) {
      await createPolicies(app, fx.auth, opts.policies);
      await runParley(`Parley + ${opts.policies} policies`);
    }

    // ------------------------------------------------------------ report
    const sat = (r: RoomLoadResult | undefined) => r?.phases.find((p) => p.name === 'saturation');
    const paced = (r: RoomLoadResult | undefined) => r?.phases.find((p) => p.name === 'paced');
    const bareRate = sat(results.find((r) => r.label.startsWith('bare')))?.deliveriesPerSec;
    const parleyRate = sat(results.find((r) => r.label.startsWith('Parley (')))?.deliveriesPerSec;
    const header = ['scenario', 'room msgs/s', 'deliveries/s', 'p50 ms', 'p99 ms', 'vs bare ws', 'vs Parley'];
    if (pacedOn) header.push('paced room msgs/s', 'paced p50 ms', 'paced p99 ms');
    const rows = results.map((r) => {
      const s = sat(r)!;
      const cells = [r.label, fmt(s.roomMsgsPerSec, 0), fmt(s.deliveriesPerSec, 0), fmt(s.latency.p50, 2), fmt(s.latency.p99, 2), ratio(s.deliveriesPerSec, bareRate), ratio(s.deliveriesPerSec, parleyRate)];
      const p = paced(r);
      if (pacedOn) cells.push(p ? fmt(p.roomMsgsPerSec, 0) : '-', p ? fmt(p.latency.p50, 2) : '-', p ? fmt(p.latency.p99, 2) : '-');
      return cells;
    });
    console.log(
      `\nsaturation: closed loop, window ${opts.window} per sender; latency = send -> recipient's room_message frame, per delivery; ratios on deliveries/s` +
        (pacedOn ? `; paced: open loop at ${pacedText} offered` : ''),
    );
    const markdown = printTable(header, rows);

    const phaseLine = (p: RoomPhaseResult) =>
      `${p.name}${p.rate ? ` @${p.rate}/s` : ''}: ${p.roomMessages} room msgs, ${p.deliveries} deliveries in ${fmt(p.measuredMs / 1000, 2)} s; ${latencyText(p.latency)}`;
    console.log('\ndetails:');
    for (const r of results) {
      console.log(
        `  ${r.label}: ${r.sockets} sockets (connected in ${fmt(r.connectMs, 0)} ms); sent ${r.sent}, acked ${r.acked}, ` +
          `deliveries announced ${r.expectedDeliveries}, received ${r.delivered}, errors ${r.errors}${r.firstError ? ` (first: ${r.firstError})` : ''}${r.drained ? '' : ', NOT DRAINED'}`,
      );
      for (const p of r.phases) console.log(`    ${phaseLine(p)}`);
    }
    console.log(`\n${resourcesHeading()}`);
    for (const r of results) {
      for (const p of r.phases) {
        console.log(resourceLine(r.label, p, sampler.results.get(`${r.label}/${p.name}`), { unit: 'room message', count: p.roomMessages, client: true }));
      }
    }

    console.log('\npersistence and delivery checks:');
    for (const c of checks) console.log(`  ${c}`);
    console.log(`  => ${ok ? 'OK' : 'FAILED'}`);

    console.log('\nmarkdown:');
    console.log(markdown);
    console.log(`\ntotal run time ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    await server.dispose();
  }
  return ok ? 0 : 1;
}

runMain(main);
