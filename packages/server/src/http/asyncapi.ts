/**
 * The WebSocket protocol's AsyncAPI 3.0 document, beside the OpenAPI one: the JSON at
 * `/api/v1/asyncapi.json` (@parley/protocol `buildAsyncApi`, generated from the frame catalogue)
 * and a readable page of it at `/docs/asyncapi` (asyncapi-page.ts) under the docs'
 * Content-Security-Policy. Both public, hidden from the OpenAPI document, built once at startup.
 */
import { buildAsyncApi } from '@parley/protocol';
import type { FastifyInstance } from 'fastify';
import { renderAsyncApiPage } from './asyncapi-page.js';

/** Where the document and its page are served. */
export const ASYNCAPI_JSON_PATH = '/api/v1/asyncapi.json';
export const ASYNCAPI_PAGE_PATH = '/docs/asyncapi';

/** Register `GET /api/v1/asyncapi.json` and `GET /docs/asyncapi` (the page carries `pageCsp`, the docs' policy). */
export function registerAsyncApi(app: FastifyInstance, opts: { version: string; publicUrl: string; pageCsp: string }): void {
  const doc = buildAsyncApi({ version: opts.version, publicUrl: opts.publicUrl });
  const page = renderAsyncApiPage(doc);
  app.get(ASYNCAPI_JSON_PATH, { schema: { hide: true } }, async () => doc);
  app.get(ASYNCAPI_PAGE_PATH, { schema: { hide: true } }, async (_req, reply) =>
    reply.header('content-security-policy', opts.pageCsp).type('text/html; charset=utf-8').send(page),
  );
}
