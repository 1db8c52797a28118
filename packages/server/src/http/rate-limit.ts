/**
 * Rate limits (contract §8, design §8.12) with @fastify/rate-limit: counted in `onRequest`, before
 * authentication and validation; per IP for unauthenticated routes, per credential otherwise.
 * Counters live in Redis when configured, else in memory; while the configured Redis is
 * unreachable HTTP limits are not enforced (skipOnError). 429 carries `Retry-After`.
 */
import { createHash } from 'node:crypto';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type { RateLimitConfig } from '../config.js';
import { AppError, ErrorCode } from '../lib/errors.js';
import { tenantOf } from './auth.js';

function credential(request: FastifyRequest): string | undefined {
  const cred = request.headers.authorization ?? request.headers['x-api-key'];
  return typeof cred === 'string' && cred !== '' ? cred : undefined;
}

/** Per-principal key: a digest of the presented credential, else the client IP. */
export function principalKey(request: FastifyRequest): string {
  const cred = credential(request);
  return cred ? 'p:' + createHash('sha256').update(cred).digest('base64url') : 'ip:' + request.ip;
}

export async function registerRateLimits(app: FastifyInstance, cfg: RateLimitConfig, redis?: Redis): Promise<void> {
  if (!cfg.enabled) {
    app.log.warn('RATE_LIMITS=off: every rate limit is disabled (benchmarks and load tests only)');
    return;
  }
  await app.register(rateLimit, {
    global: true,
    // Authenticated callers: design §8.12's per-principal limit; anonymous callers: per IP.
    max: (request) => (credential(request) ? cfg.defaultPerMin : cfg.publicPerMin),
    timeWindow: 60_000,
    keyGenerator: principalKey,
    // While Redis is unreachable a request is let through rather than refused or held up
    // (docs/operations.md "Faults"); per-socket message and skill limits count in memory then.
    ...(redis ? { redis, nameSpace: 'parley-rl:', skipOnError: true } : {}),
    errorResponseBuilder: (_req, ctx) =>
      new AppError(ErrorCode.RateLimited, `rate limit exceeded: ${ctx.max} requests per ${ctx.after === undefined ? 'window' : 'window; retry in ' + ctx.after}`),
  });
}

/**
 * A public route's limit that is higher for API-key callers (contract §5 rule 3, §8): counted per key
 * (its digest) when `X-API-Key` is sent, else per IP. A bogus key is counted under its own digest
 * and then refused with 401 by authentication.
 */
function publicOrApiKey(name: string, publicMax: number, apiKeyMax: number) {
  const hasKey = (r: FastifyRequest) => typeof r.headers['x-api-key'] === 'string' && r.headers['x-api-key'] !== '';
  return {
    max: (r: FastifyRequest) => (hasKey(r) ? apiKeyMax : publicMax),
    timeWindow: 60_000,
    keyGenerator: (r: FastifyRequest) => `${name}:${hasKey(r) ? principalKey(r) : 'ip:' + r.ip}`,
  };
}

/** Route-level limits of contract §8, for `config.rateLimit` of the routes that have one. */
export function routeLimits(cfg: RateLimitConfig) {
  return {
    /** `GET /verify/{address}`, `POST /verify/credential`: 30/min public, 300/min with an API key. */
    verify: publicOrApiKey('verify', cfg.verifyPublicPerMin, cfg.verifyApiKeyPerMin),
    /** `GET /hub/{address}/did` and DID resolution: 60/min public, 600/min with an API key. */
    did: publicOrApiKey('did', cfg.didPublicPerMin, cfg.didApiKeyPerMin),
    /** `POST /grants/validate`: 30/min public, 300/min with an API key (design §8.7, like verify). */
    grantValidate: publicOrApiKey('grant-validate', cfg.grantValidatePublicPerMin, cfg.grantValidateApiKeyPerMin),
    /** `POST /enroll`: 5 per IP per 10 minutes. */
    enroll: { max: cfg.enrollPer10Min, timeWindow: 600_000, keyGenerator: (r: FastifyRequest) => 'enroll:' + r.ip },
    /**
     * `POST /trust-scores/recompute`: 2 per minute per TENANT (every owner of it shares the
     * budget). Counted in `preHandler`, after authentication, so the key is the caller's tenant;
     * unauthenticated requests are refused before they count.
     */
    trustRecompute: {
      max: cfg.trustRecomputePerMin,
      timeWindow: 60_000,
      hook: 'preHandler' as const,
      keyGenerator: (r: FastifyRequest) => 'trust-recompute:' + tenantOf(r),
    },
    /** `GET /devices/{id}/status`: 1 per 5 seconds per device. */
    deviceStatus: {
      max: cfg.deviceStatusPer5s,
      timeWindow: 5_000,
      keyGenerator: (r: FastifyRequest) => 'status:' + String((r.params as { id?: string }).id).toLowerCase(),
    },
  };
}
