/**
 * Push delivery (contract §4.7; design §8.36 "Push delivery"), the area {@link createPush} makes:
 * the registration routes and the VAPID public key, the notifier sink that wakes offline devices
 * (trigger.ts), the durable outbox and its worker (repo.ts, worker.ts) and one sender per platform
 * (web.ts always; apns.ts and fcm.ts when configured).
 */
import fs from 'node:fs';
import type { PushPlatform } from '@parley/protocol';
import type { FastifyInstance } from 'fastify';
import { API_PREFIX, type Area, type Platform } from '../../http/area.js';
import type { PresenceView } from '../../realtime/presence.js';
import { ApnsSender } from './apns.js';
import { FcmSender, parseServiceAccount } from './fcm.js';
import { PushMetrics } from './metrics.js';
import { pushRoutes } from './routes.js';
import type { PushSender } from './sender.js';
import { PushService } from './service.js';
import { PushTrigger } from './trigger.js';
import { loadVapidKey, type VapidDetails } from './vapid.js';
import { WebPushSender } from './web.js';
import { PushWorker, type PushWorkerOptions } from './worker.js';

export { PUSH_KINDS, type PushKind, type PushPayload } from './payload.js';
export { PushService } from './service.js';
export { PushWorker } from './worker.js';

/**
 * What {@link createPush} needs: the platform (`config.push` for the platforms and the VAPID
 * subject, `config.webhooks` for the SSRF switches and the worker's timing, the secrets keyring
 * sealing the VAPID key, the notifier it joins as a sink, the metrics registry it adds its
 * instruments to) and presence (whether a device has a live socket on any instance).
 */
export interface PushDeps extends Pick<Platform, 'db' | 'config' | 'secrets' | 'log' | 'metrics' | 'notifier'> {
  presence: PresenceView;
  /** Worker overrides (tests: backoff, attempts, batch size). */
  worker?: Partial<PushWorkerOptions>;
  /** Extra trusted CA certificates for APNs (PEM; tests with a TLS double). */
  apnsCa?: string[];
}

/** The push area: routes, the outbox worker (`start`, `close`), and handles for tests. */
export interface PushArea extends Area {
  routes(app: FastifyInstance): Promise<void>;
  start(): void;
  close(): Promise<void>;
  /** The registrations' rules (register, list, remove). */
  service: PushService;
  /** The sink the factory added to the notifier; it queues and answers at once. */
  sink: PushTrigger;
  /** Resolves once every event the sink queued so far is in the outbox (tests). */
  settled(): Promise<void>;
  /** The outbox worker (tests call `pollOnce`). */
  worker: PushWorker;
  /** The shared VAPID key (public and private halves, subject). */
  vapid: VapidDetails;
  /** The platforms that are on. */
  platforms: PushPlatform[];
}

/**
 * Load (or create, once for every instance) the VAPID key, read the APNs and FCM credentials of
 * the platforms that are configured, log which platforms are on, and add the push trigger to the
 * notifier's sinks. The area's `start()` starts the outbox worker; `close()` finishes the queued
 * wake-ups, stops the worker and closes the platforms' connections.
 * @throws when the VAPID key does not open under `secrets`, or a configured credential file cannot
 *   be read or is not a credential of its kind.
 */
export async function createPush(d: PushDeps): Promise<PushArea> {
  const { push: cfg, webhooks } = d.config;
  const vapid = await loadVapidKey(d.db, d.secrets, cfg.vapidSubject);
  const senders = new Map<PushPlatform, PushSender>();
  senders.set('web', new WebPushSender({ vapid, timeoutMs: webhooks.timeoutMs, allowHttp: webhooks.allowHttp, allowPrivate: webhooks.allowPrivate }));
  if (cfg.apns) {
    const key = fs.readFileSync(cfg.apns.keyFile, 'utf8');
    senders.set('apns', new ApnsSender({ ...cfg.apns, key, timeoutMs: webhooks.timeoutMs, ...(d.apnsCa ? { ca: d.apnsCa } : {}) }));
  }
  if (cfg.fcm) {
    const account = parseServiceAccount(fs.readFileSync(cfg.fcm.serviceAccountFile, 'utf8'));
    senders.set('fcm', new FcmSender({ account, endpoint: cfg.fcm.endpoint, timeoutMs: webhooks.timeoutMs }));
  }
  const platforms = [...senders.keys()];
  d.log.info(
    { web: true, apns: senders.has('apns'), fcm: senders.has('fcm') },
    `push delivery: ${platforms.join(', ')} on${cfg.apns ? '' : '; apns off (APNS_KEY_FILE, APNS_KEY_ID, APNS_TEAM_ID, APNS_TOPIC not set)'}${cfg.fcm ? '' : '; fcm off (FCM_SERVICE_ACCOUNT_FILE not set)'}`,
  );
  const worker = new PushWorker(d.db, senders, { ...webhooks, ...d.worker }, d.log, new PushMetrics(d.metrics.registry));
  const trigger = new PushTrigger(d.db, d.presence, d.log, () => worker.wake());
  d.notifier.addSink(trigger);
  const service = new PushService(d.db, webhooks);
  return {
    async routes(app) {
      await app.register(pushRoutes, { prefix: API_PREFIX, push: service, vapidPublicKey: vapid.publicKey });
    },
    service,
    sink: trigger,
    settled: () => trigger.settled(),
    worker,
    vapid,
    platforms,
    start: () => worker.start(),
    async close() {
      await trigger.settled();
      await worker.stop();
      for (const s of senders.values()) await s.close?.();
    },
  };
}
