/**
 * The methods of `ParleyClient` derived from the route table (`ROUTES` of `@parley/protocol`), in
 * the manner of ts-rest's `initClient`: every route key is a method, typed from its row and
 * implemented once, generically, on top of `ParleyClient.call`.
 *
 * Calling convention of a derived method (the row decides each part):
 * 1. one string per `{name}` placeholder of the row's path, in path order;
 * 2. then the JSON body when the row has one, else the query when it has one — optional when
 *    every field of it is (an omitted body is sent as `{}`, an omitted query as none);
 * 3. then `opts?: RequestOptions`.
 * The answer is the row's lowest 2xx answer (`RouteResult`), `undefined` for a 204.
 */
import type { RouteBody, RouteContract, RouteQuery, RouteResult } from '@parley/protocol';
import { ROUTES, type RouteName } from './routes.js';
import type { CallArgs, RequestOptions } from './options.js';

/**
 * Names of the `{name}` placeholders of a path template, in order:
 * `PathParamNames<'/api/v1/rooms/{id}/members/{device_id}'>` is `['id', 'device_id']`.
 */
export type PathParamNames<P extends string> = P extends `${string}{${infer N}}${infer Rest}` ? [N, ...PathParamNames<Rest>] : [];

/**
 * The positional path arguments of a path template, one string per placeholder in path order:
 * `PathArgs<'/api/v1/devices/{device_id}/keys'>` is `[string]`. (TypeScript cannot label tuple
 * elements from string literal types, so the elements are unlabelled; the row's path names them.)
 */
export type PathArgs<P extends string> = P extends `${string}{${string}}${infer Rest}` ? [string, ...PathArgs<Rest>] : [];

/** An argument that may be omitted when every field of it is optional (`Partial<T>` is `T`). */
type MaybeOptional<T, Label extends 'body' | 'query'> = Label extends 'body'
  ? Partial<T> extends T
    ? [body?: T]
    : [body: T]
  : Partial<T> extends T
    ? [query?: T]
    : [query: T];

/** The input argument of a row after its path arguments: its JSON body, else its query, else none. */
export type RouteInputArgs<R extends RouteContract> = 'body' extends keyof R
  ? MaybeOptional<RouteBody<R>, 'body'>
  : 'query' extends keyof R
    ? MaybeOptional<RouteQuery<R>, 'query'>
    : [];

/** The derived method of route row `R`: `(…path params, body | query, opts?) => Promise<result>`. */
export type RouteMethod<R extends RouteContract> = (...args: [...PathArgs<R['path']>, ...RouteInputArgs<R>, opts?: RequestOptions]) => Promise<RouteResult<R>>;

/** The derived methods of routes `K` (all of them by default), each named by its route key. */
export type RouteMethods<K extends RouteName = RouteName> = { [N in K]: RouteMethod<(typeof ROUTES)[N]> };

/** Names of the `{name}` placeholders of a path template, in order (the runtime {@link PathParamNames}). */
export function pathParamNames(path: string): string[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
}

/**
 * The `call()` arguments of a derived method call: positional `args` read as the row's path
 * parameters, then its body or query (when it has one), then the request options.
 */
export function routeCallArgs(row: RouteContract, args: readonly unknown[]): CallArgs {
  const names = pathParamNames(row.path);
  const params: Record<string, string> = {};
  names.forEach((name, i) => (params[name] = args[i] as string));
  let next = names.length;
  const out: { params?: Record<string, string>; body?: unknown; query?: unknown; opts?: RequestOptions | undefined } = {};
  if (names.length > 0) out.params = params;
  if (row.body) {
    const body = args[next++];
    out.body = body === undefined ? {} : body;
  } else if (row.query) out.query = args[next++];
  out.opts = args[next] as RequestOptions | undefined;
  return out as CallArgs;
}

/** Whether the row's success answer (its lowest 2xx) is a 204 without content (its method answers `undefined`). */
function answersNoContent(row: RouteContract): boolean {
  const lowest = Object.keys(row.responses)
    .map(Number)
    .filter((s) => s >= 200 && s < 300)
    .sort((a, b) => a - b)[0];
  return lowest !== undefined && row.responses[lowest] === null;
}

/** What {@link installRouteMethods} needs of the client: the low-level call. */
interface Caller {
  call(name: RouteName, args?: CallArgs): Promise<unknown>;
}

/**
 * Define the derived method of every route on `proto` (non-enumerable, as class methods are),
 * except where `proto` already has its own member of that name (a hand-written convenience).
 */
export function installRouteMethods(proto: object): void {
  for (const [name, row] of Object.entries(ROUTES) as [RouteName, RouteContract][]) {
    if (Object.prototype.hasOwnProperty.call(proto, name)) continue;
    const noContent = answersNoContent(row);
    const method = {
      async [name](this: Caller, ...args: unknown[]): Promise<unknown> {
        const answer = await this.call(name, routeCallArgs(row, args));
        return noContent ? undefined : answer;
      },
    }[name]!;
    Object.defineProperty(proto, name, { value: method, writable: true, configurable: true, enumerable: false });
  }
}
