/**
 * OTLP ingest with the real OpenTelemetry JS exporter (contract §2.15, §4.14; design §8.18):
 * a BasicTracerProvider with @opentelemetry/exporter-trace-otlp-http exports over real HTTP to
 * `POST /api/v1/telemetry/ingest` with an API key, and the owner reads the spans back from
 * `GET /telemetry/{hub_id}` with their ids, parent, status, attributes and resource.
 */
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import type { CompressionAlgorithm } from '@opentelemetry/otlp-exporter-base';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, SimpleSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { gzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { newOwner, type Owner } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { newDeviceKeys } from '../../testing/keys.js';
import { wsAddress, WsPool } from '../../testing/ws-client.js';

interface SpanOut {
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
  name: string;
  kind: number;
  status: string;
  status_message: string | null;
  duration_us: number;
  attributes: Record<string, unknown>;
  resource: Record<string, unknown>;
  device_id: string;
}

describe('OTLP ingest with the OpenTelemetry exporter', () => {
  let t: TestApp;
  let owner: Owner;
  let key: string;
  let deviceId: string;
  const pool = new WsPool();
  const providers: BasicTracerProvider[] = [];

  beforeAll(async () => {
    t = await startApp({ listen: true });
    owner = await newOwner(t);
    // An API key whose client registered key material (trust on first use): an agent device.
    const created = await t.request({ method: 'POST', url: '/api/v1/api-keys', headers: owner.auth, payload: { name: 'otel-agent' } });
    expect(created.status).toBe(201);
    key = created.body.key;
    const ws = await pool.open(wsAddress(t.wsUrl, { token: key }));
    const keys = newDeviceKeys();
    ws.send('client_key_register', { identity_public_key: keys.identityPublicKey, ephemeral_public_key: keys.ephemeralPublicKey, signature: keys.proof() });
    deviceId = (await ws.next('client_key_accepted')).data.device_id;
    await ws.close();
  });
  afterEach(async () => {
    for (const p of providers.splice(0)) await p.shutdown();
  });
  afterAll(async () => {
    pool.closeAll();
    await t.close();
  });

  const exporter = (apiKey = key, compression?: 'gzip') =>
    new OTLPTraceExporter({ url: `${t.baseUrl}/api/v1/telemetry/ingest`, headers: { 'X-API-Key': apiKey }, ...(compression ? { compression: 'gzip' as CompressionAlgorithm } : {}) });
  function provider(processor: SpanProcessor): BasicTracerProvider {
    const p = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': 'billing-agent', 'service.version': '2.3.1', 'deployment.environment': 'test' }),
      spanProcessors: [processor],
    });
    providers.push(p);
    return p;
  }
  const spansOf = async (traceId: string): Promise<SpanOut[]> => {
    const res = await t.request({ method: 'GET', url: `/api/v1/telemetry/${deviceId}?trace_id=${traceId}`, headers: owner.auth });
    expect(res.status).toBe(200);
    return res.body.spans as SpanOut[];
  };

  it('exports a task, a child tool span with ERROR status and a grandchild; they come back with ids, parent, status, attributes and resource', async () => {
    const p = provider(new BatchSpanProcessor(exporter()));
    const tracer = p.getTracer('parley-test', '1.0.0');

    const task = tracer.startSpan('svc.task', {
      kind: SpanKind.INTERNAL,
      attributes: { 'gen_ai.usage.input_tokens': 1234, 'gen_ai.usage.output_tokens': 56, 'gen_ai.request.model': 'gpt-x', 'svc.cost_usd': 0.0125, 'svc.cached': true, 'svc.tags': ['a', 'b'] },
    });
    const inTask = trace.setSpan(context.active(), task);
    const tool = tracer.startSpan('svc.tool', { kind: SpanKind.CLIENT, attributes: { 'svc.tool.name': 'search' } }, inTask);
    const lookup = tracer.startSpan('svc.policy.evaluate', { attributes: { 'svc.outcome': 'allow' } }, trace.setSpan(inTask, tool));
    lookup.end();
    tool.setStatus({ code: SpanStatusCode.ERROR, message: 'upstream timed out' });
    tool.end();
    task.setStatus({ code: SpanStatusCode.OK });
    task.end();
    await p.forceFlush();

    const traceId = task.spanContext().traceId;
    const spans = await spansOf(traceId);
    expect(spans).toHaveLength(3);
    const byName = Object.fromEntries(spans.map((s) => [s.name, s]));
    const [taskOut, toolOut, lookupOut] = [byName['svc.task']!, byName['svc.tool']!, byName['svc.policy.evaluate']!];

    expect(taskOut).toMatchObject({ trace_id: traceId, span_id: task.spanContext().spanId, parent_span_id: null, kind: SpanKind.INTERNAL + 1, status: 'ok', device_id: deviceId });
    expect(taskOut.attributes).toEqual({ 'gen_ai.usage.input_tokens': 1234, 'gen_ai.usage.output_tokens': 56, 'gen_ai.request.model': 'gpt-x', 'svc.cost_usd': 0.0125, 'svc.cached': true, 'svc.tags': ['a', 'b'] });
    expect(taskOut.resource).toEqual({ 'service.name': 'billing-agent', 'service.version': '2.3.1', 'deployment.environment': 'test' });

    expect(toolOut).toMatchObject({
      trace_id: traceId,
      span_id: tool.spanContext().spanId,
      parent_span_id: task.spanContext().spanId,
      kind: SpanKind.CLIENT + 1, // OTLP SpanKind is the API's enum + 1 (0 = unspecified)
      status: 'error',
      status_message: 'upstream timed out',
      attributes: { 'svc.tool.name': 'search' },
    });
    expect(lookupOut).toMatchObject({ parent_span_id: tool.spanContext().spanId, status: 'unset', attributes: { 'svc.outcome': 'allow' } });
    for (const s of spans) expect(s.duration_us).toBeGreaterThanOrEqual(0);

    // The summary sees them as well.
    const summary = await t.request({ method: 'GET', url: `/api/v1/telemetry/${deviceId}/summary`, headers: owner.auth });
    expect(summary.status).toBe(200);
    expect(summary.body.spans.find((s: { name: string }) => s.name === 'svc.tool')).toMatchObject({ count: 1, error_count: 1, error_rate: 1 });
  });

  it('SimpleSpanProcessor: one export per ended span', async () => {
    const p = provider(new SimpleSpanProcessor(exporter()));
    const tracer = p.getTracer('parley-test');
    const root = tracer.startSpan('svc.task');
    const traceId = root.spanContext().traceId;
    for (let i = 0; i < 3; i++) tracer.startSpan('svc.tool', { attributes: { i } }, trace.setSpan(context.active(), root)).end();
    root.end();
    await p.forceFlush();
    const spans = await spansOf(traceId);
    expect(spans.map((s) => s.name).sort()).toEqual(['svc.task', 'svc.tool', 'svc.tool', 'svc.tool']);
    expect(spans.filter((s) => s.name === 'svc.tool').map((s) => s.attributes.i).sort()).toEqual([0, 1, 2]);
  });

  it('gzip-compressed exports (compression: gzip / OTEL_EXPORTER_OTLP_COMPRESSION=gzip) are accepted too', async () => {
    const p = provider(new SimpleSpanProcessor(exporter(key, 'gzip')));
    const span = p.getTracer('parley-test').startSpan('svc.task', { attributes: { 'gen_ai.usage.input_tokens': 7 } });
    span.end();
    await p.forceFlush();
    const [out] = await spansOf(span.spanContext().traceId);
    expect(out).toMatchObject({ name: 'svc.task', attributes: { 'gen_ai.usage.input_tokens': 7 } });
  });

  it('Content-Encoding: corrupt gzip is 400, an unknown encoding 415, a gzip bomb over the body limit 413', async () => {
    const post = (body: Buffer, encoding: string) =>
      fetch(`${t.baseUrl}/api/v1/telemetry/ingest`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': encoding, 'x-api-key': key }, body: new Uint8Array(body) });
    const ok = await post(gzipSync(Buffer.from(JSON.stringify({ resourceSpans: [] }))), 'gzip');
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ partialSuccess: { rejectedSpans: 0, errorMessage: '' } });
    expect((await post(Buffer.from('definitely not gzip'), 'gzip')).status).toBe(400);
    expect((await post(Buffer.from('{}'), 'br')).status).toBe(415);
    // 5 MiB of spaces compress to a few KiB; decompressed they exceed the 4 MiB body limit.
    const bomb = gzipSync(Buffer.concat([Buffer.from('{"resourceSpans":[]'), Buffer.alloc(5 * 1024 * 1024, 0x20), Buffer.from('}')]));
    expect(bomb.length).toBeLessThan(64 * 1024);
    expect((await post(bomb, 'gzip')).status).toBe(413);
  });

  it('an unknown API key is refused (401) and nothing is stored', async () => {
    const p = provider(new SimpleSpanProcessor(exporter('pk_live_not-a-real-key')));
    const span = p.getTracer('parley-test').startSpan('svc.task');
    span.end();
    // The processor rejects with the exporter's errors: the HTTP status and our {detail} body.
    await expect(p.forceFlush()).rejects.toEqual([expect.objectContaining({ name: 'OTLPExporterError', code: 401, data: expect.stringContaining('invalid API key') })]);
    expect(await spansOf(span.spanContext().traceId)).toEqual([]);
  });
});
