/**
 * `ParleyClient`: a typed, fetch-based client for every REST route of the Parley service
 * (contract §4.1–§4.5, §5, §7; design §5, §7). Runs in browsers and on Node 20+ (global `fetch`);
 * no Node-only imports.
 *
 * Every request is built from the one route table in `routes.ts`, and every route is a method of
 * the client named by its route key, derived from its row (`route-methods.ts`). Authentication per
 * route: owner routes send the owner JWT (`Authorization: Bearer`), `X-Tenant-Id` when a tenant is
 * configured, and `X-Device-Id` when an acting owner device is configured or given per call;
 * device routes send the device JWT; public routes send no credentials. Errors are thrown as
 * {@link ParleyApiError} (`{status, detail, retryAfter?}`) or {@link ParleyNetworkError}.
 */
import type { A2aChannel, A2aChannelStatus, AttachmentInfo, FederationAgreement, HeldMessage, HeldMessageQuery, RouteResult } from '@parley/protocol';
import { ParleyApiError, ParleyNetworkError, parseRetryAfter } from './errors.js';
import { fillPath, ROUTES, type RouteAuth, type RouteName, type RouteSpec } from './routes.js';
import type { CallArgs, FetchLike, ParleyClientOptions, RequestOptions, TokenSource } from './options.js';
import { installRouteMethods, type RouteMethods } from './route-methods.js';

export type { FetchLike, ParleyClientOptions, RequestOptions, TokenSource } from './options.js';
export type { PathArgs, PathParamNames, RouteInputArgs, RouteMethod, RouteMethods } from './route-methods.js';

/** What a route of each auth mode needs, for the error thrown when it is not configured. */
const NEEDS: Record<Exclude<RouteAuth, 'none' | 'public'>, string> = {
  owner: 'an owner token',
  'owner-any': 'an owner token',
  device: 'a device token',
  'owner-or-device': 'a device or owner token',
  'owner-or-apikey': 'an owner token or an API key',
  'device-or-apikey': 'a device token or an API key',
  any: 'a device token, an owner token or an API key',
};

const DEFAULT_TIMEOUT_MS = 30_000;

async function resolveToken(t: TokenSource | undefined): Promise<string | undefined> {
  return typeof t === 'function' ? await t() : t;
}

function queryString(query: object | undefined): string {
  if (!query) return '';
  const sp = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null) sp.set(k, String(v));
  const s = sp.toString();
  return s ? `?${s}` : '';
}

/**
 * Routes whose method is written by hand below instead of derived from the row: a raw upload, a
 * binary download, and list routes answered as the bare array.
 */
type HandWritten = 'uploadAttachment' | 'downloadAttachment' | 'listHeldMessages' | 'listFederationAgreements' | 'listA2aChannels';

/**
 * The route methods of {@link ParleyClient}: each route of the route table (`ROUTES` of
 * `@parley/protocol`, assembled from `packages/protocol/src/areas/*.ts`) is the method of the same
 * name. Its arguments are the row's path parameters in path order (strings), then the row's JSON
 * body or, failing that, its query (optional when every field of it is), then `opts?:
 * RequestOptions`; it answers the row's lowest 2xx answer (`undefined` for a 204). What each
 * route does, who may call it and its errors are the row's `summary`, `description` and `errors`,
 * published in the OpenAPI document at `/api/v1/openapi.json`. Errors: {@link ParleyApiError} for
 * a non-2xx answer, {@link ParleyNetworkError} when none arrives, `TypeError` when the route needs
 * a credential that is not configured.
 *
 * @example
 * await owner.approveDevice(deviceId);                               // PATCH /api/v1/devices/{id}/approve
 * await owner.sendMessage(conversationId, { ciphertext, … });        // POST /api/v1/conversations/{id}/messages
 * const page = await owner.listAuditEvents({ limit: 50 });           // GET /api/v1/audit/events?limit=50
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging, @typescript-eslint/no-empty-object-type -- the class's derived methods, defined on its prototype by installRouteMethods below
export interface ParleyClient extends RouteMethods<Exclude<RouteName, HandWritten>> {}

/**
 * Typed client for the Parley REST API. One instance may serve an owner (owner JWT), an agent
 * (device JWT) or both; each method uses the credential its route needs. Besides the route
 * methods (see the interface of the same name), a few hand-written conveniences.
 *
 * @example
 * const owner = new ParleyClient({ baseUrl, ownerToken: jwt });
 * const { tenant_id } = await owner.createTenant({ name: 'Acme' });
 * const invite = await owner.createInvite();
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging -- see the interface above
export class ParleyClient {
  /** Base URL without trailing slash. */
  readonly baseUrl: string;
  private ownerToken: TokenSource | undefined;
  private deviceToken: TokenSource | undefined;
  private readonly apiKey: string | undefined;
  private readonly workspaceId: string | undefined;
  private tenantId: string | undefined;
  private ownerDeviceId: string | undefined;
  private readonly fetchFn: FetchLike;
  private readonly headers: Record<string, string>;
  private readonly timeoutMs: number;

  constructor(options: ParleyClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.ownerToken = options.ownerToken;
    this.deviceToken = options.deviceToken;
    this.apiKey = options.apiKey;
    this.workspaceId = options.workspaceId;
    this.tenantId = options.tenantId;
    this.ownerDeviceId = options.ownerDeviceId;
    const f = options.fetch ?? (globalThis.fetch as FetchLike | undefined);
    if (!f) throw new TypeError('ParleyClient: no fetch available; pass options.fetch');
    this.fetchFn = options.fetch ? f : (input, init) => globalThis.fetch(input, init);
    this.headers = { ...options.headers };
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  /** Replace the owner JWT (or its source). */
  setOwnerToken(token: TokenSource | undefined): void {
    this.ownerToken = token;
  }

  /** Replace the device JWT (or its source), e.g. after activation or renewal. */
  setDeviceToken(token: TokenSource | undefined): void {
    this.deviceToken = token;
  }

  /** Choose the tenant sent as `X-Tenant-Id` on owner routes (undefined: none). */
  setTenantId(tenantId: string | undefined): void {
    this.tenantId = tenantId;
  }

  /** Choose the acting owner device sent as `X-Device-Id` on owner routes (undefined: none). */
  setOwnerDeviceId(deviceId: string | undefined): void {
    this.ownerDeviceId = deviceId;
  }

  /** The acting owner device configured for `X-Device-Id`, if any. */
  get actingDeviceId(): string | undefined {
    return this.ownerDeviceId;
  }

  /** The current device JWT (resolving a token function), if any. */
  currentDeviceToken(): Promise<string | undefined> {
    return resolveToken(this.deviceToken);
  }

  /** The current owner JWT (resolving a token function), if any. */
  currentOwnerToken(): Promise<string | undefined> {
    return resolveToken(this.ownerToken);
  }

  /** API-key routes use the key when the JWT the route prefers is not configured. */
  private async prefersApiKey(auth: RouteAuth): Promise<boolean> {
    if (auth === 'owner-or-apikey') return !(await resolveToken(this.ownerToken));
    if (auth === 'device-or-apikey') return !(await resolveToken(this.deviceToken));
    if (auth === 'public') return true;
    if (auth === 'any') return !(await resolveToken(this.deviceToken)) && !(await resolveToken(this.ownerToken));
    return false;
  }

  /**
   * Low-level call of a route of the table. Prefer the typed methods.
   * @throws ParleyApiError for a non-2xx answer; ParleyNetworkError when no answer arrives;
   *   TypeError when the route needs a credential that is not configured.
   */
  call<N extends RouteName>(name: N, args: CallArgs<N> & { binary: true }): Promise<Uint8Array>;
  call<N extends RouteName>(name: N, args?: CallArgs<N>): Promise<RouteResult<(typeof ROUTES)[N]>>;
  async call(name: RouteName, args: CallArgs = {}): Promise<unknown> {
    const row: RouteSpec = ROUTES[name];
    const route: RouteSpec = row.auth === 'owner-any' ? { ...row, auth: 'owner' } : row; // the tenant is optional there, the token is not
    const opts = args.opts ?? {};
    const path = fillPath(route.path, args.params);
    const headers: Record<string, string> = { accept: 'application/json', ...this.headers };
    const viaApiKey = this.apiKey !== undefined && !opts.token && (await this.prefersApiKey(route.auth));
    if (viaApiKey) {
      headers['x-api-key'] = this.apiKey!;
      if (this.workspaceId) headers['x-workspace-id'] = this.workspaceId;
    } else if (route.auth === 'public') {
      const deviceToken = opts.token ?? (await resolveToken(this.deviceToken));
      const ownerToken = deviceToken ? undefined : await resolveToken(this.ownerToken);
      const token = deviceToken ?? ownerToken;
      if (token) headers.authorization = `Bearer ${token}`;
      const tenant = opts.tenantId ?? this.tenantId;
      if (ownerToken && tenant) headers['x-tenant-id'] = tenant;
    } else if (route.auth !== 'none') {
      // owner-or-device: the device JWT when the client has one, else the owner JWT (+ X-Device-Id).
      const ownerFirst = route.auth === 'owner' || route.auth === 'owner-or-apikey';
      const deviceToken = ownerFirst ? undefined : await resolveToken(this.deviceToken);
      const asOwner = ownerFirst || ((route.auth === 'owner-or-device' || route.auth === 'any') && !deviceToken);
      const token = opts.token ?? (asOwner ? await resolveToken(this.ownerToken) : deviceToken);
      if (!token) {
        const needs = NEEDS[route.auth];
        throw new TypeError(`ParleyClient.${name}: this route needs ${needs}`);
      }
      headers.authorization = `Bearer ${token}`;
      if (asOwner) {
        const tenant = opts.tenantId ?? this.tenantId;
        if (tenant) headers['x-tenant-id'] = tenant;
        const device = opts.deviceId ?? this.ownerDeviceId;
        if (device) headers['x-device-id'] = device;
      }
    }
    Object.assign(headers, opts.headers);
    const init: RequestInit = { method: route.method, headers };
    if (args.rawBody !== undefined) {
      headers['content-type'] = 'application/octet-stream';
      init.body = args.rawBody as BodyInit;
    } else if (args.body !== undefined) {
      headers['content-type'] = 'application/json';
      init.body = JSON.stringify(args.body);
    }

    const timeoutMs = opts.timeoutMs ?? this.timeoutMs;
    const controller = new AbortController();
    let timedOut = false;
    const timer =
      timeoutMs > 0
        ? setTimeout(() => {
            timedOut = true;
            controller.abort();
          }, timeoutMs)
        : undefined;
    const onAbort = () => controller.abort();
    if (opts.signal) {
      if (opts.signal.aborted) controller.abort();
      else opts.signal.addEventListener('abort', onAbort, { once: true });
    }
    init.signal = controller.signal;

    let res: Response;
    let text: string;
    let bytes: Uint8Array | undefined;
    try {
      res = await this.fetchFn(this.baseUrl + path + queryString(args.query), init);
      if (args.binary && res.ok) {
        bytes = new Uint8Array(await res.arrayBuffer());
        text = '';
      } else {
        text = await res.text();
      }
    } catch (err) {
      const aborted = opts.signal?.aborted ?? false;
      const what = timedOut ? `timed out after ${timeoutMs} ms` : aborted ? 'aborted' : `failed: ${(err as Error)?.message ?? String(err)}`;
      throw new ParleyNetworkError(`${route.method} ${path} ${what}`, timedOut, aborted, { cause: err });
    } finally {
      if (timer !== undefined) clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
    }

    let body: unknown = undefined;
    if (text !== '') {
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
    }
    if (!res.ok) {
      const detail =
        body && typeof body === 'object' && typeof (body as { detail?: unknown }).detail === 'string'
          ? (body as { detail: string }).detail
          : typeof body === 'string' && body !== ''
            ? body
            : res.statusText || `HTTP ${res.status}`;
      const retryAfter = parseRetryAfter(res.headers.get('retry-after'));
      throw new ParleyApiError({ status: res.status, detail, method: route.method, path, ...(retryAfter !== undefined ? { retryAfter } : {}) });
    }
    return bytes ?? body;
  }

  // ------------------------------------------------------------ hand-written conveniences

  /**
   * `POST /api/v1/attachments/upload` (device JWT, or owner JWT): store an encrypted file, sent as
   * a raw `application/octet-stream` body (201). 413 over the service's limit (25 MiB by default).
   */
  uploadAttachment(ciphertext: Uint8Array, opts?: RequestOptions): Promise<AttachmentInfo> {
    return this.call('uploadAttachment', { rawBody: ciphertext, opts });
  }

  /** `GET /api/v1/attachments/{blob_id}` (device JWT, or owner JWT): the uploaded bytes; 404 for another tenant's blob. */
  downloadAttachment(blobId: string, opts?: RequestOptions): Promise<Uint8Array> {
    return this.call('downloadAttachment', { params: { blob_id: blobId }, binary: true, opts });
  }

  /** `GET /api/v1/trust-scores/{agent_id}/report?format=html` (owner; contract §4.12): the compliance report as a standalone HTML document (UTF-8 text). */
  async getTrustReportHtml(agentId: string, opts?: RequestOptions): Promise<string> {
    const bytes = await this.call('getTrustReport', { params: { agent_id: agentId }, query: { format: 'html' }, binary: true, opts });
    return new TextDecoder().decode(bytes);
  }

  /** `GET /api/v1/policies/held-messages` (owner): the `held_messages` of the route's answer, without ciphertext. */
  async listHeldMessages(query: HeldMessageQuery = {}, opts?: RequestOptions): Promise<HeldMessage[]> {
    return (await this.call('listHeldMessages', { query, opts })).held_messages;
  }

  /** `GET /api/v1/federation/agreements` (owner; contract §4.13): the `agreements` of the route's answer, proposed by the tenant or to it. */
  async listFederationAgreements(opts?: RequestOptions): Promise<FederationAgreement[]> {
    return (await this.call('listFederationAgreements', { opts })).agreements;
  }

  /** `GET /api/v1/a2a/channels` (owner: the tenant's; API key: its device's; contract §4.13): the `channels` of the route's answer, newest first. */
  async listA2aChannels(query: { status?: A2aChannelStatus } = {}, opts?: RequestOptions): Promise<A2aChannel[]> {
    return (await this.call('listA2aChannels', { query, opts })).channels;
  }
}

installRouteMethods(ParleyClient.prototype);
