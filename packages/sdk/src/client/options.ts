/**
 * Options of `ParleyClient` (per client and per call) and the arguments of its low-level
 * `call()`. Browser-safe; no Node-only imports.
 */
import type { RouteBody, RouteQuery } from '@parley/protocol';
import type { ROUTES, RouteName } from './routes.js';

/** A credential, or a function returning the current one (called for every request; may refresh). */
export type TokenSource = string | (() => string | undefined | Promise<string | undefined>);

/** The `fetch` function the client uses (the global one by default). */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

/** Options of `ParleyClient`. */
export interface ParleyClientOptions {
  /** Base URL of the service, e.g. `https://parley.example.com` (no `/api/v1`; a trailing slash is ignored). */
  baseUrl: string;
  /** Owner JWT from the identity provider (contract §5), used by owner routes. */
  ownerToken?: TokenSource;
  /** Tenant chosen with `X-Tenant-Id` when the owner belongs to several (design §5). */
  tenantId?: string;
  /** The owner's acting device, sent as `X-Device-Id` on owner routes (design §7, contract §4.4). */
  ownerDeviceId?: string;
  /** Device JWT (contract §5), used by device routes. */
  deviceToken?: TokenSource;
  /** API key `svc_agent_sk_{env}_…` (contract §2.6), sent as `X-API-Key` on routes that accept one when no JWT fits. */
  apiKey?: string;
  /** Workspace sent as `X-Workspace-Id` with the API key (contract §5). */
  workspaceId?: string;
  /** Custom fetch (tests, proxies); defaults to `globalThis.fetch`. */
  fetch?: FetchLike;
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
  /** Per-request timeout in milliseconds (default 30 000; 0 disables). */
  timeoutMs?: number;
}

/** Per-call options accepted by every method (last argument). */
export interface RequestOptions {
  /** Abort the request. */
  signal?: AbortSignal;
  /** Extra headers for this call. */
  headers?: Record<string, string>;
  /** Override `X-Tenant-Id` for this call (owner routes). */
  tenantId?: string;
  /** Override `X-Device-Id` (the acting owner device) for this call (owner routes). */
  deviceId?: string;
  /** Override the bearer token for this call. */
  token?: string;
  /** Override the timeout for this call (milliseconds; 0 disables). */
  timeoutMs?: number;
}

/** Arguments of `ParleyClient.call` for route `N`: path parameters, query and JSON body typed by its contract row. */
export interface CallArgs<N extends RouteName = RouteName> {
  /** Values of the path template's `{name}` placeholders (URL-encoded when filled in). */
  params?: Record<string, string>;
  query?: RouteQuery<(typeof ROUTES)[N]>;
  body?: RouteBody<(typeof ROUTES)[N]>;
  /** A raw `application/octet-stream` body (attachments) instead of a JSON `body`. */
  rawBody?: Uint8Array;
  /** Answer the raw response bytes instead of parsing JSON. */
  binary?: boolean;
  opts?: RequestOptions | undefined;
}
