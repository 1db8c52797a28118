/**
 * OTLP/HTTP trace export decoding (contract §2.15, §4.14; design §1 "telemetry"). Two encodings of
 * `ExportTraceServiceRequest` are accepted:
 * - JSON (`application/json`) per the OTLP JSON mapping: lowerCamelCase fields, trace/span ids as
 *   hex strings, int64 nanosecond times as strings or numbers, enums as integers;
 * - protobuf (`application/x-protobuf`), decoded with protobufjs from the official
 *   opentelemetry-proto definitions (the subset below: same packages, messages and field numbers as
 *   opentelemetry/proto/{collector/trace,trace,common,resource}/v1). The decoded messages are read
 *   in place, with no intermediate copy: they carry the JSON mapping's field names, only the span
 *   ids are rewritten to hex (the route schema and the stored rows want hex), and {@link toSpans}
 *   reads int64 fields as protobufjs `Long`s as well as strings and numbers, and fields by
 *   presence (own properties: a decoded message's unset fields are defaults on its prototype).
 */
import { OTLP_PROTOBUF_MEDIA_TYPE } from '@parley/protocol';
import protobuf from 'protobufjs';
import { badRequest } from '../../lib/errors.js';

/** The maximum number of spans in one export request (larger requests are 400). */
export const MAX_SPANS_PER_REQUEST = 5000;
/** The largest accepted request body, in bytes (either encoding). */
export const MAX_OTLP_BODY_BYTES = 4 * 1024 * 1024;
/** The protobuf media type (the contract's `OTLP_PROTOBUF_MEDIA_TYPE`). */
export const OTLP_PROTOBUF = OTLP_PROTOBUF_MEDIA_TYPE;

const PROTO = `
syntax = "proto3";
package opentelemetry.proto;
message AnyValue { oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4;
  ArrayValue array_value = 5; KeyValueList kvlist_value = 6; bytes bytes_value = 7; } }
message ArrayValue { repeated AnyValue values = 1; }
message KeyValueList { repeated KeyValue values = 1; }
message KeyValue { string key = 1; AnyValue value = 2; }
message InstrumentationScope { string name = 1; string version = 2; repeated KeyValue attributes = 3; uint32 dropped_attributes_count = 4; }
message Resource { repeated KeyValue attributes = 1; uint32 dropped_attributes_count = 2; }
message Status { string message = 2; int32 code = 3; }
message Event { fixed64 time_unix_nano = 1; string name = 2; repeated KeyValue attributes = 3; uint32 dropped_attributes_count = 4; }
message Link { bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; repeated KeyValue attributes = 4; uint32 dropped_attributes_count = 5; fixed32 flags = 6; }
message Span { bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; bytes parent_span_id = 4; string name = 5; int32 kind = 6;
  fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8; repeated KeyValue attributes = 9; uint32 dropped_attributes_count = 10;
  repeated Event events = 11; uint32 dropped_events_count = 12; repeated Link links = 13; uint32 dropped_links_count = 14; Status status = 15; fixed32 flags = 16; }
message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; string schema_url = 3; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; string schema_url = 3; }
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message ExportTracePartialSuccess { int64 rejected_spans = 1; string error_message = 2; }
message ExportTraceServiceResponse { ExportTracePartialSuccess partial_success = 1; }
`;
// Enums are declared int32 above: identical on the wire, and decoded straight to integers.
const root = protobuf.parse(PROTO).root;
const RequestType = root.lookupType('opentelemetry.proto.ExportTraceServiceRequest');
const ResponseType = root.lookupType('opentelemetry.proto.ExportTraceServiceResponse');

/** One OTLP KeyValue in the JSON mapping (value: an AnyValue object). */
interface KeyValueJson {
  key?: unknown;
  value?: unknown;
}
/** The OTLP JSON span fields read here (others are ignored). */
interface SpanJson {
  traceId?: unknown;
  spanId?: unknown;
  parentSpanId?: unknown;
  name?: unknown;
  kind?: unknown;
  startTimeUnixNano?: unknown;
  endTimeUnixNano?: unknown;
  attributes?: unknown;
  status?: { code?: unknown; message?: unknown };
}
/** `ExportTraceServiceRequest` in the OTLP JSON mapping (as validated by the route schema). */
export interface ExportRequestJson {
  resourceSpans?: { resource?: { attributes?: unknown }; scopeSpans?: { spans?: SpanJson[] }[] }[];
}

/** A validated span, ready to store (times as Dates rounded to the ms; `durationUs` rounded to the µs). */
export interface DecodedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  name: string;
  kind: number;
  startTime: Date;
  endTime: Date;
  durationUs: number;
  statusCode: number;
  statusMessage: string | null;
  attributes: Record<string, unknown>;
  resource: Record<string, unknown>;
}

/** `key` is set on `a` (own property: a JSON object's key, or a decoded message's present field). */
const has = (a: object, key: string) => Object.hasOwn(a, key);

const hexOf = (v: unknown) => (v instanceof Uint8Array ? Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex') : v);

/**
 * Decode a protobuf request body, in place (see the module docs): the messages themselves, span
 * ids as hex. 400 when malformed.
 */
export function decodeProtobufRequest(body: Buffer): ExportRequestJson {
  let message: ExportRequestJson;
  try {
    message = RequestType.decode(body) as unknown as ExportRequestJson;
  } catch {
    throw badRequest('body is not a valid protobuf ExportTraceServiceRequest');
  }
  for (const rs of message.resourceSpans ?? []) {
    // The route schema would see the default `null` of an unset message field.
    if (!has(rs, 'resource')) rs.resource = undefined;
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        // An unset field reads as its prototype default (not bytes): only present ids are kept.
        for (const f of ['traceId', 'spanId', 'parentSpanId'] as const) s[f] = has(s, f) ? hexOf(s[f]) : undefined;
      }
    }
  }
  return message;
}

/** The OTLP JSON response (`ExportTraceServiceResponse`). */
export const exportResponse = (rejectedSpans: number, errorMessage: string) => ({ partialSuccess: { rejectedSpans, errorMessage } });

/** The same response, protobuf-encoded (for `application/x-protobuf` requests). */
export const exportResponseProtobuf = (rejectedSpans: number, errorMessage: string): Buffer =>
  Buffer.from(ResponseType.encode(ResponseType.fromObject(exportResponse(rejectedSpans, errorMessage))).finish());

/** A protobufjs `Long` (int64 / fixed64 decoded from protobuf). */
interface LongLike {
  low: number;
  high: number;
  unsigned?: boolean;
}
const isLong = (v: unknown): v is LongLike => typeof v === 'object' && v !== null && typeof (v as LongLike).low === 'number' && typeof (v as LongLike).high === 'number';
/** The exact value of a `Long` (two's complement unless unsigned). */
const longToBigInt = (v: LongLike): bigint => {
  const u = (BigInt(v.high >>> 0) << 32n) | BigInt(v.low >>> 0);
  return v.unsigned ? u : BigInt.asIntN(64, u);
};

/** Flatten an OTLP AnyValue to plain JSON (int64 beyond 2^53 stays a decimal string; bytes base64). */
export function flattenAnyValue(v: unknown, depth = 0): unknown {
  if (v === null || typeof v !== 'object' || depth > 16) return null;
  const a = v as Record<string, unknown>;
  if (has(a, 'stringValue')) return typeof a.stringValue === 'string' ? a.stringValue : String(a.stringValue);
  if (has(a, 'boolValue')) return a.boolValue === true;
  if (has(a, 'intValue')) {
    const raw = isLong(a.intValue) ? String(longToBigInt(a.intValue)) : a.intValue;
    const n = Number(raw);
    return Number.isSafeInteger(n) ? n : String(raw);
  }
  if (has(a, 'doubleValue')) return typeof a.doubleValue === 'number' ? a.doubleValue : Number(a.doubleValue);
  if (has(a, 'bytesValue')) return a.bytesValue instanceof Uint8Array ? Buffer.from(a.bytesValue).toString('base64') : a.bytesValue;
  if (has(a, 'arrayValue')) return listOf((a.arrayValue as { values?: unknown } | null)?.values).map((x) => flattenAnyValue(x, depth + 1));
  if (has(a, 'kvlistValue')) return flattenAttributes((a.kvlistValue as { values?: unknown } | null)?.values, depth + 1);
  return null;
}

const listOf = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** Flatten a KeyValue list to a plain object `{key: value}`. */
export function flattenAttributes(list: unknown, depth = 0): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of listOf(list) as KeyValueJson[]) {
    if (kv && typeof kv.key === 'string') out[kv.key] = flattenAnyValue(kv.value, depth);
  }
  return out;
}

const TRACE_ID = /^[0-9a-f]{32}$/;
const SPAN_ID = /^[0-9a-f]{16}$/;
const ZERO = /^0+$/;
/**
 * Nanosecond times must fall between 1970 and 9999-12-31. A JSON number above 2^53 (any real
 * timestamp) has lost sub-microsecond precision in JSON parsing; it is accepted as it is.
 */
const MAX_NANOS = 253402300799999n * 1_000_000n;

function nanos(v: unknown, where: () => string, field: string): bigint {
  if (isLong(v) || (typeof v === 'string' && /^\d{1,21}$/.test(v)) || (typeof v === 'number' && Number.isInteger(v) && v >= 0)) {
    const n = isLong(v) ? longToBigInt(v) : BigInt(v);
    if (n > 0n && n <= MAX_NANOS) return n;
  }
  throw badRequest(`${where()}${field}: must be a positive int64 of Unix nanoseconds (string or number)`);
}

function id(v: unknown, re: RegExp, where: () => string, field: string, optional: boolean): string | null {
  const s = typeof v === 'string' ? v.toLowerCase() : v;
  if (optional && (s === undefined || s === null || s === '')) return null;
  if (typeof s !== 'string' || !re.test(s) || ZERO.test(s)) throw badRequest(`${where()}${field}: must be ${re === TRACE_ID ? 32 : 16} hex characters, not all zero`);
  return s;
}

/** Rounded (half up) division of non-negative nanoseconds: JSON numbers may sit just below the exact value. */
const roundDiv = (n: bigint, d: bigint) => (n + d / 2n) / d;

/** `where` names the span in errors (built only when one is thrown). */
function toSpan(s: SpanJson, resource: Record<string, unknown>, where: () => string): DecodedSpan {
  const start = nanos(s.startTimeUnixNano, where, '.startTimeUnixNano');
  const end = nanos(s.endTimeUnixNano, where, '.endTimeUnixNano');
  if (end < start) throw badRequest(`${where()}: endTimeUnixNano is before startTimeUnixNano`);
  if (typeof s.name !== 'string' || s.name.length === 0 || s.name.length > 256) throw badRequest(`${where()}.name: 1 to 256 characters required`);
  const kind = s.kind ?? 0;
  if (typeof kind !== 'number' || !Number.isInteger(kind) || kind < 0 || kind > 5) throw badRequest(`${where()}.kind: an integer SpanKind 0..5`);
  const code = s.status?.code ?? 0;
  if (typeof code !== 'number' || ![0, 1, 2].includes(code)) throw badRequest(`${where()}.status.code: 0 (unset), 1 (ok) or 2 (error)`);
  const message = s.status?.message;
  return {
    traceId: id(s.traceId, TRACE_ID, where, '.traceId', false)!,
    spanId: id(s.spanId, SPAN_ID, where, '.spanId', false)!,
    parentSpanId: id(s.parentSpanId, SPAN_ID, where, '.parentSpanId', true),
    name: s.name,
    kind,
    startTime: new Date(Number(roundDiv(start, 1_000_000n))),
    endTime: new Date(Number(roundDiv(end, 1_000_000n))),
    durationUs: Number(roundDiv(end - start, 1000n)),
    statusCode: code,
    statusMessage: typeof message === 'string' && message !== '' ? message : null,
    attributes: flattenAttributes(s.attributes),
    resource,
  };
}

/**
 * Validate a request (JSON mapping) and return its spans. The request is all or nothing:
 * 400 naming the first offending span (`resourceSpans[i].scopeSpans[j].spans[k]`) for a bad id,
 * an end before its start, a bad time, name, kind or status, and for more than
 * {@link MAX_SPANS_PER_REQUEST} spans.
 */
export function toSpans(req: ExportRequestJson): DecodedSpan[] {
  const total = (req.resourceSpans ?? []).reduce((n, rs) => n + (rs.scopeSpans ?? []).reduce((m, ss) => m + (ss.spans?.length ?? 0), 0), 0);
  if (total > MAX_SPANS_PER_REQUEST) throw badRequest(`too many spans: ${total} (at most ${MAX_SPANS_PER_REQUEST} per request)`);
  const out: DecodedSpan[] = [];
  (req.resourceSpans ?? []).forEach((rs, i) => {
    const resource = flattenAttributes(rs.resource?.attributes);
    (rs.scopeSpans ?? []).forEach((ss, j) => (ss.spans ?? []).forEach((s, k) => out.push(toSpan(s, resource, () => `resourceSpans[${i}].scopeSpans[${j}].spans[${k}]`))));
  });
  return out;
}

/** Encode a request (the same protobuf definitions; for tests and tools). Input: the JSON mapping with ids as bytes. */
export function encodeProtobufRequest(obj: Record<string, unknown>): Buffer {
  return Buffer.from(RequestType.encode(RequestType.fromObject(obj)).finish());
}
