/**
 * W3C Trace Context for tool calls: `traceId` / `parentSpanId` arguments propagate into the spans
 * the calls produce. Each tool call is one `svc.tool` span (the span name the trust engine counts
 * for tool reliability, docs/trust-scoring.md) of kind SERVER in the caller's trace when it gave a
 * `traceId` (else a new trace), child of its `parentSpanId` when given. The call's REST requests
 * and A2A messages carry the span's `traceparent` so the service's own spans and the peer's join
 * the same trace. Finished spans are exported by the SDK's {@link SpanExporter} (OTLP/HTTP JSON to
 * `POST /api/v1/telemetry/ingest`, in the background, in batches).
 */
import { SPAN_KIND, SpanExporter, startSpan, type ParleyClient, type TraceSpan } from '@parley/sdk';

/** The span of one tool call. */
export type ToolSpan = TraceSpan;

/**
 * Start the span of a tool call. `traceId` / `parentSpanId` come from the tool's arguments
 * (ignored when malformed: the tool's input schema already refuses them).
 */
export function startToolSpan(tool: string, traceId?: string, parentSpanId?: string): ToolSpan {
  return startSpan('svc.tool', { traceId, parentSpanId, kind: SPAN_KIND.server, attributes: { 'svc.tool': tool, 'gen_ai.tool.name': tool } });
}

/** The tool server's exporter: service `parley-mcp`, scope `@parley/mcp`. */
export function toolSpanExporter(client: () => Promise<ParleyClient>): SpanExporter {
  return new SpanExporter(client, 'parley-mcp', '@parley/mcp');
}
