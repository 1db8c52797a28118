/**
 * The REST route table of the client is the wire contract's (`@parley/protocol` `ROUTES`): every
 * route the Parley service serves, keyed by the `ParleyClient` method that calls it, with its
 * HTTP method, absolute path template (`{name}` placeholders; `/api/v1` included where it
 * applies), authentication and schemas. The drift test (test/rest-drift.test.ts) checks that the
 * server registers exactly these rows, with these schema objects.
 */
import type { AuthMode, HttpMethod } from '@parley/protocol';

export { API_PREFIX, WS_PATH, fillPath, ROUTES, type HttpMethod, type RouteName } from '@parley/protocol';

/** Who authenticates a route (contract §5); see `AuthMode` in `@parley/protocol` (`owner-any` is sent as `owner`). */
export type RouteAuth = AuthMode;

/** What the client reads of a route row: method, absolute path template, auth. */
export interface RouteSpec {
  readonly method: HttpMethod;
  readonly path: string;
  readonly auth: RouteAuth;
}
