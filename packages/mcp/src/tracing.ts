/**
 * W3C Trace Context for tool calls (issue 19: `traceId` / `parentSpanId` arguments propagate into
 * the spans the calls produce). Each tool call is one `svc.tool` span (the span name the trust
 * engine counts for tool reliability, docs/trust-scoring.md) in the caller's trace when it gave a
 * `traceId` (else a new trace), child of its `parentSpanId` when given. The call's REST requests
 * and A2A messages carry `traceparent: 00-<trace-id>-<span-id>-01` so the service's own spans and
 * the peer's join the same trace. Finished spans are exported in OTLP/HTTP JSON to
 * `POST /api/v1/telemetry/ingest` (SPEC §4.14) in the background, in batches.
 */
import { randomBytes } from 'node:crypto';
import type { ParleyClient } from '@parley/sdk';

const TRACE_ID = /^[0-9a-f]{32}$/;
const SPAN_ID = /^[0-9a-f]{16}$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

/** The span of one tool call. */
export interface ToolSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  /** `00-<trace-id>-<span-id>-01` (W3C Trace Context `traceparent`). */
  traceparent: string;
  name: string;
  startNs: bigint;
  attributes: Record<string, string | number | boolean>;
}

/** A valid lowercase trace id (32 hex, not all zero), else undefined. */
export function traceIdOf(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const v = value.toLowerCase();
  return TRACE_ID.test(v) && v !== ZERO_TRACE ? v : undefined;
}

/** A valid lowercase span id (16 hex, not all zero), else undefined. */
export function spanIdOf(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const v = value.toLowerCase();
  return SPAN_ID.test(v) && v !== ZERO_SPAN ? v : undefined;
}

/**
 * Start the span of a tool call. `traceId` / `parentSpanId` come from the tool's arguments
 * (ignored when malformed: the tool's input schema already refuses them).
 */
export function startToolSpan(tool: string, traceId?: string, parentSpanId?: string): ToolSpan {
  const trace = traceIdOf(traceId) ?? randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return {
    traceId: trace,
    spanId,
    parentSpanId: spanIdOf(parentSpanId),
    traceparent: `00-${trace}-${spanId}-01`,
    name: 'svc.tool',
    startNs: nowNs(),
    attributes: { 'svc.tool': tool, 'gen_ai.tool.name': tool },
  };
}

// Wall-clock nanoseconds from the monotonic clock (one origin per process).
const hrOrigin = process.hrtime.bigint();
const epochOriginNs = BigInt(Date.now()) * 1_000_000n;
function nowNs(): bigint {
  return process.hrtime.bigint() - hrOrigin + epochOriginNs;
}

/** An OTLP JSON span (opentelemetry-proto `Span`, JSON encoding). */
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: { key: string; value: { stringValue?: string; intValue?: string; boolValue?: boolean } }[];
  status: { code: number; message?: string };
}

function attribute(key: string, v: string | number | boolean): OtlpSpan['attributes'][number] {
  if (typeof v === 'boolean') return { key, value: { boolValue: v } };
  if (typeof v === 'number') return { key, value: { intValue: String(Math.trunc(v)) } };
  return { key, value: { stringValue: v } };
}

/** Batches finished spans and exports them to the service (errors are dropped: telemetry never fails a tool). */
export class SpanExporter {
  private queue: OtlpSpan[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  private inflight: Promise<void> = Promise.resolve();

  /**
   * @param client the agent's authenticated client (ingest needs a device JWT or an API key)
   * @param serviceName OTLP `service.name` resource attribute
   * @param delayMs how long a span may wait for its batch (default 500 ms)
   */
  constructor(
    private readonly client: () => Promise<ParleyClient>,
    private readonly serviceName = 'parley-mcp',
    private readonly delayMs = 500,
  ) {}

  /** End `span` (status error with `errorMessage` when given) and queue it. */
  end(span: ToolSpan, errorMessage?: string): void {
    this.queue.push({
      traceId: span.traceId,
      spanId: span.spanId,
      ...(span.parentSpanId ? { parentSpanId: span.parentSpanId } : {}),
      name: span.name,
      kind: 2, // SERVER: the tool server serves the host's call
      startTimeUnixNano: span.startNs.toString(),
      endTimeUnixNano: nowNs().toString(),
      attributes: Object.entries(span.attributes).map(([k, v]) => attribute(k, v)),
      status: errorMessage === undefined ? { code: 1 } : { code: 2, message: errorMessage.slice(0, 500) },
    });
    if (this.queue.length >= 64) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), this.delayMs);
  }

  /** Export what is queued now; resolves when every export started so far settled. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const spans = this.queue.splice(0);
    if (spans.length > 0) {
      const body = {
        resourceSpans: [
          {
            resource: { attributes: [attribute('service.name', this.serviceName)] },
            scopeSpans: [{ scope: { name: '@parley/mcp' }, spans }],
          },
        ],
      };
      const send = this.client()
        .then((c) => c.ingestTelemetry(body as never))
        .then(
          () => undefined,
          () => undefined,
        );
      this.inflight = Promise.all([this.inflight, send]).then(() => undefined);
    }
    return this.inflight;
  }
}
