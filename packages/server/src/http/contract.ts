/**
 * Registers a route from its row of the wire contract (`@parley/protocol`): the row's method,
 * path, auth mode and schemas become the Fastify route options, so Ajv validates with the
 * contract's own schema objects and the OpenAPI document is derived from them. Route files are
 * then one `serve(app, ROUTES.x, handler)` per operation: the principal in, one service call out.
 */
import { documentedErrors, operationDescription, securityOf, type RouteBody, type RouteContract, type RouteParams, type RouteQuery, type RouteResult } from '@parley/protocol';
import { Type } from '@sinclair/typebox';
import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest, RouteShorthandOptions } from 'fastify';
import { errorResponses } from './errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The contract row the route was registered from (see {@link serve}). */
    contract?: RouteContract;
  }
}

/** The request a contract handler sees: body, query and params typed by the row's schemas. */
export type ContractRequest<R extends RouteContract> = FastifyRequest<{ Body: RouteBody<R>; Querystring: RouteQuery<R>; Params: RouteParams<R> }>;

/** A contract handler: answers the row's success type, or sends through `reply` (other status, raw body). */
export type ContractHandler<R extends RouteContract> = (
  req: ContractRequest<R>,
  reply: FastifyReply,
) => Promise<RouteResult<R> | FastifyReply> | RouteResult<R> | FastifyReply;

/** Route options a row does not carry (per-route rate limits, body limits, parsing hooks). */
export type ServeOptions = Omit<RouteShorthandOptions, 'schema' | 'config'> & {
  config?: Omit<FastifyContextConfig, 'auth' | 'contract'>;
  /** OpenAPI summary when it depends on configuration (e.g. a configured size limit); the row's otherwise. */
  summary?: string;
};

/** `/api/v1/rooms/{id}` → `/rooms/:id` inside a plugin registered with prefix `/api/v1`. */
export function fastifyPath(path: string, prefix: string): string {
  const url = path.replace(/\{(\w+)\}/g, ':$1');
  if (!prefix) return url;
  if (!url.startsWith(prefix)) throw new Error(`route ${path} is outside the plugin prefix ${prefix}`);
  return url.slice(prefix.length) || '/';
}

/**
 * The Fastify `schema` option of a row (validation + OpenAPI): its description composed with who
 * may call it and the common errors (@parley/protocol `operationDescription`), and an error answer
 * for every status it documents (`documentedErrors`: the row's own and those its auth and inputs imply).
 */
export function routeSchema(row: RouteContract, summary = row.summary): Record<string, unknown> {
  const response: Record<number, unknown> = {};
  for (const [status, s] of Object.entries(row.responses)) response[Number(status)] = s ?? Type.Null();
  const security = securityOf(row.auth);
  return {
    tags: [...row.tags],
    summary,
    description: operationDescription(row),
    ...(security ? { security } : {}),
    ...(row.params ? { params: row.params } : {}),
    ...(row.query ? { querystring: row.query } : {}),
    ...(row.headers ? { headers: row.headers } : {}),
    ...(row.body ? { body: row.body } : {}),
    ...(row.contentTypes ? { consumes: [...row.contentTypes] } : {}),
    ...(row.hide ? { hide: true } : {}),
    response: { ...errorResponses(...documentedErrors(row)), ...response },
  };
}

/**
 * Registers `row` on `app` (any plugin; the plugin's prefix is taken off the row's absolute path).
 * @throws Error at startup when the row's path lies outside the plugin's prefix.
 */
export function serve<R extends RouteContract>(app: FastifyInstance, row: R, handler: ContractHandler<R>, options: ServeOptions = {}): void {
  const { config, summary, ...rest } = options;
  app.route({
    ...rest,
    method: row.method,
    url: fastifyPath(row.path, app.prefix),
    config: { ...config, auth: row.auth, contract: row },
    schema: routeSchema(row, summary),
    handler: handler as never,
  });
}
