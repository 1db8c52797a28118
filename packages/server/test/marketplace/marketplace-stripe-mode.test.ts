/**
 * The service in Stripe mode (design §8.26: `STRIPE_SECRET_KEY` + `STRIPE_WEBHOOK_SECRET`) against a
 * local HTTP double of the Stripe API: a rental is charged through a PaymentIntent (with the
 * rental's idempotency key), an asynchronous `payment_intent.succeeded` delivered to
 * `POST /api/v1/marketplace/webhooks/stripe` with a `Stripe-Signature` made by the package's own
 * `generateTestHeaderString` activates it, the replayed event is processed once, a bad signature
 * is a 400, and the local processor's route answers 404 in this mode.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'drizzle-orm';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../../testing/harness.js';
import { certifiedDeveloper, operatorAuth, publishedListing, renter } from '../../testing/marketplace-fixtures.js';

const WEBHOOK_SECRET = 'whsec_stripe_mode_test';

describe('marketplace in Stripe mode', () => {
  let t: TestApp;
  let double: http.Server;
  const requests: { path: string; idempotencyKey: string | undefined; body: string }[] = [];

  beforeAll(async () => {
    // The PaymentIntent answers `processing`: the rental waits for the webhook.
    double = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        requests.push({ path: req.url ?? '', idempotencyKey: req.headers['idempotency-key'] as string | undefined, body });
        res.setHeader('content-type', 'application/json');
        if (req.url === '/v1/payment_intents') {
          res.end(JSON.stringify({ id: 'pi_double_1', object: 'payment_intent', status: 'processing', amount: 5000, currency: 'usd', metadata: {} }));
          return;
        }
        res.statusCode = 404;
        res.end(JSON.stringify({ error: { type: 'invalid_request_error', message: 'not in the double' } }));
      });
    });
    await new Promise<void>((resolve) => double.listen(0, '127.0.0.1', resolve));
    const port = (double.address() as AddressInfo).port;
    t = await startApp({
      env: {
        RATE_LIMIT_ENROLL_PER_10MIN: '1000',
        STRIPE_SECRET_KEY: 'sk_test_double',
        STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
        STRIPE_API_HOST: '127.0.0.1',
        STRIPE_API_PORT: String(port),
        STRIPE_API_PROTOCOL: 'http',
      },
    });
  });
  afterAll(async () => {
    await t?.close();
    await new Promise((resolve) => double.close(resolve));
  });

  const post = (payload: string, signature: string) =>
    t.request({ method: 'POST', url: '/api/v1/marketplace/webhooks/stripe', headers: { 'content-type': 'application/json', 'stripe-signature': signature }, payload });

  it('charges through Stripe, activates on the signed webhook once, refuses bad signatures', async () => {
    expect(t.app.parley.marketplace.processor.name).toBe('stripe');
    const dev = await certifiedDeveloper(t, await operatorAuth(t));
    const listingId = await publishedListing(t, dev);
    const buyer = await renter(t);
    const created = await t.request({ method: 'POST', url: '/api/v1/marketplace/rentals', headers: buyer.owner.auth, payload: { listing_id: listingId, payment_method: 'pm_card_visa' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.status).toBe('pending');
    const charge = requests.find((r) => r.path === '/v1/payment_intents')!;
    expect(charge.idempotencyKey).toBe(`rental-charge:${created.body.rental_id}`);
    expect(new URLSearchParams(charge.body).get('amount')).toBe('5000');

    const event = {
      id: 'evt_double_1',
      object: 'event',
      type: 'payment_intent.succeeded',
      data: { object: { id: 'pi_double_1', object: 'payment_intent', status: 'succeeded', metadata: { rental_id: created.body.rental_id } } },
    };
    const payload = JSON.stringify(event);
    const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET });
    const first = await post(payload, signature);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toEqual({ received: true, duplicate: false });
    const rental = await t.request({ method: 'GET', url: `/api/v1/marketplace/rentals/${created.body.rental_id}`, headers: buyer.owner.auth });
    expect(rental.body.status).toBe('active');
    expect(rental.body.grant.spt_token).toMatch(/^ey/);
    const replay = await post(payload, signature);
    expect(replay.body).toEqual({ received: true, duplicate: true });
    const charges = (await t.app.parley.database.db.execute(
      sql`select count(*)::int as n from ledger_transactions where kind = 'charge' and reference = ${created.body.rental_id}`,
    )) as unknown as { rows: { n: number }[] };
    expect(charges.rows[0]!.n).toBe(1);

    expect((await post(payload.replace('succeeded', 'failed'), signature)).status).toBe(400);
    expect((await post(payload, Stripe.webhooks.generateTestHeaderString({ payload, secret: 'whsec_wrong' }))).status).toBe(400);
    expect((await t.request({ method: 'POST', url: '/api/v1/marketplace/webhooks/local', headers: { 'content-type': 'application/json' }, payload: '{}' })).status).toBe(404);
  });
});
