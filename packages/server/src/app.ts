/**
 * buildApp(config, overrides) -> a ready Fastify instance that never listens by itself
 * (design §1): tests use `inject` or `listen({port: 0})`, main.ts listens on HOST:PORT.
 *
 * Composition root (docs/architecture.md "Composition"): the infrastructure (database and
 * migrations, Redis and the event bus, secrets and signing keys, Fastify), then the areas in
 * dependency order, each from the `create<Area>` factory of its modules/<area>/index.ts; then the
 * cross-cutting plugins in pipeline order (error handler -> OpenAPI -> rate limit -> auth,
 * http/fastify.ts), every area's frames and routes, and one shutdown hook closing the areas in
 * reverse order before the infrastructure.
 */
import type { FastifyInstance } from 'fastify';
import type { DevIdentityProvider } from './auth/dev-idp.js';
import type { DeviceTokenService } from './auth/device-tokens.js';
import { Authenticator, type Principal } from './auth/authenticator.js';
import type { Config } from './config.js';
import type { Database } from './db/client.js';
import { closeAreas, registerAreas, type Area } from './http/area.js';
import { registerPlugins, registerSocketRoute } from './http/fastify.js';
import { openInfrastructure, type AppOverrides } from './infrastructure.js';
import { defaultInstanceId } from './jobs/cluster-schedule.js';
import { createJobs } from './jobs/index.js';
import type { Metrics } from './lib/metrics.js';
import type { SecretBox } from './lib/secret-box.js';
import { createA2a } from './modules/a2a/index.js';
import { createApiKeys } from './modules/api-keys/index.js';
import { createAttachments } from './modules/attachments/index.js';
import { createAudit } from './modules/audit/index.js';
import { createConnections } from './modules/connections/index.js';
import { createConversations, provisionAgent, provisionOwnerDevice } from './modules/conversations/index.js';
import { createCredentials, createPlatformIssuer } from './modules/credentials/index.js';
import { createDecisions } from './modules/decisions/index.js';
import { createDevLogin } from './modules/dev-login/index.js';
import { createDevices, deviceSocketAuthenticator, LastSeenTracker } from './modules/devices/index.js';
import { createFederation, type FederationService } from './modules/federation/index.js';
import { createGrants } from './modules/grants/index.js';
import { createHealth } from './modules/health/index.js';
import { createHub, type HubDidService, type HubService } from './modules/hub/index.js';
import { createInvites } from './modules/invites/index.js';
import { createKeyBinding } from './modules/key-binding/index.js';
import { createKeyDirectory, WitnessPublisher, type KeyDirectory } from './modules/key-directory/index.js';
import { createMarketplace, type Marketplace } from './modules/marketplace/index.js';
import { createMls, deleteKeyPackagesOf } from './modules/mls/index.js';
import { createPolicies, type PolicyService } from './modules/policies/index.js';
import { createPush } from './modules/push/index.js';
import { createReceipts } from './modules/receipts/index.js';
import { createRooms } from './modules/rooms/index.js';
import { createScanRules } from './modules/scan-rules/index.js';
import { createSettings } from './modules/settings/index.js';
import { createShadow } from './modules/shadow/index.js';
import { createSpend } from './modules/spend/index.js';
import { createTeamRooms } from './modules/team-rooms/index.js';
import { createTelemetryExport } from './modules/telemetry-export/index.js';
import { createTelemetry } from './modules/telemetry/index.js';
import { createTenants } from './modules/tenants/index.js';
import { createTrust, retireAgentDevice } from './modules/trust/index.js';
import { createVerification } from './modules/verification/index.js';
import { createWebhooks } from './modules/webhooks/index.js';
import { createWorkspaces } from './modules/workspaces/index.js';
import { opsRoutes, type Lifecycle } from './ops/routes.js';
import type { EventBus } from './realtime/bus.js';
import type { Gateway } from './realtime/gateway.js';
import { openRealtime } from './realtime/setup.js';

export { API_PREFIX } from './http/area.js';
export { redactUrl } from './http/fastify.js';
export type { AppOverrides } from './infrastructure.js';

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
  /** The key directory (design §8.39): what registers key material outside a route commits its keys here. */
  keyDirectory: KeyDirectory;
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


export async function buildApp(config: Config, overrides: AppOverrides = {}): Promise<FastifyInstance> {
  const p = await openInfrastructure(config, overrides);
  const { app, db, database, messaging, metrics, lifecycle, devIdp, deviceTokens, secrets, messageRate } = p;

  // The areas a socket's authentication needs, then the gateway.
  const settings = createSettings(p);
  const policies = createPolicies({ ...p, settings: settings.settings });
  const keyBinding = await createKeyBinding(p);
  // The key directory every key a client will trust is committed to (design §8.39); the witness policy is the tenant's setting.
  const witnessPolicy = async (tenantId: string) => {
    const t = await settings.settings.get(tenantId);
    return { witnesses: t.key_transparency_witnesses, min_cosignatures: t.key_transparency_min_cosignatures };
  };
  const keyDirectory = await createKeyDirectory({ ...p, witnessPolicy });
  // Its checkpoints go to the platform's witnesses (KEY_DIRECTORY_WITNESSES), whose cosignatures the checkpoints then carry.
  const witnesses = config.keyDirectoryWitnesses.length > 0 ? new WitnessPublisher({ db, directory: keyDirectory.directory, witnesses: config.keyDirectoryWitnesses, log: app.log, timeoutMs: Math.max(1_000, config.webhooks.timeoutMs) }) : undefined;
  const issuer = await createPlatformIssuer(p);
  const hub = createHub({ ...p, platformAddress: issuer.address, platformDocument: (address) => issuer.platformDocument(address), keyDirectory: keyDirectory.directory });
  const apiKeys = createApiKeys({ ...p, keyBinding: keyBinding.keyBinding, hub: hub.hub, keyDirectory: keyDirectory.directory });
  const authenticator = new Authenticator({ db, deviceTokens, ownerTokens: p.ownerTokens, tenantClaim: config.oidcTenantClaim, resolveApiKey: (k) => apiKeys.apiKeys.resolve(k), operatorSubs: config.platformOperatorSubs });
  const lastSeen = new LastSeenTracker(db, 30_000, (err) => app.log.warn({ err }, 'last_seen update failed'));
  const authenticate = apiKeys.socketAuthenticator(deviceSocketAuthenticator(db, authenticator));
  const { gateway, presence, ...realtime } = openRealtime(config, { messaging, authenticate, lastSeen, messageRate, instanceId: defaultInstanceId(), metrics, log: app.log });

  // The other areas, each after those it uses.
  const hooks = { provisionAgent, provisionOwnerDevice, dropKeyPackages: deleteKeyPackagesOf, retireAgent: retireAgentDevice };
  const devices = createDevices({ ...p, deviceTokens, challenges: p.challenges, keyBinding: keyBinding.keyBinding, keyDirectory: keyDirectory.directory, presence, webhookTargets: config.webhooks, tenantSettings: (tx, tenantId) => settings.settings.read(tx, tenantId), hooks, rateLimits: config.rateLimits });
  // Delivered receipts of direct messages go out through the receipts area, created next.
  const conversations = createConversations({ ...p, onDelivered: (tenantId, rows) => receipts.publisher.messagesDelivered(tenantId, rows) });
  const receipts = createReceipts({ ...p, messages: conversations.messages });
  const rooms = createRooms({ ...p, policies: policies.policies, settings: settings.settings, deliveries: receipts.roomDeliveries });
  const workspaces = createWorkspaces(p);
  const federation = createFederation(p);
  const decisions = createDecisions(p);
  const audit = await createAudit(p);
  const trust = createTrust(p);
  const spend = createSpend({ ...p, settings: settings.settings });
  const grants = await createGrants({ ...p, issuerDid: issuer.did, policies: policies.policies, spend: spend.spend });
  const { limits } = config;
  const marketplace = createMarketplace({ ...p, ...limits, config: config.marketplace, tokens: grants.tokens, policies: policies.policies, publicUrl: config.publicUrl, jobPollMs: config.jobPollIntervalMs });
  // A recompute or an operator tier grant may drop a rented agent below its listing: suspend such rentals at once (contract §4.16).
  trust.onTierChange(async () => void (await marketplace.monitor.check()));
  const pingRedis = messaging.redis ? { pingRedis: () => messaging.redis!.ping() } : {};
  // Routes and frames are registered in this order; `close()` runs in reverse (jobs and workers first, the group commits last).
  const push = await createPush({ ...p, presence });
  const areas: Area[] = [
    createHealth({ ...p, deviceTokens, devIdpKey: devIdp?.publicJwk }),
    { routes: async (server) => void (await server.register(opsRoutes, { db, metrics, metricsToken: config.metricsToken, lifecycle, ...pingRedis })) },
    createDevLogin({ config, devIdp }),
    createTenants(p),
    createInvites(p),
    settings,
    policies,
    keyBinding,
    keyDirectory,
    hub,
    apiKeys,
    devices,
    conversations,
    receipts,
    rooms,
    createMls({ ...p, keyDirectory: keyDirectory.directory }),
    createAttachments(p),
    push,
    createTelemetryExport(p),
    createScanRules({ ...p, settings: settings.settings }),
    workspaces,
    createTeamRooms({ db, rooms: rooms.rooms, workspaces: workspaces.workspaces }),
    createConnections({ db, presence }),
    createVerification({ ...p, hub: hub.hub }),
    createCredentials({ ...p, issuer, hubDid: hub.hubDid }),
    federation,
    createA2a({ ...p, hub: hub.hub, federation: federation.federation, policies: policies.policies }),
    decisions,
    createTelemetry(p),
    audit,
    trust,
    spend,
    grants,
    marketplace,
    createShadow(p),
    createWebhooks(p),
    createJobs({ ...p, expiryIntervalMs: overrides.expiryJobIntervalMs ?? 60_000, policies: policies.policies, decisions: decisions.decisions, transparency: audit.transparency, trustEngine: trust.engine, spend: spend.spend, keyDirectory: keyDirectory.directory, ...(witnesses ? { witnesses } : {}) }),
  ];

  const handles = { policies: policies.policies, hub: hub.hub, hubDid: hub.hubDid, federation: federation.federation, marketplace, keyDirectory: keyDirectory.directory };
  app.decorate('parley', { config, database, devIdp, deviceTokens, secrets, gateway, bus: messaging.bus, ...handles, metrics, lifecycle } satisfies Parley);
  const onSeen = (principal: Principal) => void (principal.kind === 'device' && lastSeen.seen(principal.tenantId, principal.deviceId));
  await registerPlugins(app, { config, redis: messaging.redis, authenticator, onSeen, gateway });
  await registerAreas(app, gateway, areas);
  registerSocketRoute(app, gateway);
  app.addHook('onClose', async () => {
    await closeAreas(areas);
    await realtime.close();
    await p.close();
  });
  await app.ready();
  for (const area of areas) area.start?.();
  return app;
}
