/**
 * bench/ingest: OTLP span ingest throughput (contract §4.14; design §8.18, §9), next to
 * raw-SQL baselines of the SAME rows measured in the same run:
 *
 *   json      the real app (buildApp on a fresh PostgreSQL database, RATE_LIMITS=off, silent
 *             logs, listening on 127.0.0.1): `POST /api/v1/telemetry/ingest` with an API key,
 *             OTLP/HTTP JSON bodies of `--spans` spans (default 100), `--clients` concurrent
 *             keep-alive HTTP clients (default 8) in a separate Node process (load.ts), closed loop;
 *             the server authenticates the key, validates every span, and stores the request
 *             with the tenant's other requests of the moment (group commit) in one tenant-scoped
 *             transaction with one multi-row INSERT;
 *   protobuf  the same with `application/x-protobuf` bodies;
 *   insert    baseline: `--clients` connections (superuser, no RLS, autocommit) each running a
 *             prepared multi-row `INSERT INTO telemetry_spans (same 15 columns) VALUES (...)` of
 *             `--spans` rows, closed loop, with the rows the server would store for those
 *             requests (decoded by the server's own `toSpans`; fresh ids per row);
 *   copy      baseline: the same rows through `COPY telemetry_spans (...) FROM STDIN` (text
 *             format, pg-copy-streams), one COPY of `--spans` rows per round trip;
 *   repo      diagnostic: the server's own storage step without HTTP — the tenant writer
 *             (begin + role + tenant and `insertSpansStatement` pipelined, then commit) on its own
 *             connections, `--clients` concurrent, same rows: the gap ingest → repo is HTTP,
 *             authentication, parsing and validation; repo → insert is the statement shape and
 *             the tenant-scoped transaction.
 *
 * Each scenario: `--warmup` s (default 2) then `--duration` s measured (default 10); spans/s =
 * spans answered (HTTP 200 / statement done) inside the window ÷ window. After each scenario the
 * bench checks that telemetry_spans gained exactly the acknowledged rows, then truncates it, so
 * every scenario starts from an empty table with the same two indexes. The load generator shares
 * the machine's CPUs with the server and PostgreSQL; the SQL baselines run in this process while
 * the app is idle. Runs only against 127.0.0.1; creates a fresh database and drops it at the end.
 *
 *   npm run bench:ingest -- [--duration 10] [--warmup 2] [--clients 8] [--spans 100]
 *                           [--scenarios json,protobuf,repo,insert,copy]
 *                           [--database-url postgres://postgres@127.0.0.1:5432/postgres]
 * Environment equivalents: BENCH_DURATION_S, BENCH_WARMUP_S, BENCH_CLIENTS, BENCH_SPANS,
 * BENCH_SCENARIOS, BENCH_DATABASE_URL (or DATABASE_URL).
 */
import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { Database } from '../../packages/server/src/db/client.js';
import { openTenantWriter } from '../../packages/server/src/db/tenant-writer.js';
import { ApiKeyService } from '../../packages/server/src/modules/api-keys/service.js';
import { HubService } from '../../packages/server/src/modules/hub/service.js';
import { KeyBindingService } from '../../packages/server/src/modules/key-binding/service.js';
import { insertSpansStatement } from '../../packages/server/src/modules/telemetry/repo.js';
import type { DecodedSpan } from '../../packages/server/src/modules/telemetry/otlp.js';
import { newDeviceKeys } from '@parley/server/testing';
import { benchArgs, commonOptions, num, runMain } from '../relay/cli.js';
import { fmt, printTable, ratio } from '../relay/report.js';
import { call, machineLines, newTenant, startBenchServer } from '../relay/setup.js';
import type { IngestLoadResult, IngestLoadSpec } from './load.js';
import { decodedRows, makeRequest } from './spans.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../..');

const arg = benchArgs(import.meta.url, ['clients', 'spans']);
const common = commonOptions(arg, { durationS: 10, warmupS: 2, window: 1, rate: 1, scenarios: ['json', 'protobuf', 'repo', 'insert', 'copy'] });
const opts = {
  ...common,
  clients: Math.floor(num('clients', arg('clients', 'BENCH_CLIENTS'), 8)),
  spans: Math.floor(num('spans', arg('spans', 'BENCH_SPANS'), 100)),
};
if (opts.spans > 5000) throw new Error('spans per request is capped at 5000 (the ingest limit)');
if (opts.clients > 64) throw new Error('clients is capped at 64');
if (opts.scenarios.size * (opts.durationS + opts.warmupS) > 120) throw new Error('the planned phases are capped at 120 s');

const COLUMNS = 'id, tenant_id, device_id, trace_id, span_id, parent_span_id, name, kind, start_time, end_time, duration_us, status_code, status_message, attributes, resource';
const BODIES = 50;

/** One scenario's numbers. */
interface Outcome {
  label: string;
  spans: number;
  requests: number;
  measuredMs: number;
  errors: number;
  p50: number;
  p99: number;
  /** Rows acknowledged in total (warm-up included): the table must hold exactly these. */
  acknowledged: number;
  note: string;
}

/** Fork load.ts for one ingest scenario and answer its result. */
/**
 * The `repo` diagnostic: the server's storage step (the tenant writer's transaction of
 * `insertSpansStatement`) on its own writer connections, closed loop.
 */
async function repoBaseline(database: Database, batches: DecodedSpan[][], tenantId: string, deviceId: string): Promise<Outcome> {
  const writer = openTenantWriter(database);
  try {
    return await closedLoop('repo', `tenant writer + insertSpansStatement of ${opts.spans} rows (two round trips)`, opts.clients, (i) =>
      writer.write({ tenantId, name: 'bench_spans', statement: insertSpansStatement(tenantId, [{ deviceId, spans: batches[i]! }]) }),
    );
  } finally {
    await writer.close();
  }
}

/**
 * Run `workers` closed loops of `step(batch index)` for warm-up + duration; count the spans of the
 * steps that finished inside the measured window.
 */
async function closedLoop(label: string, note: string, workers: number, step: (i: number, worker: number) => Promise<unknown>): Promise<Outcome> {
  const n = opts.spans;
  const start = performance.now();
  const measureFrom = start + opts.warmupS * 1000;
  const end = measureFrom + opts.durationS * 1000;
  const latencies: number[] = [];
  let spans = 0;
  let requests = 0;
  let acknowledged = 0;
  let next = 0;
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      while (performance.now() < end) {
        const t = performance.now();
        await step(next++ % BODIES, w);
        const done = performance.now();
        acknowledged += n;
        if (done >= measureFrom && done <= end) {
          spans += n;
          requests++;
          latencies.push(done - t);
        }
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN;
  return { label, spans, requests, measuredMs: opts.durationS * 1000, errors: 0, p50: q(0.5), p99: q(0.99), acknowledged, note };
}

function forkLoad(spec: IngestLoadSpec): Promise<IngestLoadResult> {
  return new Promise((resolve, reject) => {
    const child = fork(path.join(here, 'load.ts'), [], { cwd: repoRoot, execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const limit = setTimeout(() => child.kill('SIGKILL'), spec.warmupMs + spec.durationMs + 60_000);
    child.once('message', (m: { result?: IngestLoadResult; error?: string }) => {
      clearTimeout(limit);
      if (m.result) resolve(m.result);
      else reject(new Error(m.error ?? 'load generator failed'));
    });
    child.once('exit', (code) => {
      clearTimeout(limit);
      reject(new Error(`load generator exited with ${code}`));
    });
    child.send({ spec });
  });
}

/** COPY text-format field: `\N` for null; backslash, tab, newline and carriage return escaped. */
const copyField = (v: string | number | null) => (v === null ? '\\N' : String(v).replace(/[\\\t\n\r]/g, (c) => ({ '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' })[c]!));

/** The 14 non-id column values of a stored span, in COLUMNS order. */
function values(s: DecodedSpan, tenantId: string, deviceId: string): (string | number | null)[] {
  return [
    tenantId,
    deviceId,
    s.traceId,
    s.spanId,
    s.parentSpanId,
    s.name,
    s.kind,
    s.startTime.toISOString(),
    s.endTime.toISOString(),
    s.durationUs,
    s.statusCode,
    s.statusMessage,
    JSON.stringify(s.attributes),
    JSON.stringify(s.resource),
  ];
}

/**
 * A SQL baseline: `clients` connections, closed loop, each round trip storing one batch of the
 * pre-decoded rows with fresh ids (multi-row INSERT, prepared per connection, or one COPY).
 */
async function sqlBaseline(kind: 'insert' | 'copy', databaseUrl: string, batches: DecodedSpan[][], tenantId: string, deviceId: string): Promise<Outcome> {
  const rowsOf = batches.map((b) => b.map((s) => values(s, tenantId, deviceId)));
  const copyTails = rowsOf.map((rows) => rows.map((r) => r.map(copyField).join('\t') + '\n'));
  const n = opts.spans;
  const placeholders = Array.from({ length: n }, (_, i) => `(${Array.from({ length: 15 }, (_, j) => `$${i * 15 + j + 1}`).join(', ')})`).join(', ');
  const insertText = `insert into telemetry_spans (${COLUMNS}) values ${placeholders}`;
  const copyText = `copy telemetry_spans (${COLUMNS}) from stdin`;
  const clients = await Promise.all(
    Array.from({ length: opts.clients }, async () => {
      const c = new pg.Client({ connectionString: databaseUrl });
      await c.connect();
      return c;
    }),
  );
  const note = kind === 'insert' ? `prepared INSERT … VALUES of ${n} rows x 15 params` : `COPY … FROM STDIN (text) of ${n} rows`;
  try {
    return await closedLoop(kind, note, clients.length, async (i, w) => {
      const c = clients[w]!;
      if (kind === 'insert') {
        const params: (string | number | null)[] = [];
        for (const r of rowsOf[i]!) params.push(randomUUID(), ...r);
        await c.query({ name: 'bench-insert', text: insertText, values: params });
      } else {
        const body = copyTails[i]!.map((tail) => `${randomUUID()}\t${tail}`).join('');
        await pipeline(Readable.from([Buffer.from(body)]), c.query(copyFrom(copyText)));
      }
    });
  } finally {
    await Promise.all(clients.map((c) => c.end()));
  }
}

async function main(): Promise<number> {
  const server = await startBenchServer(opts.adminUrl);
  const { app, sql, databaseUrl } = server;
  const baseUrl = server.wsUrl.replace(/^ws/, 'http').replace(/\/api\/v1\/ws$/, '');
  let ok = true;
  try {
    // One tenant, one API key bound to key material (its agent device owns the spans).
    const { tenantId, auth } = await newTenant(app, 'bench-owner@example.com', 'Ingest bench');
    const key = await call(app, 'POST', '/api-keys', 201, auth, { name: 'bench-agent' });
    const k = newDeviceKeys();
    const noop = { toOwners: async () => undefined, closeDevice: async () => undefined } as never;
    const keyBinding = new KeyBindingService(app.parley.database.db, app.parley.secrets, { required: false });
    await keyBinding.init();
    const { device_id: deviceId } = await new ApiKeyService(app.parley.database.db, noop, keyBinding, new HubService(app.parley.database.db, app.parley.keyDirectory), app.parley.keyDirectory).registerClientKey(tenantId, key.id, {
      identity_public_key: k.identityPublicKey,
      ephemeral_public_key: k.ephemeralPublicKey,
      signature: k.proof(),
    });
    const batches = Array.from({ length: BODIES }, (_, i) => decodedRows(makeRequest(i, opts.spans)));
    const jsonBytes = Buffer.byteLength(JSON.stringify(makeRequest(0, opts.spans)));

    console.log(
      [
        ...(await machineLines(sql)),
        `${opts.clients} concurrent clients / connections, ${opts.spans} spans per request (JSON body ${(jsonBytes / 1024).toFixed(1)} KiB), ` +
          `${BODIES} distinct bodies cycled; warm-up ${opts.warmupS} s + measured ${opts.durationS} s per scenario`,
        `load average at start: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')} (1/5/15 min)`,
      ]
        .map((l) => `# ${l}`)
        .join('\n'),
    );

    const outcomes: Outcome[] = [];
    const rowCount = async () => Number((await sql.query<{ n: string }>('select count(*) as n from telemetry_spans')).rows[0]!.n);
    for (const scenario of ['json', 'protobuf', 'repo', 'insert', 'copy'].filter((s) => opts.scenarios.has(s))) {
      await sql.query('truncate telemetry_spans');
      await sql.query('checkpoint');
      let o: Outcome;
      if (scenario === 'json' || scenario === 'protobuf') {
        const r = await forkLoad({
          url: `${baseUrl}/api/v1/telemetry/ingest`,
          apiKey: key.key,
          encoding: scenario,
          clients: opts.clients,
          spansPerRequest: opts.spans,
          bodies: BODIES,
          warmupMs: opts.warmupS * 1000,
          durationMs: opts.durationS * 1000,
        });
        if (r.errors > 0) {
          ok = false;
          console.error(`${scenario}: ${r.errors} failed requests, first: ${r.firstError}`);
        }
        o = { label: `ingest ${scenario}`, spans: r.spans, requests: r.requests, measuredMs: r.measuredMs, errors: r.errors, p50: r.p50, p99: r.p99, acknowledged: r.totalSpans, note: `body ${(r.bodyBytes / 1024).toFixed(1)} KiB` };
      } else if (scenario === 'repo') {
        o = await repoBaseline(app.parley.database, batches, tenantId, deviceId);
      } else {
        o = await sqlBaseline(scenario as 'insert' | 'copy', databaseUrl, batches, tenantId, deviceId);
      }
      const stored = await rowCount();
      if (stored !== o.acknowledged) {
        ok = false;
        console.error(`${o.label}: telemetry_spans holds ${stored} rows, ${o.acknowledged} were acknowledged`);
      }
      outcomes.push(o);
      console.log(`# ${o.label}: ${fmt(o.spans / (o.measuredMs / 1000), 0)} spans/s; ${stored} rows stored = acknowledged ${o.acknowledged}${o.errors ? `; ${o.errors} errors` : ''}`);
    }

    const rate = (o: Outcome | undefined) => (o ? o.spans / (o.measuredMs / 1000) : undefined);
    const insert = rate(outcomes.find((o) => o.label === 'insert'));
    const copy = rate(outcomes.find((o) => o.label === 'copy'));
    console.log('');
    const table = printTable(
      ['scenario', 'spans/s', 'requests/s', 'p50 ms', 'p99 ms', 'vs INSERT', 'vs COPY', 'note'],
      outcomes.map((o) => [
        o.label,
        fmt(rate(o)!, 0),
        fmt(o.requests / (o.measuredMs / 1000), 1),
        fmt(o.p50, 2),
        fmt(o.p99, 2),
        ratio(rate(o)!, insert),
        ratio(rate(o)!, copy),
        o.note,
      ]),
    );
    console.log(`\nMarkdown:\n\n${table}`);
  } finally {
    await server.dispose();
  }
  return ok ? 0 : 1;
}

runMain(main);
