/**
 * Push delivery test fixtures (design §8.36): a migrated database of its own (PGlite in memory, or a
 * fresh PostgreSQL database with TEST_BACKEND=postgres), one tenant with an owner device and an
 * agent device, presence the test sets, the push factory wired to them, and a loopback push-service
 * double that records every request and answers the statuses it is told.
 */
import { createECDH, randomBytes, randomUUID, type ECDH } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'drizzle-orm';
import Fastify from 'fastify';
import { openDatabase, type Database, type Db } from '../../src/db/client.js';
import { runMigrations } from '../../src/db/migrate.js';
import { crossTenant } from '../../src/db/tenant.js';
import { loadConfig, type Config } from '../../src/config.js';
import { Metrics } from '../../src/lib/metrics.js';
import { SecretBox } from '../../src/lib/secret-box.js';
import { createPush, type PushArea, type PushDeps } from '../../src/modules/push/index.js';
import { InProcessBus } from '../../src/realtime/bus.js';
import { Notifier } from '../../src/realtime/notifier.js';
import { LocalPresence } from '../../src/realtime/presence.js';
import { backend, createPgDatabase } from '../../testing/harness.js';

/** A request the double received. */
export interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** An HTTP server on 127.0.0.1 that records requests and answers `next` statuses (201 when empty). */
export class ServiceDouble {
  readonly received: Received[] = [];
  /** Statuses to answer, in order; 201 once used up. */
  readonly next: number[] = [];
  private server!: http.Server;
  url = '';

  /** `handler` may answer a request itself (token endpoints); returning false leaves it to the status queue. */
  constructor(private readonly handler?: (r: Received, res: http.ServerResponse) => boolean) {}

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const r = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) };
        if (this.handler?.(r, res)) return;
        this.received.push(r);
        res.statusCode = this.next.shift() ?? 201;
        res.end();
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** A browser's push subscription: its keys and the JSON it registers. */
export interface Subscription {
  ecdh: ECDH;
  auth: Buffer;
  token: string;
}

/** A subscription whose endpoint is `endpoint`, with fresh P-256 and auth keys (RFC 8291 §2). */
export function newSubscription(endpoint: string): Subscription {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  const auth = randomBytes(16);
  return { ecdh, auth, token: JSON.stringify({ endpoint, keys: { p256dh: ecdh.getPublicKey().toString('base64url'), auth: auth.toString('base64url') } }) };
}

/** Sets of online devices the test controls, through the service's own presence view. */
export class Online {
  readonly ids = new Set<string>();
  readonly presence = new LocalPresence({ isOnline: (id) => this.ids.has(id), localDevices: () => this.ids });
}

/** A migrated database with one tenant, its owner device and its agent device (both ACTIVE). */
export interface PushWorld {
  database: Database;
  db: Db;
  config: Config;
  secrets: SecretBox;
  tenantId: string;
  ownerDeviceId: string;
  agentDeviceId: string;
  online: Online;
  /** Build the push factory on this world (`env` on top of WEBHOOK_ALLOW_PRIVATE/HTTP). */
  push(opts?: { env?: Record<string, string>; deps?: Partial<PushDeps> }): Promise<PushArea & { metrics: Metrics; notifier: Notifier }>;
  /** Insert another ACTIVE device of the tenant. */
  addDevice(kind: 'owner' | 'agent', name: string): Promise<string>;
  close(): Promise<void>;
}

/** Every log line the push factories of the test process wrote (JSON text). */
export const logLines: string[] = [];
const log = Fastify({ logger: { level: 'debug', stream: { write: (line: string) => void logLines.push(line) } } }).log;

export async function pushWorld(): Promise<PushWorld> {
  let drop: (() => Promise<void>) | undefined;
  let database: Database;
  if (backend === 'postgres') {
    const created = await createPgDatabase();
    drop = created.drop;
    database = await openDatabase({ databaseUrl: created.url, poolSize: 5 });
  } else {
    database = await openDatabase({ inMemory: true });
  }
  await runMigrations(database);
  const db = database.db;
  const tenantId = randomUUID();
  await crossTenant(db, 'test fixture', (tx) => tx.execute(sql`insert into tenants (id, name) values (${tenantId}, 'Push tenant')`));
  const addDevice = async (kind: 'owner' | 'agent', name: string): Promise<string> => {
    const id = randomUUID();
    await crossTenant(db, 'test fixture', (tx) =>
      tx.execute(sql`
        insert into devices (id, tenant_id, kind, status, identity_public_key, ephemeral_public_key, fingerprint, name, owner_sub)
        values (${id}, ${tenantId}, ${kind}, 'ACTIVE', ${randomBytes(32).toString('base64')}, ${randomBytes(32).toString('base64')}, ${randomBytes(8).toString('hex')}, ${name}, ${kind === 'owner' ? 'owner-1' : null})`),
    );
    return id;
  };
  const ownerDeviceId = await addDevice('owner', 'Owner phone');
  const agentDeviceId = await addDevice('agent', 'Build agent');
  const secrets = new SecretBox(randomBytes(32));
  const online = new Online();
  const built: PushArea[] = [];
  const world: PushWorld = {
    database,
    db,
    config: loadConfig({ LOG_LEVEL: 'silent', PUBLIC_URL: 'https://parley.example' }),
    secrets,
    tenantId,
    ownerDeviceId,
    agentDeviceId,
    online,
    async push(opts = {}) {
      const config = loadConfig({ LOG_LEVEL: 'silent', PUBLIC_URL: 'https://parley.example', WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_TIMEOUT_MS: '3000', ...opts.env });
      const metrics = new Metrics();
      const notifier = new Notifier(new InProcessBus());
      const p = await createPush({ db, config, secrets, log, metrics, notifier, presence: online.presence, ...opts.deps });
      built.push(p);
      return Object.assign(p, { metrics, notifier });
    },
    addDevice,
    async close() {
      for (const p of built) await p.close();
      await database.close();
      await drop?.();
    },
  };
  return world;
}

/** Hand an event to the push sink as the Notifier does, and wait until it is in the outbox. */
export async function notify(p: PushArea, ...args: Parameters<PushArea['sink']['enqueue']>): Promise<void> {
  await p.sink.enqueue(...args);
  await p.settled();
}

/** The value of counter or histogram-count `name` with `labels` in `metrics` (0 when absent). */
export async function metricValue(metrics: Metrics, name: string, labels: Record<string, string>): Promise<number> {
  const m = (await metrics.registry.getMetricsAsJSON()).find((x) => x.name === name);
  const v = m?.values.find((x) => Object.entries(labels).every(([k, val]) => (x.labels as Record<string, unknown>)[k] === val));
  return v?.value ?? 0;
}

/** The outbox rows of the world (cross-tenant read for assertions). */
export async function outboxRows(db: Db): Promise<{ push_token_id: string; kind: string; status: string; count: number; attempts: number; urgent: boolean; due_in_ms: number }[]> {
  const res = (await crossTenant(db, 'test assertion', (tx) =>
    tx.execute(sql`select push_token_id, kind, status, count, attempts, urgent, (extract(epoch from next_attempt_at - now()) * 1000)::float8 as due_in_ms from push_deliveries order by kind`),
  )) as unknown as { rows: { push_token_id: string; kind: string; status: string; count: number; attempts: number; urgent: boolean; due_in_ms: number }[] };
  return res.rows;
}

/** Make every outbox row due now (the collapse window or a retry delay has passed). */
export async function makeDue(db: Db): Promise<void> {
  await crossTenant(db, 'test clock', (tx) => tx.execute(sql`update push_deliveries set next_attempt_at = now() where status = 'pending'`));
}
