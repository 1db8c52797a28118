/**
 * Payment-processor events (design §8.26): `POST /marketplace/webhooks/stripe` (Stripe-Signature)
 * and `POST /marketplace/webhooks/local` (the embedded processor, Standard Webhooks signature; its
 * asynchronous confirmations are delivered to this same handler in process). Each event is
 * verified by the processor, then processed ONCE: its id goes into `processor_events` in the same
 * transaction as the state change it causes, so a replayed event changes nothing and answers
 * `duplicate: true`.
 */
import type { WebhookAck } from '@parley/protocol';
import { sql } from 'drizzle-orm';
import type { Db, Tx } from '../../db/client.js';
import { crossTenant } from '../../db/tenant.js';
import { badRequest } from '../../lib/errors.js';
import { asUuid } from '../../lib/ids.js';
import { WebhookSignatureError, type PaymentProcessor } from './payments/processor.js';
import type { PayoutService } from './payouts.js';
import type { RentalService } from './rentals.js';
import { setAccountStatus } from './settings-repo.js';

export class ProcessorEventHandler {
  constructor(private readonly deps: { db: Db; processor: PaymentProcessor; rentals: RentalService; payouts: PayoutService }) {}

  /**
   * Verify, normalise and apply one webhook request (raw body as received, lower-case headers).
   * @throws 400 bad or missing signature.
   */
  async handle(rawBody: string, headers: Record<string, string | undefined>): Promise<WebhookAck> {
    const { processor, rentals, payouts, db } = this.deps;
    let ev;
    try {
      ev = processor.parseWebhook(rawBody, headers);
    } catch (err) {
      if (err instanceof WebhookSignatureError) throw badRequest(`webhook signature: ${err.message}`);
      throw err;
    }
    let seen: boolean | undefined;
    const record = async (tx: Tx): Promise<boolean> => {
      const res = (await tx.execute(
        sql`insert into processor_events (processor, event_id, type) values (${processor.name}, ${ev.id}, ${ev.type}) on conflict do nothing returning event_id`,
      )) as unknown as { rows: unknown[] };
      seen = res.rows.length === 0;
      return !seen;
    };
    // Metadata ids that are not UUIDs name nothing of ours (another integration on the same account): recorded once, ignored.
    const rentalId = asUuid(ev.metadata.rental_id);
    const payoutId = asUuid(ev.metadata.payout_id);
    if ((ev.type === 'charge.succeeded' || ev.type === 'charge.failed') && rentalId) {
      await rentals.settleCharge(rentalId, ev.objectId, ev.type === 'charge.succeeded' ? 'succeeded' : 'failed', ev.failureReason, record);
    } else if ((ev.type === 'transfer.paid' || ev.type === 'transfer.failed') && payoutId) {
      const tenant = await payouts.tenantOfPayout(payoutId);
      if (tenant) await payouts.settle(payoutId, tenant, ev.type === 'transfer.paid' ? 'completed' : 'failed', ev.failureReason, record);
    } else if (ev.type === 'account.updated' && ev.ready !== undefined) {
      await crossTenant(db, 'processor account events name an account, not a tenant', async (tx) => {
        if (await record(tx)) await setAccountStatus(tx, ev.objectId, ev.ready ? 'ready' : 'onboarding');
      });
    }
    // Events that touched nothing (unknown rental, other types) are still recorded once.
    if (seen === undefined) await crossTenant(db, 'processor_events registry', (tx) => record(tx));
    return { received: true, duplicate: seen === true };
  }
}
