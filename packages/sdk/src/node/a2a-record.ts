/**
 * What each side of an A2A call through the plugin leaves behind: one `svc.task` span (the task
 * span the trust engine counts, docs/trust-scoring.md) and one `agent.action` entry in the agent's
 * own tenant audit chain (`POST /api/v1/audit/events`), both in the call's W3C trace.
 *
 * | side     | span kind | audit action | parent of the span                                   |
 * |----------|-----------|--------------|------------------------------------------------------|
 * | caller   | CLIENT    | `a2a.call`   | the A2A client's `traceparent`, when it sent one      |
 * | answerer | SERVER    | `a2a.answer` | the caller's span (the `traceparent` the request carried) |
 *
 * The span's own `traceparent` is what the side hands on: the caller puts it on the channel
 * messages, the answerer on its request to the upstream. Span attributes and audit details name
 * the peer, the JSON-RPC method, the channel and the outcome, never the content. Spans are exported
 * and audit entries submitted in the background; failures are logged and never fail the call.
 */
import type { ParleyClient } from '../client/rest.js';
import { parseTraceparent, SPAN_KIND, SpanExporter, startSpan, type TraceSpan } from '../telemetry/spans.js';

/** Which side of the call this agent is. */
export type A2aSide = 'caller' | 'answerer';

/**
 * How a call ended: `answered` (a JSON-RPC result), `streamed` (an SSE stream ended), `aborted`
 * (the caller went away), or the cause that stopped it (`a2a-errors.ts` causes, `rpc_error` when
 * the upstream answered a JSON-RPC error, `no_upstream`).
 */
export type A2aOutcome = 'answered' | 'streamed' | 'aborted' | string;

/** One call being recorded. */
export interface A2aCallRecord {
  /** The span: its `traceparent` goes with the work the call causes. */
  readonly span: TraceSpan;
  /** Name the channel once known. */
  channel(id: string): void;
  /** End the span and submit the audit entry (idempotent: the first outcome counts). */
  finish(outcome: A2aOutcome, failed?: boolean): void;
}

/** Records the calls of one agent. */
export interface A2aRecorder {
  /** Start recording a call with `peer` (hub address); `traceparent` is the incoming trace context. */
  start(side: A2aSide, call: { peer: string; method: string; traceparent?: string | string[] | null | undefined; channelId?: string }): A2aCallRecord;
  /** Export the spans queued now and wait for the audit entries submitted so far. */
  flush(): Promise<void>;
}

const describe = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * The recorder of an agent whose REST client is `client` (device JWT or API key).
 * @param options.serviceName OTLP `service.name` of the spans (default `parley-agent`)
 */
export function createA2aRecorder(options: { client: ParleyClient; serviceName?: string; log?: (line: string) => void }): A2aRecorder {
  const log = options.log ?? (() => undefined);
  const exporter = new SpanExporter(() => options.client, options.serviceName ?? 'parley-agent', '@parley/sdk/a2a');
  const audits = new Set<Promise<void>>();

  function start(side: A2aSide, call: { peer: string; method: string; traceparent?: string | string[] | null | undefined; channelId?: string }): A2aCallRecord {
    const parent = parseTraceparent(call.traceparent);
    const attributes: Record<string, string | number | boolean> = {
      'svc.task': side === 'caller' ? 'a2a.call' : 'a2a.answer',
      'gen_ai.operation.name': 'invoke_agent',
      'rpc.system': 'jsonrpc',
      'rpc.method': call.method,
      'a2a.peer': call.peer,
    };
    const span = startSpan('svc.task', { traceId: parent?.traceId, parentSpanId: parent?.parentSpanId, kind: side === 'caller' ? SPAN_KIND.client : SPAN_KIND.server, attributes });
    const startedAt = performance.now();
    let channelId = call.channelId;
    let done = false;
    return {
      span,
      channel(id) {
        channelId = id;
      },
      finish(outcome, failed = !['answered', 'streamed', 'aborted'].includes(outcome)) {
        if (done) return;
        done = true;
        if (channelId) span.attributes['parley.channel_id'] = channelId;
        span.attributes['a2a.outcome'] = outcome;
        if (failed) span.attributes['error.type'] = outcome;
        exporter.end(span, failed ? outcome : undefined);
        const details = { peer: call.peer, method: call.method, outcome, ...(channelId ? { channel_id: channelId } : {}), duration_ms: Math.round(performance.now() - startedAt) };
        const submit = options.client
          .submitAuditEvent({ action: span.attributes['svc.task'] as string, details, trace_id: span.traceId, parent_span_id: span.spanId })
          .then(
            () => undefined,
            (err: unknown) => log(`warning: audit entry of the A2A call with ${call.peer} not submitted: ${describe(err)}`),
          )
          .finally(() => audits.delete(submit));
        audits.add(submit);
      },
    };
  }

  return {
    start,
    async flush() {
      await Promise.all([exporter.flush(), ...audits]);
    },
  };
}
