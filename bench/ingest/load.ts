/**
 * Load generator of bench/ingest (a separate Node process, forked by run.ts): `clients`
 * concurrent HTTP clients (node:http, one keep-alive socket each; lighter than `fetch`, whose
 * per-request cost took a third of a core from the machine the server shares) post pre-encoded
 * OTLP export requests of `spansPerRequest` spans to `/api/v1/telemetry/ingest` with an API key,
 * closed loop (each client sends its next request when the previous one is answered), for
 * `warmupMs` + `durationMs`.
 * Answers the spans and requests completed inside the measured window (answered 200 between its
 * start and end), errors, and the latency of those requests.
 */
import http from 'node:http';
import { makeRequest, toProtobuf } from './spans.js';

/** What run.ts sends. */
export interface IngestLoadSpec {
  url: string;
  apiKey: string;
  encoding: 'json' | 'protobuf';
  clients: number;
  spansPerRequest: number;
  /** Distinct pre-encoded bodies, cycled (trace and span ids repeat across cycles; the rows' ids do not). */
  bodies: number;
  warmupMs: number;
  durationMs: number;
}

/** What it answers. */
export interface IngestLoadResult {
  requests: number;
  spans: number;
  errors: number;
  firstError: string | null;
  measuredMs: number;
  /** Request latency in the measured window, ms. */
  p50: number;
  p99: number;
  /** Bytes of one request body (the first). */
  bodyBytes: number;
  /** Every span answered 200, warm-up included (for the row-count check). */
  totalSpans: number;
}

/** POST `body` on a keep-alive socket of `agent`; resolves with the status once the answer is read. */
function post(url: string, agent: http.Agent, headers: Record<string, string>, body: Uint8Array): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent, headers: { ...headers, 'content-length': String(body.length) } }, (res) => {
      res.on('error', reject);
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.resume();
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function run(spec: IngestLoadSpec): Promise<IngestLoadResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: spec.clients });
  const json = spec.encoding === 'json';
  const bodies = Array.from({ length: spec.bodies }, (_, i) => {
    const req = makeRequest(i, spec.spansPerRequest);
    return new Uint8Array(json ? Buffer.from(JSON.stringify(req)) : toProtobuf(req));
  });
  const headers = { 'content-type': json ? 'application/json' : 'application/x-protobuf', 'x-api-key': spec.apiKey };
  const start = performance.now();
  const measureFrom = start + spec.warmupMs;
  const end = measureFrom + spec.durationMs;
  const latencies: number[] = [];
  let requests = 0;
  let spans = 0;
  let totalSpans = 0;
  let errors = 0;
  let firstError: string | null = null;
  let next = 0;
  const client = async () => {
    while (performance.now() < end) {
      const body = bodies[next++ % bodies.length]!;
      const t = performance.now();
      try {
        const status = await post(spec.url, agent, headers, body);
        if (status !== 200) throw new Error(`HTTP ${status}`);
        const done = performance.now();
        totalSpans += spec.spansPerRequest;
        if (done >= measureFrom && done <= end) {
          requests++;
          spans += spec.spansPerRequest;
          latencies.push(done - t);
        }
      } catch (err) {
        errors++;
        firstError ??= String(err);
      }
    }
  };
  await Promise.all(Array.from({ length: spec.clients }, client));
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN;
  return { requests, spans, errors, firstError, measuredMs: spec.durationMs, p50: q(0.5), p99: q(0.99), bodyBytes: bodies[0]!.length, totalSpans };
}

process.once('message', (m: { spec: IngestLoadSpec }) => {
  run(m.spec).then(
    (result) => process.send!({ result }, () => process.exit(0)),
    (err: unknown) => process.send!({ error: String(err) }, () => process.exit(1)),
  );
});
