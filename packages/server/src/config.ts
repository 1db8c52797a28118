/**
 * One typed configuration object, parsed from the environment once (design §3) and passed down.
 * Nothing in the service reads `process.env` at import time; `loadConfig(env)` is the only reader.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SECRETS_KEY_BYTES, decodeSecretsKey } from './lib/secret-box.js';
import { normalizeHubAddress } from './lib/hub-address.js';
import { parseWitnessVkey } from './lib/cosignature.js';

/** Rate limits (contract §8, design §8.12). `max` requests per `windowMs` milliseconds. */
export interface RateLimitConfig {
  /** false when `RATE_LIMITS=off` (benchmarks and load tests only). */
  enabled: boolean;
  /** `POST /enroll`: per IP. contract §8: 5 per 10 minutes. */
  enrollPer10Min: number;
  /** `GET /devices/{id}/status`: per device. contract §8: 1 per 5 seconds. */
  deviceStatusPer5s: number;
  /** WebSocket messaging per device. contract §8: 60 per minute. */
  wsMessagesPerMin: number;
  /** Every other authenticated route, per principal. design §8.12: 600 per minute. */
  defaultPerMin: number;
  /** Unauthenticated routes without a contract limit, per IP. */
  publicPerMin: number;
  /** `GET /verify/{address}` and `POST /verify/credential`, per minute. contract §8: 30 public (per IP), 300 with an API key (per key). */
  verifyPublicPerMin: number;
  verifyApiKeyPerMin: number;
  /** `GET /hub/{address}/did` (and the resolver routes), per minute. contract §8: 60 public, 600 with an API key. */
  didPublicPerMin: number;
  didApiKeyPerMin: number;
  /** `POST /grants/validate`, per minute: 30 public (per IP), 300 with an API key (per key), like verify (design §8.7). */
  grantValidatePublicPerMin: number;
  grantValidateApiKeyPerMin: number;
  /** Skill policy checks per agent and skill per minute: the pipeline's `rate` stage (`SKILL_CHECKS_PER_MIN`, default 60; design §8.6). */
  skillChecksPerMin: number;
  /** `POST /trust-scores/recompute` per tenant per minute (`RATE_LIMIT_TRUST_RECOMPUTE_PER_MIN`, default 2; docs/decisions.md "Trust score routes"). */
  trustRecomputePerMin: number;
}

/** Limits of design §8.12 (sizes in bytes). */
export interface LimitsConfig {
  maxCiphertextBytes: number;
  /** Largest attachment upload (design §8.12: 25 MiB). */
  maxAttachmentBytes: number;
  listDefault: number;
  listMax: number;
}

export interface OidcConfig {
  issuer: string;
  audience: string | undefined;
  jwksUrl: string;
  /** The owners' web app's public client id (`OIDC_CLIENT_ID`, default the audience). */
  clientId: string | undefined;
  /** Scopes the web app asks for (`OIDC_SCOPE`, default `openid email profile`). */
  scope: string;
}

/** S3-compatible blob storage (design §3); used instead of the filesystem when `S3_BUCKET` is set. */
export interface S3Config {
  bucket: string;
  /** Custom endpoint (MinIO, s3rver…); when set, path-style addressing is used. */
  endpoint: string | undefined;
  region: string;
  /** Static credentials; when unset the AWS SDK's default provider chain applies. */
  accessKeyId: string | undefined;
  secretAccessKey: string | undefined;
}

export interface Config {
  host: string;
  port: number;
  /** Base URL used in links and DID service endpoints; no trailing slash. */
  publicUrl: string;
  dataDir: string;
  /** The owners' web app's built files (`DASHBOARD_DIR`, default `packages/dashboard/dist`), served at `/` when it holds an `index.html` (design §8.30). */
  dashboardDir: string;
  /** PostgreSQL URL; undefined selects embedded PGlite under `dataDir/pglite`. */
  databaseUrl: string | undefined;
  /** Most connections of the PostgreSQL pool (`DATABASE_POOL_MAX`, default 10, at least 1); unused with PGlite. */
  databasePoolMax: number;
  /** In-memory PGlite (tests only): set by code, never by the environment. */
  pgliteInMemory?: boolean;
  redisUrl: string | undefined;
  /** S3 blob storage; undefined selects the filesystem store under `dataDir/blobs`. */
  s3: S3Config | undefined;
  /** External identity provider; undefined enables the built-in development provider. */
  oidc: OidcConfig | undefined;
  oidcTenantClaim: string;
  logLevel: string;
  version: string;
  rateLimits: RateLimitConfig;
  limits: LimitsConfig;
  /** WebSocket keepalive (contract §6.1): ping interval and dead timeout, in milliseconds. */
  ws: { pingIntervalMs: number; deadTimeoutMs: number };
  /** Device JWT lifetime in seconds (design §5: 24 h); also the longest a device JWT is accepted for. */
  deviceTokenTtlSec: number;
  /**
   * Longest owner-JWT lifetime accepted, in seconds (`OWNER_TOKEN_MAX_LIFETIME_SEC`, default 24 h,
   * at least 60): `exp - iat` and `exp - now` above it answer 401, as does a token without `exp`.
   * The development provider mints 12 h tokens.
   */
  ownerTokenMaxLifetimeSec: number;
  /** Invite lifetime in milliseconds (contract §2.2: 10 minutes). */
  inviteTtlMs: number;
  /** How long a held message awaits a decision before it expires, in milliseconds (design §8.3: 72 h). */
  heldMessageTtlMs: number;
  /** `GET /metrics` bearer token (`METRICS_TOKEN`); without it the route answers 404. */
  metricsToken: string | undefined;
  /** Serve `/metrics` without auth on this loopback port (`METRICS_PORT`; main.ts). */
  metricsPort: number | undefined;
  /**
   * Which proxies to believe about the client's address (`TRUST_PROXY`, Fastify's `trustProxy`):
   * unset or `false` (default) uses the TCP peer, so behind a load balancer every client has the
   * balancer's address and shares its per-IP rate limits; `true` believes every
   * `X-Forwarded-For` hop (only when nothing but the balancer can reach the instances); otherwise a
   * comma-separated list of the balancers' addresses or CIDRs (e.g. `10.0.0.0/8`), the safer form.
   * Set it behind a load balancer that sends `X-Forwarded-For` (docs/operations.md "Several instances").
   */
  trustProxy: boolean | string;
  /** How often the decision deadline job looks for lapsed decisions, in milliseconds (`DECISION_DEADLINE_INTERVAL_MS`, default 10000, at least 100; design §8.19). */
  decisionDeadlineIntervalMs: number;
  /** Trust recompute period (contract §3.9, §8: 6 h by default; `TRUST_RECOMPUTE_INTERVAL_HOURS`, fractions allowed). */
  trustRecomputeIntervalMs: number;
  /**
   * Days of raw telemetry spans kept (`TELEMETRY_RETENTION_DAYS`, default 90, at least 1; contract
   * §4.14): spans that started before the UTC day this many days before today are deleted by the
   * pruning job once their day is rolled up for the trust engine (the daily roll-ups are kept), so
   * `GET …/telemetry`, its summary and the dashboard activity no longer show them.
   */
  telemetryRetentionDays: number;
  /** Period of the cluster-wide span pruning job (`TELEMETRY_PRUNE_INTERVAL_HOURS`, default 24, fractions allowed, at least 1 minute). */
  telemetryPruneIntervalMs: number;
  /** Period of the cluster-wide spend alert sweep (`SPEND_ALERT_INTERVAL_MINUTES`, default 5, fractions allowed, at least 1 second; jobs/spend-alerts.ts). */
  spendAlertIntervalMs: number;
  /**
   * Period of the cluster-wide audit checkpoint job (`AUDIT_CHECKPOINT_INTERVAL_MINUTES`, default 60,
   * fractions allowed, at least 1 second; design §8.33): it signs a checkpoint for every tenant whose
   * audit log grew since its last one. Owners get one on demand too (`GET /audit/checkpoint`).
   */
  auditCheckpointIntervalMs: number;
  /** How often each instance checks whether a cluster-wide scheduled job is due (`JOB_POLL_INTERVAL_MS`, default 60 s). */
  jobPollIntervalMs: number;
  /**
   * Witnesses the platform sends the key directory's checkpoints to (design §8.39; C2SP
   * tlog-witness): `KEY_DIRECTORY_WITNESSES`, entries `<add-checkpoint URL prefix> <witness vkey>`
   * separated by newlines or commas; default none. The URL has no trailing slash.
   */
  keyDirectoryWitnesses: { url: string; vkey: string }[];
  /** Period of the cluster-wide checkpoint publication to those witnesses (`KEY_DIRECTORY_WITNESS_INTERVAL_SECONDS`, default 60, at least 1). */
  keyDirectoryWitnessIntervalMs: number;
  /** Skill Permission Token lifetime (design §8.7: 15 min by default; `SPT_TTL_SECONDS`). */
  sptTtlSec: number;
  /** Webhook delivery (design §8.11); times in milliseconds. */
  webhooks: WebhookConfig;
  /** Push delivery (design §8.36): the platforms' settings; the worker's timing is `webhooks`'. */
  push: PushConfig;
  /**
   * Refuse every registration (`client_key_register`, `POST /devices/register`) and activation
   * without a fresh `key_binding` (`KEY_BINDING_REQUIRED`, default false: the legacy bodies stay
   * accepted unless the identity key is already held by another device; docs/decisions.md "Key bindings").
   */
  keyBindingRequired: boolean;
  /**
   * Key sealing secrets stored in the database (webhook signing secrets), base64 of 32 bytes
   * (`SECRETS_KEY`); undefined uses a key generated once in `DATA_DIR/secrets-key`. Instances that
   * share a PostgreSQL database must all be given the same value.
   */
  secretsKey: string | undefined;
  /**
   * Previous secrets keys during a rotation (`SECRETS_KEY_PREVIOUS`: comma-separated base64 keys of
   * 32 bytes, blanks trimmed; default none). They open sealed values but never seal; values they
   * opened are re-sealed under `SECRETS_KEY` by `npm run cli -- reseal-secrets` (docs/operations.md
   * "Key rotation"). Requires `SECRETS_KEY`.
   */
  secretsKeyPrevious: string[];
  /** Verifiable credentials issued by the service (design §8.16). */
  credentials: CredentialsConfig;
  /**
   * Identity-provider subjects of the platform operators (design §8.25; `PLATFORM_OPERATOR_SUBS`,
   * comma-separated, blanks trimmed, duplicates dropped; default none). An owner token whose `sub`
   * is listed makes its owner an operator (`OwnerPrincipal.operator`).
   */
  platformOperatorSubs: string[];
  /** Marketplace money and processor (design §8.24, §8.26). */
  marketplace: MarketplaceConfig;
}

/**
 * Marketplace configuration (design §8.24, §8.26). With `stripe` set the Stripe Connect processor
 * is used; otherwise the embedded local processor, whose events are signed with `localWebhookSecret`.
 */
export interface MarketplaceConfig {
  /** Platform fee in basis points (`MARKETPLACE_FEE_BPS`, default 2000 = 20 %, 0..10000). */
  feeBps: number;
  /** Minimum payout in cents (contract §8: 10.00 USD; `MARKETPLACE_MIN_PAYOUT_CENTS`). */
  minimumPayoutCents: number;
  /** Period of the cluster-wide payout run (`MARKETPLACE_PAYOUT_INTERVAL_HOURS`, default 168 = weekly). */
  payoutIntervalMs: number;
  /** How often each instance ends due rentals and checks rented agents' trust (`MARKETPLACE_RENTAL_POLL_MS`, default 60 s). */
  rentalPollMs: number;
  /**
   * `STRIPE_SECRET_KEY` + `STRIPE_WEBHOOK_SECRET` (both needed); `STRIPE_PUBLISHABLE_KEY` (`pk_…`,
   * optional) lets the web app make payment methods with Stripe.js; `STRIPE_API_HOST`/`STRIPE_API_PORT`/`STRIPE_API_PROTOCOL`
   * point it at another endpoint (tests).
   */
  stripe: { secretKey: string; webhookSecret: string; publishableKey?: string; host?: string; port?: number; protocol?: 'http' | 'https' } | undefined;
  /** Signing secret of the local processor's events (`LOCAL_PROCESSOR_WEBHOOK_SECRET`, `whsec_…`; default: derived per process). */
  localWebhookSecret: string | undefined;
  /** Delay of the local processor's asynchronous confirmations, ms (`LOCAL_PROCESSOR_DELAY_MS`, default 200). */
  localDelayMs: number;
}

function stripeConfig(env: NodeJS.ProcessEnv): MarketplaceConfig['stripe'] {
  const secretKey = env.STRIPE_SECRET_KEY?.trim();
  if (!secretKey) return undefined;
  const webhookSecret = env.STRIPE_WEBHOOK_SECRET?.trim();
  if (!webhookSecret) throw new Error('STRIPE_SECRET_KEY is set but STRIPE_WEBHOOK_SECRET is not: Stripe events could not be verified');
  const protocol = env.STRIPE_API_PROTOCOL === 'http' ? 'http' : env.STRIPE_API_PROTOCOL === 'https' ? 'https' : undefined;
  const publishableKey = env.STRIPE_PUBLISHABLE_KEY?.trim();
  if (publishableKey && !/^pk_(test|live)_[A-Za-z0-9]+$/.test(publishableKey)) throw new Error('STRIPE_PUBLISHABLE_KEY must be a Stripe publishable key (pk_test_… or pk_live_…)');
  return {
    secretKey,
    webhookSecret,
    ...(publishableKey ? { publishableKey } : {}),
    ...(env.STRIPE_API_HOST ? { host: env.STRIPE_API_HOST } : {}),
    ...(env.STRIPE_API_PORT ? { port: Number(env.STRIPE_API_PORT) } : {}),
    ...(protocol ? { protocol } : {}),
  };
}

/** The platform issuer of TrustTierCredentials (design §8.16). */
export interface CredentialsConfig {
  /**
   * Hub address of the service's own issuer DID `did:hub:<address>` (`PLATFORM_HUB_ADDRESS`,
   * default `parley`, stored lowercase); reserved: no hub identity can register it.
   */
  platformHubAddress: string;
  /** Lifetime of an issued TrustTierCredential in days (`CREDENTIAL_TTL_DAYS`, default 30, at least 1). */
  ttlDays: number;
}

/** Webhook delivery worker settings (design §8.11). */
export interface WebhookConfig {
  /** How often the worker looks for due deliveries (`WEBHOOK_POLL_MS`, default 1000, at least 1). */
  pollMs: number;
  /** Per-request timeout (`WEBHOOK_TIMEOUT_MS`, default 5000). */
  timeoutMs: number;
  /** First retry delay, doubled per failed attempt (`WEBHOOK_RETRY_BASE_MS`, default 5000). */
  retryBaseMs: number;
  /** Attempts before a delivery is `failed` (`WEBHOOK_MAX_ATTEMPTS`, default 8, at least 1). */
  maxAttempts: number;
  /**
   * Deliver to loopback, private (RFC 1918, ULA), link-local, CGNAT and other non-public addresses
   * (`WEBHOOK_ALLOW_PRIVATE`, default false: such targets are refused, SSRF guard).
   */
  allowPrivate: boolean;
  /** Accept `http:` webhook URLs (`WEBHOOK_ALLOW_HTTP`, default false: `https:` only). */
  allowHttp: boolean;
}

/**
 * Push delivery settings (design §8.36). Web Push is always on; APNs and FCM are on when their
 * settings are given (all of them: a partial set is a ConfigError).
 */
export interface PushConfig {
  /** The VAPID `sub` claim (RFC 8292 §2.1; `VAPID_SUBJECT`, default `mailto:operator@<PUBLIC_URL host>`). */
  vapidSubject: string;
  /** APNs token authentication (`APNS_KEY_FILE` .p8, `APNS_KEY_ID`, `APNS_TEAM_ID`, `APNS_TOPIC` the app's bundle id; `APNS_ENDPOINT` another host, e.g. the sandbox or a test double). */
  apns: { keyFile: string; keyId: string; teamId: string; topic: string; endpoint: string | undefined } | undefined;
  /** FCM HTTP v1 with a service account (`FCM_SERVICE_ACCOUNT_FILE`; `FCM_ENDPOINT` another host for tests). */
  fcm: { serviceAccountFile: string; endpoint: string | undefined } | undefined;
}

/** Thrown for an environment variable that cannot be parsed. */
export class ConfigError extends Error {}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new ConfigError(`${name} must be a non-negative integer, got "${raw}"`);
  return n;
}

function bool(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = (env[name] ?? '').trim().toLowerCase();
  if (raw === '') return fallback;
  if (['true', '1', 'yes', 'on'].includes(raw)) return true;
  if (['false', '0', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${env[name]}"`);
}

/** `SECRETS_KEY` when set, checked to be base64 of 32 bytes (never echoed in the error). */
function secretsKey(env: NodeJS.ProcessEnv): string | undefined {
  const raw = env.SECRETS_KEY?.trim();
  if (!raw) return undefined;
  try {
    decodeSecretsKey(raw);
  } catch {
    throw new ConfigError(`SECRETS_KEY must be base64 of ${SECRETS_KEY_BYTES} bytes (e.g. \`openssl rand -base64 32\`)`);
  }
  return raw;
}

/** `TRUST_PROXY`: false (unset), true, or a list of addresses / CIDRs (see {@link Config.trustProxy}). */
function trustProxy(env: NodeJS.ProcessEnv): boolean | string {
  const raw = (env.TRUST_PROXY ?? '').trim();
  if (raw === '' || raw.toLowerCase() === 'false') return false;
  if (raw.toLowerCase() === 'true') return true;
  const list = raw.split(',').map((p) => p.trim()).filter((p) => p !== '');
  if (list.some((p) => !/^[0-9a-fA-F.:]+(\/\d{1,3})?$/.test(p))) throw new ConfigError(`TRUST_PROXY must be true, false or comma-separated addresses/CIDRs, got "${raw}"`);
  return list.join(',');
}

/** `SECRETS_KEY_PREVIOUS`, each key checked to be base64 of 32 bytes (never echoed in the error); requires `SECRETS_KEY`. */
function secretsKeyPrevious(env: NodeJS.ProcessEnv): string[] {
  const keys = (env.SECRETS_KEY_PREVIOUS ?? '').split(',').map((k) => k.trim()).filter((k) => k !== '');
  keys.forEach((key, i) => {
    try {
      decodeSecretsKey(key);
    } catch {
      throw new ConfigError(`SECRETS_KEY_PREVIOUS key ${i + 1} must be base64 of ${SECRETS_KEY_BYTES} bytes`);
    }
  });
  if (keys.length > 0 && !env.SECRETS_KEY?.trim()) throw new ConfigError('SECRETS_KEY_PREVIOUS needs SECRETS_KEY (the new key) to be set');
  return keys;
}

/** `PLATFORM_HUB_ADDRESS` (default `parley`), checked against the hub address rule (design §8.13). */
function platformHubAddress(env: NodeJS.ProcessEnv): string {
  const raw = env.PLATFORM_HUB_ADDRESS?.trim() || 'parley';
  const address = normalizeHubAddress(raw);
  if (!address) throw new ConfigError(`PLATFORM_HUB_ADDRESS must be a hub address (3-32 characters of a-z, 0-9 and "-"), got "${raw}"`);
  return address;
}

/** `PLATFORM_OPERATOR_SUBS`: comma-separated subjects, trimmed, empty entries and duplicates dropped (design §8.25). */
function operatorSubs(env: NodeJS.ProcessEnv): string[] {
  return [...new Set((env.PLATFORM_OPERATOR_SUBS ?? '').split(',').map((s) => s.trim()).filter((s) => s !== ''))];
}

/**
 * `KEY_DIRECTORY_WITNESSES` ({@link Config.keyDirectoryWitnesses}): each entry an `http:` or
 * `https:` URL and a C2SP cosignature/v1 vkey separated by blanks.
 * @throws ConfigError for a malformed entry or a vkey listed twice
 */
function keyDirectoryWitnesses(env: NodeJS.ProcessEnv): Config['keyDirectoryWitnesses'] {
  const entries = (env.KEY_DIRECTORY_WITNESSES ?? '').split(/[\n,]/).map((e) => e.trim()).filter((e) => e !== '');
  const out: Config['keyDirectoryWitnesses'] = [];
  entries.forEach((entry, i) => {
    const [url = '', vkey, ...rest] = entry.split(/\s+/);
    const bad = (why: string) => new ConfigError(`KEY_DIRECTORY_WITNESSES entry ${i + 1} ${why}`);
    if (!vkey || rest.length > 0) throw bad('must be "<add-checkpoint URL prefix> <witness vkey>"');
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw bad('does not start with a URL');
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw bad('needs an http: or https: URL');
    if (!parseWitnessVkey(vkey)) throw bad('has no C2SP cosignature/v1 witness vkey (<name>+<8 hex key id>+<base64 of 0x04 and an Ed25519 key>)');
    if (out.some((w) => w.vkey === vkey)) throw bad('repeats a witness vkey');
    out.push({ url: url.replace(/\/+$/, ''), vkey });
  });
  return out;
}

const VERSION = '0.1.0';

/** `packages/dashboard/dist`, from this file in `src/` or `dist/` of the server package. */
const DEFAULT_DASHBOARD_DIR = fileURLToPath(new URL('../../dashboard/dist', import.meta.url));

/** The push settings of `env` ({@link PushConfig}). @throws ConfigError when only some `APNS_*` variables are set. */
function pushConfig(env: NodeJS.ProcessEnv, publicUrl: string): PushConfig {
  const apnsVars = ['APNS_KEY_FILE', 'APNS_KEY_ID', 'APNS_TEAM_ID', 'APNS_TOPIC'] as const;
  const given = apnsVars.filter((n) => env[n]?.trim());
  if (given.length > 0 && given.length < apnsVars.length) {
    throw new ConfigError(`APNs needs ${apnsVars.join(', ')}; missing: ${apnsVars.filter((n) => !given.includes(n)).join(', ')}`);
  }
  const apns =
    given.length === apnsVars.length
      ? { keyFile: env.APNS_KEY_FILE!.trim(), keyId: env.APNS_KEY_ID!.trim(), teamId: env.APNS_TEAM_ID!.trim(), topic: env.APNS_TOPIC!.trim(), endpoint: env.APNS_ENDPOINT?.trim() || undefined }
      : undefined;
  const fcmFile = env.FCM_SERVICE_ACCOUNT_FILE?.trim();
  return {
    vapidSubject: env.VAPID_SUBJECT?.trim() || `mailto:operator@${new URL(publicUrl).hostname}`,
    apns,
    fcm: fcmFile ? { serviceAccountFile: fcmFile, endpoint: env.FCM_ENDPOINT?.trim() || undefined } : undefined,
  };
}

/**
 * Parse the environment into a Config. Every variable is optional (design §3).
 * @throws ConfigError on a malformed value, or when only some `OIDC_*` variables are set.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const host = env.HOST || '127.0.0.1';
  const port = int(env, 'PORT', 8080);
  const publicUrl = (env.PUBLIC_URL || `http://${host}:${port}`).replace(/\/+$/, '');
  const issuer = env.OIDC_ISSUER;
  const jwksUrl = env.OIDC_JWKS_URL;
  let oidc: OidcConfig | undefined;
  if (issuer || jwksUrl || env.OIDC_AUDIENCE) {
    if (!issuer) throw new ConfigError('OIDC_ISSUER is required when any OIDC_* variable is set');
    oidc = {
      issuer,
      audience: env.OIDC_AUDIENCE || undefined,
      jwksUrl: jwksUrl || `${issuer.replace(/\/+$/, '')}/.well-known/jwks.json`,
      clientId: env.OIDC_CLIENT_ID || env.OIDC_AUDIENCE || undefined,
      scope: env.OIDC_SCOPE || 'openid email profile',
    };
  }
  return {
    host,
    port,
    publicUrl,
    dataDir: path.resolve(env.DATA_DIR || './data'),
    dashboardDir: path.resolve(env.DASHBOARD_DIR || DEFAULT_DASHBOARD_DIR),
    databaseUrl: env.DATABASE_URL || undefined,
    databasePoolMax: Math.max(1, int(env, 'DATABASE_POOL_MAX', 10)),
    redisUrl: env.REDIS_URL || undefined,
    s3: env.S3_BUCKET
      ? {
          bucket: env.S3_BUCKET,
          endpoint: env.S3_ENDPOINT || undefined,
          region: env.S3_REGION || 'us-east-1',
          accessKeyId: env.S3_ACCESS_KEY_ID || undefined,
          secretAccessKey: env.S3_SECRET_ACCESS_KEY || undefined,
        }
      : undefined,
    oidc,
    oidcTenantClaim: env.OIDC_TENANT_CLAIM || 'tenant_id',
    logLevel: env.LOG_LEVEL || 'info',
    version: VERSION,
    rateLimits: {
      enabled: (env.RATE_LIMITS || '').toLowerCase() !== 'off',
      enrollPer10Min: int(env, 'RATE_LIMIT_ENROLL_PER_10MIN', 5),
      deviceStatusPer5s: int(env, 'RATE_LIMIT_DEVICE_STATUS_PER_5S', 1),
      wsMessagesPerMin: int(env, 'RATE_LIMIT_WS_MESSAGES_PER_MIN', 60),
      defaultPerMin: int(env, 'RATE_LIMIT_DEFAULT_PER_MIN', 600),
      publicPerMin: int(env, 'RATE_LIMIT_PUBLIC_PER_MIN', 600),
      verifyPublicPerMin: int(env, 'RATE_LIMIT_VERIFY_PUBLIC_PER_MIN', 30),
      verifyApiKeyPerMin: int(env, 'RATE_LIMIT_VERIFY_API_KEY_PER_MIN', 300),
      didPublicPerMin: int(env, 'RATE_LIMIT_DID_PUBLIC_PER_MIN', 60),
      didApiKeyPerMin: int(env, 'RATE_LIMIT_DID_API_KEY_PER_MIN', 600),
      grantValidatePublicPerMin: int(env, 'RATE_LIMIT_GRANT_VALIDATE_PUBLIC_PER_MIN', 30),
      grantValidateApiKeyPerMin: int(env, 'RATE_LIMIT_GRANT_VALIDATE_API_KEY_PER_MIN', 300),
      skillChecksPerMin: Math.max(1, int(env, 'SKILL_CHECKS_PER_MIN', 60)),
      trustRecomputePerMin: Math.max(1, int(env, 'RATE_LIMIT_TRUST_RECOMPUTE_PER_MIN', 2)),
    },
    limits: {
      maxCiphertextBytes: int(env, 'LIMIT_MESSAGE_BYTES', 256 * 1024),
      maxAttachmentBytes: int(env, 'LIMIT_ATTACHMENT_BYTES', 25 * 1024 * 1024),
      listDefault: int(env, 'LIMIT_LIST_DEFAULT', 50),
      listMax: int(env, 'LIMIT_LIST_MAX', 200),
    },
    ws: {
      pingIntervalMs: int(env, 'WS_PING_INTERVAL_MS', 30_000),
      deadTimeoutMs: int(env, 'WS_DEAD_TIMEOUT_MS', 90_000),
    },
    deviceTokenTtlSec: int(env, 'DEVICE_TOKEN_TTL_SEC', 24 * 3600),
    ownerTokenMaxLifetimeSec: Math.max(60, int(env, 'OWNER_TOKEN_MAX_LIFETIME_SEC', 24 * 3600)),
    inviteTtlMs: 10 * 60 * 1000,
    heldMessageTtlMs: int(env, 'HELD_MESSAGE_TTL_HOURS', 72) * 3600 * 1000,
    metricsToken: env.METRICS_TOKEN || undefined,
    metricsPort: env.METRICS_PORT ? int(env, 'METRICS_PORT', 0) : undefined,
    trustProxy: trustProxy(env),
    decisionDeadlineIntervalMs: Math.max(100, int(env, 'DECISION_DEADLINE_INTERVAL_MS', 10_000)),
    trustRecomputeIntervalMs: Math.max(60_000, Math.round(Number(env.TRUST_RECOMPUTE_INTERVAL_HOURS ?? 6) * 3_600_000) || 6 * 3_600_000),
    telemetryRetentionDays: Math.max(1, int(env, 'TELEMETRY_RETENTION_DAYS', 90)),
    telemetryPruneIntervalMs: Math.max(60_000, Math.round(Number(env.TELEMETRY_PRUNE_INTERVAL_HOURS ?? 24) * 3_600_000) || 24 * 3_600_000),
    spendAlertIntervalMs: Math.max(1000, Math.round(Number(env.SPEND_ALERT_INTERVAL_MINUTES ?? 5) * 60_000) || 5 * 60_000),
    auditCheckpointIntervalMs: Math.max(1_000, Math.round(Number(env.AUDIT_CHECKPOINT_INTERVAL_MINUTES ?? 60) * 60_000) || 3_600_000),
    jobPollIntervalMs: Math.max(100, int(env, 'JOB_POLL_INTERVAL_MS', 60_000)),
    keyDirectoryWitnesses: keyDirectoryWitnesses(env),
    keyDirectoryWitnessIntervalMs: Math.max(1, int(env, 'KEY_DIRECTORY_WITNESS_INTERVAL_SECONDS', 60)) * 1000,
    sptTtlSec: Math.min(86_400, Math.max(60, int(env, 'SPT_TTL_SECONDS', 900))),
    webhooks: {
      pollMs: Math.max(1, int(env, 'WEBHOOK_POLL_MS', 1000)),
      timeoutMs: int(env, 'WEBHOOK_TIMEOUT_MS', 5000),
      retryBaseMs: int(env, 'WEBHOOK_RETRY_BASE_MS', 5000),
      maxAttempts: Math.max(1, int(env, 'WEBHOOK_MAX_ATTEMPTS', 8)),
      allowPrivate: bool(env, 'WEBHOOK_ALLOW_PRIVATE', false),
      allowHttp: bool(env, 'WEBHOOK_ALLOW_HTTP', false),
    },
    push: pushConfig(env, publicUrl),
    keyBindingRequired: bool(env, 'KEY_BINDING_REQUIRED', false),
    secretsKey: secretsKey(env),
    secretsKeyPrevious: secretsKeyPrevious(env),
    credentials: {
      platformHubAddress: platformHubAddress(env),
      ttlDays: Math.max(1, int(env, 'CREDENTIAL_TTL_DAYS', 30)),
    },
    platformOperatorSubs: operatorSubs(env),
    marketplace: {
      feeBps: Math.min(10_000, Math.max(0, int(env, 'MARKETPLACE_FEE_BPS', 2000))),
      minimumPayoutCents: Math.max(1, int(env, 'MARKETPLACE_MIN_PAYOUT_CENTS', 1000)),
      payoutIntervalMs: Math.max(60_000, Math.round(Number(env.MARKETPLACE_PAYOUT_INTERVAL_HOURS ?? 168) * 3_600_000) || 168 * 3_600_000),
      rentalPollMs: Math.max(100, int(env, 'MARKETPLACE_RENTAL_POLL_MS', 60_000)),
      stripe: stripeConfig(env),
      localWebhookSecret: env.LOCAL_PROCESSOR_WEBHOOK_SECRET?.trim() || undefined,
      localDelayMs: Math.max(0, int(env, 'LOCAL_PROCESSOR_DELAY_MS', 200)),
    },
  };
}

/** Key names whose string values are secrets (never logged). */
const SECRET_KEY = /secret|password|token|key|credential/i;

/**
 * `value` with the password of a URL in it masked: `postgres://user:***@host/db`, and a
 * `password=` query parameter (libpq connection URIs, PostgreSQL docs "Connection URIs") read
 * `password=***`. Other text is returned unchanged.
 */
export function maskUrlPassword(value: string): string {
  return value.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*:)[^@/]*@/i, '$1***@').replace(/([?&]password=)[^&]*/gi, '$1***');
}

/**
 * The effective configuration for the start-up log line: every value as
 * configured, except that secrets read `set` (string values under keys naming a secret, token,
 * password, key or credential) and passwords inside URLs (`postgres://user:***@host`) are masked.
 */
export function describeConfig(config: Config): Record<string, unknown> {
  const mask = (value: unknown, key: string): unknown => {
    if (typeof value === 'string') {
      if (SECRET_KEY.test(key)) return 'set';
      return maskUrlPassword(value);
    }
    if (Array.isArray(value)) return value.map((v) => mask(v, key));
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mask(v, k)]));
    return value;
  };
  return mask(config, '') as Record<string, unknown>;
}
