/**
 * Operations routes (design §8.32): `GET /livez` (the process answers),
 * `GET /readyz` (503 while the database is unreachable or while the instance drains after SIGTERM;
 * 200 `degraded` while the configured Redis is unreachable, since the instance still serves — see
 * docs/operations.md "Faults") and `GET /metrics` (Prometheus text; `Authorization: Bearer
 * $METRICS_TOKEN`, compared in constant time; 404 when no token is configured — `METRICS_PORT`
 * serves it without auth on loopback instead, see main.ts).
 */
import { ROUTES, type ProbeResponse } from '@parley/protocol';
import { sql } from 'drizzle-orm';
import type { FastifyPluginAsync } from 'fastify';
import type { Db } from '../db/client.js';
import { serve } from '../http/contract.js';
import { digestsEqual, hashSecret } from '../lib/crypto.js';
import { AppError, ErrorCode } from '../lib/errors.js';
import type { Metrics } from '../lib/metrics.js';

/** Whether the instance is draining (set on SIGTERM; readiness then fails so balancers stop sending). */
export interface Lifecycle {
  draining: boolean;
}

export interface OpsRouteOptions {
  db: Db;
  metrics: Metrics;
  metricsToken: string | undefined;
  lifecycle: Lifecycle;
  /** PING the shared Redis (undefined without `REDIS_URL`). */
  pingRedis?: () => Promise<unknown>;
  /** Longest wait for one dependency check (ms). */
  checkTimeoutMs?: number;
}

function within<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    p.then(
      (v) => (clearTimeout(t), resolve(v)),
      (e: unknown) => (clearTimeout(t), reject(e)),
    );
  });
}

export const opsRoutes: FastifyPluginAsync<OpsRouteOptions> = async (app, o) => {
  const timeout = o.checkTimeoutMs ?? 2_000;

  serve(app, ROUTES.livez, async (): Promise<ProbeResponse> => ({ status: 'ok' }));

  serve(app, ROUTES.readyz, async (_req, reply) => {
    const checks: Record<string, string> = {};
    const problems: string[] = [];
    await within(o.db.execute(sql`select 1`), timeout).then(
      () => (checks.database = 'ok'),
      (err: unknown) => {
        checks.database = 'down';
        problems.push(`database: ${(err as Error).message}`);
      },
    );
    // Redis is not a readiness condition: without it the instance still serves requests, its own
    // sockets and the database (cross-instance delivery waits, clients catch up by cursor). Were it
    // one, a Redis outage would take every instance out of the load balancer at once.
    const degraded: string[] = [];
    if (o.pingRedis) {
      await within(o.pingRedis(), timeout).then(
        () => (checks.redis = 'ok'),
        (err: unknown) => {
          checks.redis = 'down';
          degraded.push(`redis: ${(err as Error).message} (cross-instance delivery paused; rate limits and presence per instance)`);
        },
      );
    }
    if (o.lifecycle.draining) {
      checks.instance = 'draining';
      problems.push('the instance is shutting down');
    }
    if (problems.length === 0) return degraded.length === 0 ? { status: 'ok' as const, checks } : { status: 'degraded' as const, checks, detail: degraded.join('; ') };
    return reply.status(503).send({ status: 'unavailable', checks, detail: [...problems, ...degraded].join('; ') } satisfies ProbeResponse);
  });

  serve(app, ROUTES.metrics, async (req, reply) => {
    if (!o.metricsToken) throw new AppError(ErrorCode.NotFound, 'metrics are off: set METRICS_TOKEN (or METRICS_PORT for a loopback-only listener)');
    const header = req.headers.authorization ?? '';
    const token = header.startsWith('Bearer ') ? header.slice(7) : '';
    if (!token || !digestsEqual(hashSecret(token), hashSecret(o.metricsToken))) throw new AppError(ErrorCode.Unauthorized, 'metrics need Authorization: Bearer <METRICS_TOKEN>');
    const { contentType, body } = await o.metrics.scrape();
    return reply.type(contentType).send(body);
  });
};
