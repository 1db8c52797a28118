/** Telemetry (contract §2.15, §4.14; design §8.18): OTLP/HTTP ingest (JSON and protobuf), queries, summary, activity, isolation. */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeyService } from '../../src/modules/api-keys/service.js';
import { HubService } from '../../src/modules/hub/service.js';
import { KeyBindingService } from '../../src/modules/key-binding/service.js';
import { decodeProtobufRequest, encodeProtobufRequest, OTLP_PROTOBUF, toSpans } from '../../src/modules/telemetry/otlp.js';
import { activeAgent, newOwner, type Agent, type Owner } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { newDeviceKeys } from '../../testing/keys.js';

const hex = (n: number) => randomBytes(n).toString('hex');
const BASE = 1_700_000_000_000n * 1_000_000n; // ns

/** One OTLP JSON span; `ms` offset from BASE, `durMs` long. */
function span(name: string, ms: number, durMs: number, opts: { code?: number; asNumber?: boolean; traceId?: string } = {}) {
  const start = BASE + BigInt(ms) * 1_000_000n;
  const end = start + BigInt(durMs) * 1_000_000n;
  return {
    traceId: opts.traceId ?? hex(16),
    spanId: hex(8),
    name,
    kind: 1,
    startTimeUnixNano: opts.asNumber ? Number(start) : String(start),
    endTimeUnixNano: opts.asNumber ? Number(end) : String(end),
    attributes: [
      { key: 'svc.operation', value: { stringValue: 'run' } },
      { key: 'count', value: { intValue: '3' } },
      { key: 'tags', value: { arrayValue: { values: [{ boolValue: true }, { doubleValue: 1.5 }] } } },
    ],
    status: { code: opts.code ?? 0 },
  };
}
const request = (spans: unknown[]) => ({
  resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'agent' } }] }, scopeSpans: [{ scope: { name: 'test' }, spans }] }],
});

describe('telemetry', () => {
  let t: TestApp;
  let owner: Owner;
  let agent: Agent;
  let other: Owner;
  let otherAgent: Agent;
  beforeAll(async () => {
    t = await startApp();
    owner = await newOwner(t);
    agent = await activeAgent(t, owner);
    other = await newOwner(t, 'Other');
    otherAgent = await activeAgent(t, other);
  });
  afterAll(() => t.close());

  const ingest = (body: unknown, auth: Record<string, string> = agent.auth) => t.request({ method: 'POST', url: '/api/v1/telemetry/ingest', headers: auth, payload: body as object });
  const query = (path: string, auth: Record<string, string> = owner.auth) => t.request({ method: 'GET', url: `/api/v1${path}`, headers: auth });

  it('ingests OTLP JSON with int64 times as strings and as numbers, flattening attributes', async () => {
    const traceId = hex(16);
    const res = await ingest(request([span('svc.task', 0, 5, { traceId }), span('svc.tool', 1, 2, { traceId, asNumber: true, code: 2 })]));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ partialSuccess: { rejectedSpans: 0, errorMessage: '' } });
    const list = await query(`/telemetry/${agent.deviceId}?trace_id=${traceId}`);
    expect(list.status).toBe(200);
    expect(list.body.spans).toHaveLength(2);
    const [tool, task] = list.body.spans;
    expect(tool.name).toBe('svc.tool');
    expect(tool.status).toBe('error');
    expect(tool.duration_us).toBe(2000);
    expect(task.duration_us).toBe(5000);
    expect(task.start_time).toBe(new Date(1_700_000_000_000).toISOString());
    expect(task.attributes).toEqual({ 'svc.operation': 'run', count: 3, tags: [true, 1.5] });
    expect(task.resource).toEqual({ 'service.name': 'agent' });
    expect(task.device_id).toBe(agent.deviceId);
  });

  it('stores names, status messages and attributes with quotes, backslashes, braces, commas, NULL and non-ASCII exactly', async () => {
    const traceId = hex(16);
    const tricky = ['say "hi", {x}', 'back\\slash\\', 'NULL', 'null', 'émoji 🚀 ☃', 'line\nbreak\ttab'];
    const spans = tricky.map((name, i) => ({
      ...span(name, 10 + i, 1, { traceId, code: 2 }),
      status: { code: 2, message: `${name} failed` },
      attributes: [
        { key: name, value: { stringValue: name } },
        { key: 'nested', value: { kvlistValue: { values: [{ key: '"k"', value: { stringValue: '{a,b}' } }] } } },
      ],
    }));
    expect((await ingest(request(spans))).status).toBe(200);
    const list = await query(`/telemetry/${agent.deviceId}?trace_id=${traceId}`);
    const byName = new Map((list.body.spans as { name: string; status_message: string; attributes: unknown }[]).map((s) => [s.name, s]));
    expect([...byName.keys()].sort()).toEqual([...tricky].sort());
    for (const name of tricky) {
      expect(byName.get(name)!.status_message).toBe(`${name} failed`);
      expect(byName.get(name)!.attributes).toEqual({ [name]: name, nested: { '"k"': '{a,b}' } });
    }
  });

  it('decodes protobuf in place to exactly the spans of the same request in JSON (every AnyValue kind, int64 beyond 2^53, unset fields)', () => {
    const values = [
      { key: 's', value: { stringValue: 'text' } },
      { key: 'b', value: { boolValue: false } },
      { key: 'i', value: { intValue: '-42' } },
      { key: 'big', value: { intValue: '9007199254740993' } },
      { key: 'neg', value: { intValue: '-9223372036854775808' } },
      { key: 'd', value: { doubleValue: 2.25 } },
      { key: 'arr', value: { arrayValue: { values: [{ stringValue: 'x' }, { intValue: '7' }] } } },
      { key: 'kv', value: { kvlistValue: { values: [{ key: 'inner', value: { boolValue: true } }] } } },
    ];
    const ids = { traceId: hex(16), spanId: hex(8) };
    const spanOf = (id: (h: string) => unknown) => ({
      traceId: id(ids.traceId),
      spanId: id(ids.spanId),
      name: 'svc.tool',
      startTimeUnixNano: String(BASE),
      endTimeUnixNano: String(BASE + 1_500_000n),
      attributes: values,
    });
    const json = { resourceSpans: [{ scopeSpans: [{ spans: [spanOf((h) => h)] }] }] };
    const pb = encodeProtobufRequest({ resourceSpans: [{ scopeSpans: [{ spans: [spanOf((h) => Buffer.from(h, 'hex'))] }] }] });
    const fromPb = toSpans(decodeProtobufRequest(pb));
    expect(fromPb).toEqual(toSpans(json));
    expect(fromPb[0]!.attributes).toEqual({ s: 'text', b: false, i: -42, big: '9007199254740993', neg: '-9223372036854775808', d: 2.25, arr: ['x', 7], kv: { inner: true } });
    expect(fromPb[0]!.parentSpanId).toBeNull();
    expect(fromPb[0]!.kind).toBe(0);
  });

  it('ingests protobuf and answers in protobuf', async () => {
    const traceId = hex(16);
    const body = encodeProtobufRequest({
      resourceSpans: [
        {
          scopeSpans: [
            {
              spans: [
                {
                  traceId: Buffer.from(traceId, 'hex'),
                  spanId: Buffer.from(hex(8), 'hex'),
                  parentSpanId: Buffer.from(hex(8), 'hex'),
                  name: 'svc.policy.evaluate',
                  kind: 2,
                  startTimeUnixNano: String(BASE),
                  endTimeUnixNano: String(BASE + 7_000_000n),
                  attributes: [{ key: 'k', value: { stringValue: 'v' } }],
                  status: { code: 1, message: 'fine' },
                },
              ],
            },
          ],
        },
      ],
    });
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/telemetry/ingest', headers: { ...agent.auth, 'content-type': OTLP_PROTOBUF }, payload: body });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain(OTLP_PROTOBUF);
    const [s] = (await query(`/telemetry/${agent.deviceId}?trace_id=${traceId}`)).body.spans;
    expect(s).toMatchObject({ name: 'svc.policy.evaluate', kind: 2, status: 'ok', status_message: 'fine', duration_us: 7000, attributes: { k: 'v' } });
    expect(s.parent_span_id).toMatch(/^[0-9a-f]{16}$/);
    const bad = await t.app.inject({ method: 'POST', url: '/api/v1/telemetry/ingest', headers: { ...agent.auth, 'content-type': OTLP_PROTOBUF }, payload: Buffer.from([0x0a, 0xff, 0xff]) });
    expect(bad.statusCode).toBe(400);
  });

  it('refuses bad input with 400 and no partial write', async () => {
    const good = span('svc.task', 0, 1);
    const cases: [unknown, RegExp][] = [
      [request([{ ...good, traceId: 'xyz' }]), /traceId/],
      [request([{ ...good, traceId: '0'.repeat(32) }]), /traceId/],
      [request([{ ...good, spanId: hex(4) }]), /spanId/],
      [request([{ ...good, endTimeUnixNano: String(BASE - 1n) }]), /before/],
      [request([{ ...good, startTimeUnixNano: 'soon' }]), /startTimeUnixNano/],
      [request([{ ...good, status: { code: 7 } }]), /status/],
      [request([{ ...good, name: '' }]), /name/],
      [request(Array.from({ length: 5001 }, () => good)), /too many spans/],
      [{ resourceSpans: 'nope' }, /./],
    ];
    for (const [body, detail] of cases) {
      const res = await ingest(body);
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(detail);
    }
    const mixed = await ingest(request([span('partial.write', 0, 1), { ...good, spanId: 'bad' }]));
    expect(mixed.status).toBe(400);
    expect((await query(`/telemetry/${agent.deviceId}?name=partial.write`)).body.spans).toHaveLength(0);
  });

  it('needs a device JWT or an API key; owners cannot ingest (403)', async () => {
    expect((await ingest(request([]), {})).status).toBe(401);
    expect((await ingest(request([]), owner.auth)).status).toBe(403);
    const key = (await t.request({ method: 'POST', url: '/api/v1/api-keys', headers: owner.auth, payload: { name: 'otel' } })).body;
    // a key without registered key material has no device yet
    expect((await ingest(request([span('svc.task', 0, 1)]), { 'x-api-key': key.key })).status).toBe(403);
    const keys = newDeviceKeys();
    const noop = { toOwners: async () => undefined, closeDevice: async () => undefined } as never;
    const keyBinding = new KeyBindingService(t.app.parley.database.db, t.app.parley.secrets, { required: false });
    await keyBinding.init();
    const { device_id } = await new ApiKeyService(t.app.parley.database.db, noop, keyBinding, new HubService(t.app.parley.database.db, t.app.parley.keyDirectory), t.app.parley.keyDirectory).registerClientKey(owner.tenantId, key.id, {
      identity_public_key: keys.identityPublicKey,
      ephemeral_public_key: keys.ephemeralPublicKey,
      signature: keys.proof(),
    });
    expect((await ingest(request([span('via.key', 0, 1)]), { 'x-api-key': key.key })).status).toBe(200);
    const spans = (await query(`/telemetry/${device_id}`)).body.spans;
    expect(spans.map((s: { name: string }) => s.name)).toEqual(['via.key']);
  });

  it('isolates tenants: another tenant’s agent is 404; queries need the owner', async () => {
    expect((await ingest(request([span('other.task', 0, 1)]), otherAgent.auth)).status).toBe(200);
    expect((await query(`/telemetry/${otherAgent.deviceId}`)).status).toBe(404);
    expect((await query(`/telemetry/${otherAgent.deviceId}/summary`)).status).toBe(404);
    expect((await query(`/telemetry/unknown-hub-address`)).status).toBe(404);
    expect((await query(`/telemetry/${agent.deviceId}`, {})).status).toBe(401);
    expect((await query(`/telemetry/${agent.deviceId}`, agent.auth)).status).toBe(403);
    const activity = (await query('/dashboard/activity?limit=200')).body.spans as { name: string }[];
    expect(activity.some((s) => s.name === 'other.task')).toBe(false);
    expect((await query('/dashboard/activity', other.auth)).body.spans.map((s: { name: string }) => s.name)).toEqual(['other.task']);
    expect((await query('/dashboard/activity', {})).status).toBe(401);
    expect((await query(`/telemetry/${agent.deviceId}?status=bogus`)).status).toBe(400);
    expect((await query(`/telemetry/${agent.deviceId}?cursor=zzz`)).status).toBe(400);
    const forged = `${Date.now()}.${'-'.repeat(36)}`; // well-formed cursor shape, not a UUID
    expect((await query(`/dashboard/activity?cursor=${forged}`)).status).toBe(400);
  });

  it('summarizes per name: count, error rate and p50/p95 over a window', async () => {
    const a = await activeAgent(t, owner);
    // svc.sum: durations 1..10 ms, 2 errors; svc.one: 1 span of 4 ms; one span outside the window
    const spans = Array.from({ length: 10 }, (_, i) => span('svc.sum', i * 10, i + 1, { code: i < 2 ? 2 : 1 }));
    spans.push(span('svc.one', 5, 4), span('svc.sum', 10_000_000, 100));
    expect((await ingest(request(spans), a.auth)).status).toBe(200);
    const since = new Date(1_700_000_000_000).toISOString();
    const until = new Date(1_700_000_000_000 + 3_600_000).toISOString();
    const res = await query(`/telemetry/${a.deviceId}/summary?since=${since}&until=${until}`);
    expect(res.status).toBe(200);
    expect(res.body.device_id).toBe(a.deviceId);
    const sum = res.body.spans.find((s: { name: string }) => s.name === 'svc.sum');
    expect(sum).toEqual({ name: 'svc.sum', count: 10, error_count: 2, error_rate: 0.2, p50_duration_us: 5500, p95_duration_us: 9550 });
    expect(res.body.spans.find((s: { name: string }) => s.name === 'svc.one')).toMatchObject({ count: 1, error_rate: 0, p50_duration_us: 4000 });
    // the default window is the last 24 h (these fixtures are from 2023)
    expect((await query(`/telemetry/${a.deviceId}/summary`)).body.spans).toEqual([]);
    expect((await query(`/telemetry/${a.deviceId}/summary?since=${until}&until=${since}`)).status).toBe(400);
  });

  it('paginates newest first with a cursor and filters by status and time', async () => {
    const a = await activeAgent(t, owner);
    expect((await ingest(request(Array.from({ length: 7 }, (_, i) => span('page', i, 1, { code: i % 2 ? 2 : 0 }))), a.auth)).status).toBe(200);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await query(`/telemetry/${a.deviceId}?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      seen.push(...res.body.spans.map((s: { start_time: string }) => s.start_time));
      cursor = res.body.next_cursor;
    } while (cursor);
    expect(seen).toHaveLength(7);
    expect([...seen].sort().reverse()).toEqual(seen);
    expect((await query(`/telemetry/${a.deviceId}?status=error`)).body.spans).toHaveLength(3);
    expect((await query(`/telemetry/${a.deviceId}?status=unset`)).body.spans).toHaveLength(4);
    const since = new Date(1_700_000_000_000 + 5).toISOString();
    expect((await query(`/telemetry/${a.deviceId}?since=${since}`)).body.spans).toHaveLength(2);
    expect((await query(`/telemetry/${a.deviceId}?until=${since}`)).body.spans).toHaveLength(5);
  });
});
