/**
 * OpenTelemetry GenAI telemetry from a real instrumentation (docs/trust-scoring.md, "Span
 * vocabularies"): the README's example agent (examples/genai-telemetry.ts) runs in a child process
 * with the official `@opentelemetry/instrumentation-openai` around the official `openai` client,
 * pointed at a local OpenAI-compatible double, and exports with the official OTLP/HTTP exporter to
 * this server's ingest with the agent's device token. The agent's spend then shows the model
 * call's tokens, and after a recompute its trust dimensions come from that telemetry.
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activeAgent, newOwner, type Agent, type Owner } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';

const ROOT = fileURLToPath(new URL('../../../..', import.meta.url));
const USAGE = { prompt_tokens: 12, completion_tokens: 30, total_tokens: 42 };

/** A minimal OpenAI-compatible server: `POST /v1/chat/completions` answers one choice with `USAGE`. */
function openAiDouble(): Promise<{ server: Server; url: string; requests: unknown[] }> {
  const requests: unknown[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'not found' } }));
        return;
      }
      const r = JSON.parse(body) as { model: string };
      requests.push(r);
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', created: Math.floor(Date.now() / 1000), model: `${r.model}-2024-07-18`, choices: [{ index: 0, message: { role: 'assistant', content: 'Hello from the double' }, finish_reason: 'stop' }], usage: USAGE }),
      );
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, requests })));
}

/** Run the example agent to completion; resolves with its exit code and output. */
function runExample(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'examples/genai-telemetry.ts', 'What is Parley?'], { cwd: ROOT, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('GenAI spans from the official OpenAI instrumentation', () => {
  let t: TestApp;
  let owner: Owner;
  let agent: Agent;
  let double: Awaited<ReturnType<typeof openAiDouble>>;

  beforeAll(async () => {
    t = await startApp({ listen: true, env: { RATE_LIMITS: 'off' } });
    double = await openAiDouble();
    owner = await newOwner(t, 'GenAI');
    agent = await activeAgent(t, owner);
    // Past the 48-hour warm-up, so measured dimensions are reported as measured.
    await t.app.parley.database.db.execute(sql`update devices set created_at = now() - interval '10 days', activated_at = now() - interval '10 days' where id = ${agent.deviceId}`);
  });
  afterAll(async () => {
    await new Promise((r) => double?.server.close(r));
    await t?.close();
  });

  const get = async (url: string) => {
    const res = await t.request({ method: 'GET', url: `/api/v1${url}`, headers: owner.auth });
    expect(res.status, url).toBe(200);
    return res.body;
  };
  const recompute = async () => expect((await t.request({ method: 'POST', url: '/api/v1/trust-scores/recompute', headers: owner.auth })).status).toBe(200);

  it('exports chat spans with usage to the ingest; spend shows the tokens and the dimensions move after a recompute', { timeout: 60_000 }, async () => {
    await recompute();
    const before = await get(`/trust-scores/${agent.deviceId}`);
    for (const dim of ['reliability', 'task_success', 'efficiency', 'token_efficiency', 'error_discipline'] as const) expect(before.sources[dim], dim).not.toBe('telemetry');
    expect((await get(`/agents/${agent.deviceId}/spend`)).day.tokens).toBe(0);

    const token = agent.auth.authorization.replace(/^Bearer /, '');
    const run = await runExample({ PARLEY_URL: t.baseUrl, PARLEY_TOKEN: token, OPENAI_BASE_URL: double.url, OPENAI_API_KEY: 'test-key' });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('Hello from the double');
    expect(double.requests).toHaveLength(1);

    // The stored spans: the instrumentation's `chat` span under the agent's `invoke_agent` task.
    const spans = (await get(`/telemetry/${agent.deviceId}`)).spans as { name: string; span_id: string; parent_span_id: string | null; attributes: Record<string, unknown>; resource: Record<string, unknown> }[];
    const task = spans.find((s) => s.name === 'invoke_agent my-agent');
    const chat = spans.find((s) => s.name === 'chat gpt-4o-mini');
    expect(task, JSON.stringify(spans)).toBeDefined();
    expect(chat?.parent_span_id).toBe(task!.span_id);
    expect(chat?.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o-mini', 'gen_ai.response.model': 'gpt-4o-mini-2024-07-18', 'gen_ai.usage.input_tokens': 12, 'gen_ai.usage.output_tokens': 30 });
    expect(chat?.resource).toMatchObject({ 'service.name': 'my-agent', 'service.version': '1.0.0' });

    const spend = await get(`/agents/${agent.deviceId}/spend`);
    expect(spend.day).toMatchObject({ tokens: 42, unpriced_tokens: 42 });
    expect(spend.day.models).toEqual([{ model: 'gpt-4o-mini', input_tokens: 12, output_tokens: 30, cents: null }]);
    expect(spend.month.tokens).toBe(42);

    await recompute();
    const after = await get(`/trust-scores/${agent.deviceId}`);
    for (const dim of ['reliability', 'task_success', 'efficiency', 'token_efficiency', 'error_discipline'] as const) {
      expect(after.sources[dim], dim).toBe('telemetry');
      expect(after.dimensions[dim], dim).toBe(1);
    }
    // No tool call was made: tool_accuracy has no data of its own.
    expect(after.sources.tool_accuracy).not.toBe('telemetry');
  });
});
