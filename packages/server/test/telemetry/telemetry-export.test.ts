/**
 * Telemetry and audit export to the tenant's own OTLP/HTTP endpoint (
 * docs/decisions.md "Telemetry export"): the setting (header values sealed, write-only), the SSRF
 * guard, export of spans and audit events through the outbox exactly once, isolation between
 * tenants, a down endpoint catching up, and two instances sharing one PostgreSQL database.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activeAgent, newOwner, type Agent, type Owner } from '../../testing/flows.js';
import { backend, createPgDatabase, startApp, type TestApp } from '../../testing/harness.js';
import { OtlpReceiver, until } from '../../testing/otlp-receiver.js';
import { SecretBox } from '../../src/lib/secret-box.js';
import { openHeaders, resealExportHeaders, sealHeaders } from '../../src/modules/telemetry-export/secrets.js';
import { TenantExporters } from '../../src/modules/telemetry-export/exporters.js';
import { ResourceCache, toReadableSpan } from '../../src/modules/telemetry-export/records.js';

const hex = (n: number) => randomBytes(n).toString('hex');
const BASE = 1_700_000_000_000n * 1_000_000n;

/** Fast worker, loopback and http allowed (the webhook tests' override). */
const OPEN_ENV = { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_POLL_MS: '50', WEBHOOK_TIMEOUT_MS: '1500', WEBHOOK_RETRY_BASE_MS: '100' };

function spanJson(name: string, traceId: string, i: number) {
  const start = BASE + BigInt(i) * 1_000_000n;
  return {
    traceId,
    spanId: hex(8),
    name,
    kind: 3,
    startTimeUnixNano: String(start),
    endTimeUnixNano: String(start + 2_500_000n),
    attributes: [
      { key: 'tool.name', value: { stringValue: `tool-${i}` } },
      { key: 'count', value: { intValue: String(i) } },
    ],
    status: { code: i % 2 === 0 ? 1 : 2, message: i % 2 === 0 ? '' : 'boom' },
  };
}
const request = (spans: unknown[]) => ({
  resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'agent-x' } }] }, scopeSpans: [{ scope: { name: 'test' }, spans }] }],
});

type Rows<T> = { rows: T[] };
const raw = async <T>(t: TestApp, q: ReturnType<typeof sql>) => ((await t.app.parley.database.db.execute(q)) as unknown as Rows<T>).rows;

/** Ingest `n` spans of one new trace for `agent`; answers the trace id and span ids. */
async function ingest(t: TestApp, agent: Agent, n: number, name = 'svc.step'): Promise<{ traceId: string; spanIds: string[] }> {
  const traceId = hex(16);
  const spans = Array.from({ length: n }, (_, i) => spanJson(name, traceId, i));
  const res = await t.request({ method: 'POST', url: '/api/v1/telemetry/ingest', headers: agent.auth, payload: request(spans) });
  expect(res.status).toBe(200);
  return { traceId, spanIds: spans.map((s) => s.spanId) };
}

const setExport = (t: TestApp, owner: Owner, payload: object) => t.request({ method: 'PUT', url: '/api/v1/settings/telemetry-export', headers: owner.auth, payload });
const getExport = (t: TestApp, owner: Owner) => t.request({ method: 'GET', url: '/api/v1/settings/telemetry-export', headers: owner.auth });

/** How many times each value occurs. */
const counts = (values: string[]) => values.reduce((m, v) => m.set(v, (m.get(v) ?? 0) + 1), new Map<string, number>());

describe('telemetry export', () => {
  let t: TestApp;
  let rx: OtlpReceiver;
  let owner: Owner;
  let agent: Agent;
  let other: Owner;
  let otherAgent: Agent;
  beforeAll(async () => {
    // The platform's own OTLP headers (if an operator set them) must never reach a tenant's endpoint.
    process.env.OTEL_EXPORTER_OTLP_HEADERS = 'x-platform-key=platform-secret';
    rx = await new OtlpReceiver().start();
    t = await startApp({ env: OPEN_ENV });
    owner = await newOwner(t);
    agent = await activeAgent(t, owner);
    other = await newOwner(t, 'Other');
    otherAgent = await activeAgent(t, other);
  });
  afterAll(async () => {
    delete process.env.OTEL_EXPORTER_OTLP_HEADERS;
    await t.close();
    await rx.stop();
  });

  it('stores the endpoint with sealed headers and answers only their names', async () => {
    expect((await getExport(t, owner)).status).toBe(404);
    const res = await setExport(t, owner, { url: rx.url, headers: { 'x-api-key': 'sk-very-secret-123', 'X-Team': 'ops' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ url: rx.url, header_names: ['X-Team', 'x-api-key'], last_error: null });
    expect(JSON.stringify(res.body)).not.toContain('sk-very-secret-123');
    const got = await getExport(t, owner);
    expect(got.status).toBe(200);
    expect(JSON.stringify(got.body)).not.toContain('sk-very-secret-123');
    const rows = await raw<{ headers: string }>(t, sql`select headers from telemetry_export_settings where tenant_id = ${owner.tenantId}`);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.headers).not.toContain('sk-very-secret-123');
    expect(rows[0]!.headers).not.toContain('ops');
    // The other tenant sees none (RLS) and has none.
    expect((await getExport(t, other)).status).toBe(404);
  });

  it('reseal-secrets re-seals export headers under a new key', async () => {
    const [oldKey, newKey] = [randomBytes(32), randomBytes(32)];
    const o = await newOwner(t, 'Rotate');
    const sealed = sealHeaders(new SecretBox(oldKey), o.tenantId, { 'x-api-key': 'rotate-me' });
    await raw(t, sql`insert into telemetry_export_settings (tenant_id, url, headers, header_names) values (${o.tenantId}, 'https://otlp.example.com', ${sealed}, '["x-api-key"]'::jsonb)`);
    try {
      const report = await resealExportHeaders(t.app.parley.database.db, new SecretBox(newKey, [oldKey]));
      expect(report.resealed).toBe(1);
      const [row] = await raw<{ headers: string }>(t, sql`select headers from telemetry_export_settings where tenant_id = ${o.tenantId}`);
      expect(openHeaders(new SecretBox(newKey), o.tenantId, row!.headers)).toEqual({ 'x-api-key': 'rotate-me' });
      expect(() => openHeaders(new SecretBox(newKey), owner.tenantId, row!.headers)).toThrow(); // bound to the tenant
    } finally {
      await raw(t, sql`delete from telemetry_export_settings where tenant_id = ${o.tenantId}`);
    }
  });

  it('refuses reserved or duplicate headers and unknown keys', async () => {
    expect((await setExport(t, other, { url: rx.url, headers: { 'content-type': 'text/plain' } })).body.detail).toBe('header content-type may not be set');
    expect((await setExport(t, other, { url: rx.url, headers: { 'X-A': '1', 'x-a': '2' } })).status).toBe(400);
    expect((await setExport(t, other, { url: rx.url, headers: { 'bad name': '1' } })).status).toBe(400);
    expect((await setExport(t, other, { url: rx.url, extra: 1 })).status).toBe(400);
    expect((await setExport(t, other, { url: 'not a url' })).body.detail).toBe('export url is not a valid absolute URL');
  });

  it('exports every span of the configured tenant once, with ids, names, attributes and the headers; never another tenant\'s', async () => {
    const mine = await ingest(t, agent, 5);
    const theirs = await ingest(t, otherAgent, 3, 'other.step');
    await until(() => rx.spans.filter((s) => s.traceId === mine.traceId).length >= 5, 15_000, 'spans at the receiver');
    await until(async () => (await getExport(t, owner)).body.pending === 0, 15_000, 'an empty outbox');
    const got = rx.spans.filter((s) => s.traceId === mine.traceId);
    expect([...counts(got.map((s) => s.spanId)).values()].every((n) => n === 1)).toBe(true);
    expect(got.map((s) => s.spanId).sort()).toEqual([...mine.spanIds].sort());
    const first = got.find((s) => s.spanId === mine.spanIds[1])!;
    expect(first).toMatchObject({ name: 'svc.step', kind: 3, statusCode: 2, statusMessage: 'boom', durationUs: 2500, attributes: { 'tool.name': 'tool-1', count: 1 } });
    expect(first.resource).toMatchObject({ 'service.name': 'agent-x', 'parley.device_id': agent.deviceId });
    expect(first.startTime.getTime()).toBe(1_700_000_000_001);
    expect(rx.spans.some((s) => s.traceId === theirs.traceId)).toBe(false);
    expect(rx.headers.every((h) => h['x-api-key'] === 'sk-very-secret-123' && h['x-team'] === 'ops')).toBe(true);
    expect(rx.headers.some((h) => h['x-platform-key'] !== undefined)).toBe(false);
  });

  it('exports audit events as LogRecords (type as body and event name), the other tenant\'s not', async () => {
    const patch = await t.request({ method: 'PATCH', url: '/api/v1/settings', headers: owner.auth, payload: { scan_rules_enabled: false } });
    expect(patch.status).toBe(200);
    await t.request({ method: 'PATCH', url: '/api/v1/settings', headers: other.auth, payload: { scan_rules_enabled: false } });
    const events = await raw<{ id: string; type: string; seq: number }>(t, sql`select id, type, seq from audit_events where tenant_id = ${owner.tenantId} and seq > (select seq from audit_events a where a.tenant_id = ${owner.tenantId} and a.type = 'settings.updated' order by seq limit 1) - 1 order by seq`);
    expect(events.length).toBeGreaterThanOrEqual(2);
    await until(() => events.every((e) => rx.logs.some((l) => l.attributes['parley.audit.event_id'] === e.id)), 15_000, 'audit log records');
    for (const e of events) {
      const recs = rx.logs.filter((l) => l.attributes['parley.audit.event_id'] === e.id);
      expect(recs).toHaveLength(1);
      expect(recs[0]).toMatchObject({ body: e.type, eventName: e.type, severityText: 'INFO', resource: { 'service.name': 'parley', 'parley.tenant_id': owner.tenantId } });
      expect(recs[0]!.attributes).toMatchObject({ 'parley.audit.type': e.type, 'parley.audit.seq': Number(e.seq) });
    }
    expect(rx.logs.some((l) => l.resource['parley.tenant_id'] === other.tenantId)).toBe(false);
    // Header values never reach the audit log.
    expect(JSON.stringify(rx.logs)).not.toContain('sk-very-secret-123');
  });

  it('loses nothing while the endpoint answers 503 or is down, and catches up', async () => {
    rx.unavailable = true;
    const during503 = await ingest(t, agent, 4, 'while.503');
    await until(async () => (await getExport(t, owner)).body.last_error !== null, 15_000, 'a recorded failure');
    expect(rx.refused).toBeGreaterThan(0);
    await rx.stop();
    rx.unavailable = false;
    const whileDown = await ingest(t, agent, 4, 'while.down');
    await until(async () => /ECONNREFUSED|timeout|503|Unavailable/i.test(String((await getExport(t, owner)).body.last_error)), 15_000, 'a connection failure');
    expect((await getExport(t, owner)).body.pending).toBeGreaterThanOrEqual(8);
    await rx.start();
    // Backoff is capped by the retry base (100 ms here) doubling per attempt: allow for a few seconds.
    await until(() => [...during503.spanIds, ...whileDown.spanIds].every((id) => rx.spans.some((s) => s.spanId === id)), 30_000, 'the backlog');
    await until(async () => (await getExport(t, owner)).body.pending === 0, 15_000, 'an empty outbox');
    const c = counts(rx.spans.map((s) => s.spanId));
    expect([...during503.spanIds, ...whileDown.spanIds].every((id) => c.get(id) === 1)).toBe(true);
  });

  it('builds a tenant\'s exporters again when its setting changes and shuts idle ones down', async () => {
    const box = new SecretBox(randomBytes(32));
    const exporters = new TenantExporters(box, { allowHttp: true, allowPrivate: true, timeoutMs: 1500 });
    const tenantId = owner.tenantId;
    const setting = (n: number) => ({ tenantId, url: rx.url, headers: sealHeaders(box, tenantId, { 'x-version': String(n) }), headerNames: ['x-version'], updatedAt: new Date(1_000 * n), updatedBy: 'test' });
    const row = { id: randomUUID(), tenantId, deviceId: agent.deviceId, traceId: hex(16), spanId: hex(8), parentSpanId: hex(8), name: 'unit.span', kind: 0, startTime: new Date(1_700_000_000_123), endTime: new Date(1_700_000_000_124), durationUs: 1500, statusCode: 0, statusMessage: null, attributes: { nested: { a: 1 }, list: [1, 2] }, resource: {}, receivedAt: new Date() };
    const before = rx.headers.length;
    try {
      for (const n of [1, 1, 2]) expect((await exporters.exportSpans(setting(n), [toReadableSpan({ ...row, spanId: hex(8) }, new ResourceCache())])).code).toBe(0);
      expect(rx.headers.slice(before).map((h) => h['x-version'])).toEqual(['1', '1', '2']);
      const got = rx.spans.filter((s) => s.traceId === row.traceId);
      expect(got[0]).toMatchObject({ name: 'unit.span', kind: 0, parentSpanId: row.parentSpanId, durationUs: 1500, attributes: { nested: '{"a":1}', list: [1, 2] } });
      expect(got[0]!.startTime.getTime()).toBe(1_700_000_000_123);
      expect(await exporters.closeIdle(60_000)).toBe(0);
      expect(await exporters.closeIdle(0)).toBe(1);
    } finally {
      await exporters.closeAll();
    }
  });

  it('DELETE stops exporting and drops the backlog', async () => {
    await rx.stop();
    await ingest(t, agent, 2, 'dropped');
    expect((await getExport(t, owner)).body.pending).toBeGreaterThanOrEqual(2);
    const del = await t.request({ method: 'DELETE', url: '/api/v1/settings/telemetry-export', headers: owner.auth });
    expect(del.status).toBe(204);
    expect((await getExport(t, owner)).status).toBe(404);
    expect((await t.request({ method: 'DELETE', url: '/api/v1/settings/telemetry-export', headers: owner.auth })).status).toBe(404);
    await ingest(t, agent, 2, 'after.delete');
    const left = await raw<{ n: number }>(t, sql`select count(*)::int as n from telemetry_export_outbox`);
    expect(left[0]!.n).toBe(0);
    await rx.start();
  });
});

describe('telemetry export SSRF guard', () => {
  let strict: TestApp;
  let httpOnly: TestApp;
  let rx: OtlpReceiver;
  beforeAll(async () => {
    rx = await new OtlpReceiver().start();
    strict = await startApp();
    httpOnly = await startApp({ env: { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_POLL_MS: '50', WEBHOOK_TIMEOUT_MS: '1500', WEBHOOK_RETRY_BASE_MS: '100' } });
  });
  afterAll(async () => {
    await strict.close();
    await httpOnly.close();
    await rx.stop();
  });

  it('refuses http, private and loopback addresses unless the deployment allows them', async () => {
    const o = await newOwner(strict);
    expect((await setExport(strict, o, { url: rx.url })).body.detail).toBe('export url must use https');
    for (const host of ['127.0.0.1', '10.1.2.3', '[::1]', '169.254.169.254']) {
      const res = await setExport(strict, o, { url: `https://${host}/otlp` });
      expect(res.status, host).toBe(400);
      expect(res.body.detail).toContain('must not point to a loopback, private');
    }
    expect((await setExport(strict, o, { url: 'https://user:pw@otlp.example.com' })).status).toBe(400);
    expect((await setExport(strict, o, { url: 'https://otlp.example.com' })).status).toBe(200);
  });

  it('refuses at export time a host name that resolves to a loopback address (nothing is sent, nothing lost)', async () => {
    const o = await newOwner(httpOnly);
    const a = await activeAgent(httpOnly, o);
    expect((await setExport(httpOnly, o, { url: `http://localhost:${rx.port}` })).status).toBe(200);
    await ingest(httpOnly, a, 2);
    await until(async () => (await getExport(httpOnly, o)).body.last_error === 'blocked address', 15_000, 'blocked address');
    expect((await getExport(httpOnly, o)).body.pending).toBeGreaterThanOrEqual(2);
    expect(rx.headers).toHaveLength(0);
  });
});

describe.skipIf(backend !== 'postgres')('telemetry export across instances', () => {
  it('two instances sharing one database export each span and audit event once', async () => {
    const rx = await new OtlpReceiver().start();
    const db = await createPgDatabase();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-export-'));
    const apps: TestApp[] = [];
    try {
      for (let i = 0; i < 2; i++) apps.push(await startApp({ env: { ...OPEN_ENV, WEBHOOK_POLL_MS: '10' }, dataDir, databaseUrl: db.url }));
      const [a, b] = apps as [TestApp, TestApp];
      const o = await newOwner(a);
      const agent = await activeAgent(a, o);
      expect((await setExport(b, o, { url: rx.url, headers: { authorization: 'Bearer abc' } })).status).toBe(200);
      const sent: string[] = [];
      for (let i = 0; i < 20; i++) sent.push(...(await ingest(i % 2 ? a : b, agent, 25)).spanIds);
      await until(() => new Set(rx.spans.map((s) => s.spanId)).size >= sent.length, 30_000, 'every span');
      await until(async () => (await getExport(a, o)).body.pending === 0, 15_000, 'an empty outbox');
      const c = counts(rx.spans.map((s) => s.spanId));
      expect(sent.filter((id) => c.get(id) !== 1)).toEqual([]);
      expect(rx.spans).toHaveLength(sent.length);
      const audit = await raw<{ id: string }>(a, sql`select e.id from audit_events e where e.tenant_id = ${o.tenantId} and e.seq >= (select min(seq) from audit_events x where x.tenant_id = ${o.tenantId} and x.type = 'settings.updated')`);
      await until(() => audit.every((e) => rx.logs.some((l) => l.attributes['parley.audit.event_id'] === e.id)), 15_000, 'audit records');
      const lc = counts(rx.logs.map((l) => String(l.attributes['parley.audit.event_id'])));
      expect(audit.filter((e) => lc.get(e.id) !== 1)).toEqual([]);
    } finally {
      for (const app of apps) await app.close();
      await db.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
      await rx.stop();
    }
  }, 90_000);
});
