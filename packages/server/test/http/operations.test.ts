/**
 * Operations (design §8.32): request ids on every answer and log line, liveness
 * and readiness probes (readiness fails while draining), Prometheus metrics behind a bearer
 * token (HTTP durations by route and status, WebSocket connections and frames, group commit,
 * bus publishes, jobs), and the effective configuration logged without secrets.
 */
import { PassThrough } from 'node:stream';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeConfig, loadConfig } from '../../src/config.js';
import type { Db } from '../../src/db/client.js';
import { registerErrorHandling } from '../../src/http/errors.js';
import type { Metrics } from '../../src/lib/metrics.js';
import { opsRoutes } from '../../src/ops/routes.js';
import { activeAgent, newOwner, registerOwnerDevice } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { connectWs, wsAddress } from '../../testing/ws-client.js';

const TOKEN = 'metrics-token-for-tests';

/** The value of one sample line (`name{labels} value`) whose text contains every fragment. */
function sample(text: string, ...fragments: string[]): number | undefined {
  const line = text.split('\n').find((l) => !l.startsWith('#') && fragments.every((f) => l.includes(f)));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('operations', () => {
  let t: TestApp;
  let off: TestApp;
  const logs: string[] = [];
  beforeAll(async () => {
    const stream = new PassThrough();
    stream.on('data', (d) => logs.push(...String(d).split('\n').filter(Boolean)));
    [t, off] = await Promise.all([
      startApp({ listen: true, env: { METRICS_TOKEN: TOKEN, LOG_LEVEL: 'info' }, overrides: { logStream: stream } }),
      startApp(),
    ]);
  });
  afterAll(async () => {
    await Promise.all([t?.close(), off?.close()]);
  });

  it('answers every request with an X-Request-Id (the caller\'s when well-formed) that its log lines carry', async () => {
    const fresh = await t.request({ method: 'GET', url: '/health' });
    expect(fresh.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const kept = await t.request({ method: 'GET', url: '/health', headers: { 'x-request-id': 'trace-abc.123:4' } });
    expect(kept.headers['x-request-id']).toBe('trace-abc.123:4');
    const bad = await t.request({ method: 'GET', url: '/health', headers: { 'x-request-id': 'has spaces and "quotes"' } });
    expect(bad.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const missing = await t.request({ method: 'GET', url: '/api/v1/nothing-here', headers: { 'x-request-id': 'err-42' } });
    expect(missing.status).toBe(404);
    expect(missing.headers['x-request-id']).toBe('err-42');
    expect(missing.body.detail).toBeTruthy();
    const lines = logs.filter((l) => l.includes('"reqId":"err-42"'));
    expect(lines.length).toBeGreaterThanOrEqual(2); // incoming request and its completion
  });

  it('liveness always; readiness checks the database and fails while draining', async () => {
    expect((await t.request({ method: 'GET', url: '/livez' })).body).toEqual({ status: 'ok' });
    const ready = await t.request({ method: 'GET', url: '/readyz' });
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ok', checks: { database: 'ok' } });
    t.app.parley.lifecycle.draining = true;
    try {
      const draining = await t.request({ method: 'GET', url: '/readyz' });
      expect(draining.status).toBe(503);
      expect(draining.body).toMatchObject({ status: 'unavailable', checks: { database: 'ok', instance: 'draining' } });
      expect(draining.body.detail).toMatch(/shutting down/);
      // Liveness and /health are not readiness.
      expect((await t.request({ method: 'GET', url: '/livez' })).status).toBe(200);
    } finally {
      t.app.parley.lifecycle.draining = false;
    }
  });

  it('readiness stays 200 "degraded" while Redis does not answer (the instance still serves); 503 only for the database', async () => {
    const probe = async (dbUp: boolean, redisUp: boolean) => {
      const app = Fastify();
      registerErrorHandling(app);
      const db = { execute: () => (dbUp ? Promise.resolve() : Promise.reject(new Error('connect ECONNREFUSED'))) } as unknown as Db;
      const pingRedis = () => (redisUp ? Promise.resolve('PONG') : Promise.reject(new Error("Stream isn't writeable")));
      await app.register(opsRoutes, { db, metrics: {} as Metrics, metricsToken: undefined, lifecycle: { draining: false }, pingRedis });
      try {
        const res = await app.inject({ method: 'GET', url: '/readyz' });
        return { status: res.statusCode, body: res.json() as Record<string, unknown> };
      } finally {
        await app.close();
      }
    };
    expect(await probe(true, true)).toEqual({ status: 200, body: { status: 'ok', checks: { database: 'ok', redis: 'ok' } } });
    const degraded = await probe(true, false);
    expect(degraded).toMatchObject({ status: 200, body: { status: 'degraded', checks: { database: 'ok', redis: 'down' } } });
    expect(degraded.body.detail).toMatch(/redis: .*cross-instance delivery paused/);
    expect(await probe(false, false)).toMatchObject({ status: 503, body: { status: 'unavailable', checks: { database: 'down', redis: 'down' } } });
  });

  it('metrics need the token (404 when none is configured, 401 without or with a wrong one)', async () => {
    const offAnswer = await off.request({ method: 'GET', url: '/metrics' });
    expect(offAnswer.status).toBe(404);
    expect(offAnswer.body.detail).toMatch(/METRICS_TOKEN/);
    expect((await t.request({ method: 'GET', url: '/metrics' })).status).toBe(401);
    expect((await t.request({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer nope' } })).status).toBe(401);
  });

  it('exposes HTTP durations by route and status, socket connections and frames, group commits, bus publishes and jobs', async () => {
    const owner = await newOwner(t);
    await registerOwnerDevice(t, owner);
    const agent = await activeAgent(t, owner);
    await t.request({ method: 'GET', url: '/livez' });
    const ws = await connectWs(wsAddress(t.wsUrl, { token: agent.jwt }));
    const scrape = async () => {
      const res = await t.request({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
      expect(res.status).toBe(200);
      expect(String(res.headers['content-type'])).toMatch(/^text\/plain/);
      return res.body as string;
    };
    const before = await scrape();
    expect(sample(before, 'parley_ws_connections ')).toBe(1);
    ws.send('message', { conversation_id: agent.conversationId, header_blob: 'aGVhZGVy', ciphertext: 'Y2lwaGVy', client_ref: 'm1' });
    await ws.next('message_ack');
    const after = await scrape();
    expect(sample(after, 'parley_http_request_duration_seconds_count', 'route="/livez"', 'status="200"', 'method="GET"')).toBeGreaterThanOrEqual(1);
    expect(sample(after, 'parley_http_request_duration_seconds_count', 'route="/api/v1/devices/:id/approve"', 'status="200"')).toBe(1);
    expect(sample(after, 'parley_http_request_duration_seconds_count', 'route="unmatched"', 'status="404"')).toBeGreaterThanOrEqual(1);
    expect(sample(after, 'parley_messages_committed_total ')! - (sample(before, 'parley_messages_committed_total ') ?? 0)).toBe(1);
    expect(sample(after, 'parley_group_commit_batch_size_count ')).toBeGreaterThanOrEqual(1);
    expect(sample(after, 'parley_group_commit_flush_seconds_count ')).toBeGreaterThanOrEqual(1);
    expect(sample(after, 'parley_bus_publish_seconds_count ')).toBeGreaterThanOrEqual(1);
    expect(sample(after, 'parley_ws_frames_in_total ')).toBeGreaterThanOrEqual(2); // the auth ping and the message
    expect(sample(after, 'parley_ws_frames_out_total ')).toBeGreaterThanOrEqual(2); // pong and ack
    expect(after).toContain('# TYPE parley_job_runs_total counter');
    expect(after).toContain('# TYPE parley_webhook_deliveries_total counter');
    expect(after).toContain('parley_process_cpu_seconds_total');
    await ws.close();
    await expect.poll(async () => sample(await scrape(), 'parley_ws_connections ')).toBe(0);
  });

  it('logs the effective configuration with secrets masked', () => {
    const config = loadConfig({
      DATABASE_URL: 'postgres://app:hunter2@db.internal:5432/parley',
      REDIS_URL: 'redis://:redispass@cache:6379',
      METRICS_TOKEN: 'tok-123',
      SECRETS_KEY: Buffer.alloc(32, 7).toString('base64'),
      STRIPE_SECRET_KEY: 'sk_test_abc',
      STRIPE_WEBHOOK_SECRET: 'whsec_abc',
      PORT: '9000',
    });
    const text = JSON.stringify(describeConfig(config));
    for (const secret of ['hunter2', 'redispass', 'tok-123', 'sk_test_abc', 'whsec_abc', Buffer.alloc(32, 7).toString('base64')]) expect(text).not.toContain(secret);
    const d = describeConfig(config) as Record<string, any>;
    expect(d.databaseUrl).toBe('postgres://app:***@db.internal:5432/parley');
    expect(d.redisUrl).toBe('redis://:***@cache:6379');
    expect(d.metricsToken).toBe('set');
    expect(d.port).toBe(9000);
  });
});
