/**
 * The spans of bench/ingest: OTLP `ExportTraceServiceRequest`s shaped like an agent's traces
 * (one resource with service.name/version, one scope; a `svc.task` root and `svc.tool` /
 * `svc.policy.evaluate` children, gen_ai token counts, a few string/bool/double attributes, about
 * 5% ERROR status), in the OTLP JSON mapping and in protobuf, and the same spans as stored rows for
 * the SQL baselines (decoded by the server's own `toSpans`, so every column value is identical).
 */
import { randomBytes } from 'node:crypto';
import { encodeProtobufRequest, toSpans, type DecodedSpan, type ExportRequestJson } from '../../packages/server/src/modules/telemetry/otlp.js';

const NAMES = ['svc.tool', 'svc.tool', 'svc.policy.evaluate', 'svc.tool'];
const T0 = 1_750_000_000_000n * 1_000_000n; // ns

const str = (key: string, v: string) => ({ key, value: { stringValue: v } });
const int = (key: string, v: number) => ({ key, value: { intValue: String(v) } });

/** Request number `seed`: `n` spans in traces of 10 (a root and nine children), JSON mapping. */
export function makeRequest(seed: number, n: number): ExportRequestJson & Record<string, unknown> {
  const spans = [];
  let traceId = '';
  let rootId = '';
  for (let i = 0; i < n; i++) {
    const spanId = randomBytes(8).toString('hex');
    if (i % 10 === 0) {
      traceId = randomBytes(16).toString('hex');
      rootId = spanId;
    }
    const start = T0 + BigInt(seed) * 1_000_000_000n + BigInt(i) * 1_000_000n;
    const root = i % 10 === 0;
    spans.push({
      traceId,
      spanId,
      ...(root ? {} : { parentSpanId: rootId }),
      name: root ? 'svc.task' : NAMES[i % NAMES.length]!,
      kind: root ? 1 : 3,
      startTimeUnixNano: String(start),
      endTimeUnixNano: String(start + BigInt(200_000 + ((i * 7919) % 5_000_000))),
      attributes: [
        int('gen_ai.usage.input_tokens', 100 + (i % 900)),
        int('gen_ai.usage.output_tokens', 10 + (i % 90)),
        str('gen_ai.request.model', 'model-x'),
        str('svc.tool.name', `tool-${i % 12}`),
        { key: 'svc.cached', value: { boolValue: i % 3 === 0 } },
        { key: 'svc.cost_usd', value: { doubleValue: (i % 100) / 1000 } },
      ],
      status: i % 20 === 19 ? { code: 2, message: 'upstream timed out' } : { code: root ? 1 : 0 },
    });
  }
  const request = {
    resourceSpans: [
      {
        resource: { attributes: [str('service.name', 'bench-agent'), str('service.version', '1.4.2'), str('telemetry.sdk.language', 'nodejs')] },
        scopeSpans: [{ scope: { name: 'bench', version: '1' }, spans }],
      },
    ],
  };
  return request;
}

/** The protobuf encoding of a JSON-mapping request (hex ids to bytes). */
export function toProtobuf(req: ExportRequestJson & Record<string, unknown>): Buffer {
  const hex = (v: unknown) => (typeof v === 'string' ? Buffer.from(v, 'hex') : undefined);
  return encodeProtobufRequest({
    resourceSpans: (req.resourceSpans ?? []).map((rs) => ({
      ...rs,
      scopeSpans: (rs.scopeSpans ?? []).map((ss) => ({
        ...ss,
        spans: (ss.spans ?? []).map((s) => ({ ...s, traceId: hex(s.traceId), spanId: hex(s.spanId), parentSpanId: hex(s.parentSpanId) })),
      })),
    })),
  });
}

/** The spans of a request as the server decodes them (the rows of the SQL baselines). */
export const decodedRows = (req: ExportRequestJson): DecodedSpan[] => toSpans(req);
