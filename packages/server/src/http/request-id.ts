/**
 * Request ids (design §8.32): every request gets an id — the caller's own
 * `X-Request-Id` when it is well-formed (1–128 of `A-Z a-z 0-9 . _ : -`), else a fresh UUID —
 * which Fastify puts on every log line of the request (`reqId`) and this hook echoes in the
 * `X-Request-Id` header of every answer, errors included.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';

export const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/** Fastify's `genReqId`: the caller's well-formed `X-Request-Id`, else a new UUID. */
export function requestId(req: IncomingMessage): string {
  const h = req.headers['x-request-id'];
  return typeof h === 'string' && REQUEST_ID_PATTERN.test(h) ? h : randomUUID();
}

/** Echo the request id on every answer. */
export function registerRequestIds(app: FastifyInstance): void {
  app.addHook('onRequest', async (req, reply) => {
    void reply.header('x-request-id', req.id);
  });
}
