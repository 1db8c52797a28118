/**
 * Public platform routes (SPEC §4.1, §9): `/health` (checks the database), legal terms, billing
 * plans, platform capabilities, and `/.well-known/jwks.json` (device-token keys and, in
 * development, the built-in identity provider's key; DESIGN §3, §5).
 */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { sql } from 'drizzle-orm';
import type { JWK } from 'jose';
import type { DeviceTokenService } from '../../auth/device-tokens.js';
import type { Db } from '../../db/client.js';

export interface PlatformRouteOptions {
  db: Db;
  version: string;
  deviceTokens: DeviceTokenService;
  devIdpKey?: JWK;
  /** Where the versioned routes are mounted. */
  apiPrefix: string;
}

/** Plans offered (SPEC §4.1); prices in US cents per month. */
export const PLANS = [
  { plan_id: 'free', name: 'Free', price_cents: 0, limits: { agents: 3, messages_per_month: 10_000 } },
  { plan_id: 'team', name: 'Team', price_cents: 4_900, limits: { agents: 25, messages_per_month: 500_000 } },
  { plan_id: 'enterprise', name: 'Enterprise', price_cents: null, limits: { agents: null, messages_per_month: null } },
];

export const platformRoutes: FastifyPluginAsyncTypebox<PlatformRouteOptions> = async (app, opts) => {
  app.get(
    '/health',
    {
      schema: {
        tags: ['platform'],
        summary: 'Liveness and database check',
        response: { 200: Type.Object({ status: Type.String(), version: Type.String() }), 503: Type.Object({ status: Type.String(), version: Type.String() }) },
      },
    },
    async (_req, reply) => {
      try {
        await opts.db.execute(sql`select 1`);
        return { status: 'ok', version: opts.version };
      } catch {
        return reply.status(503).send({ status: 'degraded', version: opts.version });
      }
    },
  );

  app.get('/.well-known/jwks.json', { schema: { tags: ['platform'], summary: 'Public signing keys (device JWTs; dev identity provider)' } }, async () => ({
    keys: [...opts.deviceTokens.publicJwks().keys, ...(opts.devIdpKey ? [opts.devIdpKey] : [])],
  }));

  await app.register(
    async (api) => {
      api.get('/legal/terms', { schema: { tags: ['platform'], summary: 'Current terms of service' } }, async () => ({
        version: '2026-01-01',
        url: null,
        summary: 'Parley relays and stores only client-side encrypted ciphertext; operators cannot read message content.',
      }));
      api.get('/billing/plans', { schema: { tags: ['platform'], summary: 'Available plans' } }, async () => ({ plans: PLANS }));
      api.get('/capabilities', { schema: { tags: ['platform'], summary: 'Platform capabilities' } }, async () => ({
        version: opts.version,
        encryption: { protocols: ['mls', 'x3dh-double-ratchet'], aead: 'XChaCha20-Poly1305', identity: 'Ed25519', fingerprint: 'BLAKE2b' },
        realtime: { websocket: `${opts.apiPrefix}/ws`, ping_interval_s: 30, dead_timeout_s: 90 },
        features: [
          'tenants', 'invites', 'enrollment', 'devices', 'conversations', 'topics', 'websocket', 'mls', 'api-keys', 'attachments',
          'push', 'webhooks', 'rooms', 'policies', 'a2a', 'federation', 'workspaces', 'hub', 'did', 'credentials', 'verification',
          'telemetry', 'trust-scores', 'skill-permission-tokens', 'shadow-sessions', 'decisions', 'audit', 'settings', 'scan-rules',
        ],
        telemetry: { otlp_http: `${opts.apiPrefix}/telemetry/ingest`, encodings: ['application/json', 'application/x-protobuf'], compression: ['gzip'] },
        trust: { windows: ['7d', '30d', '90d'], tiers: ['unverified', 'certified', 'enterprise'], dimensions: 12 },
      }));
    },
    { prefix: opts.apiPrefix },
  );
};
