/** Route parameters holding UUIDs are lowercased before validation, so ids compare and rate-limit as one. */
import type { FastifyInstance } from 'fastify';
import { asUuid } from '../lib/ids.js';

export function registerParamNormalization(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const params = request.params as Record<string, unknown> | undefined;
    if (!params) return;
    for (const [k, v] of Object.entries(params)) {
      const id = asUuid(v);
      if (id) params[k] = id;
    }
  });
}
