/**
 * A local OTLP/HTTP receiver for the telemetry export tests (no OpenTelemetry Collector is
 * packaged by Debian or npm here): `POST /v1/traces` and `POST /v1/logs` with OTLP JSON bodies.
 * Trace requests are decoded with the server's own OTLP decoder (`toSpans`, the ingest path's);
 * log requests are read as the OTLP JSON `ExportLogsServiceRequest`. It can answer 503 (an
 * overloaded endpoint) or be stopped and restarted on the same port (a down endpoint).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { flattenAttributes, toSpans, type DecodedSpan, type ExportRequestJson } from '../src/modules/telemetry/otlp.js';

/** One received LogRecord: body, event name, flattened attributes and resource attributes. */
export interface ReceivedLog {
  body: unknown;
  eventName: string | undefined;
  severityText: string | undefined;
  attributes: Record<string, unknown>;
  resource: Record<string, unknown>;
}

interface LogsJson {
  resourceLogs?: { resource?: { attributes?: unknown }; scopeLogs?: { logRecords?: { body?: { stringValue?: string }; eventName?: string; severityText?: string; attributes?: unknown }[] }[] }[];
}

export class OtlpReceiver {
  readonly spans: DecodedSpan[] = [];
  readonly logs: ReceivedLog[] = [];
  /** Headers of every request received (lower-case names). */
  readonly headers: http.IncomingHttpHeaders[] = [];
  /** Requests answered 503. */
  refused = 0;
  /** Answer every request 503 while true. */
  unavailable = false;
  private server: http.Server | undefined;
  port = 0;

  /** Listen on 127.0.0.1 (`port` 0: any; later restarts reuse the first port). */
  async start(): Promise<this> {
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.headers.push(req.headers);
        if (this.unavailable) {
          this.refused++;
          res.writeHead(503).end();
          return;
        }
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
        if (req.url === '/v1/traces') this.spans.push(...toSpans(body as ExportRequestJson));
        else if (req.url === '/v1/logs') this.logs.push(...decodeLogs(body as LogsJson));
        else return res.writeHead(404).end();
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
    return this;
  }

  /** Stop listening and drop open connections (a down endpoint). */
  async stop(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }
}

function decodeLogs(req: LogsJson): ReceivedLog[] {
  return (req.resourceLogs ?? []).flatMap((rl) => {
    const resource = flattenAttributes(rl.resource?.attributes);
    return (rl.scopeLogs ?? []).flatMap((sl) =>
      (sl.logRecords ?? []).map((r) => ({ body: r.body?.stringValue, eventName: r.eventName, severityText: r.severityText, attributes: flattenAttributes(r.attributes), resource })),
    );
  });
}

/** Poll `check` every 25 ms until it answers true; fails after `ms`. */
export async function until(check: () => boolean | Promise<boolean>, ms = 15_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
