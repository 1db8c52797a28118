/**
 * The realtime infrastructure of one instance (design §8.2, §8.20; docs/operations.md "Faults"):
 * Redis when `REDIS_URL` is set, the event bus (Redis, or in process), the per-minute limiters
 * shared through Redis, and the gateway with its presence. Built by app.ts before any area.
 */
import type { FastifyBaseLogger } from 'fastify';
import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Config } from '../config.js';
import type { MessageRate } from '../lib/message-rate.js';
import type { Metrics } from '../lib/metrics.js';
import { InProcessBus, MeasuredBus, type EventBus } from './bus.js';
import { Gateway, type PresenceHooks, type SocketAuthenticator } from './gateway.js';
import { LocalPresence, RedisPresence, type PresenceView } from './presence.js';
import { RedisBus } from './redis-bus.js';
import { connectOrRetry, watchRedis } from './redis-watchdog.js';

/** Redis (when configured), the bus and the limiters. */
export interface Messaging {
  redis: Redis | undefined;
  bus: EventBus;
  /** Whether Redis was unreachable when the instance started (it serves degraded until Redis answers). */
  startedDegraded: boolean;
  /**
   * A per-minute limiter shared by every instance through Redis when configured; while Redis is
   * not ready each instance counts in memory instead (the insurance limiter). None with `RATE_LIMITS=off`.
   */
  perMinuteLimiter(keyPrefix: string, points: number): RateLimiterAbstract | undefined;
  /** Close the bus and Redis. */
  close(): Promise<void>;
}

/**
 * Redis faults (docs/operations.md "Faults"): no offline queue, so while Redis is unreachable a
 * command fails at once (rate limits fall back, readiness says degraded) instead of waiting; a
 * Redis that stops answering without closing the connection is dropped by the watchdog. A Redis
 * unreachable at start is the same outage: the instance starts degraded and joins when it answers.
 * `bus` replaces the configured bus (tests of multi-instance delivery).
 */
export async function openMessaging(config: Config, o: { bus?: EventBus; metrics: Metrics; log: FastifyBaseLogger }): Promise<Messaging> {
  const redis = config.redisUrl ? new Redis(config.redisUrl, { maxRetriesPerRequest: 3, enableOfflineQueue: false, lazyConnect: true, commandTimeout: 1_000 }) : undefined;
  const unwatchRedis = redis ? watchRedis(redis) : undefined;
  let redisDown = false;
  redis?.on('error', (err: Error) => {
    if (!redisDown) o.log.warn({ err: err.message }, 'redis connection failed; retrying (rate limits per instance meanwhile)');
    redisDown = true;
  });
  redis?.on('ready', () => (redisDown = false));
  const redisConnected = redis ? connectOrRetry(redis) : undefined;
  const inner = o.bus ?? (config.redisUrl ? await RedisBus.connect(config.redisUrl, undefined, o.log) : new InProcessBus());
  const bus = new MeasuredBus(inner, (s) => o.metrics.busPublishSeconds.observe(s));
  await redisConnected;
  const { rateLimits } = config;
  return {
    redis,
    bus,
    startedDegraded: redisDown,
    perMinuteLimiter: (keyPrefix, points) =>
      !rateLimits.enabled
        ? undefined
        : redis
          ? new RateLimiterRedis({ storeClient: redis, keyPrefix, points, duration: 60, rejectIfRedisNotReady: true, insuranceLimiter: new RateLimiterMemory({ points, duration: 60 }) })
          : new RateLimiterMemory({ points, duration: 60 }),
    async close() {
      await bus.close();
      unwatchRedis?.();
      await redis?.quit().catch(() => undefined);
    },
  };
}

/** The gateway of this instance and the presence every instance shares. */
export interface Realtime {
  gateway: Gateway;
  /** Which devices have an open socket on any instance (through Redis when configured). */
  presence: PresenceView;
  /** Close the shared presence and the gateway's sockets and timers. */
  close(): Promise<void>;
}

/** The gateway (contract §6) over `messaging`, authenticating sockets with `authenticate`; `instanceId` names this instance in the shared presence. */
export function openRealtime(
  config: Config,
  o: { messaging: Messaging; authenticate: SocketAuthenticator; lastSeen: PresenceHooks; messageRate: MessageRate; instanceId: string; metrics: Metrics; log: FastifyBaseLogger },
): Realtime {
  const { redis, bus } = o.messaging;
  const sharedPresence = redis ? new RedisPresence({ redis, instanceId: o.instanceId, onError: (err) => o.log.debug({ err }, 'presence update failed') }) : undefined;
  const gateway = new Gateway({
    bus,
    authenticate: o.authenticate,
    presence: o.lastSeen,
    limiter: o.messageRate,
    pingIntervalMs: config.ws.pingIntervalMs,
    deadTimeoutMs: config.ws.deadTimeoutMs,
    log: o.log,
    metrics: o.metrics,
    ...(sharedPresence ? { directory: sharedPresence } : {}),
  });
  sharedPresence?.attach(gateway);
  return {
    gateway,
    presence: sharedPresence ?? new LocalPresence(gateway),
    async close() {
      await sharedPresence?.close();
      gateway.close();
    },
  };
}
