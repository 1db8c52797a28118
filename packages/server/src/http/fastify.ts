/**
 * The Fastify instance of the app and its cross-cutting plugins (docs/architecture.md
 * "Composition"): {@link createFastify} builds the instance with the request hooks every response
 * passes (request ids, security headers, the host check, metrics); {@link registerPlugins}
 * registers, in pipeline order, error handling -> OpenAPI -> rate limits -> auth -> WebSocket, before
 * any area's routes; {@link registerSocketRoute} serves the socket (contract §6).
 */
import websocket from '@fastify/websocket';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance, type RouteOptions } from 'fastify';
import type { Redis } from 'ioredis';
import type { Authenticator, Principal } from '../auth/authenticator.js';
import type { Config } from '../config.js';
import type { Metrics } from '../lib/metrics.js';
import { socketErrorHandler, type Gateway } from '../realtime/gateway.js';
import { API_PREFIX } from './area.js';
import { authPlugin } from './auth.js';
import { hasDashboard, registerDashboard } from './dashboard.js';
import { frameworkErrors, registerErrorHandling } from './errors.js';
import { registerHostCheck } from './host-check.js';
import { lazySerializerFactory } from './lazy-schemas.js';
import { registerOpenApi } from './openapi.js';
import { registerParamNormalization } from './params.js';
import { registerRateLimits } from './rate-limit.js';
import { registerRequestIds, requestId } from './request-id.js';
import { registerSecurityHeaders } from './security-headers.js';
import { AJV_OPTIONS, partAwareValidatorFactory } from './validation.js';
import { registerWellFormedInput } from './well-formed.js';

/** Removes the `token` query parameter from URLs before they are logged (design §7). */
export function redactUrl(url: string): string {
  return url.replace(/([?&]token=)[^&]*/gi, '$1[REDACTED]');
}

/** The Fastify instance: logging with redaction, validation, request ids, security headers, the host check and HTTP metrics. */
export function createFastify(config: Config, o: { logStream?: NodeJS.WritableStream; onRoute?: (route: RouteOptions) => void; metrics: Metrics }): FastifyInstance {
  const app = Fastify({
    trustProxy: config.trustProxy,
    logger:
      config.logLevel === 'silent'
        ? false
        : {
            level: config.logLevel,
            ...(o.logStream ? { stream: o.logStream } : {}),
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
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as FastifyInstance;
  if (o.onRoute) app.addHook('onRoute', o.onRoute);
  registerRequestIds(app);
  registerSecurityHeaders(app);
  registerHostCheck(app, config.host, config.publicUrl);
  app.addHook('onResponse', async (req, reply) => {
    // A refused WebSocket upgrade (403, 401, 429, 404 …) has its answer written on the detached
    // upgrade socket, which nothing else ends: end it here, or it stays open and holds up shutdown.
    if (req.raw.headers.upgrade !== undefined && reply.statusCode !== 101) req.raw.socket.destroySoon();
    o.metrics.httpDuration.observe({ method: req.method, route: req.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) }, reply.elapsedTime / 1000);
  });
  return app;
}

/** The cross-cutting plugins, in pipeline order (see the module comment). */
export async function registerPlugins(
  app: FastifyInstance,
  o: { config: Config; redis: Redis | undefined; authenticator: Authenticator; onSeen: (p: Principal) => void; gateway: Gateway },
): Promise<void> {
  const { config } = o;
  // The web app's page paths answer its index.html instead of a 404 (design §8.30).
  // Stripe.js (its script, frames and API) only when Stripe is the processor (docs/operations.md, Payment processor).
  const dashboardSources = { connectSrc: config.oidc ? [new URL(config.oidc.issuer).origin] : [], stripe: config.marketplace.stripe !== undefined };
  const pageFallback = hasDashboard(config.dashboardDir) ? await registerDashboard(app, config.dashboardDir, dashboardSources) : undefined;
  registerErrorHandling(app, pageFallback);
  registerParamNormalization(app);
  registerWellFormedInput(app);
  await registerOpenApi(app, { version: config.version, publicUrl: config.publicUrl });
  await registerRateLimits(app, config.rateLimits, o.redis);
  await app.register(authPlugin, { authenticator: o.authenticator, onSeen: o.onSeen });
  await app.register(websocket, {
    options: { maxPayload: Math.max(1024 * 1024, config.limits.maxCiphertextBytes * 2) },
    // Shutdown: answer the frames in hand (acks after their commit), then close with 1001 (the
    // plugin's default would close every socket at once, without a code).
    preClose: () => o.gateway.drain(5_000),
    errorHandler: socketErrorHandler,
  });
}

/** The socket (contract §6); a plain HTTP GET without the upgrade is told so (426), not 404. */
export function registerSocketRoute(app: FastifyInstance, gateway: Gateway): void {
  app.route({
    method: 'GET',
    url: `${API_PREFIX}/ws`,
    schema: { hide: true },
    handler: (_req, reply) => reply.status(426).header('upgrade', 'websocket').send({ detail: 'this endpoint needs a WebSocket upgrade (Connection: Upgrade, Upgrade: websocket)' }),
    wsHandler: (socket, req) => gateway.handle(socket, req.query, req.socket),
  });
}
