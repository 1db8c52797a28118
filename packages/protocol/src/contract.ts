/**
 * The shape of the route table (ts-rest style, in TypeBox): one row per REST operation, keyed by
 * the SDK method name, carrying method, absolute path template, authentication, OpenAPI summary,
 * description and tags, and the schemas of params, query, body and every answer. The server registers each
 * row with its own schema objects (Fastify's `schema` option, hence Ajv and the OpenAPI document);
 * the SDK builds requests from the same rows and types answers with their static types.
 */
import type { Static, TSchema } from '@sinclair/typebox';

/** HTTP methods used by the API. */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** The `/api/v1` prefix of versioned routes (contract §9). */
export const API_PREFIX = '/api/v1';

/** WebSocket path (contract §4.18); not part of the OpenAPI document, hence not in the route table. */
export const WS_PATH = `${API_PREFIX}/ws`;

/**
 * Who authenticates a route (contract §5):
 * - `none`: public, no credential read;
 * - `owner`: owner JWT (`Authorization: Bearer`) with a resolved tenant (`X-Tenant-Id` when the
 *   user has several; `X-Device-Id` names the acting owner device where the route uses it);
 * - `owner-any`: owner JWT, tenant optional (`POST /tenants`); clients treat it as `owner`;
 * - `device`: device JWT of an ACTIVE device (issued by activation or renewal);
 * - `owner-or-device`: either; clients send the device JWT when they have one;
 * - `owner-or-apikey`: owner JWT, or the API key (`X-API-Key`, optional `X-Workspace-Id`) of a
 *   third-party agent (contract §4.13);
 * - `device-or-apikey`: the agent's device JWT, or its API key;
 * - `any`: owner JWT, device JWT or API key;
 * - `public`: no credential needed; one that is sent is verified (401 when invalid, design §8.15)
 *   and the route sees the principal (fuller answers, higher rate limits).
 */
export type AuthMode = 'none' | 'owner' | 'owner-any' | 'device' | 'owner-or-device' | 'owner-or-apikey' | 'device-or-apikey' | 'any' | 'public';

/** One row of the route table. */
export interface RouteContract {
  readonly method: HttpMethod;
  /** Absolute path template with OpenAPI `{param}` placeholders (includes `/api/v1` where it applies). */
  readonly path: string;
  readonly auth: AuthMode;
  /** OpenAPI summary. */
  readonly summary: string;
  /** OpenAPI tags (the contract area: docs/contract.md §4). */
  readonly tags: readonly string[];
  /**
   * What the operation does, narrower rules on who may call it than `auth` says, and every status
   * of `errors` only this route answers, with why (Markdown). The OpenAPI description adds who may
   * call it and the common errors from `auth` and the row's inputs (route-docs.ts).
   */
  readonly description: string;
  readonly params?: TSchema;
  readonly query?: TSchema;
  /** Request headers the route reads beyond authentication (`X-Device-Id`, `X-Workspace-Id`), for validation and the OpenAPI document. */
  readonly headers?: TSchema;
  /** JSON body (omitted for routes without a body or with a non-JSON body, see `contentTypes`). */
  readonly body?: TSchema;
  /** Answers by 2xx status; the lowest is the one the SDK returns. A 204 has no schema (`null`). */
  readonly responses: Readonly<Record<number, TSchema | null>>;
  /** Error statuses the route documents; each answers `{detail}` (contract §7). */
  readonly errors: readonly number[];
  /** Non-JSON request media types the route accepts (raw uploads, OTLP protobuf). */
  readonly contentTypes?: readonly string[];
  /** Hidden from the OpenAPI document. */
  readonly hide?: boolean;
}

/** Declares a route row, keeping its literal types (so the SDK can type calls by name). */
export const defineRoute = <const R extends RouteContract>(row: R): R => row;

type StaticOr<S, Fallback> = S extends TSchema ? Static<S> : Fallback;
type LowestKey<R extends Readonly<Record<number, unknown>>> = Extract<keyof R, 200 | 201 | 202 | 204> extends infer K
  ? [K] extends [never]
    ? keyof R
    : 200 extends K
      ? 200
      : 201 extends K
        ? 201
        : 202 extends K
          ? 202
          : K
  : never;

/** Static type of a row's JSON body (`undefined` when it has none). */
export type RouteBody<R extends RouteContract> = StaticOr<R['body'], undefined>;
/** Static type of a row's query (`undefined` when it has none). */
export type RouteQuery<R extends RouteContract> = StaticOr<R['query'], undefined>;
/** Static type of a row's path parameters (`undefined` when it has none). */
export type RouteParams<R extends RouteContract> = StaticOr<R['params'], undefined>;
/** Static type of a row's success answer (the lowest 2xx; `void` for 204). */
export type RouteResult<R extends RouteContract> = StaticOr<R['responses'][LowestKey<R['responses']>], void>;

/** The OpenAPI security requirements of an auth mode (schemes `ownerJwt`, `deviceJwt`, `apiKey`). */
export function securityOf(auth: AuthMode): Record<string, string[]>[] | undefined {
  switch (auth) {
    case 'none':
      return undefined;
    case 'owner':
    case 'owner-any':
      return [{ ownerJwt: [] }];
    case 'device':
      return [{ deviceJwt: [] }];
    case 'owner-or-device':
      return [{ ownerJwt: [] }, { deviceJwt: [] }];
    case 'owner-or-apikey':
      return [{ ownerJwt: [] }, { apiKey: [] }];
    case 'device-or-apikey':
      return [{ deviceJwt: [] }, { apiKey: [] }];
    case 'any':
      return [{ ownerJwt: [] }, { deviceJwt: [] }, { apiKey: [] }];
    case 'public':
      return [{}, { apiKey: [] }, { ownerJwt: [] }, { deviceJwt: [] }];
  }
}

/**
 * Fill a path template: each `{name}` is replaced by the URL-encoded `params[name]`.
 * @throws TypeError when a placeholder has no (non-empty) value.
 */
export function fillPath(template: string, params: Record<string, string> = {}): string {
  return template.replace(/\{(\w+)\}/g, (_m, name: string) => {
    const v = params[name];
    if (v === undefined || v === '') throw new TypeError(`missing path parameter "${name}" for ${template}`);
    return encodeURIComponent(v);
  });
}
