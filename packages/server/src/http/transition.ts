/**
 * Owner-only state transitions of one row: `POST /<things>/:id/<verb>` (approve, deny, accept,
 * revoke, rotate …), the same route everywhere but for its path, summary, answer and service call.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Static, TSchema } from '@sinclair/typebox';
import { ownerOf } from './auth.js';
import { errorResponses } from './errors.js';
import { AUTH_CALLERS, IdParams } from '@parley/protocol';

type TypeBoxApp = Parameters<FastifyPluginAsyncTypebox>[0];

/**
 * What distinguishes one transition route: its OpenAPI tags, summary and description (what the
 * transition does; who may call it and the errors are added here), and the schema of its 200 answer.
 */
export interface TransitionRoute<T extends TSchema> {
  tags: string[];
  summary: string;
  description: string;
  response: T;
}

/**
 * Register `POST <path>` (`path` ends in `/:id/<verb>`) for the owner JWT (`auth: 'owner'`,
 * security ownerJwt): `run(owner, id)` performs the transition in the owner's tenant and answers the
 * row, sent with 200. `:id` must be a UUID (400); 401 without an owner token, 403 without a tenant;
 * `run` answers 404 for an unknown row (or another tenant's: invisible under RLS) and 409 when the
 * row's state does not allow the transition (contract §7).
 */
export function ownerTransition<T extends TSchema>(
  app: TypeBoxApp,
  path: string,
  route: TransitionRoute<T>,
  run: (owner: { tenantId: string; sub: string }, id: string) => Promise<Static<T>>,
): void {
  // Widened: the type provider cannot resolve a generic response schema (`run` is checked against `T`).
  const answer: TSchema = route.response;
  app.post(
    path,
    {
      config: { auth: 'owner' },
      schema: {
        tags: route.tags,
        security: [{ ownerJwt: [] }],
        summary: route.summary,
        description: `${route.description}\n\n**Who may call:** ${AUTH_CALLERS.owner}\n\n400 when \`id\` is not a UUID; 401 without an owner token; 403 without a tenant; 404 for an unknown row (or another tenant's); 409 when the row's state does not allow the transition.`,
        params: IdParams,
        response: { 200: answer, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (req) => run(ownerOf(req), req.params.id),
  );
}
