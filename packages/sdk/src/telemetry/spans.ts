/**
 * Spans an agent reports about its own work, in W3C Trace Context (trace and span ids, the
 * `traceparent` header) and exported as OpenTelemetry OTLP/HTTP JSON (opentelemetry-proto
 * `ExportTraceServiceRequest`) to `POST /api/v1/telemetry/ingest` with the agent's credentials, in
 * the background and in batches. The span names the trust engine counts (`svc.task`, `svc.tool`)
 * are in docs/trust-scoring.md.
 */
import type { ParleyClient } from '../client/rest.js';

const TRACE_ID = /^[0-9a-f]{32}$/;
const SPAN_ID = /^[0-9a-f]{16}$/;
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

/** OTLP `Span.SpanKind` values (opentelemetry-proto trace.proto). */
export const SPAN_KIND = { internal: 1, server: 2, client: 3 } as const;

/** A started span; end it with {@link SpanExporter.end}. */
export interface TraceSpan {
  /** 32 lowercase hex. */
  traceId: string;
  /** 16 lowercase hex. */
  spanId: string;
  parentSpanId: string | undefined;
  /** `00-<trace-id>-<span-id>-01`: the context to hand to the work this span causes. */
  traceparent: string;
  name: string;
  kind: number;
  /** Start, nanoseconds since the Unix epoch. */
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
 * The trace and parent span of a W3C Trace Context `traceparent` header (version 00, Trace Context
 * §3.2), or undefined when it is missing or malformed (ids all zero included).
 */
export function parseTraceparent(value: string | string[] | null | undefined): { traceId: string; parentSpanId: string } | undefined {
  const v = (Array.isArray(value) ? value[0] : value)?.trim().toLowerCase();
  const m = v ? TRACEPARENT.exec(v) : null;
  const traceId = traceIdOf(m?.[1]);
  const parentSpanId = spanIdOf(m?.[2]);
  return traceId && parentSpanId ? { traceId, parentSpanId } : undefined;
}

function randomHex(bytes: number): string {
  const b = globalThis.crypto.getRandomValues(new Uint8Array(bytes));
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}

/** Wall-clock nanoseconds from the monotonic clock (`performance.timeOrigin` + `performance.now()`). */
function nowNs(): bigint {
  const ms = performance.timeOrigin + performance.now();
  return BigInt(Math.trunc(ms)) * 1_000_000n + BigInt(Math.round((ms % 1) * 1e6));
}

/**
 * Start a span named `name` in the trace of `parent` (a `{traceId, parentSpanId}` pair whose
 * malformed parts are ignored), else in a new trace.
 */
export function startSpan(
  name: string,
  options: { traceId?: string | undefined; parentSpanId?: string | undefined; kind?: number; attributes?: Record<string, string | number | boolean> } = {},
): TraceSpan {
  const traceId = traceIdOf(options.traceId) ?? randomHex(16);
  const spanId = randomHex(8);
  return {
    traceId,
    spanId,
    parentSpanId: spanIdOf(options.parentSpanId),
    traceparent: `00-${traceId}-${spanId}-01`,
    name,
    kind: options.kind ?? SPAN_KIND.internal,
    startNs: nowNs(),
    attributes: { ...options.attributes },
  };
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

/**
 * Batches finished spans and exports them to the service. Export errors are dropped: telemetry
 * never fails the work it describes.
 */
export class SpanExporter {
  private queue: OtlpSpan[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  private inflight: Promise<void> = Promise.resolve();

  /**
   * @param client the agent's authenticated client (ingest needs a device JWT or an API key)
   * @param serviceName OTLP `service.name` resource attribute
   * @param scope the OTLP instrumentation scope name
   * @param delayMs how long a span may wait for its batch (default 500 ms)
   */
  constructor(
    private readonly client: () => ParleyClient | Promise<ParleyClient>,
    private readonly serviceName: string,
    private readonly scope = '@parley/sdk',
    private readonly delayMs = 500,
  ) {}

  /** End `span` now (status ERROR with `errorMessage` when given, else OK) and queue it. */
  end(span: TraceSpan, errorMessage?: string): void {
    this.queue.push({
      traceId: span.traceId,
      spanId: span.spanId,
      ...(span.parentSpanId ? { parentSpanId: span.parentSpanId } : {}),
      name: span.name,
      kind: span.kind,
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
        resourceSpans: [{ resource: { attributes: [attribute('service.name', this.serviceName)] }, scopeSpans: [{ scope: { name: this.scope }, spans }] }],
      };
      const send = Promise.resolve()
        .then(() => this.client())
        .then((c) => c.ingestTelemetry(body))
        .then(
          () => undefined,
          () => undefined,
        );
      this.inflight = Promise.all([this.inflight, send]).then(() => undefined);
    }
    return this.inflight;
  }
}
