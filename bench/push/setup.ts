/**
 * bench/push set-up: the real app (PGlite in memory, or a fresh PostgreSQL database), the Web Push
 * service double in its child process (double.ts), and the push world: one tenant with N owner
 * devices, each with a browser push subscription whose endpoint is the double (`/push/<i>`), and
 * one ACTIVE agent with a conversation with every owner device.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { createECDH, randomBytes, randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { Db } from '../../packages/server/src/db/client.js';
import { schema, startApp, withTenant, type TestApp } from '@parley/server/testing';
import { SERVICE_NODE_FLAGS } from '../../packages/server/src/ops/node-flags.js';
import { assertLoopback } from '../relay/cli.js';
import { createDatabase, enrollAgent, newTenant } from '../relay/setup.js';
import type { Arrival, FromDouble, ToDouble } from './double.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));

/** The app under test and how to describe and dispose of it. */
export interface BenchApp {
  t: TestApp;
  db: Db;
  /** `PGlite (in memory, in this process)` or the PostgreSQL version and settings. */
  backend: string;
  close(): Promise<void>;
}

/**
 * Start the app listening on 127.0.0.1 with `env` on top of the bench defaults (LOG_LEVEL=silent,
 * RATE_LIMITS=off, WEBHOOK_ALLOW_PRIVATE / WEBHOOK_ALLOW_HTTP on: the double is a loopback `http:`
 * endpoint). With `adminUrl` (loopback only) on a fresh PostgreSQL database created under it and
 * dropped by `close()`; without, on PGlite in memory.
 */
export async function startBenchApp(adminUrl: string | undefined, env: Record<string, string>): Promise<BenchApp> {
  const missing = SERVICE_NODE_FLAGS.filter((f) => !process.execArgv.includes(f) && !(process.env.NODE_OPTIONS ?? '').split(/\s+/).includes(f));
  if (missing.length > 0) console.log(`# WARNING: this process lacks the service's Node flags ${missing.join(' ')} (run the bench through its npm script)`);
  const appEnv = { LOG_LEVEL: 'silent', RATE_LIMITS: 'off', WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_ALLOW_HTTP: 'true', ...env };
  if (!adminUrl) {
    const t = await startApp({ listen: true, env: appEnv });
    return { t, db: t.app.parley.database.db, backend: 'PGlite (in memory, in the bench process)', close: () => t.close() };
  }
  assertLoopback(adminUrl);
  const database = await createDatabase(adminUrl);
  try {
    const t = await startApp({ listen: true, env: appEnv, databaseUrl: database.url });
    const c = new pg.Client({ connectionString: database.url });
    await c.connect();
    const { rows } = await c.query<{ v: string; sc: string; fsync: string }>(
      `select version() as v, current_setting('synchronous_commit') as sc, current_setting('fsync') as fsync`,
    );
    await c.end();
    const r = rows[0]!;
    const backend = `${r.v.split(' on ')[0]} on 127.0.0.1 (same machine): synchronous_commit=${r.sc}, fsync=${r.fsync}`;
    return { t, db: t.app.parley.database.db, backend, close: () => t.close().finally(() => database.drop()) };
  } catch (err) {
    await database.drop();
    throw err;
  }
}

/** The double, seen from the bench. */
export interface Double {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** The requests that arrived since the previous call, once there are `n` of them (fewer after `timeoutMs`). */
  arrivals(n: number, timeoutMs: number): Promise<{ arrivals: Arrival[]; connections: number }>;
  close(): Promise<void>;
}

/** Fork the double (double.ts through tsx) and wait until it listens. */
export async function startDouble(): Promise<Double> {
  const child: ChildProcess = fork(path.join(HERE, 'double.ts'), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const next = () =>
    new Promise<FromDouble>((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`the push service double exited with ${code}`));
      child.once('exit', onExit);
      child.once('message', (m: FromDouble) => {
        child.off('exit', onExit);
        resolve(m);
      });
    });
  const ready = await next();
  if (ready.type !== 'ready') throw new Error('the push service double did not start');
  return {
    url: ready.url,
    async arrivals(n, timeoutMs) {
      const answer = next();
      child.send({ type: 'await', n, timeoutMs } satisfies ToDouble);
      const m = await answer;
      if (m.type !== 'arrivals') throw new Error(`unexpected message from the double: ${m.type}`);
      return m;
    },
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.send({ type: 'close' } satisfies ToDouble);
      }),
  };
}

/** A browser push subscription as `web-push` takes it. */
export interface BenchSubscription {
  endpoint: string;
  keys: { p256dh: string; auth: string };
}

/** The tenant the bench pushes to. */
export interface PushWorld {
  tenantId: string;
  /** Owner devices, index i has the subscription whose endpoint path is `/push/<i>`. */
  devices: { deviceId: string; subscription: BenchSubscription; conversationId: string }[];
  agent: { deviceId: string; jwt: string };
}

/** Rows per INSERT when writing the devices and registrations. */
const CHUNK = 500;

/**
 * One tenant with `n` ACTIVE owner devices and one ACTIVE agent (invite -> enroll -> approve ->
 * activate over HTTP; activation gives it a conversation with each owner device), then one `web`
 * push registration per owner device: a PushSubscription with fresh P-256 and auth keys (RFC 8291
 * §2) and the endpoint `<doubleUrl>/push/<i>`. The devices and registrations are written straight
 * to the database (the registration route is not what is measured); registering after the
 * enrolment keeps its `device_pending` wake-ups out of the measurements.
 */
export async function pushWorld(b: BenchApp, doubleUrl: string, n: number): Promise<PushWorld> {
  const sub = `bench-push-${randomUUID()}@example.com`;
  const owner = await newTenant(b.t.app, sub, 'Push bench');
  const ids = Array.from({ length: n }, () => randomUUID());
  for (let i = 0; i < n; i += CHUNK) {
    const rows = ids.slice(i, i + CHUNK).map((id, j) => ({
      id,
      tenantId: owner.tenantId,
      kind: 'owner',
      status: 'ACTIVE',
      identityPublicKey: randomBytes(32).toString('base64'),
      ephemeralPublicKey: randomBytes(32).toString('base64'),
      fingerprint: randomBytes(8).toString('hex'),
      name: `Owner device ${i + j}`,
      ownerSub: sub,
      approvedAt: new Date(),
      activatedAt: new Date(),
    }));
    await withTenant(b.db, owner.tenantId, (tx) => tx.insert(schema.devices).values(rows));
  }
  const agent = await enrollAgent(b.t.app, owner.auth, 'Bench agent');
  const conversationOf = new Map((agent.activation.conversations as { conversation_id: string; owner_device_id: string }[]).map((c) => [c.owner_device_id, c.conversation_id]));
  const devices = ids.map((deviceId, i) => {
    const ecdh = createECDH('prime256v1');
    ecdh.generateKeys();
    const conversationId = conversationOf.get(deviceId);
    if (!conversationId) throw new Error(`the agent has no conversation with owner device ${i}`);
    return { deviceId, conversationId, subscription: { endpoint: `${doubleUrl}/push/${i}`, keys: { p256dh: ecdh.getPublicKey().toString('base64url'), auth: randomBytes(16).toString('base64url') } } };
  });
  for (let i = 0; i < n; i += CHUNK) {
    const rows = devices.slice(i, i + CHUNK).map((d) => ({ id: randomUUID(), tenantId: owner.tenantId, deviceId: d.deviceId, platform: 'web', token: JSON.stringify(d.subscription) }));
    await withTenant(b.db, owner.tenantId, (tx) => tx.insert(schema.pushTokens).values(rows));
  }
  return { tenantId: owner.tenantId, devices, agent: { deviceId: agent.deviceId, jwt: agent.jwt } };
}

/** `cpus: …` and `node …; load average …` lines for the report. */
export function machineLine(): string {
  const cpus = os.cpus();
  return `cpus: ${cpus.length} x ${cpus[0]?.model.trim() ?? '?'}, memory ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.platform()} ${os.release()}; node ${process.version}; load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`;
}
