/** Every HTTP route refuses ill-formed text (lib/well-formed.ts) in its params, query string and body with a 400 `{detail}`. */
import type { FastifyInstance } from 'fastify';
import { badRequest } from '../lib/errors.js';
import { illFormedDetail, illFormedPath } from '../lib/well-formed.js';

/** A `preValidation` hook on every route: a lone surrogate in the body, query string or params is a 400 `{detail}`. */
export function registerWellFormedInput(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    for (const [part, value] of [['params', request.params], ['querystring', request.query], ['body', request.body]] as const) {
      const path = illFormedPath(value);
      if (path !== undefined) throw badRequest(illFormedDetail(part, path));
    }
  });
}
