/**
 * Webhook outbox (design §8.11): events become `webhook_deliveries` rows, one per target device
 * with a webhook URL, delivered later by the {@link WebhookWorker} whether or not the device is
 * online. Bodies are built by `events.ts` (never ciphertext).
 *
 * Two ways in:
 * - the {@link WebhookOutbox} sink the Notifier calls after each socket publish (its own
 *   transaction, after the business commit): every webhook event except those in {@link IN_TX_EVENTS};
 * - {@link enqueueInTx} / {@link messageDeliveriesFrom} inside the caller's transaction, so the
 *   delivery commits with the change that caused it. The message writer uses the latter for
 *   `message` (a CTE of its group-commit statement), and the room module for
 *   `room_message` ({@link deliveriesOfEach}: part of the statement of a group-commit flush, for the released
 *   recipients of all its messages, and one per released held envelope), which is why the sink
 *   skips both.
 */
import type { SQL } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import type { Db, Tx } from '../../db/client.js';
import { withTenant } from '../../db/tenant.js';
import type { Audience } from '../../realtime/bus.js';
import type { WebhookSink } from '../../realtime/notifier.js';
import { isWebhookEvent, toWebhookPayload } from './events.js';
import * as repo from './repo.js';

export { messageDeliveriesFrom } from './repo.js';

/**
 * Enqueue `event` for the audience inside `tx` (a transaction scoped to `tenantId`): one row per
 * audience device with a webhook URL (listed devices, plus every ACTIVE owner device of the tenant
 * when `audience.ownersOfTenant` is set), in one statement. Non-webhook events are ignored.
 * Answers the number of deliveries enqueued.
 */
export async function enqueueInTx(tx: Tx, tenantId: string, audience: Audience, event: string, data: unknown): Promise<number> {
  const payload = toWebhookPayload(event, data);
  if (!payload) return 0;
  const deviceIds = audience.deviceIds ?? [];
  const owners = audience.ownersOfTenant !== undefined;
  if (deviceIds.length === 0 && !owners) return 0;
  return repo.insertForAudience(tx, tenantId, { deviceIds, owners }, payload);
}

/**
 * The enqueueing of several events, each for its own listed devices (those with a webhook URL get a
 * row), as ONE insert whatever their number, a CTE body for the caller's statement in a transaction
 * scoped to `tenantId` (db/unnest.ts `withAll`; the room group commit: each message's
 * `room.message` for its released recipients), always the same text. Non-webhook events and
 * events without devices are skipped.
 */
export function deliveriesOfEach(tenantId: string, list: readonly { deviceIds: readonly string[]; event: string; data: unknown }[]): SQL {
  const payloads = list.flatMap((e) => {
    const payload = e.deviceIds.length > 0 ? toWebhookPayload(e.event, e.data) : undefined;
    return payload ? [{ payload, deviceIds: e.deviceIds }] : [];
  });
  return repo.insertForEach(tenantId, payloads);
}

/**
 * Events whose webhooks their writers enqueue in their own transaction (`message`: the message
 * group commit; `room_message`: the room send group commit and held release; `spend_alert`: the transaction
 * that claims the alert, SpendService; `a2a_message`: the A2A send and held release,
 * a2a/messages.ts), skipped by the sink.
 */
export const IN_TX_EVENTS: ReadonlySet<string> = new Set(['message', 'room_message', 'spend_alert', 'a2a_message']);

/** The Notifier's webhook sink: enqueues every webhook event but {@link IN_TX_EVENTS} in its own tenant transaction. */
export class WebhookOutbox implements WebhookSink {
  constructor(
    private readonly db: Db,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** Whether {@link enqueue} enqueues `event`: a webhook event its writer does not enqueue itself. */
  handles(event: string): boolean {
    return !IN_TX_EVENTS.has(event) && isWebhookEvent(event);
  }

  /** Never throws: a failed enqueue is logged (event name and tenant only) and the socket delivery stands. */
  async enqueue(tenantId: string, audience: Audience, event: string, data: unknown): Promise<void> {
    if (!this.handles(event)) return;
    try {
      await withTenant(this.db, tenantId, (tx) => enqueueInTx(tx, tenantId, audience, event, data));
    } catch (err) {
      this.log.warn({ err, event, tenantId }, 'webhook enqueue failed');
    }
  }
}
