/**
 * The one error handler (SPEC §7, DESIGN §7): every failure, the framework's own included, is
 * answered as `{detail}` with its status. Validation and malformed-input errors are 400, never 500.
 */
import type { FastifyError, FastifyInstance } from 'fastify';
import { AppError, ErrorCode } from '../lib/errors.js';

/** `{detail}` — the error body of every route (SPEC §7). */
export const ERROR_SCHEMA = {
  $id: 'Error',
  type: 'object',
  properties: { detail: { type: 'string' } },
  required: ['detail'],
} as const;

export function registerErrorHandling(app: FastifyInstance): void {
  app.addSchema(ERROR_SCHEMA);

  app.setErrorHandler((err: FastifyError | AppError, request, reply) => {
    if (err instanceof AppError) {
      if (err.retryAfterMs !== undefined) reply.header('retry-after', Math.max(1, Math.ceil(err.retryAfterMs / 1000)));
      return reply.status(err.status).send({ detail: err.detail });
    }
    if (err.validation) {
      const where = err.validationContext ?? 'request';
      return reply.status(400).send({ detail: `invalid ${where}: ${err.message.replace(/^(body|querystring|params|headers)\/?/, '')}` });
    }
    const status = typeof err.statusCode === 'number' ? err.statusCode : 500;
    if (status >= 400 && status < 500) return reply.status(status).send({ detail: err.message });
    request.log.error({ err }, 'unhandled error');
    return reply.status(500).send({ detail: 'internal server error' });
  });

  app.setNotFoundHandler((request, reply) => {
    void reply.status(404).send({ detail: `route ${request.method} ${request.url.split('?')[0]} not found` });
  });
}

/** Error-response schemas for a route's OpenAPI entry, referencing the shared `Error` schema. */
export function errorResponses(...statuses: number[]): Record<number, { $ref: string }> {
  return Object.fromEntries(statuses.map((s) => [s, { $ref: 'Error#' }]));
}

export { AppError, ErrorCode };
