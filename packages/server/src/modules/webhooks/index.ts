/**
 * Webhooks (contract §5; design §8.8): the outbox written in the transactions of the events, and
 * the worker delivering it. The area's public surface: the outbox writers and URL rules other
 * areas use, and {@link createWebhooks} (the notifier's webhook sink, the worker).
 */
import type { Area, Platform } from '../../http/area.js';
import { WebhookOutbox } from './outbox.js';
import { WebhookWorker } from './worker.js';

export { deliveriesOfEach, enqueueInTx, messageDeliveriesFrom } from './outbox.js';
export { postWebhook } from './http.js';
export { RECEIVES } from './repo.js';
export { newWebhookSecret, sealWebhookSecret } from './secrets.js';
export { BlockedTargetError, guardedLookup, webhookUrlProblem, type TargetPolicy } from './target.js';
export { backoffMs, reason } from './worker.js';

/** Events the notifier publishes are also written to the outbox; the worker delivers it once started. */
export function createWebhooks(d: Pick<Platform, 'db' | 'config' | 'secrets' | 'log' | 'metrics' | 'notifier'>): Area {
  d.notifier.setWebhookSink(new WebhookOutbox(d.db, d.log));
  const worker = new WebhookWorker(d.db, d.config.webhooks, d.secrets, d.log, d.metrics);
  if (d.config.databaseUrl && !d.config.secretsKey) {
    d.log.warn('SECRETS_KEY is not set: webhook secrets are sealed with DATA_DIR/secrets-key; every instance sharing this database needs the same key');
  }
  return { start: () => worker.start(), close: () => worker.stop() };
}
