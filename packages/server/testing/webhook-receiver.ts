/**
 * Test helpers for webhook delivery: a local receiver (127.0.0.1) that records requests and answers
 * scripted statuses, `waitFor` polling and the delivery rows of a device.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'drizzle-orm';
import type { TestApp } from './harness.js';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** A local webhook receiver: answers each path from its script of statuses (then 200). */
export class Receiver {
  readonly requests: Received[] = [];
  private readonly scripts = new Map<string, (number | Promise<number>)[]>();
  private server!: http.Server;
  base = '';

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = req.url ?? '/';
        this.requests.push({ path, headers: req.headers as Record<string, string>, body: Buffer.concat(chunks).toString('utf8') });
        const next = this.scripts.get(path)?.shift() ?? 200;
        void Promise.resolve(next).then((status) => res.writeHead(status).end('ok'));
      });
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Answer the next requests to `path` with these statuses (a promise delays the answer). */
  script(path: string, statuses: (number | Promise<number>)[]): void {
    this.scripts.set(path, statuses);
  }

  to(path: string): Received[] {
    return this.requests.filter((r) => r.path === path);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }
}

/** Poll `fn` every 20 ms until it answers something truthy; throws after `timeoutMs`. */
export async function waitFor<T>(fn: () => Promise<T | undefined | false> | T | undefined | false, what: string, timeoutMs = 8000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

export interface DeliveryRow {
  id: string;
  event_type: string;
  status: string;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  payload: unknown;
}

/** The webhook_deliveries rows of a device, oldest first (read past RLS, as the test database owner). */
export const deliveriesOf = async (t: TestApp, deviceId: string): Promise<DeliveryRow[]> =>
  ((await t.app.parley.database.db.execute(
    sql`select id, event_type, status, attempts, last_status, last_error, payload from webhook_deliveries where device_id = ${deviceId} order by created_at`,
  )) as unknown as { rows: DeliveryRow[] }).rows;
