/**
 * What an area (a folder under `modules/`) hands to the composition root, and what every area may
 * receive from it (docs/architecture.md "Composition"). Each area's `index.ts` exports
 * `create<Area>(deps)` answering an {@link Area}; app.ts creates the areas in dependency order,
 * registers their frames and routes in that order, starts them once the app is ready and closes
 * them in reverse order.
 */
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Config } from '../config.js';
import type { Db } from '../db/client.js';
import type { TenantWriter } from '../db/tenant-writer.js';
import type { MessageRate } from '../lib/message-rate.js';
import type { Metrics } from '../lib/metrics.js';
import type { SecretBox } from '../lib/secret-box.js';
import type { EventBus } from '../realtime/bus.js';
import type { Gateway } from '../realtime/gateway.js';
import type { Notifier } from '../realtime/notifier.js';

/** Path prefix of the versioned API (contract §1). */
export const API_PREFIX = '/api/v1';

/** One area's part in the app; every member is optional. */
export interface Area {
  /** Registers the area's route plugins (under {@link API_PREFIX} unless the contract places a route elsewhere). */
  routes?(app: FastifyInstance): Promise<void>;
  /** Registers the area's socket frame handlers (contract §6). */
  frames?(gateway: Gateway): void;
  /** Starts background work (workers, scheduled jobs) once the app is ready. */
  start?(): void;
  /** Stops background work and waits for queued writes (graceful shutdown). */
  close?(): Promise<void>;
}

/** The infrastructure every area factory may use (built by app.ts before any area). */
export interface Platform {
  config: Config;
  db: Db;
  notifier: Notifier;
  /** The event bus between instances (realtime/bus.ts). */
  bus: EventBus;
  /** The secrets keyring (`SECRETS_KEY`, `SECRETS_KEY_PREVIOUS`). */
  secrets: SecretBox;
  metrics: Metrics;
  log: FastifyBaseLogger;
  /** Pipelined connections of the hot-path writes (db/tenant-writer.ts). */
  writer: TenantWriter;
  /** contract §8's messages per minute per device: one budget for socket frames and REST sends. */
  messageRate: MessageRate;
  /** A per-minute limiter shared by the instances through Redis when configured; undefined with `RATE_LIMITS=off`. */
  perMinuteLimiter(keyPrefix: string, points: number): RateLimiterAbstract | undefined;
  /** How long cached signing keys are used before a reload (ms; `AppOverrides.keyRefreshMs`). */
  keyRefreshMs?: number;
}

/** Areas in creation order: `frames`, `routes` and `start` run in this order, `close` in reverse. */
export async function registerAreas(app: FastifyInstance, gateway: Gateway, areas: readonly Area[]): Promise<void> {
  for (const area of areas) area.frames?.(gateway);
  for (const area of areas) await area.routes?.(app);
}

/** Closes `areas` in reverse creation order. */
export async function closeAreas(areas: readonly Area[]): Promise<void> {
  for (const area of [...areas].reverse()) await area.close?.();
}
