/**
 * `ParleyClient`: a typed, fetch-based client for every REST route of the Parley service
 * (contract §4.1–§4.5, §5, §7; design §5, §7). Runs in browsers and on Node 20+ (global `fetch`);
 * no Node-only imports.
 *
 * Every request is built from the one route table in `routes.ts`. Authentication per route:
 * owner routes send the owner JWT (`Authorization: Bearer`), `X-Tenant-Id` when a tenant is
 * configured, and `X-Device-Id` when an acting owner device is configured or given per call;
 * device routes send the device JWT; public routes send no credentials. Errors are thrown as
 * {@link ParleyApiError} (`{status, detail, retryAfter?}`) or {@link ParleyNetworkError}.
 */
import type { DIDDocument, DIDResolutionResult } from 'did-resolver';
import type { DidUpdateRequest } from '../did/update.js';
import type { JsonLdContextDocument } from '../credentials/contexts.js';
import { ParleyApiError, ParleyNetworkError, parseRetryAfter } from './errors.js';
import type { RouteBody, RouteQuery, RouteResult } from '@parley/protocol';
import { fillPath, ROUTES, type RouteAuth, type RouteName, type RouteSpec } from './routes.js';
import type {
  AgentCardPublished,
  AttachmentInfo,
  AuditChainVerdict,
  AuditCheckpoint,
  AuditConsistencyProof,
  AuditConsistencyQuery,
  AuditEventPage,
  AuditEventProof,
  AuditEventProofQuery,
  AuditEventQuery,
  AuditLogKey,
  CreateDecisionRequest,
  Decision,
  DecisionListQuery,
  SignedAgentCard,
  TelemetryQuery,
  TelemetrySpanPage,
  TelemetrySummary,
  AgentSpend,
  FleetSpend,
  SetSpendCapRequest,
  SpendCap,
  DecisionPage,
  ResolveDecisionRequest,
  PushRegistration,
  RegisterPushTokenRequest,
  ActivateRequest,
  ActivateResponse,
  ClaimedKeyPackage,
  ClaimKeyPackageRequest,
  ClaimPqPrekeyRequest,
  ClaimedPqPrekey,
  PqPrekeyCount,
  PublishPqPrekeysRequest,
  ClaimPrekeyBundleRequest,
  PrekeyBundle,
  PrekeyCount,
  PublishPrekeysRequest,
  KeyPackageCount,
  PublishKeyPackagesRequest,
  PublishKeyPackagesResponse,
  BillingPlansResponse,
  CapabilitiesResponse,
  ConversationKeys,
  ConversationList,
  ConversationListQuery,
  CreatedInvite,
  CreateInviteRequest,
  CreateTenantRequest,
  CreateTopicRequest,
  Device,
  DeviceHistoryQuery,
  DeviceList,
  DeviceSettings,
  DeviceSettingsPatch,
  MessageReadAck,
  ReadConversationRequest,
  ReadRoomRequest,
  RoomMessageReadAck,
  DevicePending,
  DevicePresence,
  DeviceKeys,
  DeviceStatusResponse,
  DeviceToken,
  EnrollRequest,
  EnrollResponse,
  HealthResponse,
  HistoryQuery,
  Invite,
  InviteList,
  JwksResponse,
  LegalTermsResponse,
  DevLoginRequest,
  DevLoginResponse,
  AuthConfig,
  MessageInput,
  MessagePage,
  RegisterOwnerDeviceRequest,
  RegisterOwnerDeviceResponse,
  RelinkResponse,
  RenameDeviceRequest,
  RenameTopicRequest,
  RenewTokenRequest,
  OwnerMe,
  Tenant,
  TokenChallenge,
  Topic,
  TopicList,
  TopicListQuery,
  WebhookRequest,
  WebhookResponse,
  StoredMessage,
  ApiKey,
  ApiKeyWithSecret,
  CreatePolicyRequest,
  CreateRoomRequest,
  HeldMessage,
  HeldMessageQuery,
  Policy,
  Room,
  RoomMessageInput,
  RoomMessageResult,
  RoomSummary,
  RoomTimelinePage,
  RoomTimelineQuery,
  UpdatePolicyRequest,
  ScanRule,
  ScanRuleSet,
  ScanRuleVersion,
  TenantSettings,
  TenantSettingsPatch,
  UpdateRoomRequest,
  AgentVerification,
  CertifyResult,
  CredentialVerification,
  GrantTierRequest,
  HubCapability,
  HubCapabilityInput,
  HubIdentity,
  HubReviewPage,
  HubReviewQuery,
  HubProfile,
  HubSearchQuery,
  IssuedCredential,
  RegisterHubRequest,
  TrustTierCredential,
  UpdateHubProfileRequest,
  VerifyAgentQuery,
  A2aChannel,
  A2aChannelStatus,
  A2aHistoryQuery,
  A2aChannelApprovedEvent,
  A2aMessageInput,
  A2aMessagePage,
  A2aSendResult,
  Connection,
  ConnectionDetail,
  ConnectionType,
  CreateShadowSessionRequest,
  CreateTeamRoomRequest,
  CreateWorkspaceRequest,
  DemoteShadowSessionRequest,
  FederationAgreement,
  Grant,
  GrantJwks,
  GrantListQuery,
  GrantPage,
  GrantValidation,
  IssuedGrant,
  IssueGrantRequest,
  OwnerConnection,
  ProposeFederationRequest,
  RecordShadowDecisionRequest,
  RequestA2aChannelRequest,
  RequestedA2aChannel,
  ShadowGraduationCheck,
  ShadowObservation,
  ShadowSession,
  ShadowSessionListQuery,
  ShadowSessionPage,
  SkillCheckRequest,
  SkillCheckResult,
  DelegateSkillRequest,
  DelegationResult,
  SubmitAuditEventRequest,
  AuditEvent,
  RegisterAgentRequest,
  RegisteredAgent,
  TeamRoom,
  TeamRoomSummary,
  TrustDrift,
  TrustDriftRecalibration,
  TrustFleet,
  TrustHistory,
  TrustRecomputeSummary,
  TrustReport,
  TrustScore,
  TrustWindowQuery,
  ValidateGrantRequest,
  Workspace,
  WorkspaceRole,
  WorkspaceSummary,
  ConnectDashboard,
  CreateListingRequest,
  CreateRentalRequest,
  Dispute,
  DisputeListQuery,
  DisputeNoteRequest,
  DisputePage,
  FileDisputeRequest,
  LedgerVerification,
  Listing,
  ListingPage,
  ListingSearchQuery,
  PaymentMethodInfo,
  PaymentMethodRequest,
  PaymentProcessorInfo,
  PayoutListQuery,
  PayoutPage,
  PayoutSummary,
  Rental,
  RentalListQuery,
  RentalMembers,
  RentalMessageInput,
  RentalMessagePage,
  RentalMessageQuery,
  RentalPage,
  RentalSendResult,
  ResolveDisputeRequest,
  UpdateListingRequest,
  KeyBindingNonce,
  KeyBindingNonceRequest,
} from '@parley/protocol';

/** A credential, or a function returning the current one (called for every request; may refresh). */
export type TokenSource = string | (() => string | undefined | Promise<string | undefined>);

/** The `fetch` function the client uses (the global one by default). */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

/** Options of {@link ParleyClient}. */
const NEEDS: Record<Exclude<RouteAuth, 'none' | 'public'>, string> = {
  owner: 'an owner token',
  'owner-any': 'an owner token',
  device: 'a device token',
  'owner-or-device': 'a device or owner token',
  'owner-or-apikey': 'an owner token or an API key',
  'device-or-apikey': 'a device token or an API key',
  any: 'a device token, an owner token or an API key',
};

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

/** Arguments of a call of route `N`: path parameters, query and JSON body typed by its contract row. */
interface CallArgs<N extends RouteName = RouteName> {
  params?: Record<string, string>;
  query?: RouteQuery<(typeof ROUTES)[N]>;
  body?: RouteBody<(typeof ROUTES)[N]>;
  /** A raw `application/octet-stream` body (attachments) instead of a JSON `body`. */
  rawBody?: Uint8Array;
  /** Answer the raw response bytes instead of parsing JSON. */
  binary?: boolean;
  opts?: RequestOptions | undefined;
}

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
 * Typed client for the Parley REST API. One instance may serve an owner (owner JWT), an agent
 * (device JWT) or both; each method uses the credential its route needs.
 *
 * @example
 * const owner = new ParleyClient({ baseUrl, ownerToken: jwt });
 * const { tenant_id } = await owner.createTenant({ name: 'Acme' });
 * const invite = await owner.createInvite();
 */
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

  // ------------------------------------------------------------ platform (contract §4.1)

  /** `GET /health` (public): `{status, version}`. A degraded service answers 503 (thrown). */
  health(opts?: RequestOptions): Promise<HealthResponse> {
    return this.call('health', { opts });
  }

  /** `GET /.well-known/jwks.json` (public): device-token signing keys (design §5). */
  jwks(opts?: RequestOptions): Promise<JwksResponse> {
    return this.call('jwks', { opts });
  }

  /**
   * `POST /api/v1/dev/login` (public, design §8.31): an owner JWT of the server's built-in
   * development identity provider for `email`; 404 when OIDC is configured, 403 unless the server
   * listens on a loopback address. Set it with {@link setOwnerToken}.
   */
  devLogin(body: DevLoginRequest, opts?: RequestOptions): Promise<DevLoginResponse> {
    return this.call('devLogin', { body, opts });
  }

  /** `GET /api/v1/auth/config`: how owners sign in here (development provider or OIDC). */
  authConfig(opts?: RequestOptions): Promise<AuthConfig> {
    return this.call('authConfig', { opts });
  }

  /** `GET /api/v1/legal/terms` (public): current terms (contract §4.1). */
  legalTerms(opts?: RequestOptions): Promise<LegalTermsResponse> {
    return this.call('legalTerms', { opts });
  }

  /** `GET /api/v1/billing/plans` (public): available plans, prices in US cents (contract §4.1). */
  billingPlans(opts?: RequestOptions): Promise<BillingPlansResponse> {
    return this.call('billingPlans', { opts });
  }

  /** `GET /api/v1/capabilities` (public): platform capabilities (contract §4.1). */
  capabilities(opts?: RequestOptions): Promise<CapabilitiesResponse> {
    return this.call('capabilities', { opts });
  }

  // ------------------------------------------------------------ tenants, invites (contract §4.2)

  /**
   * `GET /api/v1/me` (owner; no tenant needed): the signed-in owner's subject, tenant and role
   * (null before the first tenant) and whether it is a platform operator.
   */
  getMe(opts?: RequestOptions): Promise<OwnerMe> {
    return this.call('getMe', { opts });
  }

  /** `POST /api/v1/tenants` (owner; no tenant needed): create a tenant, the caller becomes `OWNER_ADMIN`. 400 on a bad name. */
  createTenant(body: CreateTenantRequest, opts?: RequestOptions): Promise<Tenant> {
    return this.call('createTenant', { body, opts });
  }

  /** `POST /api/v1/invites` (owner): a single-use, 10-minute invite; `token` is returned only here. */
  createInvite(body: CreateInviteRequest = {}, opts?: RequestOptions): Promise<CreatedInvite> {
    return this.call('createInvite', { body, opts });
  }

  /** `GET /api/v1/invites` (owner): the tenant's invites (raw tokens are never listed). */
  listInvites(opts?: RequestOptions): Promise<InviteList> {
    return this.call('listInvites', { opts });
  }

  /** `POST /api/v1/invites/{id}/revoke` (owner): revoke an active invite; 409 unless active. */
  revokeInvite(inviteId: string, opts?: RequestOptions): Promise<Invite> {
    return this.call('revokeInvite', { params: { id: inviteId }, opts });
  }

  /** `DELETE /api/v1/invites/{id}` (owner): soft-delete a revoked/consumed/expired invite (204); 409 when active. */
  async deleteInvite(inviteId: string, opts?: RequestOptions): Promise<void> {
    await this.call('deleteInvite', { params: { id: inviteId }, opts });
  }

  // ------------------------------------------------------------ enrollment (contract §4.3)

  /**
   * `POST /api/v1/enroll` (public, 5 per IP per 10 min): enroll an agent device with an invite
   * token and a proof of possession. 401 for an unknown/used/revoked/expired invite, 400 for a
   * bad proof (the invite stays unused), 429 when rate limited. See `enrollment.ts` for the flow.
   */
  enroll(body: EnrollRequest, opts?: RequestOptions): Promise<EnrollResponse> {
    return this.call('enroll', { body, opts });
  }

  // ------------------------------------------------------------ devices (contract §4.4)

  /** `GET /api/v1/devices` (owner): the tenant's devices with health. */
  listDevices(opts?: RequestOptions): Promise<DeviceList> {
    return this.call('listDevices', { opts });
  }

  /** `GET /api/v1/devices/{id}/status` (public; 1 request per 5 s per device, else 429 with Retry-After). */
  deviceStatus(deviceId: string, opts?: RequestOptions): Promise<DeviceStatusResponse> {
    return this.call('deviceStatus', { params: { id: deviceId }, opts });
  }

  /**
   * `POST /api/v1/devices/{id}/activate` (public, proof of possession): APPROVED -> ACTIVE.
   * `signature` is the hex Ed25519 signature over UTF-8 `activate:<device_id>`. 401 bad
   * signature, 403 revoked, 409 not APPROVED.
   */
  activateDevice(deviceId: string, body: ActivateRequest, opts?: RequestOptions): Promise<ActivateResponse> {
    return this.call('activateDevice', { params: { id: deviceId }, body, opts });
  }

  /**
   * `POST /api/v1/key-binding/nonce` (public): a single-use nonce (5 min) to sign as a key
   * binding. `client_key_register` is asked with the API key, `owner_device_register` with the
   * owner JWT, `device_activate` with `device_id` (see client/key-binding.ts `bindKeys`).
   */
  keyBindingNonce(body: KeyBindingNonceRequest, opts?: RequestOptions): Promise<KeyBindingNonce> {
    return this.call('keyBindingNonce', { body, opts });
  }

  /** `POST /api/v1/devices/{id}/token/challenge` (public): a single-use renewal challenge (5 min). 403 revoked, 409 not ACTIVE. */
  tokenChallenge(deviceId: string, opts?: RequestOptions): Promise<TokenChallenge> {
    return this.call('tokenChallenge', { params: { id: deviceId }, opts });
  }

  /** `POST /api/v1/devices/{id}/token` (public, proof of possession): a new device JWT. 401 bad/used challenge or signature. */
  renewToken(deviceId: string, body: RenewTokenRequest, opts?: RequestOptions): Promise<DeviceToken> {
    return this.call('renewToken', { params: { id: deviceId }, body, opts });
  }

  /** `GET /api/v1/devices/{id}/presence` (owner): online state, last_seen and health. */
  devicePresence(deviceId: string, opts?: RequestOptions): Promise<DevicePresence> {
    return this.call('devicePresence', { params: { id: deviceId }, opts });
  }

  /** `GET /api/v1/devices/{id}/keys` (owner): the device's public keys and fingerprint. */
  deviceKeys(deviceId: string, opts?: RequestOptions): Promise<DeviceKeys> {
    return this.call('deviceKeys', { params: { id: deviceId }, opts });
  }

  /**
   * `GET /api/v1/devices/{id}/messages` (device JWT of that device): history of the device's
   * conversations, oldest first; messages addressed to it become delivered.
   */
  deviceMessages(deviceId: string, query: DeviceHistoryQuery = {}, opts?: RequestOptions): Promise<MessagePage> {
    return this.call('deviceMessages', { params: { id: deviceId }, query, opts });
  }

  /** `GET /api/v1/devices/{id}/pending` (device JWT of that device): count of undelivered messages. */
  devicePending(deviceId: string, opts?: RequestOptions): Promise<DevicePending> {
    return this.call('devicePending', { params: { id: deviceId }, opts });
  }

  /** `PATCH /api/v1/devices/{id}/approve` (owner): PENDING -> APPROVED; 409 otherwise. */
  approveDevice(deviceId: string, opts?: RequestOptions): Promise<Device> {
    return this.call('approveDevice', { params: { id: deviceId }, opts });
  }

  /** `PATCH /api/v1/devices/{id}/reject` (owner): PENDING -> REVOKED; 409 otherwise. */
  rejectDevice(deviceId: string, opts?: RequestOptions): Promise<Device> {
    return this.call('rejectDevice', { params: { id: deviceId }, opts });
  }

  /** `PATCH /api/v1/devices/{id}/revoke` (owner): -> REVOKED; its sockets close with 4001 and its later calls answer 403. */
  revokeDevice(deviceId: string, opts?: RequestOptions): Promise<Device> {
    return this.call('revokeDevice', { params: { id: deviceId }, opts });
  }

  /** `PATCH /api/v1/devices/self/webhook` (device JWT): register (`{url}`) or clear (`{url: null}`) the caller's webhook. */
  setSelfWebhook(body: WebhookRequest, opts?: RequestOptions): Promise<WebhookResponse> {
    return this.call('setSelfWebhook', { body, opts });
  }

  /** `PATCH /api/v1/devices/{id}/webhook` (owner): register or clear a device's webhook; `secret` is returned once. */
  setDeviceWebhook(deviceId: string, body: WebhookRequest, opts?: RequestOptions): Promise<WebhookResponse> {
    return this.call('setDeviceWebhook', { params: { id: deviceId }, body, opts });
  }

  /** `GET /api/v1/devices/self/settings` (device JWT or API key): the caller's settings (`read_receipts_enabled`, `read_receipts_effective`). */
  getSelfDeviceSettings(opts?: RequestOptions): Promise<DeviceSettings> {
    return this.call('getSelfDeviceSettings', { opts });
  }

  /** `PATCH /api/v1/devices/self/settings` (device JWT or API key): change the caller's settings (e.g. turn read receipts off). */
  updateSelfDeviceSettings(body: DeviceSettingsPatch, opts?: RequestOptions): Promise<DeviceSettings> {
    return this.call('updateSelfDeviceSettings', { body, opts });
  }

  /** `GET /api/v1/devices/{id}/settings` (owner): a device's settings. */
  getDeviceSettings(deviceId: string, opts?: RequestOptions): Promise<DeviceSettings> {
    return this.call('getDeviceSettings', { params: { id: deviceId }, opts });
  }

  /** `PATCH /api/v1/devices/{id}/settings` (owner): change a device's settings. */
  updateDeviceSettings(deviceId: string, body: DeviceSettingsPatch, opts?: RequestOptions): Promise<DeviceSettings> {
    return this.call('updateDeviceSettings', { params: { id: deviceId }, body, opts });
  }

  /** `PATCH /api/v1/devices/{id}` (owner): rename a device. */
  renameDevice(deviceId: string, body: RenameDeviceRequest, opts?: RequestOptions): Promise<Device> {
    return this.call('renameDevice', { params: { id: deviceId }, body, opts });
  }

  /** `DELETE /api/v1/devices/{id}` (owner): delete a REVOKED device (204; history kept); 409 otherwise. */
  async deleteDevice(deviceId: string, opts?: RequestOptions): Promise<void> {
    await this.call('deleteDevice', { params: { id: deviceId }, opts });
  }

  /**
   * `DELETE /api/v1/devices/{id}/remove` (owner): remove an owner device (204). Needs the acting
   * owner device in `X-Device-Id` (`ownerDeviceId` option or `opts.deviceId`); 400 without it.
   */
  async removeOwnerDevice(deviceId: string, opts?: RequestOptions): Promise<void> {
    await this.call('removeOwnerDevice', { params: { id: deviceId }, opts });
  }

  /** `POST /api/v1/devices/register` (owner): register the owner's device with its keys; ACTIVE at once. */
  registerOwnerDevice(body: RegisterOwnerDeviceRequest, opts?: RequestOptions): Promise<RegisterOwnerDeviceResponse> {
    return this.call('registerOwnerDevice', { body, opts });
  }

  /** `POST /api/v1/devices/{id}/relink` (owner, idempotent): conversations between an owner device and every agent. */
  relinkDevice(deviceId: string, opts?: RequestOptions): Promise<RelinkResponse> {
    return this.call('relinkDevice', { params: { id: deviceId }, opts });
  }

  // ------------------------------------------------------------ conversations, topics (contract §4.5)

  /** `GET /api/v1/conversations` (owner): conversations with topic metadata, optionally of one device. */
  listConversations(query: ConversationListQuery = {}, opts?: RequestOptions): Promise<ConversationList> {
    return this.call('listConversations', { query, opts });
  }

  /**
   * `POST /api/v1/conversations/{id}/messages` (owner + `X-Device-Id`): store an encrypted message
   * sent by the acting owner device. 400 missing X-Device-Id or bad base64, 403 not a side of the
   * conversation or revoked, 404 unknown conversation, 413 ciphertext over 256 KiB.
   */
  sendMessage(conversationId: string, body: MessageInput, opts?: RequestOptions): Promise<StoredMessage> {
    return this.call('sendMessage', { params: { id: conversationId }, body, opts });
  }

  /**
   * `GET /api/v1/conversations/{id}/messages` (owner): history, oldest first, each message with its
   * recipient's `delivered_at` / `read_at`. `since` is exclusive (ISO timestamp or a cursor);
   * without it the latest `limit` messages. With the acting owner device (`X-Device-Id`) a side,
   * the page's messages to it become delivered. Decrypt in order: each decryption advances the
   * ratchet (contract §4.5).
   */
  conversationMessages(conversationId: string, query: HistoryQuery = {}, opts?: RequestOptions): Promise<MessagePage> {
    return this.call('conversationMessages', { params: { id: conversationId }, query, opts });
  }

  /**
   * `POST /api/v1/conversations/{id}/read` (device JWT, API key, or owner + `X-Device-Id`): read
   * receipt — everything to the reading device in the conversation up to `up_to_message_id` was
   * read. 404 not a message to it there, 409 not received yet; `recorded` false when the mark did
   * not move or read receipts are off (`read_receipts_enabled`).
   */
  readConversation(conversationId: string, body: ReadConversationRequest, opts?: RequestOptions): Promise<MessageReadAck> {
    return this.call('readConversation', { params: { id: conversationId }, body, opts });
  }

  /** `POST /api/v1/rooms/{id}/read` (device JWT, API key, or owner + `X-Device-Id`): read receipt of a room, as {@link readConversation}. */
  readRoom(roomId: string, body: ReadRoomRequest, opts?: RequestOptions): Promise<RoomMessageReadAck> {
    return this.call('readRoom', { params: { id: roomId }, body, opts });
  }

  /** `GET /api/v1/conversations/{id}/keys` (owner): counterparty public keys for key agreement. */
  conversationKeys(conversationId: string, opts?: RequestOptions): Promise<ConversationKeys> {
    return this.call('conversationKeys', { params: { id: conversationId }, opts });
  }

  /** `GET /api/v1/topics` (owner): a group's topics (`group_id`), or all of the tenant's. */
  listTopics(query: TopicListQuery = {}, opts?: RequestOptions): Promise<TopicList> {
    return this.call('listTopics', { query, opts });
  }

  /** `POST /api/v1/topics` (owner): create a topic in a conversation group (201). */
  createTopic(body: CreateTopicRequest, opts?: RequestOptions): Promise<Topic> {
    return this.call('createTopic', { body, opts });
  }

  /** `PATCH /api/v1/topics/{id}` (owner): rename a topic. */
  renameTopic(topicId: string, body: RenameTopicRequest, opts?: RequestOptions): Promise<Topic> {
    return this.call('renameTopic', { params: { id: topicId }, body, opts });
  }

  /** `POST /api/v1/topics/{id}/archive` (owner): archive a topic; 409 for the default topic. */
  archiveTopic(topicId: string, opts?: RequestOptions): Promise<Topic> {
    return this.call('archiveTopic', { params: { id: topicId }, opts });
  }

  // ------------------------------------------------------------ MLS KeyPackages (contract §1.3, RFC 9420 §10)

  /**
   * `POST /api/v1/mls/key-packages` (device JWT, or owner JWT + `X-Device-Id`): publish KeyPackages
   * of the calling device (201). 400 for bad base64, a KeyPackage over 16 KiB, or more than 500
   * unclaimed in total.
   */
  publishKeyPackages(body: PublishKeyPackagesRequest, opts?: RequestOptions): Promise<PublishKeyPackagesResponse> {
    return this.call('publishKeyPackages', { body, opts });
  }

  /** `GET /api/v1/mls/key-packages/{device_id}` (device or owner JWT): how many unclaimed KeyPackages a device of the tenant has. */
  keyPackageCount(deviceId: string, opts?: RequestOptions): Promise<KeyPackageCount> {
    return this.call('keyPackageCount', { params: { device_id: deviceId }, opts });
  }

  /**
   * `POST /api/v1/mls/key-packages/claim` (device JWT, or owner JWT + `X-Device-Id`): consume one
   * KeyPackage of an ACTIVE device of the tenant; 404 when none is left.
   */
  claimKeyPackage(body: ClaimKeyPackageRequest, opts?: RequestOptions): Promise<ClaimedKeyPackage> {
    return this.call('claimKeyPackage', { body, opts });
  }

  // ------------------------------------------------------------ PQXDH prekeys (issue 16, design §8.34)

  /**
   * `POST /api/v1/pq-prekeys` (device JWT, API key with key material, or owner JWT + `X-Device-Id`):
   * publish the calling device's signed PQ prekeys, opaque base64 blobs (201): `last_resort`
   * replaces the current one, `one_time` are added. 400 for bad encodings or sizes.
   */
  publishPqPrekeys(body: PublishPqPrekeysRequest, opts?: RequestOptions): Promise<PqPrekeyCount> {
    return this.call('publishPqPrekeys', { body, opts });
  }

  /** `GET /api/v1/pq-prekeys/{device_id}`: whether a device of the tenant has a last-resort PQ prekey (and its key id), and its unclaimed one-time ones. */
  pqPrekeyCount(deviceId: string, opts?: RequestOptions): Promise<PqPrekeyCount> {
    return this.call('pqPrekeyCount', { params: { device_id: deviceId }, opts });
  }

  /**
   * `POST /api/v1/pq-prekeys/claim`: one PQ prekey of an ACTIVE device (a one-time one while any is
   * left, else the last-resort one); 404 when it published none (start the session with X3DH).
   * Verify its signature against the device's identity key before use (`verifyPqPrekey`).
   */
  claimPqPrekey(body: ClaimPqPrekeyRequest, opts?: RequestOptions): Promise<ClaimedPqPrekey> {
    return this.call('claimPqPrekey', { body, opts });
  }

  // ------------------------------------------------------------ X3DH prekeys (Signal X3DH rev. 1 §3.2)

  /**
   * `POST /api/v1/prekeys` (device JWT, API key with key material, or owner JWT + `X-Device-Id`):
   * publish the calling device's X25519 signed prekey (replaces the served one) and/or one-time
   * prekeys (201). 400 for bad encodings or keys, repeated ids, or over 500 unclaimed one-time ones.
   */
  publishPrekeys(body: PublishPrekeysRequest, opts?: RequestOptions): Promise<PrekeyCount> {
    return this.call('publishPrekeys', { body, opts });
  }

  /** `GET /api/v1/prekeys/{device_id}`: the signed prekey id served for a device of the tenant (null when none) and its unclaimed one-time prekeys. */
  prekeyCount(deviceId: string, opts?: RequestOptions): Promise<PrekeyCount> {
    return this.call('prekeyCount', { params: { device_id: deviceId }, opts });
  }

  /**
   * `POST /api/v1/prekeys/claim`: the prekey bundle of an ACTIVE device (X3DH §3.3): its signed
   * prekey and one one-time prekey, consumed, while any is left; 404 when it published no signed
   * prekey (an older client). Verify the signature against the device's identity key before use
   * (`verifySignedPrekey`).
   */
  claimPrekeyBundle(body: ClaimPrekeyBundleRequest, opts?: RequestOptions): Promise<PrekeyBundle> {
    return this.call('claimPrekeyBundle', { body, opts });
  }

  // ------------------------------------------------------------ attachments, push (contract §4.7)

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

  /** `POST /api/v1/push/register` (owner): register a mobile push token for an ACTIVE device of the tenant (idempotent, 201). */
  registerPushToken(body: RegisterPushTokenRequest, opts?: RequestOptions): Promise<PushRegistration> {
    return this.call('registerPushToken', { body, opts });
  }

  // ------------------------------------------------------------ API keys (contract §4.8)

  /** `POST /api/v1/api-keys` (owner): create a key; the raw key is in the answer only. `env` defaults to dev. */
  createApiKey(body: { name: string; env?: 'prod' | 'staging' | 'dev' }, opts?: RequestOptions): Promise<ApiKeyWithSecret> {
    return this.call('createApiKey', { body, opts });
  }

  /** `GET /api/v1/api-keys` (owner): the tenant's keys, never their raw values. */
  async listApiKeys(opts?: RequestOptions): Promise<ApiKey[]> {
    return (await this.call('listApiKeys', { opts })).api_keys;
  }

  /** `POST /api/v1/api-keys/{id}/revoke` (owner): 409 when already revoked. */
  revokeApiKey(id: string, opts?: RequestOptions): Promise<ApiKey> {
    return this.call('revokeApiKey', { params: { id }, opts });
  }

  /** `POST /api/v1/api-keys/{id}/rotate` (owner): the old key is revoked and a new raw key returned, atomically. */
  rotateApiKey(id: string, opts?: RequestOptions): Promise<ApiKeyWithSecret> {
    return this.call('rotateApiKey', { params: { id }, opts });
  }

  /** `DELETE /api/v1/api-keys/{id}` (owner): deletes the key and its associated device. */
  async deleteApiKey(id: string, opts?: RequestOptions): Promise<void> {
    await this.call('deleteApiKey', { params: { id }, opts });
  }

  // ------------------------------------------------------------ rooms (contract §2.5, §4.6; design §8.5)

  /**
   * `POST /api/v1/rooms` (owner): create a room of the tenant's devices (201), with one pairwise
   * conversation per member pair; new members get `room_joined`. The owner device sent as
   * `X-Device-Id` (`opts.deviceId` or {@link setOwnerDeviceId}) joins as a member whether or not
   * it is listed. 400 for unknown devices.
   */
  createRoom(body: CreateRoomRequest, opts?: RequestOptions): Promise<Room> {
    return this.call('createRoom', { body, opts });
  }

  /** `GET /api/v1/rooms` (owner): the tenant's active rooms, without their conversations. */
  async listRooms(opts?: RequestOptions): Promise<RoomSummary[]> {
    return (await this.call('listRooms', { opts })).rooms;
  }

  /** `GET /api/v1/rooms/{id}` (owner, or a member device): the room with its members (and their public keys) and pairwise conversations. */
  getRoom(roomId: string, opts?: RequestOptions): Promise<Room> {
    return this.call('getRoom', { params: { id: roomId }, opts });
  }

  /** `PATCH /api/v1/rooms/{id}` (owner): rename or change the security level. */
  updateRoom(roomId: string, body: UpdateRoomRequest, opts?: RequestOptions): Promise<Room> {
    return this.call('updateRoom', { params: { id: roomId }, body, opts });
  }

  /** `POST /api/v1/rooms/{id}/members` (owner): add an ACTIVE device (201); it gets `room_joined`, owners and agent members `member_joined`. 409 already a member. */
  addRoomMember(roomId: string, deviceId: string, opts?: RequestOptions): Promise<Room> {
    return this.call('addRoomMember', { params: { id: roomId }, body: { device_id: deviceId }, opts });
  }

  /** `DELETE /api/v1/rooms/{id}/members/{device_id}` (owner): remove a member (204; history stays); members get `member_left`. */
  async removeRoomMember(roomId: string, deviceId: string, opts?: RequestOptions): Promise<void> {
    await this.call('removeRoomMember', { params: { id: roomId, device_id: deviceId }, opts });
  }

  /**
   * `POST /api/v1/rooms/{id}/messages` (owner + `X-Device-Id`): send a room message, one envelope
   * per recipient (201); the answer tells each recipient's policy outcome. Agents send the same
   * over the socket (`RealtimeClient.sendRoom`). See `secure/rooms.ts` for the encryption.
   */
  sendRoomMessage(roomId: string, body: RoomMessageInput, opts?: RequestOptions): Promise<RoomMessageResult> {
    return this.call('sendRoomMessage', { params: { id: roomId }, body, opts });
  }

  /** `GET /api/v1/rooms/{id}/messages` (owner, or a member device): the timeline, oldest first, with the caller's envelope per entry. */
  roomTimeline(roomId: string, query: RoomTimelineQuery = {}, opts?: RequestOptions): Promise<RoomTimelinePage> {
    return this.call('roomTimeline', { params: { id: roomId }, query, opts });
  }

  // ------------------------------------------------------------ policies, held messages (contract §2.7, §3.8, §4.9)

  /** `POST /api/v1/policies` (owner): create a policy (201); 400 for unknown condition keys. */
  createPolicy(body: CreatePolicyRequest, opts?: RequestOptions): Promise<Policy> {
    return this.call('createPolicy', { body, opts });
  }

  /** `GET /api/v1/policies` (owner): the tenant's policies. */
  async listPolicies(opts?: RequestOptions): Promise<Policy[]> {
    return (await this.call('listPolicies', { opts })).policies;
  }

  /** `PATCH /api/v1/policies/{id}` (owner): change a policy. */
  updatePolicy(policyId: string, body: UpdatePolicyRequest, opts?: RequestOptions): Promise<Policy> {
    return this.call('updatePolicy', { params: { id: policyId }, body, opts });
  }

  /** `DELETE /api/v1/policies/{id}` (owner): delete a policy (204). */
  async deletePolicy(policyId: string, opts?: RequestOptions): Promise<void> {
    await this.call('deletePolicy', { params: { id: policyId }, opts });
  }

  /** `GET /api/v1/policies/held-messages` (owner): held messages, without ciphertext. */
  async listHeldMessages(query: HeldMessageQuery = {}, opts?: RequestOptions): Promise<HeldMessage[]> {
    return (await this.call('listHeldMessages', { query, opts })).held_messages;
  }

  /** `POST /api/v1/policies/held-messages/{id}/approve` (owner): deliver the held envelope; 409 when already decided. */
  approveHeldMessage(heldMessageId: string, opts?: RequestOptions): Promise<HeldMessage> {
    return this.call('approveHeldMessage', { params: { id: heldMessageId }, opts });
  }

  /** `POST /api/v1/policies/held-messages/{id}/deny` (owner): drop the held envelope; 409 when already decided. */
  denyHeldMessage(heldMessageId: string, opts?: RequestOptions): Promise<HeldMessage> {
    return this.call('denyHeldMessage', { params: { id: heldMessageId }, opts });
  }

  // ------------------------------------------------------------ settings, scan rules (contract §4.14; design §8.22)

  /** `GET /api/v1/settings` (owner): the tenant settings, defaults filled in. */
  getSettings(opts?: RequestOptions): Promise<TenantSettings> {
    return this.call('getSettings', { opts });
  }

  /** `PATCH /api/v1/settings` (owner): set the given keys (`null` resets one); answers the full object. 400 for an unknown key or an out-of-range value. */
  updateSettings(body: TenantSettingsPatch, opts?: RequestOptions): Promise<TenantSettings> {
    return this.call('updateSettings', { body, opts });
  }

  /** `GET /api/v1/scan-rules` (any): the current client-side scan rule set; feed it to `scannerFromRules`. */
  getScanRules(opts?: RequestOptions): Promise<ScanRuleSet> {
    return this.call('getScanRules', { opts });
  }

  /** `POST /api/v1/scan-rules` (owner): save `rules` as the next version. 400 for a pattern that does not compile. */
  updateScanRules(rules: ScanRule[], opts?: RequestOptions): Promise<ScanRuleSet> {
    return this.call('updateScanRules', { body: { rules }, opts });
  }

  /** `GET /api/v1/scan-rules/versions` (owner): saved versions, newest first. */
  async listScanRuleVersions(opts?: RequestOptions): Promise<ScanRuleVersion[]> {
    return (await this.call('listScanRuleVersions', { opts })).versions;
  }

  // ------------------------------------------------------------ telemetry (contract §2.15, §4.14; design §8.18)

  /**
   * `POST /api/v1/telemetry/ingest` (agent device JWT or API key): an OTLP/HTTP JSON
   * `ExportTraceServiceRequest` (ids hex, int64 times as strings). All or nothing: 400 names the
   * first bad span. Standard OTLP exporters may post here directly (JSON or protobuf).
   */
  ingestTelemetry(request: Record<string, unknown>, opts?: RequestOptions): Promise<{ partialSuccess: { rejectedSpans: number; errorMessage: string } }> {
    return this.call('ingestTelemetry', { body: request, opts });
  }

  /** `GET /api/v1/telemetry/{hub_id}` (owner): an agent's spans (hub_id = device_id or hub address), newest first. */
  listTelemetry(hubId: string, query: TelemetryQuery = {}, opts?: RequestOptions): Promise<TelemetrySpanPage> {
    return this.call('listTelemetry', { params: { hub_id: hubId }, query, opts });
  }

  /** `GET /api/v1/telemetry/{hub_id}/summary` (owner): per-name count, error rate, p50/p95 (default window: last 24 h). */
  getTelemetrySummary(hubId: string, query: { since?: string; until?: string } = {}, opts?: RequestOptions): Promise<TelemetrySummary> {
    return this.call('getTelemetrySummary', { params: { hub_id: hubId }, query, opts });
  }

  /** `GET /api/v1/agents/{hub_id}/spend-cap` (owner): an agent's daily and monthly spend caps (hub_id = device_id or hub address). */
  getAgentSpendCap(hubId: string, opts?: RequestOptions): Promise<SpendCap> {
    return this.call('getAgentSpendCap', { params: { hub_id: hubId }, opts });
  }

  /** `PUT /api/v1/agents/{hub_id}/spend-cap` (owner): replace an agent's caps (tokens or cents; a null limit is no cap). */
  setAgentSpendCap(hubId: string, body: SetSpendCapRequest, opts?: RequestOptions): Promise<SpendCap> {
    return this.call('setAgentSpendCap', { params: { hub_id: hubId }, body, opts });
  }

  /** `GET /api/v1/agents/{hub_id}/spend` (owner): an agent's spend today and this month (UTC) against its caps. */
  getAgentSpend(hubId: string, opts?: RequestOptions): Promise<AgentSpend> {
    return this.call('getAgentSpend', { params: { hub_id: hubId }, opts });
  }

  /** `GET /api/v1/spend` (owner): every agent's spend today and this month against its caps, and the fleet totals. */
  getFleetSpend(opts?: RequestOptions): Promise<FleetSpend> {
    return this.call('getFleetSpend', { opts });
  }

  /** `GET /api/v1/dashboard/activity` (owner): recent spans across the tenant's agents, newest first. */
  getDashboardActivity(query: { cursor?: string; limit?: number } = {}, opts?: RequestOptions): Promise<TelemetrySpanPage> {
    return this.call('getDashboardActivity', { query, opts });
  }

  // ------------------------------------------------------------ decisions (contract §2.4, §4.15; design §8.4, §8.19)

  /**
   * `POST /api/v1/decisions` (agent device JWT or API key, or the owner naming the agent in
   * `device_id`): ask the owner a structured question (201, status `pending`). 400 for duplicate
   * option ids, a past deadline or an `auto_action.option_id` naming no option.
   */
  createDecision(body: CreateDecisionRequest, opts?: RequestOptions): Promise<Decision> {
    return this.call('createDecision', { body, opts });
  }

  /** `GET /api/v1/decisions` (owner): decisions awaiting the owner (pending and deferred), oldest first; pass `next_cursor` as `cursor`. */
  listDecisions(query: DecisionListQuery = {}, opts?: RequestOptions): Promise<DecisionPage> {
    return this.call('listDecisions', { query, opts });
  }

  /**
   * `POST /api/v1/decisions/{id}/resolve` (owner): approve, deny or defer; the agent receives
   * `decision_response`. 409 when already decided, deferred twice, or past its deadline.
   */
  resolveDecision(decisionId: string, body: ResolveDecisionRequest, opts?: RequestOptions): Promise<Decision> {
    return this.call('resolveDecision', { params: { id: decisionId }, body, opts });
  }

  // ------------------------------------------------------------ audit log (contract §4.14; design §8.10, §8.22)

  /** `GET /api/v1/audit/events` (owner): the hash-chained trail, newest first; pass `next_cursor` as `cursor`. 400 for a bad filter. */
  listAuditEvents(query: AuditEventQuery = {}, opts?: RequestOptions): Promise<AuditEventPage> {
    return this.call('listAuditEvents', { query, opts });
  }

  /** `GET /api/v1/audit/verify` (owner): recompute the tenant's chain; `first_broken` names the first bad link. */
  verifyAudit(opts?: RequestOptions): Promise<AuditChainVerdict> {
    return this.call('verifyAudit', { opts });
  }

  /**
   * `POST /api/v1/audit/events` (agent: device JWT or API key; contract §4.19 `svc_submit_audit`):
   * append one `agent.action` event (`action`, optional `details` object ≤ 16 KiB of JSON,
   * `trace_id`, `parent_span_id`) to the tenant's chain; answers the stored event (201).
   * 403 for an API key without registered key material; 413 details too large.
   */
  submitAuditEvent(body: SubmitAuditEventRequest, opts?: RequestOptions): Promise<AuditEvent> {
    return this.call('submitAuditEvent', { body, opts });
  }

  /**
   * `GET /api/v1/audit/log-key` (no auth; design §8.33): the platform key that signs every
   * tenant's audit-log checkpoints (`vkey` is what the verifiers take) and the keys of before a
   * rotation that still sign beside it. Pin it: a verifier that fetches the key from the service
   * it checks trusts that service.
   */
  getAuditLogKey(opts?: RequestOptions): Promise<AuditLogKey> {
    return this.call('getAuditLogKey', { opts });
  }

  /** `GET /api/v1/audit/checkpoint` (owner): a signed checkpoint over every event committed so far (verify with `verifyCheckpoint`). */
  getAuditCheckpoint(opts?: RequestOptions): Promise<AuditCheckpoint> {
    return this.call('getAuditCheckpoint', { opts });
  }

  /**
   * `GET /api/v1/audit/events/{event_id}/proof` (owner): the event with its inclusion proof and the
   * checkpoint of `tree_size` (a size the service answered a checkpoint for; default the latest).
   * Verify with `verifyEventProof`. 400 for a size without a checkpoint or before the event; 404 unknown event.
   */
  getAuditEventProof(eventId: string, query: AuditEventProofQuery = {}, opts?: RequestOptions): Promise<AuditEventProof> {
    return this.call('getAuditEventProof', { params: { event_id: eventId }, query, opts });
  }

  /**
   * `GET /api/v1/audit/consistency?first=M&second=N` (owner): the proof that the checkpoint of
   * size N extends the one of size M (both answered before). Verify with `verifyCheckpointConsistency`.
   */
  getAuditConsistency(query: AuditConsistencyQuery, opts?: RequestOptions): Promise<AuditConsistencyProof> {
    return this.call('getAuditConsistency', { query, opts });
  }

  // ------------------------------------------------------------ hub identities (contract §2.8, §3.3, §4.10; design §8.13, §8.15, §8.16)

  /**
   * `POST /api/v1/hub/register` (owner): register a hub identity (address, `did:hub` DID) for the
   * tenant (201); the same as {@link createHubIdentity}. 400 bad address, key or body; 404 unknown
   * `device_id`; 409 address taken or reserved, device not ACTIVE or already bound.
   */
  registerHub(body: RegisterHubRequest, opts?: RequestOptions): Promise<HubIdentity> {
    return this.call('registerHub', { body, opts });
  }

  /** `POST /api/v1/hub/identities` (owner): as {@link registerHub} (201). */
  createHubIdentity(body: RegisterHubRequest, opts?: RequestOptions): Promise<HubIdentity> {
    return this.call('createHubIdentity', { body, opts });
  }

  /**
   * `POST /api/v1/hub/agents` (owner or API key; contract §4.19 `svc_register_agent`): register a new
   * agent — a hub identity at address `name` and a new API key for it, in one transaction (201).
   * The raw `api_key` is answered once; its first `client_key_register` binds the identity to the
   * new device. 400 bad address or key; 409 address taken or reserved (nothing is created).
   */
  registerAgent(body: RegisterAgentRequest, opts?: RequestOptions): Promise<RegisteredAgent> {
    return this.call('registerAgent', { body, opts });
  }

  /** `GET /api/v1/hub/identities` (owner): the tenant's hub identities. */
  async listHubIdentities(opts?: RequestOptions): Promise<HubIdentity[]> {
    return (await this.call('listHubIdentities', { opts })).identities;
  }

  /** `GET /api/v1/hub/identities/{id}` (owner): one identity; 404 unknown or another tenant's. */
  getHubIdentity(identityId: string, opts?: RequestOptions): Promise<HubIdentity> {
    return this.call('getHubIdentity', { params: { id: identityId }, opts });
  }

  /** `GET /api/v1/hub/{hub_address}/capabilities` (owner): the identity's registered capabilities; 404 another tenant's. */
  async listHubCapabilities(hubAddress: string, opts?: RequestOptions): Promise<HubCapability[]> {
    return (await this.call('listHubCapabilities', { params: { hub_address: hubAddress }, opts })).capabilities;
  }

  /**
   * `POST /api/v1/hub/{hub_address}/capabilities` (owner): register a capability (201). 400 when
   * `input_schema` is no valid JSON Schema or the version is malformed; 404 another tenant's
   * identity; 409 this name and version are already registered.
   */
  registerHubCapability(hubAddress: string, body: HubCapabilityInput, opts?: RequestOptions): Promise<HubCapability> {
    return this.call('registerHubCapability', { params: { hub_address: hubAddress }, body, opts });
  }

  /** `GET /api/v1/hub/{hub_address}/profile` (public): the public profile; 404 unknown address. */
  getHubProfile(hubAddress: string, opts?: RequestOptions): Promise<HubProfile> {
    return this.call('getHubProfile', { params: { hub_address: hubAddress }, opts });
  }

  /** `PATCH /api/v1/hub/{hub_address}/profile` (owner): change `display_name` and/or `description`; 404 another tenant's identity. */
  updateHubProfile(hubAddress: string, body: UpdateHubProfileRequest, opts?: RequestOptions): Promise<HubProfile> {
    return this.call('updateHubProfile', { params: { hub_address: hubAddress }, body, opts });
  }

  /**
   * `GET /api/v1/hub/search` (public): profiles matching free text, a minimum tier and/or a
   * capability, best match first. Without a credential at most 10 results (the client sends its
   * API key, device or owner token when it has one).
   */
  async searchHub(query: HubSearchQuery = {}, opts?: RequestOptions): Promise<HubProfile[]> {
    return (await this.call('searchHub', { query, opts })).results;
  }

  /**
   * `POST /api/v1/hub/identities/{id}/certify` (owner): run the five certification checks and
   * raise the tier when they pass (certified at trust score ≥ 0.6, enterprise ≥ 0.8); answered
   * either way, never lowers the tier. 404 another tenant's identity; 409 identity suspended.
   */
  certifyHubIdentity(identityId: string, opts?: RequestOptions): Promise<CertifyResult> {
    return this.call('certifyHubIdentity', { params: { id: identityId }, opts });
  }

  /**
   * `POST /api/v1/hub/identities/{id}/tier` (platform operators only, design §8.25): grant `tier`
   * to an identity of any tenant after a review, with `reason` (1-500 characters) and an optional
   * future `expires_at`. Answers the identity with `tier_source: "operator"`; while the grant
   * holds, fallback scores never lower the tier (contract §3.9), a real-telemetry score below the
   * threshold or the expiry does. 400 bad body or past `expires_at`; 401 no owner token; 403 not
   * an operator; 404 unknown identity; 409 identity suspended.
   */
  grantHubIdentityTier(identityId: string, body: GrantTierRequest, opts?: RequestOptions): Promise<HubIdentity> {
    return this.call('grantHubIdentityTier', { params: { id: identityId }, body, opts });
  }

  /**
   * `GET /api/v1/hub/review` (platform operators only): hub identities of every tenant, newest
   * first, with the id a tier grant names and the current grant; filter by exact `tier` or a part
   * of the address or display name; pass `next_cursor` as `cursor`. 400 bad query; 403 not an operator.
   */
  listHubReview(query: HubReviewQuery = {}, opts?: RequestOptions): Promise<HubReviewPage> {
    return this.call('listHubReview', { query, opts });
  }

  // ------------------------------------------------------------ verification, credentials (contract §2.10, §4.11; design §8.16)

  /**
   * `GET /api/v1/verify/{hub_address}` (public; 30/min per IP, 300/min with an API key): status,
   * tier and trust scores of an agent. An unknown well-formed address answers `status:
   * "not_found"`; a malformed one is 400.
   */
  verifyAgent(hubAddress: string, query: VerifyAgentQuery = {}, opts?: RequestOptions): Promise<AgentVerification> {
    return this.call('verifyAgent', { params: { hub_address: hubAddress }, query, opts });
  }

  /**
   * `POST /api/v1/verify/credential` (public; same limits as {@link verifyAgent}): the service runs
   * the `signature`, `issuer`, `expiration`, `revocation` and `subject` checks on `credential` (any
   * JSON object). A failing credential answers `valid: false`; 413 over 64 KiB. To verify without
   * the service, use `createDocumentLoader` with `@digitalbazaar/vc`.
   */
  verifyCredential(credential: object, opts?: RequestOptions): Promise<CredentialVerification> {
    return this.call('verifyCredential', { body: { credential: credential as Record<string, unknown> }, opts });
  }

  /**
   * `POST /api/v1/hub/identities/{id}/credentials` (owner): a TrustTierCredential for a certified
   * or enterprise identity, signed by the platform issuer (201). 403 tier below certified or
   * identity suspended; 404 another tenant's identity.
   */
  issueCredential(identityId: string, opts?: RequestOptions): Promise<TrustTierCredential> {
    return this.call('issueCredential', { params: { id: identityId }, opts });
  }

  /**
   * `POST /api/v1/hub/credentials/{id}/revoke` (owner): revoke a credential issued for the tenant
   * (`id`: the credential `id` `urn:uuid:…` or its bare UUID); verification then fails
   * `revocation`. 404 unknown or another tenant's; 409 already revoked.
   */
  revokeCredential(credentialId: string, opts?: RequestOptions): Promise<IssuedCredential> {
    return this.call('revokeCredential', { params: { id: credentialId }, opts });
  }

  /**
   * `GET /contexts/trust/v1` (public, outside `/api/v1`): the service's JSON-LD vocabulary context
   * (`TrustTierCredential`, `trustTier`). The SDK bundles the same document (`trustContext`), so
   * verification never needs to fetch it.
   */
  trustContext(opts?: RequestOptions): Promise<JsonLdContextDocument> {
    return this.call('trustContext', { opts });
  }

  // ------------------------------------------------------------ DID documents (contract §2.8, §4.10, §8; design §8.15)

  /**
   * `GET /api/v1/hub/resolve/{address}` (public; 60/min per IP, 600/min with an API key): the DID
   * resolution result of a hub address. An unknown address throws a 404 ParleyApiError, a
   * malformed one 400 (the body is a resolution result with `didResolutionMetadata.error`; use
   * the `did-resolver` driver `getResolver` to receive it as a value instead).
   */
  resolveHub(address: string, opts?: RequestOptions): Promise<DIDResolutionResult> {
    return this.call('resolveHub', { params: { address }, opts });
  }

  /** `GET /api/v1/hub/{hub_address}/did` (public; 60/min per IP, 600/min with an API key): the DID document; 404 unknown. */
  getDidDocument(hubAddress: string, opts?: RequestOptions): Promise<DIDDocument> {
    return this.call('getDidDocument', { params: { hub_address: hubAddress }, opts });
  }

  /**
   * `PATCH /api/v1/hub/{hub_address}/did` (owner): add a verification method, with a body signed
   * by the identity's owner key (`signDidUpdate`). Answers the updated DID document (new method
   * `#key-<n>`). 403 bad signature; 400 timestamp more than 5 minutes off or bad key; 409 replayed
   * or older timestamp, key already present, or no owner key; 404 another tenant's identity.
   */
  updateDid(hubAddress: string, body: DidUpdateRequest, opts?: RequestOptions): Promise<DIDDocument> {
    return this.call('updateDid', { params: { hub_address: hubAddress }, body, opts });
  }

  /**
   * `PUT /api/v1/hub/{hub_address}/agent-card` (owner of the identity's tenant, or the identity's
   * agent by device token or API key): publish a signed A2A Agent Card (`signAgentCard`). The
   * service stores it only when its JWS verifies against the DID document; 400 names the reason.
   */
  publishAgentCard(hubAddress: string, card: SignedAgentCard, opts?: RequestOptions): Promise<AgentCardPublished> {
    return this.call('publishAgentCard', { params: { hub_address: hubAddress }, body: card, opts });
  }

  /** `GET /api/v1/hub/{hub_address}/agent-card` (public): the signed Agent Card as stored; 404 none. Verify it with `verifyAgentCard`. */
  getAgentCard(hubAddress: string, opts?: RequestOptions): Promise<SignedAgentCard> {
    return this.call('getAgentCard', { params: { hub_address: hubAddress }, opts });
  }

  /** `GET /1.0/identifiers/{did}` (public; the DIF Universal Resolver driver path): as {@link resolveHub}, by DID; 400 for another DID method. */
  resolveDid(did: string, opts?: RequestOptions): Promise<DIDResolutionResult> {
    return this.call('resolveDid', { params: { did }, opts });
  }

  // ------------------------------------------------------------ trust scores (contract §2.9, §3.3, §3.9, §4.12; design §8.14, §8.21)
  // `agentId` is the agent's device id or hub address; answers carry the device id. 404 unknown or another tenant's agent.

  /** `GET /api/v1/trust-scores/fleet` (owner; design §8.14): each agent's latest score and per-dimension median, stddev and mean (default window `7d`). */
  getTrustFleet(query: TrustWindowQuery = {}, opts?: RequestOptions): Promise<TrustFleet> {
    return this.call('getTrustFleet', { query, opts });
  }

  /**
   * `POST /api/v1/trust-scores/recompute` (owner; contract §4.12, design §8.14): run the trust engine
   * for the tenant now (normally every 6 hours). 409 while another recompute of the tenant runs;
   * 429 over the per-tenant limit (default 2 per minute; `retryAfter` on the error).
   */
  recomputeTrust(opts?: RequestOptions): Promise<TrustRecomputeSummary> {
    return this.call('recomputeTrust', { opts });
  }

  /** `GET /api/v1/trust-scores/{agent_id}` (owner; contract §2.9, §3.9): the current score of the 12 dimensions for a window (default `7d`; the §3.9 warm-up answer before the first recompute). */
  getTrustScore(agentId: string, query: TrustWindowQuery = {}, opts?: RequestOptions): Promise<TrustScore> {
    return this.call('getTrustScore', { params: { agent_id: agentId }, query, opts });
  }

  /** `GET /api/v1/trust-scores/{agent_id}/history` (owner; contract §4.12): 7-day scores over the last `days` days (service default and bounds apply; 400 outside them), oldest first, with tier changes. */
  getTrustHistory(agentId: string, query: { days?: number } = {}, opts?: RequestOptions): Promise<TrustHistory> {
    return this.call('getTrustHistory', { params: { agent_id: agentId }, query, opts });
  }

  /** `GET /api/v1/trust-scores/{agent_id}/report` (owner; contract §4.12, design §8.14): the compliance report as JSON. */
  getTrustReport(agentId: string, opts?: RequestOptions): Promise<TrustReport> {
    return this.call('getTrustReport', { params: { agent_id: agentId }, query: { format: 'json' }, opts });
  }

  /** `GET /api/v1/trust-scores/{agent_id}/report?format=html` (owner; contract §4.12): the compliance report as a standalone HTML document (UTF-8 text). */
  async getTrustReportHtml(agentId: string, opts?: RequestOptions): Promise<string> {
    const bytes = await this.call('getTrustReport', { params: { agent_id: agentId }, query: { format: 'html' }, binary: true, opts });
    return new TextDecoder().decode(bytes);
  }

  /** `GET /api/v1/trust-scores/{agent_id}/drift` (owner; contract §4.12): per-dimension PSI of the window (default `30d`) against the baseline; `alert` when PSI > 0.25 somewhere. */
  getTrustDrift(agentId: string, query: TrustWindowQuery = {}, opts?: RequestOptions): Promise<TrustDrift> {
    return this.call('getTrustDrift', { params: { agent_id: agentId }, query, opts });
  }

  /** `POST /api/v1/trust-scores/{agent_id}/drift/recalibrate` (owner; contract §4.12): replace the drift baselines with the most recent 30 days; 409 without enough complete days. */
  recalibrateTrustDrift(agentId: string, opts?: RequestOptions): Promise<TrustDriftRecalibration> {
    return this.call('recalibrateTrustDrift', { params: { agent_id: agentId }, opts });
  }

  // ------------------------------------------------------------ Skill Permission Tokens, skill policy (design §8.6, §8.7)

  /**
   * `POST /api/v1/grants` (device JWT or API key for the agent itself, certified tier and up; or
   * the owner on its behalf, any tier, naming `device_id`; design §8.7): issue a Skill Permission
   * Token (201). The token is returned once. 400 bad body; 403 tier or policy refuses; 404 unknown device.
   */
  issueGrant(body: IssueGrantRequest, opts?: RequestOptions): Promise<IssuedGrant> {
    return this.call('issueGrant', { body, opts });
  }

  /** `GET /api/v1/grants` (owner; design §8.7): the tenant's grants, newest first, never the tokens; pass `next_cursor` as `cursor`. */
  listGrants(query: GrantListQuery = {}, opts?: RequestOptions): Promise<GrantPage> {
    return this.call('listGrants', { query, opts });
  }

  /**
   * `POST /api/v1/grants/validate` (public, rate limited; design §8.7): run the signature,
   * expiration, revocation, skill and audience checks. A failing token answers `valid: false`;
   * 400 without `audience`; 413 oversized body; 429 over the limit.
   */
  validateGrant(body: ValidateGrantRequest, opts?: RequestOptions): Promise<GrantValidation> {
    return this.call('validateGrant', { body, opts });
  }

  /** `GET /api/v1/grants/jwks` (public; design §8.7): the SPT verification key set, for validating tokens offline (e.g. with `jose`). */
  getGrantKeys(opts?: RequestOptions): Promise<GrantJwks> {
    return this.call('getGrantKeys', { opts });
  }

  /** `POST /api/v1/grants/{jti}/revoke` (owner; design §8.7): revoke a grant (optional reason, 1-500 characters); it then fails the revocation check. 404 unknown; 409 already revoked. */
  revokeGrant(jti: string, body: { reason?: string } = {}, opts?: RequestOptions): Promise<Grant> {
    return this.call('revokeGrant', { params: { jti }, body, opts });
  }

  /**
   * `POST /api/v1/skills/check` (owner naming `device_id`, device JWT or API key; design §8.6):
   * run a skill invocation through the policy pipeline (identity, trust_floor, grant, rate, budget, rules).
   * Answers whether allowed or not; 404 unknown device or target.
   */
  checkSkillPolicy(body: SkillCheckRequest, opts?: RequestOptions): Promise<SkillCheckResult> {
    return this.call('checkSkillPolicy', { body, opts });
  }

  /**
   * `POST /api/v1/skills/delegate` (owner naming `device_id`, device JWT or API key; contract §4.19
   * `svc_delegate_skill`): the policy pipeline of {@link checkSkillPolicy} for `target`, audited
   * as `skill.delegated` or `skill.delegation_refused`. Answers 200 whether allowed or not, with
   * `delegation_id`, `audit_event_id` and the target's tier and score; 404 unknown target.
   */
  delegateSkill(body: DelegateSkillRequest, opts?: RequestOptions): Promise<DelegationResult> {
    return this.call('delegateSkill', { body, opts });
  }

  // ------------------------------------------------------------ shadow sessions (contract §2.14, §3.4, §4.17; design §8.8, §8.20)

  /** `POST /api/v1/shadow/sessions` (owner; contract §4.17): start a session at level `shadow` (201). 404 unknown agent; 409 a session for this agent, skill and class exists. */
  createShadowSession(body: CreateShadowSessionRequest, opts?: RequestOptions): Promise<ShadowSession> {
    return this.call('createShadowSession', { body, opts });
  }

  /** `GET /api/v1/shadow/sessions` (owner; contract §4.17): sessions, oldest first; pass `next_cursor` as `cursor`. */
  listShadowSessions(query: ShadowSessionListQuery = {}, opts?: RequestOptions): Promise<ShadowSessionPage> {
    return this.call('listShadowSessions', { query, opts });
  }

  /** `GET /api/v1/shadow/sessions/{session_id}` (owner; contract §4.17): one session with its current-level stats; 404 unknown or another tenant's. */
  getShadowSession(sessionId: string, opts?: RequestOptions): Promise<ShadowSession> {
    return this.call('getShadowSession', { params: { session_id: sessionId }, opts });
  }

  /** `POST /api/v1/shadow/sessions/{session_id}/record-human-decision` (owner; contract §4.17, design §8.8): record the human decision next to the agent's recommendation (201). 409 duplicate `observation_id`. */
  recordShadowDecision(sessionId: string, body: RecordShadowDecisionRequest, opts?: RequestOptions): Promise<ShadowObservation> {
    return this.call('recordShadowDecision', { params: { session_id: sessionId }, body, opts });
  }

  /** `GET /api/v1/shadow/sessions/{session_id}/graduation-check` (owner; contract §3.4, §4.17): the three graduation gates against the current level's evidence. */
  getShadowGraduationCheck(sessionId: string, opts?: RequestOptions): Promise<ShadowGraduationCheck> {
    return this.call('getShadowGraduationCheck', { params: { session_id: sessionId }, opts });
  }

  /** `POST /api/v1/shadow/sessions/{session_id}/graduate` (owner; contract §3.4, §4.17): promote one level when every gate is met (never automatic); 409 otherwise or at `autonomous`. */
  graduateShadowSession(sessionId: string, opts?: RequestOptions): Promise<ShadowSession> {
    return this.call('graduateShadowSession', { params: { session_id: sessionId }, opts });
  }

  /** `POST /api/v1/shadow/sessions/{session_id}/demote` (owner; contract §4.17): move to a lower level with a reason; resets the evidence. 400 for a level not below the current one. */
  demoteShadowSession(sessionId: string, body: DemoteShadowSessionRequest, opts?: RequestOptions): Promise<ShadowSession> {
    return this.call('demoteShadowSession', { params: { session_id: sessionId }, body, opts });
  }

  // ------------------------------------------------------------ federation agreements (contract §2.12, §4.13)

  /** `POST /api/v1/federation/agreements` (owner; contract §4.13): propose an agreement to another tenant (201, `pending`). 404 unknown partner; 409 one exists. */
  proposeFederation(body: ProposeFederationRequest, opts?: RequestOptions): Promise<FederationAgreement> {
    return this.call('proposeFederation', { body, opts });
  }

  /** `GET /api/v1/federation/agreements` (owner; contract §4.13): agreements the tenant proposed or was proposed. */
  async listFederationAgreements(opts?: RequestOptions): Promise<FederationAgreement[]> {
    return (await this.call('listFederationAgreements', { opts })).agreements;
  }

  /** `POST /api/v1/federation/agreements/{id}/accept` (owner; contract §4.13): the partner accepts a pending agreement (→ active), or either party accepts the renewal the other asked for; 409 nothing to accept. */
  acceptFederation(agreementId: string, opts?: RequestOptions): Promise<FederationAgreement> {
    return this.call('acceptFederation', { params: { id: agreementId }, opts });
  }

  /** `POST /api/v1/federation/agreements/{id}/renew` (owner of either party; contract §4.13, docs/decisions.md): ask for a later expiry (at most 365 days ahead), shown as `renewal` until the other party accepts it; the proposer changes a pending proposal directly. */
  renewFederation(agreementId: string, body: { expires_at: string }, opts?: RequestOptions): Promise<FederationAgreement> {
    return this.call('renewFederation', { params: { id: agreementId }, body, opts });
  }

  /** `POST /api/v1/federation/agreements/{id}/revoke` (owner of either party; contract §4.13): revoke (terminal); 409 already revoked. */
  revokeFederation(agreementId: string, opts?: RequestOptions): Promise<FederationAgreement> {
    return this.call('revokeFederation', { params: { id: agreementId }, opts });
  }

  // ------------------------------------------------------------ A2A channels (contract §2.11, §3.5, §4.13; design §8.5)

  /**
   * `POST /api/v1/a2a/channels/request` (owner naming `initiator_device_id`, or the agent's API
   * key; contract §4.13, §3.5): request a channel with the agent behind a hub address (201, `pending`
   * until its owner approves). 403 tier too low or no federation agreement; 404 unknown address.
   */
  requestA2aChannel(body: RequestA2aChannelRequest, opts?: RequestOptions): Promise<RequestedA2aChannel> {
    return this.call('requestA2aChannel', { body, opts });
  }

  /** `GET /api/v1/a2a/channels` (owner: the tenant's; API key: its device's; contract §4.13): channels, newest first. */
  async listA2aChannels(query: { status?: A2aChannelStatus } = {}, opts?: RequestOptions): Promise<A2aChannel[]> {
    return (await this.call('listA2aChannels', { query, opts })).channels;
  }

  /** `POST /api/v1/a2a/channels/{id}/approve` (owner of the responder; contract §3.5): approve a pending channel; 409 not pending. */
  approveA2aChannel(channelId: string, opts?: RequestOptions): Promise<A2aChannel> {
    return this.call('approveA2aChannel', { params: { id: channelId }, opts });
  }

  /** `POST /api/v1/a2a/channels/{id}/reject` (owner of the responder; contract §3.5): reject a pending channel (terminal); 409 not pending. */
  rejectA2aChannel(channelId: string, opts?: RequestOptions): Promise<A2aChannel> {
    return this.call('rejectA2aChannel', { params: { id: channelId }, opts });
  }

  /** `POST /api/v1/a2a/channels/{id}/revoke` (owner or API key of either party; contract §3.5): revoke a pending, approved or active channel (terminal). */
  revokeA2aChannel(channelId: string, opts?: RequestOptions): Promise<A2aChannel> {
    return this.call('revokeA2aChannel', { params: { id: channelId }, opts });
  }

  /** `POST /api/v1/a2a/channels/{id}/messages` (a party agent: device JWT or API key; contract §4.13): send an encrypted message on an active channel (201); both tenants' policies apply. */
  sendA2aMessage(channelId: string, body: A2aMessageInput, opts?: RequestOptions): Promise<A2aSendResult> {
    return this.call('sendA2aMessage', { params: { id: channelId }, body, opts });
  }

  /**
   * `GET /api/v1/a2a/channels/{id}/peer` (a party agent: device JWT or API key): this party's role
   * and the peer's hub address, device and keys of an approved or active channel — what
   * `a2a_channel_approved` carried, for a device that missed it; 409 while pending or once closed.
   */
  a2aChannelPeer(channelId: string, opts?: RequestOptions): Promise<A2aChannelApprovedEvent> {
    return this.call('a2aChannelPeer', { params: { id: channelId }, opts });
  }

  /** `GET /api/v1/a2a/channels/{id}/messages` (a party agent; contract §4.13): channel history, oldest first; pass `next_cursor` as `since`. */
  a2aHistory(channelId: string, query: A2aHistoryQuery = {}, opts?: RequestOptions): Promise<A2aMessagePage> {
    return this.call('a2aHistory', { params: { id: channelId }, query, opts });
  }

  // ------------------------------------------------------------ workspaces, team rooms (contract §2.5, §4.13)

  /** `POST /api/v1/workspaces` (owner; contract §4.13): create a workspace (201); members must be ACTIVE agent devices of the tenant. */
  createWorkspace(body: CreateWorkspaceRequest, opts?: RequestOptions): Promise<Workspace> {
    return this.call('createWorkspace', { body, opts });
  }

  /** `GET /api/v1/workspaces` (owner: every tenant workspace; API key: its own, narrowed by `X-Workspace-Id`; contract §4.13). */
  async listWorkspaces(opts?: RequestOptions): Promise<WorkspaceSummary[]> {
    return (await this.call('listWorkspaces', { opts })).workspaces;
  }

  /** `GET /api/v1/workspaces/{id}` (owner; contract §4.13): the workspace with its members; 404 unknown or another tenant's. */
  getWorkspace(workspaceId: string, opts?: RequestOptions): Promise<Workspace> {
    return this.call('getWorkspace', { params: { id: workspaceId }, opts });
  }

  /** `POST /api/v1/workspaces/{id}/members` (owner; contract §4.13): add an ACTIVE agent device or set its role (idempotent). */
  addWorkspaceMember(workspaceId: string, member: { device_id: string; role?: WorkspaceRole }, opts?: RequestOptions): Promise<Workspace> {
    return this.call('addWorkspaceMember', { params: { id: workspaceId }, body: member, opts });
  }

  /** `DELETE /api/v1/workspaces/{id}/members/{device_id}` (owner; contract §4.13): remove a member (204). */
  async removeWorkspaceMember(workspaceId: string, deviceId: string, opts?: RequestOptions): Promise<void> {
    await this.call('removeWorkspaceMember', { params: { id: workspaceId, device_id: deviceId }, opts });
  }

  /** `POST /api/v1/team-rooms` (owner; contract §2.5, §4.13): create a room in a workspace (201); participants are workspace members or owner devices. */
  createTeamRoom(body: CreateTeamRoomRequest, opts?: RequestOptions): Promise<TeamRoom> {
    return this.call('createTeamRoom', { body, opts });
  }

  /** `GET /api/v1/team-rooms` (owner: the tenant's; API key: those its device participates in; contract §4.13), optionally of one workspace. */
  async listTeamRooms(query: { workspace_id?: string } = {}, opts?: RequestOptions): Promise<TeamRoomSummary[]> {
    return (await this.call('listTeamRooms', { query, opts })).team_rooms;
  }

  // ------------------------------------------------------------ connections (contract §4.10)

  /** `GET /api/v1/connections` (owner; contract §4.10): agent devices, A2A channels and federation agreements of the tenant, optionally of one type. */
  async listConnections(query: { type?: ConnectionType } = {}, opts?: RequestOptions): Promise<Connection[]> {
    return (await this.call('listConnections', { query, opts })).connections;
  }

  /** `GET /api/v1/connections/{connection_id}` (owner; contract §4.10): one connection with the details of its type; 404 unknown. */
  getConnection(connectionId: string, opts?: RequestOptions): Promise<ConnectionDetail> {
    return this.call('getConnection', { params: { connection_id: connectionId }, opts });
  }

  /** `GET /api/v1/owner-connections` (owner; contract §4.10): the caller's owner devices with health, last_seen and presence. */
  async ownerConnections(opts?: RequestOptions): Promise<OwnerConnection[]> {
    return (await this.call('ownerConnections', { opts })).owner_connections;
  }

  // ------------------------------------------------------------ marketplace (contract §4.16)
  // "Workspace auth" (owner-or-apikey): an owner token of the tenant, or a tenant API key with `X-Workspace-Id`. Money is integer US cents.

  /** `GET /api/v1/marketplace/listings` (public; contract §4.16, design §8.35): published listings by relevance (with `query`) or newest first; anonymous callers get the reduced view, at most 20; `mine=true` the tenant's own in every status. 400 bad query; 429 rate limited. */
  searchListings(query: ListingSearchQuery = {}, opts?: RequestOptions): Promise<ListingPage> {
    return this.call('searchListings', { query, opts });
  }

  /** `GET /api/v1/marketplace/listings/{id}` (public; contract §4.16): a listing with the identity's live trust tier and score (reduced view when anonymous); 404 unknown or not visible. */
  getListing(listingId: string, opts?: RequestOptions): Promise<Listing> {
    return this.call('getListing', { params: { id: listingId }, opts });
  }

  /**
   * `GET /api/v1/marketplace/listings/{id}/capabilities` (workspace auth): the registered
   * capabilities the listing rents out, with version, input schema, SLA and certification tier;
   * 404 when the listing is neither published nor the caller's.
   */
  async listingCapabilities(listingId: string, opts?: RequestOptions): Promise<HubCapability[]> {
    return (await this.call('listingCapabilities', { params: { id: listingId }, opts })).capabilities;
  }

  /** `POST /api/v1/marketplace/listings` (workspace auth; contract §3.7, design §8.23): a draft listing for one of the tenant's hub identities (201). 400 bad body; 404 unknown or another tenant's hub address. */
  createListing(body: CreateListingRequest, opts?: RequestOptions): Promise<Listing> {
    return this.call('createListing', { body, opts });
  }

  /** `PATCH /api/v1/marketplace/listings/{id}` (workspace auth; design §8.23): change any field (`null` clears the optional ones); 404 unknown or another tenant's; 409 delisted. */
  updateListing(listingId: string, body: UpdateListingRequest, opts?: RequestOptions): Promise<Listing> {
    return this.call('updateListing', { params: { id: listingId }, body, opts });
  }

  /** `POST /api/v1/marketplace/listings/{id}/publish` (workspace auth; contract §3.7): draft → published; 409 not a draft, or the identity is inactive, below `certified` or the listing's `min_tier`, or bound to no agent device. */
  publishListing(listingId: string, opts?: RequestOptions): Promise<Listing> {
    return this.call('publishListing', { params: { id: listingId }, opts });
  }

  /** `POST /api/v1/marketplace/listings/{id}/pause` (workspace auth; contract §3.7): published → paused; 409 in another state. */
  pauseListing(listingId: string, opts?: RequestOptions): Promise<Listing> {
    return this.call('pauseListing', { params: { id: listingId }, opts });
  }

  /** `POST /api/v1/marketplace/listings/{id}/resume` (workspace auth; contract §3.7): paused → published; 409 in another state. */
  resumeListing(listingId: string, opts?: RequestOptions): Promise<Listing> {
    return this.call('resumeListing', { params: { id: listingId }, opts });
  }

  /** `POST /api/v1/marketplace/listings/{id}/delist` (workspace auth; contract §3.7): draft, published or paused → delisted (terminal); 409 already delisted. */
  delistListing(listingId: string, opts?: RequestOptions): Promise<Listing> {
    return this.call('delistListing', { params: { id: listingId }, opts });
  }

  /**
   * `POST /api/v1/marketplace/rentals` (workspace auth; contract §2.13, §3.6): rent a published listing
   * of another tenant (201, `pending` until the processor confirms); without `payment_method`, the
   * tenant's default. 400 no payment method at all; 402 payment declined; 404 listing not published;
   * 409 own listing, or the identity below the listing's tier or score floor; 502 processor unavailable.
   */
  createRental(body: CreateRentalRequest, opts?: RequestOptions): Promise<Rental> {
    return this.call('createRental', { body, opts });
  }

  /** `GET /api/v1/marketplace/rentals` (workspace auth; design §8.35): the tenant's rentals as renter (default) or developer, newest first; pass `next_cursor` as `cursor`. */
  listRentals(query: RentalListQuery = {}, opts?: RequestOptions): Promise<RentalPage> {
    return this.call('listRentals', { query, opts });
  }

  /** `GET /api/v1/marketplace/rentals/{id}` (workspace auth, either party; design §8.35): a rental, with the renter's SPT while active; 404 unknown or not a party. */
  getRental(rentalId: string, opts?: RequestOptions): Promise<Rental> {
    return this.call('getRental', { params: { id: rentalId }, opts });
  }

  /** `GET /api/v1/marketplace/rentals/{id}/members` (either party; contract §4.16): the rental room's members with their public keys; 404 not visible; 409 never activated. */
  rentalMembers(rentalId: string, opts?: RequestOptions): Promise<RentalMembers> {
    return this.call('rentalMembers', { params: { id: rentalId }, opts });
  }

  /**
   * `POST /api/v1/marketplace/rentals/{id}/messages` (the renter's owner device with `X-Device-Id`, or the rented agent; contract §4.16):
   * ciphertext envelopes for members of the other side; both tenants' policies decide per recipient. 400, 403 not a member, 404, 409 room closed, 413.
   */
  sendRentalMessage(rentalId: string, body: RentalMessageInput, opts?: RequestOptions): Promise<RentalSendResult> {
    return this.call('sendRentalMessage', { params: { id: rentalId }, body, opts });
  }

  /** `GET /api/v1/marketplace/rentals/{id}/messages` (a member device; owners with `X-Device-Id`): the device's relayed rental-room messages, oldest first, after `since` (a `next_cursor`). */
  rentalMessages(rentalId: string, query: RentalMessageQuery = {}, opts?: RequestOptions): Promise<RentalMessagePage> {
    return this.call('rentalMessages', { params: { id: rentalId }, query, opts });
  }

  /** `POST /api/v1/marketplace/rentals/{id}/cancel` (workspace auth, renter; contract §3.6, design §8.24): pending or active → cancelled, the unused part refunded; 403 the developer; 409 in another state; 502 processor unavailable. */
  cancelRental(rentalId: string, opts?: RequestOptions): Promise<Rental> {
    return this.call('cancelRental', { params: { id: rentalId }, opts });
  }

  /** `POST /api/v1/marketplace/rentals/{id}/complete` (workspace auth, renter; contract §3.6): active → completed; 403 the developer; 409 in another state. */
  completeRental(rentalId: string, opts?: RequestOptions): Promise<Rental> {
    return this.call('completeRental', { params: { id: rentalId }, opts });
  }

  /** `POST /api/v1/marketplace/rentals/{id}/dispute` (workspace auth, either party; contract §2.13): file a dispute (201), active or suspended → disputed; 400 foreign evidence; 404 unknown or not a party; 409 in another state or one exists. */
  fileDispute(rentalId: string, body: FileDisputeRequest, opts?: RequestOptions): Promise<Dispute> {
    return this.call('fileDispute', { params: { id: rentalId }, body, opts });
  }

  /** `GET /api/v1/marketplace/disputes` (owner; design §8.25): every tenant's disputes for platform operators, the tenant's own otherwise; pass `next_cursor` as `cursor`. */
  listDisputes(query: DisputeListQuery = {}, opts?: RequestOptions): Promise<DisputePage> {
    return this.call('listDisputes', { query, opts });
  }

  /** `GET /api/v1/marketplace/disputes/{id}` (owner of either party, or an operator; contract §2.13): a dispute with its notes; 404 unknown or not visible. */
  getDispute(disputeId: string, opts?: RequestOptions): Promise<Dispute> {
    return this.call('getDispute', { params: { id: disputeId }, opts });
  }

  /** `POST /api/v1/marketplace/disputes/{id}/notes` (workspace auth, either party; design §8.35): add a note and evidence (201); 400 foreign evidence; 404 unknown; 409 dispute resolved. */
  addDisputeNote(disputeId: string, body: DisputeNoteRequest, opts?: RequestOptions): Promise<Dispute> {
    return this.call('addDisputeNote', { params: { id: disputeId }, body, opts });
  }

  /**
   * `POST /api/v1/marketplace/disputes/{id}/resolve` (platform operators; design §8.9, §8.25):
   * disputed → resolved with `refund`, `partial` (with `amount_cents`) or `none`, money moved through
   * the ledger and processor. 400 bad amount; 403 not an operator; 404 unknown; 409 already resolved; 502 processor refused the refund.
   */
  resolveDispute(disputeId: string, body: ResolveDisputeRequest, opts?: RequestOptions): Promise<Dispute> {
    return this.call('resolveDispute', { params: { id: disputeId }, body, opts });
  }

  /** `GET /api/v1/marketplace/payouts` (workspace auth; contract §3.8): payouts to the tenant, newest first; pass `next_cursor` as `cursor`. */
  listPayouts(query: PayoutListQuery = {}, opts?: RequestOptions): Promise<PayoutPage> {
    return this.call('listPayouts', { query, opts });
  }

  /** `GET /api/v1/marketplace/payouts/summary` (workspace auth; contract §3.8): earned, fees, paid, pending and balance from the ledger, with the next payout date. */
  payoutSummary(opts?: RequestOptions): Promise<PayoutSummary> {
    return this.call('payoutSummary', { opts });
  }

  /** `GET /api/v1/marketplace/connect/dashboard` (workspace auth; contract §3.8): link to the processor's dashboard, or onboarding while the account is not ready; 502 processor unavailable. */
  connectDashboard(opts?: RequestOptions): Promise<ConnectDashboard> {
    return this.call('connectDashboard', { opts });
  }

  /** `GET /api/v1/marketplace/payment-method` (workspace auth; design §8.29): the tenant's default payment method (`null` when none). */
  getPaymentMethod(opts?: RequestOptions): Promise<PaymentMethodInfo> {
    return this.call('getPaymentMethod', { opts });
  }

  /**
   * `GET /api/v1/marketplace/processor` (public): the payment processor that charges rentals —
   * `stripe` with its publishable key for Stripe.js (null when the service has none), or `local`
   * with its test payment methods.
   */
  paymentProcessor(opts?: RequestOptions): Promise<PaymentProcessorInfo> {
    return this.call('paymentProcessor', { opts });
  }

  /** `PUT /api/v1/marketplace/payment-method` (owner; design §8.29): set the tenant's default payment method, used when a rental names none. 400 bad body. */
  setPaymentMethod(body: PaymentMethodRequest, opts?: RequestOptions): Promise<PaymentMethodInfo> {
    return this.call('setPaymentMethod', { body, opts });
  }

  /** `GET /api/v1/marketplace/ledger/verify` (platform operators; design §8.35): whether every ledger transaction balances; 403 not an operator. */
  verifyLedger(opts?: RequestOptions): Promise<LedgerVerification> {
    return this.call('verifyLedger', { opts });
  }
}
