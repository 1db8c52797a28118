/**
 * Platform (contract §4.1, §9): health, JWKS, legal terms, billing plans, capabilities: schemas, route rows and frames.
 * These answers are open objects (more keys may appear), hence `additionalProperties: true`.
 */
import { Type, type Static, type TObject, type TProperties, type TUnsafe } from '@sinclair/typebox';
import { defineRoute } from '../contract.js';
import { Nullable } from '../common.js';

/**
 * An object schema that also lets (and serializes) keys it does not list; its static type carries
 * the index signature `[key: string]: unknown` next to the listed fields.
 */
function OpenObject<T extends TProperties>(properties: T, options: { description?: string } = {}): TUnsafe<Static<TObject<T>> & { [key: string]: unknown }> {
  return Type.Unsafe(Type.Object(properties, { ...options, additionalProperties: true }));
}

/** `GET /health` (contract §4.1): `status` is `ok`, or `degraded` (HTTP 503) when the database fails. */
export const HealthResponse = Type.Object({ status: Type.String({ description: 'ok, or degraded (HTTP 503) when the database fails' }), version: Type.String() });
export type HealthResponse = Static<typeof HealthResponse>;

/**
 * `GET /livez` and `GET /readyz` (design §8.32): liveness (the process answers) and readiness
 * (503 with `detail` while the database is unreachable or while the instance drains on SIGTERM;
 * 200 `degraded` with `detail` while the configured Redis is unreachable). `checks` names each
 * dependency's state.
 */
export const ProbeResponse = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded'), Type.Literal('unavailable')]),
  checks: Type.Optional(Type.Record(Type.String(), Type.String(), { description: 'dependency -> ok | down | draining' })),
  detail: Type.Optional(Type.String()),
});
export type ProbeResponse = Static<typeof ProbeResponse>;

/** `GET /metrics`: Prometheus text exposition format 0.0.4. */
const MetricsText = Type.Unsafe<string>({ description: 'Prometheus text format', content: { 'text/plain': { schema: Type.String() } } });

/** `GET /.well-known/jwks.json`: public keys of device JWTs (and of the dev identity provider). */
export const JwksResponse = Type.Object({ keys: Type.Array(OpenObject({}, { description: 'a public JWK (RFC 7517)' })) });
export type JwksResponse = Static<typeof JwksResponse>;

/** `GET /api/v1/legal/terms`: the current terms document. */
export const LegalTermsResponse = OpenObject({ version: Type.String(), url: Nullable(Type.String()), summary: Type.String() });
export type LegalTermsResponse = Static<typeof LegalTermsResponse>;

/** One plan of `GET /api/v1/billing/plans`; prices in US cents per month (`null` = on request). */
export const BillingPlan = OpenObject({
  plan_id: Type.String(),
  name: Type.String(),
  price_cents: Nullable(Type.Integer({ description: 'US cents per month; null = on request' })),
  limits: Type.Record(Type.String(), Nullable(Type.Number()), { description: 'e.g. agents, messages_per_month; null = unlimited' }),
});
export type BillingPlan = Static<typeof BillingPlan>;

/** `GET /api/v1/billing/plans`. */
export const BillingPlansResponse = Type.Object({ plans: Type.Array(BillingPlan) });
export type BillingPlansResponse = Static<typeof BillingPlansResponse>;

/** `GET /api/v1/capabilities`: protocols, realtime endpoint and feature list of the platform. */
export const CapabilitiesResponse = OpenObject({
  version: Type.String(),
  encryption: OpenObject({ protocols: Type.Array(Type.String()), aead: Type.String(), identity: Type.String(), fingerprint: Type.String() }),
  realtime: OpenObject({ websocket: Type.String({ description: 'WebSocket path' }), ping_interval_s: Type.Number(), dead_timeout_s: Type.Number() }),
  features: Type.Array(Type.String()),
  telemetry: OpenObject({ otlp_http: Type.String(), encodings: Type.Array(Type.String()), compression: Type.Array(Type.String()) }),
  trust: OpenObject({ windows: Type.Array(Type.String()), tiers: Type.Array(Type.String()), dimensions: Type.Integer() }),
});
export type CapabilitiesResponse = Static<typeof CapabilitiesResponse>;

/**
 * `POST /api/v1/dev/login` body (design §8.31): the e-mail address to sign in as with the built-in
 * development identity provider (it becomes the owner JWT's `sub`, lowercased).
 */
export const DevLoginRequest = Type.Object({ email: Type.String({ minLength: 3, maxLength: 254, pattern: '^[^@\\s]+@[^@\\s]+$', description: 'an e-mail address' }) });
export type DevLoginRequest = Static<typeof DevLoginRequest>;

/** `POST /api/v1/dev/login` answer: an owner JWT of the development identity provider. */
export const DevLoginResponse = Type.Object({ token: Type.String({ description: 'owner JWT (development identity provider)' }), expires_at: Type.String({ description: 'ISO 8601' }) });
export type DevLoginResponse = Static<typeof DevLoginResponse>;

/**
 * `GET /api/v1/auth/config` answer (design §8.30–§8.31): how the owners' web app signs in.
 * `mode` `dev`: the built-in development identity provider is active (`POST /api/v1/dev/login`,
 * `dev_login` tells whether this server, bound to a loopback address, accepts it); `oidc`: sign in
 * with the OIDC provider `oidc` names (authorization code with PKCE, public client).
 */
export const AuthConfig = Type.Object({
  mode: Type.Union([Type.Literal('dev'), Type.Literal('oidc')]),
  dev_login: Type.Boolean({ description: 'POST /api/v1/dev/login is accepted here' }),
  oidc: Type.Optional(
    Type.Object({
      issuer: Type.String({ description: 'OIDC issuer URL (discovery at /.well-known/openid-configuration)' }),
      client_id: Type.String({ description: "the web app's public client id (OIDC_CLIENT_ID, default OIDC_AUDIENCE)" }),
      scope: Type.String({ description: 'space-separated scopes (OIDC_SCOPE, default "openid email profile")' }),
    }),
  ),
});
export type AuthConfig = Static<typeof AuthConfig>;

const tags = ['platform'];

/** Route rows of this area. */
export const platformRoutes = {
  health: defineRoute({
    method: 'GET',
    path: '/health',
    auth: 'none',
    tags,
    summary: 'Liveness and database check',
    description:
      'Checks that the process answers and that the database runs `select 1`. Answers 200 `{status: "ok", version}`, or 503 `{status: "degraded", version}` when the database query fails. Orchestrators should probe `/livez` and `/readyz`, which separate liveness from readiness.',
    responses: { 200: HealthResponse, 503: HealthResponse },
    errors: [],
  }),
  livez: defineRoute({
    method: 'GET',
    path: '/livez',
    auth: 'none',
    tags,
    summary: 'Liveness: the process answers (design §8.32)',
    description:
      'Liveness probe: answers 200 `{status: "ok"}` whenever the process serves HTTP, without touching the database or Redis; restart the process when it stops answering.',
    responses: { 200: ProbeResponse },
    errors: [],
  }),
  readyz: defineRoute({
    method: 'GET',
    path: '/readyz',
    auth: 'none',
    tags,
    summary: 'Readiness: 503 while the database or Redis is unreachable, or while draining (design §8.32)',
    description:
      'Readiness probe: checks the database and, when `REDIS_URL` is set, Redis (each check waits at most 2 seconds). Answers 200 `ok` when both answer; 200 `degraded` with a `detail` while Redis is unreachable (the instance still serves; cross-instance delivery pauses and rate limits count per instance); 503 `unavailable` while the database is unreachable or the instance drains after SIGTERM, so load balancers stop sending it requests.',
    responses: { 200: ProbeResponse, 503: ProbeResponse },
    errors: [],
  }),
  metrics: defineRoute({
    method: 'GET',
    path: '/metrics',
    auth: 'none',
    tags,
    summary: 'Prometheus metrics; needs Authorization: Bearer $METRICS_TOKEN (404 when METRICS_TOKEN is not set)',
    description:
      'The instance\'s metrics in the Prometheus text format: HTTP request durations, open WebSocket connections and frames, group-commit batches, event-bus publishes, job runs, webhook deliveries and the database pool. 401 unless `Authorization: Bearer` carries `METRICS_TOKEN` (compared in constant time); 404 when `METRICS_TOKEN` is not configured (`METRICS_PORT` then serves the metrics without a token on a loopback-only listener).',
    responses: { 200: MetricsText },
    errors: [401, 404],
  }),
  jwks: defineRoute({
    method: 'GET',
    path: '/.well-known/jwks.json',
    auth: 'none',
    tags,
    summary: 'Public signing keys (device JWTs; dev identity provider)',
    description:
      'The JSON Web Key Set that verifies device JWTs (every signing key not yet retired, so tokens signed before a rotation still verify) and, while the built-in development identity provider is active, its owner-token key. Relying parties cache it and refetch on an unknown `kid`.',
    responses: { 200: JwksResponse },
    errors: [],
  }),
  devLogin: defineRoute({
    method: 'POST',
    path: '/api/v1/dev/login',
    auth: 'none',
    tags,
    summary: 'Development sign-in: an owner JWT for an e-mail address (built-in identity provider only, loopback servers only)',
    description:
      'Development sign-in: answers an owner JWT (12 hours) of the built-in identity provider for the lowercased e-mail address, so the web app signs in without an OIDC provider; anyone who reaches it can sign in as anyone, hence the checks. 404 when an OIDC provider is configured (`OIDC_*`); 403 unless the server listens on a loopback address (`HOST`) and the request\'s `Host` and `Origin` are loopback names or the host of `PUBLIC_URL` (a page that rebinds its own name to 127.0.0.1 is refused).',
    body: DevLoginRequest,
    responses: { 200: DevLoginResponse },
    errors: [400, 403, 404, 429],
  }),
  authConfig: defineRoute({
    method: 'GET',
    path: '/api/v1/auth/config',
    auth: 'none',
    tags,
    summary: "How owners sign in: the development provider or the OIDC provider's public client (the web app reads it)",
    description:
      'Tells a client how owners sign in: `mode: "dev"` with `dev_login` true when `POST /api/v1/dev/login` is available (built-in provider on a loopback server), or `mode: "oidc"` with the provider\'s issuer, public client id and scope for an authorization-code flow with PKCE.',
    responses: { 200: AuthConfig },
    errors: [],
  }),
  legalTerms: defineRoute({
    method: 'GET',
    path: '/api/v1/legal/terms',
    auth: 'none',
    tags,
    summary: 'Current terms of service',
    description:
      'The current terms of service: version, link (when published) and a one-line summary of the zero-knowledge guarantee (the service stores only client-side encrypted ciphertext).',
    responses: { 200: LegalTermsResponse },
    errors: [],
  }),
  billingPlans: defineRoute({
    method: 'GET',
    path: '/api/v1/billing/plans',
    auth: 'none',
    tags,
    summary: 'Available plans',
    description: 'The plans offered, with their monthly price in US cents (null: on request) and limits on agents and messages per month (null: unlimited).',
    responses: { 200: BillingPlansResponse },
    errors: [],
  }),
  capabilities: defineRoute({
    method: 'GET',
    path: '/api/v1/capabilities',
    auth: 'none',
    tags,
    summary: 'Platform capabilities',
    description:
      'What this deployment offers: version, encryption suites, the WebSocket path with its ping interval and dead timeout, the feature list, the OTLP telemetry endpoint with its encodings, and the trust windows, tiers and dimension count. Clients read it to discover paths instead of hard-coding them.',
    responses: { 200: CapabilitiesResponse },
    errors: [],
  }),
};
