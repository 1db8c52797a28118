/**
 * The two span vocabularies count alike (docs/trust-scoring.md, "Span vocabularies";
 * lib/span-attrs.ts): one agent reports Parley `svc.*` spans, two others the same work as
 * OpenTelemetry GenAI spans (`invoke_agent`, `execute_tool`, `chat` / `text_completion` /
 * `generate_content`, failures by status ERROR or `error.type`), one over OTLP JSON and one over
 * OTLP protobuf. Their day signals, live and rolled up, and the six span dimensions are equal and
 * match a hand computation; spend and the telemetry summary read the GenAI attributes.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTenant } from '../../src/db/tenant.js';
import { encodeProtobufRequest, OTLP_PROTOBUF } from '../../src/modules/telemetry/otlp.js';
import { addDays, dayStart, utcDay } from '../../src/lib/days.js';
import { measureDimensions } from '../../src/modules/trust/dimensions.js';
import { extractSignals, listAgents } from '../../src/modules/trust/repo.js';
import { rollUpDirtyDays } from '../../src/modules/trust/rollups.js';
import type { DailySignals } from '../../src/modules/trust/types.js';
import { activeAgent, newOwner, type Agent, type Owner } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';

const hex = (n: number) => randomBytes(n).toString('hex');

/** A span before encoding: offset from the base time (ms), status code, attributes. */
interface Spec {
  trace: number;
  name: string;
  atMs: number;
  status?: 0 | 1 | 2;
  attributes?: Record<string, string | number>;
}

const usage = (input: number, output: number) => ({ 'gen_ai.usage.input_tokens': input, 'gen_ai.usage.output_tokens': output });

/**
 * The same work in both vocabularies, in three traces: three tasks (the third fails), three tool
 * calls (the first fails and is retried successfully later in its trace), three model calls (the
 * third fails). Tokens: 100 + 200 + 50, the failed task's 50 not successful.
 */
const SVC: Spec[] = [
  { trace: 1, name: 'svc.task', atMs: 0, attributes: usage(40, 60) },
  { trace: 2, name: 'svc.task', atMs: 0, attributes: { 'svc.tokens': 200 } },
  { trace: 3, name: 'svc.task', atMs: 0, status: 2, attributes: usage(20, 30) },
  { trace: 1, name: 'svc.tool', atMs: 1000, status: 2, attributes: { 'svc.tool': 'get_weather' } },
  { trace: 1, name: 'svc.tool', atMs: 2000, attributes: { 'svc.tool': 'get_weather' } },
  { trace: 2, name: 'svc.tool', atMs: 1000, attributes: { 'svc.tool': 'search' } },
  { trace: 1, name: 'model.call', atMs: 500 },
  { trace: 2, name: 'model.call', atMs: 500 },
  { trace: 3, name: 'model.call', atMs: 500, status: 2 },
];
const GENAI: Spec[] = [
  { trace: 1, name: 'invoke_agent planner', atMs: 0, attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'planner' } },
  { trace: 2, name: 'invoke_agent planner', atMs: 0, status: 1, attributes: { 'gen_ai.operation.name': 'invoke_agent' } },
  // Failed by `error.type` alone (status unset).
  { trace: 3, name: 'invoke_agent planner', atMs: 0, attributes: { 'gen_ai.operation.name': 'invoke_agent', 'error.type': 'timeout' } },
  { trace: 1, name: 'execute_tool get_weather', atMs: 1000, status: 2, attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'get_weather', 'error.type': 'ConnectionError' } },
  { trace: 1, name: 'execute_tool get_weather', atMs: 2000, attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'get_weather' } },
  { trace: 2, name: 'execute_tool search', atMs: 1000, attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'search' } },
  { trace: 1, name: 'chat gpt-4o', atMs: 500, attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.response.model': 'gpt-4o-2024-08-06', ...usage(40, 60) } },
  { trace: 2, name: 'text_completion gpt-3.5-turbo-instruct', atMs: 500, attributes: { 'gen_ai.operation.name': 'text_completion', 'gen_ai.request.model': 'gpt-3.5-turbo-instruct', ...usage(150, 50) } },
  // Failed by status ERROR.
  { trace: 3, name: 'generate_content gemini-2.0-flash', atMs: 500, status: 2, attributes: { 'gen_ai.operation.name': 'generate_content', 'gen_ai.request.model': 'gemini-2.0-flash', 'gen_ai.response.model': 'gemini-2.0-flash-001', ...usage(20, 30) } },
];

/** The specs as OTLP spans (ids through `id`: hex for JSON, bytes for protobuf; attribute values as AnyValue). */
function otlp(specs: readonly Spec[], baseMs: number, id: (h: string) => unknown, int: (n: number) => unknown) {
  const traces = new Map<number, string>();
  const spans = specs.map((s) => {
    if (!traces.has(s.trace)) traces.set(s.trace, hex(16));
    const start = BigInt(baseMs + s.atMs) * 1_000_000n;
    return {
      traceId: id(traces.get(s.trace)!),
      spanId: id(hex(8)),
      name: s.name,
      kind: 1,
      startTimeUnixNano: String(start),
      endTimeUnixNano: String(start + 300_000_000n),
      status: { code: s.status ?? 0 },
      attributes: Object.entries(s.attributes ?? {}).map(([key, v]) => ({ key, value: typeof v === 'number' ? { intValue: int(v) } : { stringValue: v } })),
    };
  });
  return { resourceSpans: [{ resource: { attributes: [{ key: 'service.version', value: { stringValue: '1.0.0' } }] }, scopeSpans: [{ spans }] }] };
}

/** The signals that must not depend on the vocabulary (the span names do). */
const vocabularyFree = (d: DailySignals) => {
  const { spanNames: _names, ...rest } = d;
  return rest;
};

describe('GenAI semantic convention spans count like svc.* spans', () => {
  let t: TestApp;
  let owner: Owner;
  let svc: Agent;
  let genaiJson: Agent;
  let genaiPb: Agent;
  let baseMs: number;
  const db = () => t.app.parley.database.db;

  beforeAll(async () => {
    t = await startApp({ env: { RATE_LIMITS: 'off' } });
    owner = await newOwner(t, 'GenAI spans');
    [svc, genaiJson, genaiPb] = [await activeAgent(t, owner), await activeAgent(t, owner), await activeAgent(t, owner)];
    // Today, before now, the whole set inside the UTC day.
    const now = Date.now();
    baseMs = Math.max(dayStart(utcDay(now)).getTime() + 1000, now - 600_000);
    const ingest = async (agent: Agent, headers: Record<string, string>, payload: string | Buffer) => {
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/telemetry/ingest', headers: { ...agent.auth, ...headers }, payload });
      expect(res.statusCode, res.body).toBe(200);
    };
    const json = { 'content-type': 'application/json' };
    await ingest(svc, json, JSON.stringify(otlp(SVC, baseMs, (h) => h, (n) => n)));
    await ingest(genaiJson, json, JSON.stringify(otlp(GENAI, baseMs, (h) => h, (n) => String(n))));
    await ingest(genaiPb, { 'content-type': OTLP_PROTOBUF }, encodeProtobufRequest(otlp(GENAI, baseMs, (h) => Buffer.from(h, 'hex'), (n) => n)));
  });
  afterAll(() => t?.close());

  const signals = async (fromDay: string) => {
    const now = new Date(Math.max(Date.now(), baseMs + 3000));
    const out = await withTenant(db(), owner.tenantId, async (tx) => extractSignals(tx, owner.tenantId, await listAgents(tx, owner.tenantId), fromDay, now));
    const of = (a: Agent) => (out.get(a.deviceId) ?? []).filter((d) => d.spans > 0);
    return { svc: of(svc), json: of(genaiJson), pb: of(genaiPb) };
  };

  const EXPECTED = { spans: 9, errorSpans: 3, recoveredErrors: 1, tasks: 3, tasksOk: 2, tools: 3, toolsOk: 2, taskTokens: 350, taskTokensOk: 300 };

  it('equal day signals and span dimensions from svc.* spans, GenAI over OTLP JSON and GenAI over protobuf', async () => {
    const s = await signals(utcDay(baseMs));
    expect(s.svc).toHaveLength(1);
    expect(s.svc[0]).toMatchObject(EXPECTED);
    expect(vocabularyFree(s.json[0]!)).toEqual(vocabularyFree(s.svc[0]!));
    expect(vocabularyFree(s.pb[0]!)).toEqual(vocabularyFree(s.svc[0]!));
    expect(s.json[0]!.spanNames).toEqual({ 'invoke_agent planner': 3, 'execute_tool get_weather': 2, 'execute_tool search': 1, 'chat gpt-4o': 1, 'text_completion gpt-3.5-turbo-instruct': 1, 'generate_content gemini-2.0-flash': 1 });

    const ctx = { fleetMedianTokensPerSuccess: 100 };
    const dims = (days: DailySignals[]) => {
      const d = measureDimensions(days, ctx);
      return { task_success: d.task_success, efficiency: d.efficiency, tool_accuracy: d.tool_accuracy, error_discipline: d.error_discipline, token_efficiency: d.token_efficiency, reliability: d.reliability };
    };
    const want = { task_success: 2 / 3, efficiency: 300 / 350, tool_accuracy: 2 / 3, error_discipline: 1 / 3, token_efficiency: 100 / 175, reliability: 1 - 3 / 9 };
    for (const days of [s.svc, s.json, s.pb]) {
      const got = dims(days);
      for (const [k, v] of Object.entries(want)) expect(got[k as keyof typeof got], k).toBeCloseTo(v, 10);
    }
  });

  it('the stored roll-up of a closed day counts GenAI spans the same way', async () => {
    const day = utcDay(baseMs);
    await rollUpDirtyDays(db(), owner.tenantId, addDays(day, 1));
    const stored = ((await db().execute(sql`
      select device_id, spans, error_spans, recovered_errors, tasks, tasks_ok, tools, tools_ok, task_tokens, task_tokens_ok
      from telemetry_span_rollups where tenant_id = ${owner.tenantId} and day = ${day}::date`)) as unknown as { rows: Record<string, unknown>[] }).rows;
    const row = (a: Agent) => {
      const { device_id: _d, ...rest } = stored.find((r) => r.device_id === a.deviceId)!;
      return Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, Number(v)]));
    };
    const want = { spans: 9, error_spans: 3, recovered_errors: 1, tasks: 3, tasks_ok: 2, tools: 3, tools_ok: 2, task_tokens: 350, task_tokens_ok: 300 };
    for (const a of [svc, genaiJson, genaiPb]) expect(row(a)).toEqual(want);
  });

  it('spend reads GenAI usage and model; the telemetry summary counts error.type failures', async () => {
    const spend = (await t.request({ method: 'GET', url: `/api/v1/agents/${genaiPb.deviceId}/spend`, headers: owner.auth })).body;
    expect(spend.day.tokens).toBe(350);
    expect(spend.day.models).toEqual(
      expect.arrayContaining([
        { model: 'gpt-4o-2024-08-06', input_tokens: 40, output_tokens: 60, cents: null },
        { model: 'gpt-3.5-turbo-instruct', input_tokens: 150, output_tokens: 50, cents: null },
        { model: 'gemini-2.0-flash', input_tokens: 20, output_tokens: 30, cents: null },
      ]),
    );
    expect(spend.day.models).toHaveLength(3);

    const summary = (await t.request({ method: 'GET', url: `/api/v1/telemetry/${genaiJson.deviceId}/summary`, headers: owner.auth })).body;
    const byName = Object.fromEntries((summary.spans as { name: string; count: number; error_count: number }[]).map((r) => [r.name, [r.count, r.error_count]]));
    expect(byName).toMatchObject({ 'invoke_agent planner': [3, 1], 'execute_tool get_weather': [2, 1], 'generate_content gemini-2.0-flash': [1, 1], 'chat gpt-4o': [1, 0] });
  });
});
