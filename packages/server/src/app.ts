/**
 * buildApp(config, overrides) -> a ready Fastify instance that never listens by itself
 * (design §1): tests use `inject` or `listen({port: 0})`, main.ts listens on HOST:PORT.
 *
 * Composition root: opens the database (PGlite or PostgreSQL), applies migrations, chooses the
 * event bus (in-process, or Redis when `REDIS_URL` is set), loads signing keys, wires services
 * into thin route modules, and registers the cross-cutting plugins in pipeline order:
 * error handler -> OpenAPI -> rate limit -> auth -> routes.
 */
import { registerRequestIds, requestId } from './http/request-id.js';
import { Metrics } from './lib/metrics.js';
import { opsRoutes, type Lifecycle } from './ops/routes.js';
import path from 'node:path';
import websocket from '@fastify/websocket';
import { registerHostCheck } from './http/host-check.js';
import { registerSecurityHeaders } from './http/security-headers.js';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type RouteOptions } from 'fastify';
import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { Authenticator } from './auth/authenticator.js';
import { DevIdentityProvider } from './auth/dev-idp.js';
import { DeviceTokenService } from './auth/device-tokens.js';
import { resealPlatformKeys } from './keys/index.js';
import { RenewalChallenges } from './auth/renewal-challenges.js';
import { OwnerTokenVerifier } from './auth/owner-tokens.js';
import type { Config } from './config.js';
import { openDatabase, type Database, type Tx } from './db/client.js';
import { openTenantWriter } from './db/tenant-writer.js';
import { runMigrations } from './db/migrate.js';
import { authPlugin } from './http/auth.js';
import { hasDashboard, registerDashboard } from './http/dashboard.js';
import { frameworkErrors, registerErrorHandling } from './http/errors.js';
import { registerOpenApi } from './http/openapi.js';
import { registerParamNormalization } from './http/params.js';
import { registerRateLimits } from './http/rate-limit.js';
import { AJV_OPTIONS, partAwareValidatorFactory } from './http/validation.js';
import { lazySerializerFactory } from './http/lazy-schemas.js';
import { registerWellFormedInput } from './http/well-formed.js';
import { scheduleDecisionDeadlines } from './jobs/decision-deadlines.js';
import { scheduleHeldExpiry } from './jobs/held-expiry.js';
import { scheduleInviteExpiry } from './jobs/invite-expiry.js';
import { scheduleTrustRecompute } from './jobs/trust-recompute.js';
import { scheduleTelemetryPrune } from './jobs/telemetry-prune.js';
import { TrustEngine } from './modules/trust/engine.js';
import { TrustDriftService } from './modules/trust/drift.js';
import { TrustQueryService } from './modules/trust/query.js';
import { TrustReportService } from './modules/trust/report.js';
import { trustRoutes } from './modules/trust/routes.js';
import { secretBoxOf, type SecretBox } from './lib/secret-box.js';
import { MessageService } from './modules/conversations/messages.js';
import { registerConversationFrames } from './modules/conversations/frames.js';
import { registerA2aFrames } from './modules/a2a/frames.js';
import { auditRoutes } from './modules/audit/routes.js';
import { AuditService } from './modules/audit/service.js';
import { AuditLogKeys } from './keys/index.js';
import { AuditTransparency } from './modules/audit/transparency.js';
import { scheduleAuditCheckpoints } from './jobs/audit-checkpoints.js';
import { decisionRoutes } from './modules/decisions/routes.js';
import { grantRoutes } from './modules/grants/routes.js';
import { SptKeys } from './keys/index.js';
import { GrantService } from './modules/grants/service.js';
import { SpendService } from './modules/spend/service.js';
import { spendRoutes } from './modules/spend/routes.js';
import { scheduleSpendAlerts } from './jobs/spend-alerts.js';
import { SptTokens } from './modules/grants/tokens.js';
import { DecisionService } from './modules/decisions/service.js';
import { shadowRoutes } from './modules/shadow/routes.js';
import { ShadowService } from './modules/shadow/service.js';
import { a2aRoutes } from './modules/a2a/routes.js';
import { A2aService } from './modules/a2a/service.js';
import { attachmentRoutes } from './modules/attachments/routes.js';
import { AttachmentService } from './modules/attachments/service.js';
import { conversationRoutes } from './modules/conversations/routes.js';
import { ConversationService } from './modules/conversations/service.js';
import { LastSeenTracker } from './modules/devices/last-seen.js';
import { deviceSocketAuthenticator } from './modules/devices/socket-auth.js';
import { deviceRoutes } from './modules/devices/routes.js';
import { keyBindingRoutes } from './modules/key-binding/routes.js';
import { KeyBindingService } from './modules/key-binding/service.js';
import { DeviceService, type DeviceHooks } from './modules/devices/service.js';
import { provisionAgent, provisionOwnerDevice } from './modules/conversations/provisioning.js';
import { deleteKeyPackagesOf } from './modules/mls/repo.js';
import { retireAgentDevice } from './modules/trust/retire.js';
import { devLoginRoutes } from './modules/dev-login/routes.js';
import { platformRoutes } from './modules/health/routes.js';
import { mlsRoutes } from './modules/mls/routes.js';
import { connectionRoutes } from './modules/connections/routes.js';
import { ConnectionService } from './modules/connections/service.js';
import { teamRoomRoutes } from './modules/team-rooms/routes.js';
import { TeamRoomService } from './modules/team-rooms/service.js';
import { workspaceRoutes } from './modules/workspaces/routes.js';
import { WorkspaceService } from './modules/workspaces/service.js';
import { apiKeyRoutes } from './modules/api-keys/routes.js';
import { apiKeySocketAuthenticator, registerApiKeyFrames } from './modules/api-keys/frames.js';
import { ApiKeyService } from './modules/api-keys/service.js';
import { federationRoutes } from './modules/federation/routes.js';
import { FederationService } from './modules/federation/service.js';
import { hubRoutes } from './modules/hub/routes.js';
import { HubCapabilityService } from './modules/hub/capabilities.js';
import { hubCapabilityRoutes } from './modules/hub/capabilities-routes.js';
import { HubCertifyService } from './modules/trust/certify.js';
import { hubCertifyRoutes } from './modules/trust/certify-routes.js';
import { OperatorTierService } from './modules/trust/operator-tier.js';
import { HubDirectoryService } from './modules/hub/directory.js';
import { hubProfileRoutes } from './modules/hub/profile-routes.js';
import { didResolverRoutes, hubDidRoutes } from './modules/hub/did-routes.js';
import { AgentCardService } from './modules/hub/agent-card.js';
import { HubDidService } from './modules/hub/did-service.js';
import { HubService } from './modules/hub/service.js';
import { trustContextUrl } from './modules/credentials/contexts.js';
import { createDocumentLoader } from './modules/credentials/document-loader.js';
import { PlatformIssuer } from './modules/credentials/issuer.js';
import { credentialRoutes, trustContextRoutes } from './modules/credentials/routes.js';
import { CredentialService } from './modules/credentials/service.js';
import { CredentialVerifier } from './modules/credentials/verifier.js';
import { verificationRoutes } from './modules/verification/routes.js';
import { VerificationService } from './modules/verification/service.js';
import { MlsService } from './modules/mls/service.js';
import { inviteRoutes } from './modules/invites/routes.js';
import { InviteService } from './modules/invites/service.js';
import { policyRoutes } from './modules/policies/routes.js';
import { PolicyService } from './modules/policies/service.js';
import { pushRoutes } from './modules/push/routes.js';
import { scanRuleRoutes } from './modules/scan-rules/routes.js';
import { ScanRuleService } from './modules/scan-rules/service.js';
import { telemetryRoutes } from './modules/telemetry/routes.js';
import { TelemetryService } from './modules/telemetry/service.js';
import { settingsRoutes } from './modules/settings/routes.js';
import { READ_RECEIPTS_DEFAULT, SettingsService, defaultSettings } from './modules/settings/service.js';
import { registerReceiptFrames } from './modules/receipts/frames.js';
import { ReceiptPublisher } from './modules/receipts/publisher.js';
import { RoomDeliveries } from './modules/receipts/room-deliveries.js';
import { receiptRoutes } from './modules/receipts/routes.js';
import { ReceiptService } from './modules/receipts/service.js';
import { telemetryExportRoutes } from './modules/telemetry-export/routes.js';
import { TelemetryExportService } from './modules/telemetry-export/service.js';
import { TelemetryExportWorker } from './modules/telemetry-export/worker.js';
import { registerRoomFrames } from './modules/rooms/frames.js';
import { roomRoutes } from './modules/rooms/routes.js';
import { RoomService } from './modules/rooms/service.js';
import { PushService } from './modules/push/service.js';
import { tenantRoutes } from './modules/tenants/routes.js';
import { WebhookOutbox } from './modules/webhooks/outbox.js';
import { WebhookWorker } from './modules/webhooks/worker.js';
import { MeasuredBus, InProcessBus, type EventBus } from './realtime/bus.js';
import { Gateway, socketErrorHandler } from './realtime/gateway.js';
import { MessageRate } from './lib/message-rate.js';
import { Notifier } from './realtime/notifier.js';
import { defaultInstanceId } from './jobs/cluster-schedule.js';
import { LocalPresence, RedisPresence } from './realtime/presence.js';
import { RedisBus } from './realtime/redis-bus.js';
import { connectOrRetry, watchRedis } from './realtime/redis-watchdog.js';
import { FilesystemBlobStore, S3BlobStore, type BlobStore } from './storage/blob-store.js';
import { createMarketplace, type Marketplace } from './modules/marketplace/index.js';
import { registerRentalFrames } from './modules/marketplace/frames.js';
import { marketplaceRoutes } from './modules/marketplace/routes.js';

export const API_PREFIX = '/api/v1';

/** Handles exposed for the CLI and tests. */
export interface Parley {
  config: Config;
  database: Database;
  devIdp: DevIdentityProvider | undefined;
  deviceTokens: DeviceTokenService;
  /** The secrets keyring (`SECRETS_KEY`, `SECRETS_KEY_PREVIOUS`) sealing webhook secrets and platform private keys. */
  secrets: SecretBox;
  gateway: Gateway;
  bus: EventBus;
  /** Policies and held messages (rooms and A2A consult it as their PolicyDecider and register releasers). */
  policies: PolicyService;
  /** Hub-address registry (A2A resolves responders by address). */
  hub: HubService;
  /** DID documents and resolution of hub identities (the credentials document loader resolves `did:hub` through it). */
  hubDid: HubDidService;
  /** Federation agreements (A2A checks the active agreement between two tenants). */
  federation: FederationService;
  /** Marketplace services (tests and the CLI run payouts and the trust monitor through them). */
  marketplace: Marketplace;
  /** This instance's Prometheus instruments (design §8.32). */
  metrics: Metrics;
  /** Set `draining` on SIGTERM: readiness fails while the instance shuts down. */
  lifecycle: Lifecycle;
}

declare module 'fastify' {
  interface FastifyInstance {
    parley: Parley;
  }
}

export interface AppOverrides {
  /** Use this database instead of opening one from config (closed with the app unless `keepDatabase`). */
  database?: Database;
  keepDatabase?: boolean;
  /** Use this bus instead of one chosen from config (tests of multi-instance delivery). */
  bus?: EventBus;
  /** Write logs here instead of stdout (tests of log redaction). */
  logStream?: NodeJS.WritableStream;
  /** Sees every route as it is registered (tests comparing the served routes with the contract). */
  onRoute?: (route: RouteOptions) => void;
  /** How long the cached signing keys (device tokens, SPTs, the audit log) are used before a reload (ms; default 60 s; tests make every use stale). */
  keyRefreshMs?: number;
  /** How often the invite and held-message expiry jobs run on this instance (ms; default 60 s). */
  expiryJobIntervalMs?: number;
}

/** Removes the `token` query parameter from URLs before they are logged (design §7). */
export function redactUrl(url: string): string {
  return url.replace(/([?&]token=)[^&]*/gi, '$1[REDACTED]');
}

export async function buildApp(config: Config, overrides: AppOverrides = {}): Promise<FastifyInstance> {
  const database =
    overrides.database ??
    (await openDatabase({
      databaseUrl: config.databaseUrl,
      poolSize: config.databasePoolMax,
      pgliteDir: path.join(config.dataDir, 'pglite'),
      inMemory: config.pgliteInMemory,
      // The logger exists once `app` is built below; connection errors arrive later.
      onConnectionError: (err) => app.log.warn({ err }, 'database connection error (the pool replaces the connection)'),
    }));
  await runMigrations(database);
  const { db } = database;
  const metrics = new Metrics(() => (database.raw.kind === 'pg' ? { total: database.raw.pool.totalCount, idle: database.raw.pool.idleCount, waiting: database.raw.pool.waitingCount } : undefined));
  const lifecycle: Lifecycle = { draining: false };
  // Redis faults (docs/operations.md "Faults"): no offline queue, so while Redis is unreachable a
  // command fails at once (rate limits fall back, readiness says degraded) instead of waiting; a
  // Redis that stops answering without closing the connection is dropped by the watchdog. A Redis
  // unreachable at start is the same outage: the instance starts degraded and joins when it answers.
  const redis = config.redisUrl ? new Redis(config.redisUrl, { maxRetriesPerRequest: 3, enableOfflineQueue: false, lazyConnect: true, commandTimeout: 1_000 }) : undefined;
  const unwatchRedis = redis ? watchRedis(redis) : undefined;
  const redisLogger: { current?: FastifyBaseLogger } = {}; // the app's, once it exists
  const redisLog = { warn: (o: object, m: string) => redisLogger.current?.warn(o, m) };
  let redisDown = false;
  redis?.on('error', (err: Error) => {
    if (!redisDown) redisLog.warn({ err: err.message }, 'redis connection failed; retrying (rate limits per instance meanwhile)');
    redisDown = true;
  });
  redis?.on('ready', () => (redisDown = false));
  const redisConnected = redis ? connectOrRetry(redis) : undefined;
  const bus = new MeasuredBus(overrides.bus ?? (config.redisUrl ? await RedisBus.connect(config.redisUrl, undefined, redisLog) : new InProcessBus()), (s) => metrics.busPublishSeconds.observe(s));
  await redisConnected;

  const secrets = secretBoxOf(config);
  // Platform private keys still in clear (written before they were sealed) are sealed now (keys/sealed-keys.ts).
  await resealPlatformKeys(db, secrets, { clearOnly: true });
  const deviceTokens = new DeviceTokenService(db, secrets, config.deviceTokenTtlSec, overrides.keyRefreshMs);
  await deviceTokens.init();
  const devIdp = config.oidc ? undefined : await DevIdentityProvider.load(config.dataDir);
  const ownerTokens = new OwnerTokenVerifier(config.oidc ? { oidc: config.oidc } : { dev: devIdp! }, config.ownerTokenMaxLifetimeSec);
  const notifier = new Notifier(bus);
  // The logger exists once `app` is built below; the closures only run later, at request time.
  const policyLog = { warn: (o: object, m: string) => app.log.warn(o, m), error: (o: object, m: string) => app.log.error(o, m) };
  // Tenant settings honoured by other services inside their own transactions (design §8.22).
  const settings = new SettingsService(db, defaultSettings(config.heldMessageTtlMs));
  const heldTtlMsOf = async (tx: Tx, tenantId: string) => (await settings.read(tx, tenantId)).held_message_ttl_hours * 3_600_000;
  const policies = new PolicyService({ db, notifier, heldTtlMs: config.heldMessageTtlMs, heldTtlMsOf, log: policyLog });
  // Fresh key bindings for registration and activation (docs/decisions.md "Key bindings").
  const keyBinding = new KeyBindingService(db, secrets, { required: config.keyBindingRequired });
  await keyBinding.init();
  // The platform issuer's address is reserved (no identity may register it) and resolves to its own DID document (design §8.16).
  const issuer = new PlatformIssuer(db, secrets, config.credentials.platformHubAddress, config.publicUrl);
  await issuer.init();
  const hub = new HubService(db, [issuer.address]);
  const apiKeys = new ApiKeyService(db, notifier, keyBinding, hub);
  const hubDid = new HubDidService({ db, publicUrl: config.publicUrl, platformDocument: (address) => issuer.platformDocument(address) });
  const trustContext = trustContextUrl(config.publicUrl);
  const ldLoader = () => createDocumentLoader({ trustContextUrl: trustContext, dids: hubDid });
  const federation = new FederationService(db);
  const authenticator = new Authenticator({ db, deviceTokens, ownerTokens, tenantClaim: config.oidcTenantClaim, resolveApiKey: (k) => apiKeys.resolve(k), operatorSubs: config.platformOperatorSubs });

  const app = Fastify({
    trustProxy: config.trustProxy,
    logger:
      config.logLevel === 'silent'
        ? false
        : {
            level: config.logLevel,
            ...(overrides.logStream ? { stream: overrides.logStream } : {}),
            redact: ['req.headers.authorization', 'req.headers["x-api-key"]', 'req.body.invite_token', 'res.body.token'],
            serializers: {
              req: (req: { method: string; url: string; ip?: string }) => ({ method: req.method, url: redactUrl(req.url), ip: req.ip }),
            },
          },
    frameworkErrors,
    genReqId: requestId,
    bodyLimit: Math.max(1024 * 1024, config.limits.maxCiphertextBytes * 2),
    ajv: { customOptions: AJV_OPTIONS },
    // Query strings and params are coerced to their schema types, JSON bodies never (http/validation.ts).
    // Both compiled on first use, not while the app gets ready (http/lazy-schemas.ts; cold start).
    schemaController: { compilersFactory: { buildValidator: partAwareValidatorFactory(), buildSerializer: lazySerializerFactory() } },
  }).withTypeProvider<TypeBoxTypeProvider>();
  if (overrides.onRoute) app.addHook('onRoute', overrides.onRoute);
  redisLogger.current = app.log;
  if (redisDown) app.log.warn('redis unreachable at start: serving degraded (rate limits and presence per instance, no cross-instance delivery) until it answers');
  registerRequestIds(app);
  registerSecurityHeaders(app);
  registerHostCheck(app, config.host, config.publicUrl);
  app.addHook('onResponse', async (req, reply) => {
    // A refused WebSocket upgrade (403, 401, 429, 404 …) has its answer written on the detached
    // upgrade socket, which nothing else ends: end it here, or it stays open and holds up shutdown.
    if (req.raw.headers.upgrade !== undefined && reply.statusCode !== 101) req.raw.socket.destroySoon();
    metrics.httpDuration.observe({ method: req.method, route: req.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) }, reply.elapsedTime / 1000);
  });

  const lastSeen = new LastSeenTracker(db, 30_000, (err) => app.log.warn({ err }, 'last_seen update failed'));
  // Pipelined connections of the hot-path writes, the message group commit and span ingest (PostgreSQL; PGlite: drizzle).
  const tenantWriter = openTenantWriter(database, { onConnectionError: (err) => app.log.warn({ err }, 'message writer connection error (reconnects on the next flush)') });
  // Delivery and read receipts (issue 20 part 1): published batched to the senders through the bus.
  const receiptPublisher = new ReceiptPublisher(notifier);
  const messages = new MessageService({
    db,
    writer: tenantWriter,
    notifier,
    onDelivered: (tenantId, rows) => receiptPublisher.messagesDelivered(tenantId, rows),
    maxCiphertextBytes: config.limits.maxCiphertextBytes,
    listDefault: config.limits.listDefault,
    listMax: config.limits.listMax,
    metrics,
  });
  // Per-minute limiters shared by every instance through Redis when configured; none with RATE_LIMITS=off.
  // While Redis is not ready each instance counts in memory instead (the insurance limiter).
  const perMinuteLimiter = (keyPrefix: string, points: number): RateLimiterAbstract | undefined =>
    !config.rateLimits.enabled
      ? undefined
      : redis
        ? new RateLimiterRedis({ storeClient: redis, keyPrefix, points, duration: 60, rejectIfRedisNotReady: true, insuranceLimiter: new RateLimiterMemory({ points, duration: 60 }) })
        : new RateLimiterMemory({ points, duration: 60 });
  // contract §8's messages per minute per device: one budget for socket frames and REST sends.
  const messageRate = new MessageRate(perMinuteLimiter('parley-ws', config.rateLimits.wsMessagesPerMin));
  // Presence shared by every instance through Redis when configured (realtime/presence.ts).
  const sharedPresence = redis ? new RedisPresence({ redis, instanceId: defaultInstanceId(), onError: (err) => app.log.debug({ err }, 'presence update failed') }) : undefined;
  const gateway = new Gateway({
    bus,
    authenticate: apiKeySocketAuthenticator(db, apiKeys, deviceSocketAuthenticator(db, authenticator)),
    presence: lastSeen,
    limiter: messageRate,
    pingIntervalMs: config.ws.pingIntervalMs,
    deadTimeoutMs: config.ws.deadTimeoutMs,
    log: app.log,
    metrics,
    ...(sharedPresence ? { directory: sharedPresence } : {}),
  });
  sharedPresence?.attach(gateway);
  const presence = sharedPresence ?? new LocalPresence(gateway);
  registerConversationFrames(gateway, messages, bus);
  registerApiKeyFrames(gateway, apiKeys);
  const challenges = new RenewalChallenges(db, secrets);
  await challenges.init();
  const tenantSettings = (tx: Tx, tenantId: string) => settings.read(tx, tenantId);
  const deviceHooks: DeviceHooks = { provisionAgent, provisionOwnerDevice, dropKeyPackages: deleteKeyPackagesOf, retireAgent: retireAgentDevice };
  const devices = new DeviceService({ db, notifier, deviceTokens, challenges, keyBinding, presence, secrets, webhookTargets: config.webhooks, tenantSettings, hooks: deviceHooks });
  const invites = new InviteService(db, config.inviteTtlMs);
  const conversations = new ConversationService(db, notifier, devices);
  const defaultSecurityLevel = async (tx: Tx, tenantId: string) => (await settings.read(tx, tenantId)).default_room_security_level;
  const roomDeliveries = new RoomDeliveries({ db, publisher: receiptPublisher });
  const rooms = new RoomService({
    db,
    notifier,
    policies,
    defaultSecurityLevel,
    maxCiphertextBytes: config.limits.maxCiphertextBytes,
    listDefault: config.limits.listDefault,
    listMax: config.limits.listMax,
    writer: tenantWriter,
    deliveries: roomDeliveries,
  });
  registerRoomFrames(gateway, rooms);
  const receipts = new ReceiptService({ db, writer: tenantWriter, messages, roomDeliveries, publisher: receiptPublisher, readReceiptsDefault: READ_RECEIPTS_DEFAULT });
  registerReceiptFrames(gateway, receipts, roomDeliveries);
  const a2a = new A2aService({ db, notifier, hubs: hub, federation, policies, maxCiphertextBytes: config.limits.maxCiphertextBytes, listDefault: config.limits.listDefault, listMax: config.limits.listMax });
  registerA2aFrames(gateway, a2a);
  const blobs: BlobStore = config.s3 ? new S3BlobStore(config.s3) : new FilesystemBlobStore(path.join(config.dataDir, 'blobs'));
  const attachments = new AttachmentService({ db, blobs, maxBytes: config.limits.maxAttachmentBytes, log: app.log });
  const stopExpiry = scheduleInviteExpiry(db, overrides.expiryJobIntervalMs ?? 60_000, (err) => app.log.warn({ err }, 'invite expiry job failed'), metrics);
  notifier.setWebhookSink(new WebhookOutbox(db, app.log));
  const webhookWorker = new WebhookWorker(db, config.webhooks, secrets, app.log, metrics);
  const exportWorker = new TelemetryExportWorker(db, config.webhooks, secrets, app.log);
  if (config.databaseUrl && !config.secretsKey) {
    app.log.warn('SECRETS_KEY is not set: webhook secrets are sealed with DATA_DIR/secrets-key; every instance sharing this database needs the same key');
  }
  const stopHeldExpiry = scheduleHeldExpiry(policies, overrides.expiryJobIntervalMs ?? 60_000, (err) => app.log.warn({ err }, 'held message expiry job failed'), metrics);
  const decisions = new DecisionService({ db, notifier, listDefault: config.limits.listDefault, listMax: config.limits.listMax });
  const stopDecisionDeadlines = scheduleDecisionDeadlines(decisions, config.decisionDeadlineIntervalMs, (err) => app.log.warn({ err }, 'decision deadline job failed'), metrics);

  app.decorate('parley', { config, database, devIdp, deviceTokens, secrets, gateway, bus, policies, hub, hubDid, federation, marketplace: undefined as unknown as Marketplace, metrics, lifecycle } satisfies Parley);

  // The web app's page paths answer its index.html instead of a 404 (design §8.30).
  // Stripe.js (its script, frames and API) only when Stripe is the processor (docs/operations.md, Payment processor).
  const dashboardSources = { connectSrc: config.oidc ? [new URL(config.oidc.issuer).origin] : [], stripe: config.marketplace.stripe !== undefined };
  const pageFallback = hasDashboard(config.dashboardDir) ? await registerDashboard(app, config.dashboardDir, dashboardSources) : undefined;
  registerErrorHandling(app, pageFallback);
  registerParamNormalization(app);
  registerWellFormedInput(app);
  await registerOpenApi(app, { version: config.version, publicUrl: config.publicUrl });
  await registerRateLimits(app, config.rateLimits, redis);
  await app.register(authPlugin, {
    authenticator,
    onSeen: (p) => {
      if (p.kind === 'device') void lastSeen.seen(p.tenantId, p.deviceId);
    },
  });
  await app.register(websocket, {
    options: { maxPayload: Math.max(1024 * 1024, config.limits.maxCiphertextBytes * 2) },
    // Shutdown: answer the frames in hand (acks after their commit), then close with 1001 (the
    // plugin's default would close every socket at once, without a code).
    preClose: () => gateway.drain(5_000),
    errorHandler: socketErrorHandler,
  });

  await app.register(platformRoutes, { db, version: config.version, deviceTokens, devIdpKey: devIdp?.publicJwk, apiPrefix: API_PREFIX });
  await app.register(opsRoutes, { db, metrics, metricsToken: config.metricsToken, lifecycle, ...(redis ? { pingRedis: () => redis.ping() } : {}) });
  await app.register(devLoginRoutes, { devIdp, host: config.host, oidc: config.oidc, publicUrl: config.publicUrl });
  await app.register(tenantRoutes, { prefix: API_PREFIX, db });
  await app.register(inviteRoutes, { prefix: API_PREFIX, invites });
  await app.register(deviceRoutes, { prefix: API_PREFIX, devices, rateLimits: config.rateLimits });
  await app.register(keyBindingRoutes, { prefix: API_PREFIX, keyBinding });
  await app.register(conversationRoutes, { prefix: API_PREFIX, conversations, messages, devices, messageRate });
  await app.register(mlsRoutes, { prefix: API_PREFIX, mls: new MlsService(db), devices });
  await app.register(attachmentRoutes, { prefix: API_PREFIX, attachments, maxBytes: config.limits.maxAttachmentBytes });
  await app.register(pushRoutes, { prefix: API_PREFIX, push: new PushService(db) });
  await app.register(apiKeyRoutes, { prefix: API_PREFIX, apiKeys });
  await app.register(policyRoutes, { prefix: API_PREFIX, policies });
  await app.register(settingsRoutes, { prefix: API_PREFIX, settings });
  await app.register(telemetryExportRoutes, { prefix: API_PREFIX, telemetryExport: new TelemetryExportService(db, secrets, config.webhooks) });
  await app.register(scanRuleRoutes, { prefix: API_PREFIX, scanRules: new ScanRuleService(db, settings) });
  await app.register(roomRoutes, { prefix: API_PREFIX, rooms, devices, messageRate });
  await app.register(receiptRoutes, { prefix: API_PREFIX, receipts, devices });
  const workspaces = new WorkspaceService(db);
  await app.register(workspaceRoutes, { prefix: API_PREFIX, workspaces });
  await app.register(teamRoomRoutes, { prefix: API_PREFIX, teamRooms: new TeamRoomService({ db, rooms, workspaces }) });
  await app.register(connectionRoutes, { prefix: API_PREFIX, connections: new ConnectionService(db, presence) });
  await app.register(hubRoutes, { prefix: API_PREFIX, hub });
  await app.register(hubCapabilityRoutes, { prefix: API_PREFIX, capabilities: new HubCapabilityService(db) });
  await app.register(hubProfileRoutes, { prefix: API_PREFIX, directory: new HubDirectoryService(db) });
  const operatorTier = new OperatorTierService(db, app.log);
  await app.register(hubCertifyRoutes, { prefix: API_PREFIX, certify: new HubCertifyService(db), operatorTier });
  await app.register(hubDidRoutes, { prefix: API_PREFIX, hubDid, rateLimits: config.rateLimits, agentCards: new AgentCardService(db, hubDid) });
  await app.register(didResolverRoutes, { hubDid, rateLimits: config.rateLimits });
  const credentials = new CredentialService({ db, issuer, trustContextUrl: trustContext, loader: ldLoader, ttlDays: config.credentials.ttlDays });
  await app.register(credentialRoutes, { prefix: API_PREFIX, credentials, verifier: new CredentialVerifier({ db, loader: ldLoader }), rateLimits: config.rateLimits });
  await app.register(verificationRoutes, { prefix: API_PREFIX, verification: new VerificationService(db, hub), rateLimits: config.rateLimits });
  await app.register(trustContextRoutes, { trustContextUrl: trustContext });
  await app.register(federationRoutes, { prefix: API_PREFIX, federation });
  await app.register(a2aRoutes, { prefix: API_PREFIX, a2a, messageRate });
  await app.register(decisionRoutes, { prefix: API_PREFIX, decisions });
  const telemetry = new TelemetryService({ db, writer: tenantWriter, listDefault: config.limits.listDefault, listMax: config.limits.listMax });
  await app.register(telemetryRoutes, { prefix: API_PREFIX, telemetry });
  // The audit log and its transparency log (design §8.10, §8.33): the platform audit-log key is shared by all instances (platform_keys).
  const auditLogKeys = new AuditLogKeys(db, secrets, config.publicUrl, overrides.keyRefreshMs);
  await auditLogKeys.init();
  const transparency = new AuditTransparency(db, auditLogKeys);
  await app.register(auditRoutes, { prefix: API_PREFIX, audit: new AuditService(db), transparency });
  const stopAuditCheckpoints = scheduleAuditCheckpoints({
    db,
    transparency,
    intervalMs: config.auditCheckpointIntervalMs,
    pollMs: config.jobPollIntervalMs,
    onError: (err) => app.log.warn({ err }, 'audit checkpoint job failed'),
    metrics,
  });
  const trustEngine = new TrustEngine({ db, log: app.log });
  const stopTrustJob = scheduleTrustRecompute({
    db,
    engine: trustEngine,
    intervalMs: config.trustRecomputeIntervalMs,
    pollMs: config.jobPollIntervalMs,
    onError: (err) => app.log.warn({ err }, 'trust recompute job failed'),
    metrics,
  });
  // Raw span retention (contract §4.14): old spans go once their day is rolled up for the trust engine.
  const stopTelemetryPrune = scheduleTelemetryPrune({
    db,
    retentionDays: config.telemetryRetentionDays,
    intervalMs: config.telemetryPruneIntervalMs,
    pollMs: config.jobPollIntervalMs,
    onError: (err) => app.log.warn({ err }, 'telemetry pruning job failed'),
    metrics,
  });
  // Trust score routes (contract §4.12): scores, fleet, history, drift, compliance reports, recompute.
  await app.register(trustRoutes, {
    prefix: API_PREFIX,
    scores: new TrustQueryService({ db }),
    drift: new TrustDriftService({ db }),
    reports: new TrustReportService({ db }),
    engine: trustEngine,
  });
  // Spend caps per agent (issue 20 part 3): routes, the pipeline's budget stage, the alert sweep.
  const spend = new SpendService({ db, settings, notifier });
  await app.register(spendRoutes, { prefix: API_PREFIX, spend });
  const stopSpendAlerts = scheduleSpendAlerts({ db, spend, intervalMs: config.spendAlertIntervalMs, pollMs: config.jobPollIntervalMs, onError: (err) => app.log.warn({ err }, 'spend alert job failed'), metrics });
  // Skill Permission Tokens and the skill policy pipeline (design §8.6, §8.7): the SPT key is shared by all instances (platform_keys).
  const sptKeys = new SptKeys(db, secrets, overrides.keyRefreshMs);
  await sptKeys.init();
  const skillLimiter = perMinuteLimiter('parley-skill', config.rateLimits.skillChecksPerMin);
  const sptTokens = new SptTokens(sptKeys, issuer.did);
  const grants = new GrantService({
    db,
    keys: sptKeys,
    tokens: sptTokens,
    limiter: skillLimiter,
    checksPerMin: config.rateLimits.skillChecksPerMin,
    publicUrl: config.publicUrl,
    ttlSec: config.sptTtlSec,
    listDefault: config.limits.listDefault,
    listMax: config.limits.listMax,
    policies,
    spend,
  });
  await app.register(grantRoutes, { prefix: API_PREFIX, grants, rateLimits: config.rateLimits });
  // Marketplace (contract §4.16; design §8.23–§8.26): listings, rentals, disputes, payouts, the processor.
  const marketplace = createMarketplace({
    db,
    config: config.marketplace,
    notifier,
    tokens: sptTokens,
    policies,
    messageRate,
    maxCiphertextBytes: config.limits.maxCiphertextBytes,
    publicUrl: config.publicUrl,
    listDefault: config.limits.listDefault,
    listMax: config.limits.listMax,
    jobPollMs: config.jobPollIntervalMs,
    log: app.log,
    metrics,
  });
  app.parley.marketplace = marketplace;
  registerRentalFrames(gateway, marketplace.room);
  // A recompute or an operator tier grant may drop a rented agent below its listing: suspend such rentals at once (contract §4.16).
  const checkRentals = async () => void (await marketplace.monitor.check());
  trustEngine.onRecomputed(checkRentals);
  operatorTier.onGranted(checkRentals);
  await app.register(marketplaceRoutes, { prefix: API_PREFIX, db, ...marketplace, processor: marketplace.processor.name, publishableKey: config.marketplace.stripe?.publishableKey ?? null });
  const stopMarketplace = marketplace.start();
  await app.register(shadowRoutes, { prefix: API_PREFIX, shadow: new ShadowService({ db, listDefault: config.limits.listDefault, listMax: config.limits.listMax }) });
  // The socket (contract §6); a plain HTTP GET without the upgrade is told so (426), not 404.
  app.route({
    method: 'GET',
    url: `${API_PREFIX}/ws`,
    schema: { hide: true },
    handler: (_req, reply) => reply.status(426).header('upgrade', 'websocket').send({ detail: 'this endpoint needs a WebSocket upgrade (Connection: Upgrade, Upgrade: websocket)' }),
    wsHandler: (socket, req) => gateway.handle(socket, req.query, req.socket),
  });

  app.addHook('onClose', async () => {
    stopExpiry();
    await webhookWorker.stop();
    await exportWorker.stop();
    stopHeldExpiry();
    stopDecisionDeadlines();
    await stopTrustJob();
    await stopTelemetryPrune();
    await stopSpendAlerts();
    await stopAuditCheckpoints();
    await stopMarketplace();
    await sharedPresence?.close();
    gateway.close();
    await messages.drain();
    await rooms.drain();
    await roomDeliveries.drain();
    await telemetry.drain();
    await tenantWriter.close();
    await bus.close();
    unwatchRedis?.();
    await redis?.quit().catch(() => undefined);
    if (blobs instanceof S3BlobStore) blobs.close();
    if (!overrides.keepDatabase) await database.close();
  });

  await app.ready();
  webhookWorker.start();
  exportWorker.start();
  return app as unknown as FastifyInstance;
}
