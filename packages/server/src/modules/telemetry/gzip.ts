/**
 * Request decompression for OTLP/HTTP ingest (contract §4.14; OTLP exporter spec: "All server
 * components MUST support … `none` … [and] `gzip`"; OTLP/HTTP: a gzipped body carries
 * `Content-Encoding: gzip`). The OpenTelemetry exporters send gzip when configured with
 * `compression: 'gzip'` or `OTEL_EXPORTER_OTLP_COMPRESSION=gzip`.
 *
 * Used as the ingest route's `preParsing` hook (after authentication, which runs on `onRequest`):
 * the route's `bodyLimit` then applies to the DECOMPRESSED bytes (a gzip bomb is cut off at the
 * limit with 413) and to the compressed bytes read. A corrupt gzip stream answers 400.
 */
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { createGunzip, type Gunzip } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError, ErrorCode } from '../../lib/errors.js';

/** The stream Fastify reads the body from; `receivedEncodedLength` = compressed bytes read so far (Fastify's Content-Length check). */
type DecodedStream = Gunzip & { receivedEncodedLength?: number };

/**
 * Fastify `preParsing` hook: `Content-Encoding` absent or `identity` → the payload as is;
 * `gzip` (or `x-gzip`) → a gunzip stream over it; anything else → 415.
 */
export async function decodeContentEncoding(req: FastifyRequest, _reply: FastifyReply, payload: IncomingMessage | Readable): Promise<Readable> {
  const encoding = String(req.headers['content-encoding'] ?? '').trim().toLowerCase();
  if (encoding === '' || encoding === 'identity') return payload;
  if (encoding !== 'gzip' && encoding !== 'x-gzip') throw new AppError(ErrorCode.UnsupportedMediaType, 'Content-Encoding must be gzip or identity');
  const gunzip: DecodedStream = createGunzip();
  gunzip.receivedEncodedLength = 0;
  payload.on('data', (chunk: Buffer) => {
    gunzip.receivedEncodedLength! += chunk.length;
  });
  payload.on('error', (err) => gunzip.destroy(err));
  payload.pipe(gunzip);
  return gunzip;
}
