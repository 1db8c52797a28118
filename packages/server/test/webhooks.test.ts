/**
 * Webhook delivery (SPEC §2.3, §6.2; DESIGN §8.11): a local receiver verifies every request with
 * the Standard Webhooks reference library. Owner-set and self-set URLs receive; messages to an
 * offline agent arrive as `message.received` without ciphertext; retries keep the `webhook-id`;
 * always-failing receivers end `failed`; clearing the URL cancels; wrong secrets and tampered
 * bodies fail verification; tenants stay apart.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MessageOut } from '../src/modules/conversations/messages.js';
import { toWebhookPayload } from '../src/modules/webhooks/events.js';
import { WebhookWorker, backoffMs } from '../src/modules/webhooks/worker.js';
import { activeAgent, createInvite, enroll, newOwner, registerOwnerDevice, type Owner, type OwnerDevice } from './flows.js';
import { startApp, type TestApp } from './harness.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** A local webhook receiver: answers each path from its script of statuses (then 200). */
class Receiver {
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

async function waitFor<T>(fn: () => Promise<T | undefined | false> | T | undefined | false, what: string, timeoutMs = 8000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

interface DeliveryRow {
  id: string;
  event_type: string;
  status: string;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  payload: unknown;
}

describe('webhook delivery', () => {
  let t: TestApp;
  const rx = new Receiver();
  let owner: Owner;
  let ownerDev: OwnerDevice;

  beforeAll(async () => {
    await rx.start();
    t = await startApp({ env: { RATE_LIMITS: 'off', WEBHOOK_POLL_MS: '20', WEBHOOK_RETRY_BASE_MS: '20', WEBHOOK_MAX_ATTEMPTS: '3', WEBHOOK_TIMEOUT_MS: '3000' } });
    owner = await newOwner(t);
    ownerDev = await registerOwnerDevice(t, owner);
  });
  afterAll(async () => {
    await t.close();
    await rx.close();
  });

  const setHook = (url: string | null, deviceId: string, auth = owner.auth) =>
    t.request({ method: 'PATCH', url: `/api/v1/devices/${deviceId}/webhook`, headers: auth, payload: { url } });
  const deliveries = async (deviceId: string): Promise<DeliveryRow[]> =>
    ((await t.app.parley.database.db.execute(
      sql`select id, event_type, status, attempts, last_status, last_error, payload from webhook_deliveries where device_id = ${deviceId} order by created_at`,
    )) as unknown as { rows: DeliveryRow[] }).rows;
  /** A PENDING agent device of `owner`'s tenant. */
  const pendingAgent = async (): Promise<string> => {
    const { res } = await enroll(t, (await createInvite(t, owner)).token);
    expect(res.status).toBe(201);
    return res.body.device_id as string;
  };
  const approve = async (deviceId: string) =>
    expect((await t.request({ method: 'PATCH', url: `/api/v1/devices/${deviceId}/approve`, headers: owner.auth })).status).toBe(200);
  const verify = (secret: string, r: Received) => new Webhook(secret).verify(r.body, r.headers) as { type: string; timestamp: string; data: Record<string, unknown> };

  it('maps socket events to documented types with ids, types and times only', () => {
    const p = toWebhookPayload('room_message', {
      room_id: 'r',
      room_message_id: 'm',
      sender_device_id: 's',
      header: 'SECRET-HEADER',
      ciphertext: 'SECRET-CT',
      message_type: 'text',
      priority: 'high',
      timestamp: '2026-01-01T00:00:00.000Z',
    });
    expect(p!.type).toBe('room.message');
    expect(p!.data).toEqual({ room_id: 'r', room_message_id: 'm', sender_device_id: 's', message_type: 'text', priority: 'high', timestamp: '2026-01-01T00:00:00.000Z' });
    expect(toWebhookPayload('policy_alert', { policy_id: 'p', room_id: 'r' })!.type).toBe('policy.alert');
    expect(toWebhookPayload('device_pending', { device_id: 'd', fingerprint: 'f', name: 'n', enrolled_at: 'x' })!.data).toEqual({ device_id: 'd', enrolled_at: 'x' });
    expect(toWebhookPayload('room_joined', { room_id: 'r', members: [{ identity_public_key: 'k' }] })!.data).toEqual({ room_id: 'r' });
    for (const ignored of ['typing', 'ping', 'pong', 'a2a_key_exchange', 'client_key_accepted', 'toString', '__proto__']) {
      expect(toWebhookPayload(ignored, {})).toBeUndefined();
    }
    expect(backoffMs(1, 5000, 3_600_000, () => 0.5)).toBe(5000);
    expect(backoffMs(4, 5000, 3_600_000, () => 0.5)).toBe(40_000);
    expect(backoffMs(30, 5000, 3_600_000, () => 0.5)).toBe(3_600_000);
    expect(backoffMs(2, 1000, 3_600_000, () => 0)).toBe(1500);
  });

  it('an owner-set URL on an owner device receives device.pending, signed; other tenants do not', async () => {
    const reg = await setHook(`${rx.base}/owner`, ownerDev.deviceId);
    expect(reg.status).toBe(200);
    const secret = reg.body.secret as string;
    expect(secret).toMatch(/^whsec_/);
    const other = await newOwner(t, 'Other');
    const otherDev = await registerOwnerDevice(t, other);
    expect((await setHook(`${rx.base}/other-owner`, otherDev.deviceId, other.auth)).status).toBe(200);

    const { res } = await enroll(t, (await createInvite(t, owner)).token);
    expect(res.status).toBe(201);
    const req = await waitFor(() => rx.to('/owner').find((r) => r.body.includes(res.body.device_id)), 'device.pending');
    const body = verify(secret, req);
    expect(body.type).toBe('device.pending');
    expect(body.data).toEqual({ device_id: res.body.device_id, enrolled_at: expect.any(String) });
    expect(req.headers['content-type']).toBe('application/json');
    const row = (await deliveries(ownerDev.deviceId)).find((d) => JSON.stringify(d.payload).includes(res.body.device_id));
    expect(req.headers['webhook-id']).toBe(row!.id);
    expect(Math.abs(Number(req.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
    // Negative control: another secret does not verify; neither does a tampered body or id.
    const wrong = `whsec_${Buffer.alloc(24, 7).toString('base64')}`;
    expect(() => verify(wrong, req)).toThrow();
    expect(() => verify(secret, { ...req, body: req.body.replace(res.body.device_id, '00000000-0000-4000-8000-000000000000') })).toThrow();
    expect(() => verify(secret, { ...req, headers: { ...req.headers, 'webhook-id': 'other' } })).toThrow();

    await sleep(100);
    expect(rx.to('/other-owner')).toEqual([]);
    expect(await deliveries(otherDev.deviceId)).toEqual([]);
  });

  it('device_approved reaches the webhook the owner set on the pending agent', async () => {
    const agentId = await pendingAgent();
    const reg = await setHook(`${rx.base}/pending-agent`, agentId);
    expect(reg.status).toBe(200);
    await approve(agentId);
    const req = await waitFor(() => rx.to('/pending-agent')[0], 'device.approved');
    expect(verify(reg.body.secret, req)).toMatchObject({ type: 'device.approved', data: { device_id: agentId } });
  });

  it('a message to an offline agent with a self-set URL arrives as message.received without ciphertext or header', async () => {
    const agent = await activeAgent(t, owner);
    const reg = await t.request({ method: 'PATCH', url: '/api/v1/devices/self/webhook', headers: agent.auth, payload: { url: `${rx.base}/agent` } });
    expect(reg.status).toBe(200);
    const ciphertext = b64('a secret plaintext that must never reach a webhook');
    const header = b64('ratchet header bytes');
    const sent = await t.request({
      method: 'POST',
      url: `/api/v1/conversations/${agent.conversationId}/messages`,
      headers: { ...owner.auth, 'x-device-id': ownerDev.deviceId },
      payload: { header_blob: header, ciphertext, priority: 'high' },
    });
    expect(sent.status).toBe(201);
    const out = sent.body as MessageOut;
    const req = await waitFor(() => rx.to('/agent')[0], 'message.received');
    expect(req.body).not.toContain(ciphertext);
    expect(req.body).not.toContain(header);
    expect(req.body).not.toMatch(/ciphertext|header/);
    const body = verify(reg.body.secret, req);
    // The outbox builds this body in SQL; it must equal the documented mapper's answer.
    expect(body).toEqual(toWebhookPayload('message', out, new Date(out.timestamp)));
    expect(body.data).toMatchObject({ message_id: out.message_id, sender_device_id: ownerDev.deviceId, priority: 'high', message_type: 'text' });
    // Exactly one delivery (the notifier's sink skips `message`), and none for the sender (no URL).
    const rows = await deliveries(agent.deviceId);
    expect(rows.filter((d) => d.event_type === 'message.received')).toHaveLength(1);
    await waitFor(async () => (await deliveries(agent.deviceId))[0]!.status === 'delivered', 'delivered');
  });

  it('retries a failing receiver with the same webhook-id and records attempts = 3', async () => {
    const agent = await activeAgent(t, owner);
    const reg = await setHook(`${rx.base}/flaky`, agent.deviceId);
    rx.script('/flaky', [500, 500]);
    await t.request({ method: 'POST', url: `/api/v1/conversations/${agent.conversationId}/messages`, headers: { ...owner.auth, 'x-device-id': ownerDev.deviceId }, payload: { header_blob: b64('h'), ciphertext: b64('c') } });
    const row = await waitFor(async () => (await deliveries(agent.deviceId)).find((d) => d.status === 'delivered'), 'delivery after retries');
    expect(row.attempts).toBe(3);
    expect(row.last_status).toBe(200);
    expect(row.last_error).toBeNull();
    const reqs = rx.to('/flaky');
    expect(reqs).toHaveLength(3);
    expect(new Set(reqs.map((r) => r.headers['webhook-id']))).toEqual(new Set([row.id]));
    for (const r of reqs) expect(verify(reg.body.secret, r).type).toBe('message.received');
  });

  it('marks a delivery failed after WEBHOOK_MAX_ATTEMPTS and keeps the last status', async () => {
    const agentId = await pendingAgent();
    await setHook(`${rx.base}/down`, agentId);
    rx.script('/down', [503, 503, 503, 503]);
    await approve(agentId);
    const row = await waitFor(async () => (await deliveries(agentId)).find((d) => d.status === 'failed'), 'failed delivery');
    expect(row).toMatchObject({ attempts: 3, last_status: 503, last_error: 'HTTP 503' });
    await sleep(150);
    expect(rx.to('/down')).toHaveLength(3);
  });

  it.each([
    ['clearing the URL', (id: string) => setHook(null, id)],
    ['revoking the device', (id: string) => t.request({ method: 'PATCH', url: `/api/v1/devices/${id}/revoke`, headers: owner.auth })],
  ])('%s cancels pending deliveries', async (name, stop) => {
    const path = `/cancel-${name.split(' ')[0]}`;
    const agentId = await pendingAgent();
    await setHook(`${rx.base}${path}`, agentId);
    let answer!: (status: number) => void;
    rx.script(path, [new Promise<number>((r) => (answer = r))]);
    await approve(agentId);
    await waitFor(() => rx.to(path).length === 1, 'first attempt');
    expect((await stop(agentId)).status).toBe(200);
    answer(500);
    const row = await waitFor(async () => (await deliveries(agentId)).find((d) => d.status === 'cancelled'), 'cancelled delivery');
    expect(row).toMatchObject({ attempts: 1, last_status: 500 });
    await sleep(100);
    expect(rx.to(path)).toHaveLength(1);
  });

  it('several workers (instances) never deliver the same row twice', async () => {
    const agent = await activeAgent(t, owner);
    await setHook(`${rx.base}/busy`, agent.deviceId);
    const extra = [1, 2].map(() => new WebhookWorker(t.app.parley.database.db, { ...t.config.webhooks, pollMs: 5, batchSize: 3 }, t.app.log));
    extra.forEach((w) => w.start());
    try {
      await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          t.request({ method: 'POST', url: `/api/v1/conversations/${agent.conversationId}/messages`, headers: { ...owner.auth, 'x-device-id': ownerDev.deviceId }, payload: { header_blob: b64('h'), ciphertext: b64(`m${i}`) } }),
        ),
      );
      await waitFor(async () => (await deliveries(agent.deviceId)).filter((d) => d.status === 'delivered').length === 20, '20 deliveries');
    } finally {
      await Promise.all(extra.map((w) => w.stop()));
    }
    const ids = rx.to('/busy').map((r) => r.headers['webhook-id']);
    expect(ids).toHaveLength(20);
    expect(new Set(ids).size).toBe(20);
  });

  it('enqueues nothing for a device without a URL', async () => {
    const agentId = await pendingAgent();
    await approve(agentId);
    expect(await deliveries(agentId)).toEqual([]);
  });
});
