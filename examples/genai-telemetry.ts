/**
 * An agent instrumented with the official OpenTelemetry OpenAI instrumentation, exporting its
 * GenAI spans to Parley's OTLP ingest (`POST /api/v1/telemetry/ingest`, the agent's device JWT or
 * API key as bearer): its tasks, model calls and token usage then count for its trust score and
 * spend like Parley's own `svc.*` spans (docs/trust-scoring.md, "Span vocabularies").
 *
 * Run: `PARLEY_URL=https://parley.example PARLEY_TOKEN=<agent token> OPENAI_API_KEY=… node --import tsx examples/genai-telemetry.ts "question"`
 * (`OPENAI_BASE_URL` points the client at any OpenAI-compatible server).
 */
import { createRequire } from 'node:module';
import { trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { OpenAIInstrumentation } from '@opentelemetry/instrumentation-openai';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

const exporter = new OTLPTraceExporter({ url: `${process.env.PARLEY_URL}/api/v1/telemetry/ingest`, headers: { authorization: `Bearer ${process.env.PARLEY_TOKEN}` } });
const provider = new NodeTracerProvider({ resource: resourceFromAttributes({ 'service.name': 'my-agent', 'service.version': '1.0.0' }), spanProcessors: [new BatchSpanProcessor(exporter)] });
provider.register();
registerInstrumentations({ instrumentations: [new OpenAIInstrumentation()] });
// Loaded after registration, through require: the instrumentation patches `openai` as it loads.
const { OpenAI } = createRequire(import.meta.url)('openai') as typeof import('openai');

const openai = new OpenAI();
// A task as the GenAI conventions name it (`invoke_agent`); the instrumentation adds the `chat` span with its token usage.
await trace.getTracer('my-agent').startActiveSpan('invoke_agent my-agent', { attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'my-agent' } }, async (task) => {
  const answer = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: process.argv[2] ?? 'Hello' }] });
  console.log(answer.choices[0]?.message.content);
  task.end();
});
await provider.shutdown(); // flushes the spans to Parley
