/**
 * The one error handler (contract §7, design §7): every failure, the framework's own included, is
 * answered as `{detail}` with its status. Validation and malformed-input errors are 400, never 500.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isDataException, isDatabaseUnavailable } from '../db/errors.js';
import { AppError, ErrorCode } from '../lib/errors.js';

/** `{detail}` — the error body of every route (contract §7). */
export const ERROR_SCHEMA = {
  $id: 'Error',
  type: 'object',
  properties: { detail: { type: 'string' } },
  required: ['detail'],
} as const;

/** Fastify's own errors raised before routing (malformed URL, …), rendered as `{detail}`. */
export function frameworkErrors(err: FastifyError, _req: unknown, reply: FastifyReply): void {
  void reply.status(typeof err.statusCode === 'number' && err.statusCode < 500 ? err.statusCode : 400).send({ detail: err.message });
}

/**
 * @param notFoundFallback answers a request no route matched instead of the 404 (the web app's
 *   page paths, `http/dashboard.ts`); true when it did.
 */
export function registerErrorHandling(app: FastifyInstance, notFoundFallback?: (request: FastifyRequest, reply: FastifyReply) => boolean): void {
  app.addSchema(ERROR_SCHEMA);
  // JSON only: a text/plain body is an unsupported media type (415), not a string body.
  app.removeContentTypeParser('text/plain');

  app.setErrorHandler((err: FastifyError | AppError, request, reply) => {
    if (err instanceof AppError) {
      if (err.retryAfterMs !== undefined) reply.header('retry-after', Math.max(1, Math.ceil(err.retryAfterMs / 1000)));
      return reply.status(err.status).send({ detail: err.detail });
    }
    if (err.validation) {
      const where = err.validationContext ?? 'request';
      return reply.status(400).send({ detail: `invalid ${where}: ${err.message.replace(/^(body|querystring|params|headers)\/?/, '')}` });
    }
    if (isDatabaseUnavailable(err)) {
      request.log.warn({ err }, 'database unavailable');
      return reply.status(503).header('retry-after', 1).send({ detail: 'the database is unavailable; retry shortly' });
    }
    if (isDataException(err)) return reply.status(400).send({ detail: 'invalid input value (e.g. a NUL character or an out-of-range date)' });
    const status = typeof err.statusCode === 'number' ? err.statusCode : 500;
    if (status >= 400 && status < 500) return reply.status(status).send({ detail: err.message });
    request.log.error({ err }, 'unhandled error');
    return reply.status(500).send({ detail: 'internal server error' });
  });

  app.setNotFoundHandler((request, reply) => {
    if (notFoundFallback?.(request, reply)) return;
    void reply.status(404).send({ detail: `route ${request.method} ${request.url.split('?')[0]} not found` });
  });
}

/** Error-response schemas for a route's OpenAPI entry, referencing the shared `Error` schema. */
export function errorResponses(...statuses: number[]): Record<number, { $ref: string }> {
  return Object.fromEntries(statuses.map((s) => [s, { $ref: 'Error#' }]));
}

export { AppError, ErrorCode };
