/**
 * Public platform routes (contract §4.1, §9): `/health` (checks the database), legal terms, billing
 * plans, platform capabilities, and `/.well-known/jwks.json` (device-token keys and, in
 * development, the built-in identity provider's key; design §3, §5).
 */
import { ROUTES, type BillingPlan, type CapabilitiesResponse, type JwksResponse, type LegalTermsResponse } from '@parley/protocol';
import { sql } from 'drizzle-orm';
import type { FastifyPluginAsync } from 'fastify';
import type { JWK } from 'jose';
import type { DeviceTokenService } from '../../auth/device-tokens.js';
import type { Db } from '../../db/client.js';
import { serve } from '../../http/contract.js';

export interface PlatformRouteOptions {
  db: Db;
  version: string;
  deviceTokens: DeviceTokenService;
  devIdpKey?: JWK;
  /** Where the versioned routes are mounted. */
  apiPrefix: string;
}

/** Plans offered (contract §4.1); prices in US cents per month. */
export const PLANS: BillingPlan[] = [
  { plan_id: 'free', name: 'Free', price_cents: 0, limits: { agents: 3, messages_per_month: 10_000 } },
  { plan_id: 'team', name: 'Team', price_cents: 4_900, limits: { agents: 25, messages_per_month: 500_000 } },
  { plan_id: 'enterprise', name: 'Enterprise', price_cents: null, limits: { agents: null, messages_per_month: null } },
];

const TERMS: LegalTermsResponse = {
  version: '2026-01-01',
  url: null,
  summary: 'Parley relays and stores only client-side encrypted ciphertext; operators cannot read message content.',
};

/** The platform's capabilities (contract §4.1), with the realtime and telemetry paths under `apiPrefix`. */
function capabilities(version: string, apiPrefix: string): CapabilitiesResponse {
  return {
    version,
    encryption: { protocols: ['mls', 'x3dh-double-ratchet'], aead: 'XChaCha20-Poly1305', identity: 'Ed25519', fingerprint: 'BLAKE2b' },
    realtime: { websocket: `${apiPrefix}/ws`, ping_interval_s: 30, dead_timeout_s: 90 },
    features: [
      'tenants', 'invites', 'enrollment', 'devices', 'conversations', 'topics', 'websocket', 'mls', 'api-keys', 'attachments',
      'push', 'webhooks', 'rooms', 'policies', 'a2a', 'federation', 'workspaces', 'hub', 'did', 'credentials', 'verification',
      'telemetry', 'trust-scores', 'skill-permission-tokens', 'shadow-sessions', 'decisions', 'audit', 'settings', 'scan-rules',
    ],
    telemetry: { otlp_http: `${apiPrefix}/telemetry/ingest`, encodings: ['application/json', 'application/x-protobuf'], compression: ['gzip'] },
    trust: { windows: ['7d', '30d', '90d'], tiers: ['unverified', 'certified', 'enterprise'], dimensions: 12 },
  };
}

/** Registered without a prefix: the rows' paths are absolute (`/health`, `/.well-known/…`, `/api/v1/…`). */
export const platformRoutes: FastifyPluginAsync<PlatformRouteOptions> = async (app, opts) => {
  serve(app, ROUTES.health, async (_req, reply) => {
    try {
      await opts.db.execute(sql`select 1`);
      return { status: 'ok', version: opts.version };
    } catch {
      return reply.status(503).send({ status: 'degraded', version: opts.version });
    }
  });

  serve(app, ROUTES.jwks, async (): Promise<JwksResponse> => ({
    keys: [...(await opts.deviceTokens.currentJwks()).keys, ...(opts.devIdpKey ? [opts.devIdpKey] : [])] as JwksResponse['keys'],
  }));

  serve(app, ROUTES.legalTerms, async () => TERMS);
  serve(app, ROUTES.billingPlans, async () => ({ plans: PLANS }));
  const caps = capabilities(opts.version, opts.apiPrefix);
  serve(app, ROUTES.capabilities, async () => caps);
};
