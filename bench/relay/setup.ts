/**
 * Set-up shared by the benchmarks that drive the real app on PostgreSQL (bench/relay, bench/rooms):
 * a fresh database per run, the app (buildApp) listening on 127.0.0.1 with rate limits off and
 * silent logs, HTTP calls through `app.inject`, agent provisioning (invite -> enroll -> approve ->
 * activate), the forked load generator and the machine description. Command-line options: cli.ts;
 * report formatting: report.ts.
 */
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { buildApp } from '../../packages/server/src/app.js';
import { loadConfig } from '../../packages/server/src/config.js';
import { SERVICE_NODE_FLAGS } from '../../packages/server/src/ops/node-flags.js';
import { newDeviceKeys } from '@parley/server/testing';
import type { ChildToParent, Pair } from './common.js';
import type { ResourceSampler } from './resources.js';

/** Fresh database `parley_bench_<ms>_<hex>`; bench databases left behind by an interrupted run (older than 15 minutes) are dropped first. */
export async function createDatabase(adminUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `parley_bench_${Date.now()}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  const { rows } = await admin.query<{ datname: string }>(`select datname from pg_database where datname ~ '^parley_bench_[0-9]+_[0-9a-f]{8}$'`);
  for (const { datname } of rows) {
    if (Date.now() - Number(datname.split('_')[2]) > 15 * 60_000) await admin.query(`drop database if exists ${datname} with (force)`);
  }
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  let dropping: Promise<void> | undefined;
  return {
    url: url.toString(),
    drop: () =>
      (dropping ??= (async () => {
        const c = new pg.Client({ connectionString: adminUrl });
        await c.connect();
        await c.query(`drop database if exists ${name} with (force)`);
        await c.end();
      })()),
  };
}

/** The app under test on a fresh database, and a superuser connection to that database. */
export interface BenchServer {
  app: FastifyInstance;
  /** `ws://127.0.0.1:<port>/api/v1/ws` */
  wsUrl: string;
  databaseUrl: string;
  /** Connected to the bench database as the admin user (RLS does not apply). */
  sql: pg.Client;
  /** Close the app (which drains its batchers); idempotent. */
  closeApp(): Promise<void>;
  /** Close the app and `sql`, drop the database, remove the data directory. */
  dispose(): Promise<void>;
}

/**
 * Create a fresh database, build the app on it (LOG_LEVEL=silent, RATE_LIMITS=off) and listen on
 * 127.0.0.1:0. Ctrl-C / SIGTERM drop the database and exit 130; call `dispose()` otherwise.
 */
export async function startBenchServer(adminUrl: string): Promise<BenchServer> {
  // The app runs in this process: it should run with the flags `npm start` gives the service.
  const missing = SERVICE_NODE_FLAGS.filter((f) => !process.execArgv.includes(f) && !(process.env.NODE_OPTIONS ?? '').split(/\s+/).includes(f));
  if (missing.length > 0) console.log(`# WARNING: this process lacks the service's Node flags ${missing.join(' ')} (npm start has them; run the bench through its npm script)`);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-bench-'));
  const database = await createDatabase(adminUrl);
  let interrupting = false;
  const interrupted = (signal: NodeJS.Signals) => {
    // `npm run` relays the signal a second time: stay registered and ignore repeats while cleaning up.
    if (interrupting) return;
    interrupting = true;
    console.error(`\n${signal}: dropping the bench database`);
    // Dropping WITH (FORCE) terminates the app's open connections; we are exiting anyway.
    process.on('uncaughtException', () => undefined);
    void database.drop().finally(() => {
      fs.rmSync(dataDir, { recursive: true, force: true });
      process.exit(130);
    });
  };
  process.on('SIGINT', interrupted);
  process.on('SIGTERM', interrupted);
  const sql = new pg.Client({ connectionString: database.url });
  sql.on('error', () => undefined); // terminated when the database is dropped on interrupt
  let app: FastifyInstance | undefined;
  let closing: Promise<void> | undefined;
  const closeApp = () => (closing ??= app ? app.close().then(() => undefined) : Promise.resolve());
  const dispose = async () => {
    await sql.end().catch(() => undefined);
    await closeApp().catch(() => undefined);
    await database.drop().catch((err: unknown) => console.error('could not drop the bench database:', err));
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const config = {
      ...loadConfig({ LOG_LEVEL: 'silent', RATE_LIMITS: 'off', DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: '0' }),
      databaseUrl: database.url,
    };
    app = await buildApp(config);
    await app.listen({ host: '127.0.0.1', port: 0 });
    await sql.connect();
  } catch (err) {
    await dispose();
    throw err;
  }
  const port = (app.server.address() as { port: number }).port;
  return { app, wsUrl: `ws://127.0.0.1:${port}/api/v1/ws`, databaseUrl: database.url, sql, closeApp, dispose };
}

/** What {@link call} needs of a server: Fastify's `inject` (in process), or {@link httpInjector} (over HTTP). */
export interface Injector {
  inject(opts: { method: 'GET' | 'POST' | 'PATCH'; url: string; headers: Record<string, string>; payload?: object }): Promise<{ statusCode: number; body: string; json(): any }>;
}

/**
 * An {@link Injector} that sends each call over HTTP to `baseUrl` (e.g. a load balancer in front
 * of several instances, bench/cluster), with a JSON body when there is a payload.
 */
export function httpInjector(baseUrl: string): Injector {
  return {
    async inject({ method, url, headers, payload }) {
      const res = await fetch(`${baseUrl}${url}`, {
        method,
        headers: { ...headers, ...(payload ? { 'content-type': 'application/json' } : {}) },
        ...(payload ? { body: JSON.stringify(payload) } : {}),
      });
      const body = await res.text();
      return { statusCode: res.status, body, json: () => JSON.parse(body) };
    },
  };
}

/** One HTTP call through `app.inject`; throws unless the answer has `status`. Answers the JSON body. */
export async function call(app: Injector, method: 'GET' | 'POST' | 'PATCH', url: string, status: number, headers: Record<string, string> = {}, payload?: object) {
  const res = await app.inject({ method, url: `/api/v1${url}`, headers, ...(payload ? { payload } : {}) });
  if (res.statusCode !== status) throw new Error(`${method} ${url}: expected ${status}, got ${res.statusCode} ${res.body}`);
  return res.json();
}

/** A tenant with its owner: the owner JWT (dev IdP) and the matching Authorization header. */
export async function newTenant(app: FastifyInstance, sub: string, name: string): Promise<{ tenantId: string; ownerToken: string; auth: Record<string, string> }> {
  const ownerToken = await app.parley.devIdp!.mint(sub);
  const auth = { authorization: `Bearer ${ownerToken}` };
  const { tenant_id: tenantId } = await call(app, 'POST', '/tenants', 201, auth, { name });
  return { tenantId, ownerToken, auth };
}

/** An ACTIVE agent device: its id, device JWT and the activation answer. */
export interface ActiveAgent {
  deviceId: string;
  jwt: string;
  activation: any;
}

/** invite -> enroll -> approve -> activate one agent device, as the owner behind `auth`. */
export async function enrollAgent(app: Injector, auth: Record<string, string>, name: string): Promise<ActiveAgent> {
  const invite = await call(app, 'POST', '/invites', 201, auth, {});
  const k = newDeviceKeys();
  const enrolled = await call(app, 'POST', '/enroll', 201, {}, {
    invite_token: invite.token,
    identity_public_key: k.identityPublicKey,
    ephemeral_public_key: k.ephemeralPublicKey,
    proof_of_possession: k.proof(),
    platform: 'bench',
    name,
  });
  const id = enrolled.device_id as string;
  await call(app, 'PATCH', `/devices/${id}/approve`, 200, auth);
  const activation = await call(app, 'POST', `/devices/${id}/activate`, 200, {}, { signature: k.sign(`activate:${id}`) });
  return { deviceId: id, jwt: activation.device_jwt, activation };
}

/**
 * The relay benchmarks' conversations in the tenant of `auth` (an owner's Authorization header): N
 * owner devices (registered first, so activation links each agent to all of them) and N agents;
 * pair i is the conversation of agent i with owner device i (each socket has exactly one peer).
 * Answers the pairs (URLs left empty: each scenario fills them in) and the agents' device JWTs.
 * @throws when a call fails or an agent has no conversation with its owner device.
 */
export async function provisionPairs(app: Injector, auth: Record<string, string>, n: number): Promise<{ pairs: Pair[]; agentJwts: string[] }> {
  const owners: string[] = [];
  for (let i = 0; i < n; i++) {
    const k = newDeviceKeys();
    const r = await call(app, 'POST', '/devices/register', 201, auth, { identity_public_key: k.identityPublicKey, ephemeral_public_key: k.ephemeralPublicKey, name: `owner-${i}` });
    owners.push(r.device_id);
  }
  const pairs: Pair[] = [];
  const agentJwts: string[] = [];
  for (let i = 0; i < n; i++) {
    const { deviceId: id, activation: act } = await enrollAgent(app, auth, `agent-${i}`);
    const link = (act.conversations as { conversation_id: string; owner_device_id: string; message_group_id: string }[]).find((c) => c.owner_device_id === owners[i]);
    if (!link) throw new Error(`agent ${i} has no conversation with owner device ${i}`);
    agentJwts.push(act.device_jwt);
    pairs.push({
      conversationId: link.conversation_id,
      groupId: link.message_group_id,
      topicId: act.default_topic_id,
      agent: { deviceId: id, url: '' },
      owner: { deviceId: owners[i]!, url: '' },
    });
  }
  return { pairs, agentJwts };
}

/**
 * Run one scenario in a fresh load-generator process: fork `script` (through tsx), send it
 * `{type: 'run', spec}`, forward its window marks to `sampler` (key `<label>/<phase>`) and answer
 * its result. The child is killed after `timeoutMs`.
 */
export function forkLoad<S extends { label: string }, R>(script: string, spec: S, sampler: ResourceSampler, timeoutMs: number, cwd: string): Promise<R> {
  let marks: Promise<void> = Promise.resolve();
  return new Promise<R>((resolve, reject) => {
    const child = fork(script, [], { cwd, execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let settled = false;
    const limit = setTimeout(() => {
      child.kill('SIGKILL');
      if (!settled) reject(new Error(`${spec.label}: load generator timed out`));
      settled = true;
    }, timeoutMs);
    child.on('message', (m: ChildToParent<R>) => {
      if (m.type === 'mark') {
        marks = marks.then(() => sampler.mark(`${spec.label}/${m.phase}`, m.edge)).catch((err: unknown) => console.error('resource sampling failed:', err));
        return;
      }
      settled = true;
      clearTimeout(limit);
      if (m.type === 'result') resolve(m.result);
      else reject(new Error(`${spec.label}: ${m.error}`));
    });
    child.on('exit', (code) => {
      clearTimeout(limit);
      if (!settled) reject(new Error(`${spec.label}: load generator exited with ${code}`));
      settled = true;
    });
    child.send({ type: 'run', spec });
  }).then(async (r) => {
    await marks;
    return r;
  });
}

/** Two lines describing the machine, Node and the PostgreSQL settings that matter for commit latency. */
export async function machineLines(sql: pg.Client): Promise<string[]> {
  const pgInfo = (
    await sql.query<{ version: string; sc: string; fsync: string; wsm: string; sb: string; cd: string }>(
      `select version() as version, current_setting('synchronous_commit') as sc, current_setting('fsync') as fsync,
              current_setting('wal_sync_method') as wsm, current_setting('shared_buffers') as sb, current_setting('commit_delay') as cd`,
    )
  ).rows[0]!;
  const cpus = os.cpus();
  return [
    `cpus: ${cpus.length} x ${cpus[0]?.model.trim() ?? '?'}, memory ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.platform()} ${os.release()}`,
    `node ${process.version}; ${pgInfo.version.split(' on ')[0]} on 127.0.0.1 (same machine): synchronous_commit=${pgInfo.sc}, fsync=${pgInfo.fsync}, wal_sync_method=${pgInfo.wsm}, commit_delay=${pgInfo.cd}, shared_buffers=${pgInfo.sb}`,
  ];
}
