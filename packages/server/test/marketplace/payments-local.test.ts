/**
 * LocalProcessor (design §8.26), the embedded default processor: the three test payment methods;
 * `pm_card_async` confirmed by a `charge.succeeded` event handed to the `deliver` callback, signed
 * so that `parseWebhook` accepts it (and rejects it tampered, unsigned or under another secret);
 * idempotent accounts, charges, refunds and transfers (one effect, one event per key); over-refund
 * refused; transfers paid, or failed for accounts marked with `failPayoutsTo` or ending in `_fail`;
 * failed deliveries retried with the same event id; `close()` cancels pending timers (which never
 * keep the process alive) and waits for deliveries under way. No database, no network — except the
 * last block: the service stopped while a `pm_card_async` charge is pending settles it after a
 * restart on the same storage (PGlite data directory; PostgreSQL database), the processor's events
 * being kept in its table (migration 0043).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { backend, createPgDatabase, startApp, type StartOptions, type TestApp } from '../../testing/harness.js';
import { certifiedDeveloper, operatorAuth, publishedListing, renter } from '../../testing/marketplace-fixtures.js';
import {
  LOCAL_DECLINE_REASON,
  LocalProcessor,
  type LocalProcessorOptions,
} from '../../src/modules/marketplace/payments/local.js';
import { ProcessorError, WebhookSignatureError, type ProcessorEvent } from '../../src/modules/marketplace/payments/processor.js';

const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;
const BASE_URL = 'http://127.0.0.1:8080';

interface Delivered {
  rawBody: string;
  headers: Record<string, string>;
}

/** A LocalProcessor whose deliveries are recorded; `next()` resolves with the next delivery. */
function harness(extra: Partial<LocalProcessorOptions> = {}) {
  const secret = extra.webhookSecret ?? newSecret();
  const delivered: Delivered[] = [];
  const waiters: Array<(d: Delivered) => void> = [];
  let cursor = 0;
  const processor = new LocalProcessor({
    webhookSecret: secret,
    baseUrl: `${BASE_URL}/`,
    asyncDelayMs: 20,
    transferDelayMs: 20,
    deliver: async (rawBody, headers) => {
      const d = { rawBody, headers };
      delivered.push(d);
      waiters.shift()?.(d);
    },
    ...extra,
  });
  /** The next delivery not yet returned by `next()`. */
  const next = (): Promise<Delivered> => {
    const i = cursor++;
    if (delivered[i]) return Promise.resolve(delivered[i]!);
    return new Promise((resolve) => waiters.push(resolve));
  };
  /** Deliver, then verify and normalise with the same processor (what the webhook route does). */
  const nextEvent = async (): Promise<ProcessorEvent> => {
    const d = await next();
    return processor.parseWebhook(d.rawBody, d.headers);
  };
  return { processor, secret, delivered, next, nextEvent };
}

const charge = (paymentMethod: string, idempotencyKey: string, amountCents = 2500, metadata: Record<string, string> = { rental_id: 'rental-1' }) => ({
  amountCents,
  currency: 'usd' as const,
  paymentMethod,
  description: 'Rental',
  metadata,
  idempotencyKey,
});
const transfer = (destinationAccountId: string, idempotencyKey: string, amountCents = 1500) => ({
  destinationAccountId,
  amountCents,
  currency: 'usd' as const,
  metadata: { payout_id: `payout-${idempotencyKey}` },
  idempotencyKey,
});
const rejection = async (p: Promise<unknown>): Promise<ProcessorError> => {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProcessorError);
  return err as ProcessorError;
};

const open: LocalProcessor[] = [];
const track = <T extends { processor: LocalProcessor }>(h: T): T => {
  open.push(h.processor);
  return h;
};
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(open.splice(0).map((p) => p.close()));
});

describe('LocalProcessor payment methods', { timeout: 10_000 }, () => {
  it('pm_card_visa succeeds at once, without an event', async () => {
    const h = track(harness());
    const result = await h.processor.charge(charge('pm_card_visa', 'k1'));
    expect(result).toEqual({ chargeId: expect.stringMatching(/^pi_local_[0-9a-f]{24}$/), status: 'succeeded' });
    expect(h.processor.pendingEvents).toBe(0);
  });

  it('pm_card_chargeDeclined is declined with "Your card was declined."', async () => {
    const h = track(harness());
    const result = await h.processor.charge(charge('pm_card_chargeDeclined', 'k1'));
    expect(result).toMatchObject({ status: 'declined', declineReason: 'Your card was declined.' });
    expect(LOCAL_DECLINE_REASON).toBe('Your card was declined.');
    expect(h.processor.pendingEvents).toBe(0);
  });

  it('any other payment method is declined with a reason naming the three test methods', async () => {
    const h = track(harness());
    const result = await h.processor.charge(charge('pm_1RealCardFromStripe', 'k1'));
    expect(result.status).toBe('declined');
    for (const pm of ['pm_card_visa', 'pm_card_chargeDeclined', 'pm_card_async']) expect(result.declineReason).toContain(pm);
  });

  it('refuses a charge below 50 cents, a non-integer amount and another currency, like Stripe', async () => {
    const h = track(harness());
    expect((await rejection(h.processor.charge(charge('pm_card_visa', 'small', 49)))).code).toBe('amount_too_small');
    expect((await rejection(h.processor.charge(charge('pm_card_visa', 'frac', 100.5)))).code).toBe('parameter_invalid_integer');
    expect((await rejection(h.processor.charge({ ...charge('pm_card_visa', 'eur'), currency: 'eur' as 'usd' }))).code).toBe('currency_unsupported');
  });

  it('pm_card_async answers pending, then delivers a signed charge.succeeded that parseWebhook accepts', async () => {
    const h = track(harness());
    const result = await h.processor.charge(charge('pm_card_async', 'async-1', 2500, { rental_id: 'rental-async' }));
    expect(result).toEqual({ chargeId: expect.stringMatching(/^pi_local_/), status: 'pending' });
    expect(h.processor.pendingEvents).toBe(1);
    // Not refundable until confirmed.
    expect((await rejection(h.processor.refund({ chargeId: result.chargeId, amountCents: 100, metadata: {}, idempotencyKey: 'early' }))).code).toBe(
      'charge_not_refundable',
    );

    const d = await h.next();
    expect(d.headers['content-type']).toBe('application/json');
    expect(d.headers['webhook-id']).toMatch(/^evt_local_[0-9a-f]{24}$/);
    expect(d.headers['webhook-signature']).toMatch(/^v1,/);
    expect(Math.abs(Number(d.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
    const body = JSON.parse(d.rawBody);
    expect(body).toMatchObject({ id: d.headers['webhook-id'], type: 'charge.succeeded', data: { object_id: result.chargeId, metadata: { rental_id: 'rental-async' } } });

    expect(h.processor.parseWebhook(d.rawBody, d.headers)).toEqual({
      id: d.headers['webhook-id'],
      type: 'charge.succeeded',
      objectId: result.chargeId,
      metadata: { rental_id: 'rental-async' },
    });
    expect(h.processor.pendingEvents).toBe(0);
    // Confirmed: now refundable.
    expect((await h.processor.refund({ chargeId: result.chargeId, amountCents: 100, metadata: {}, idempotencyKey: 'late' })).status).toBe('succeeded');
  });

  it('parseWebhook rejects a tampered body, a wrong signature, a stale timestamp, missing headers and another secret', async () => {
    const h = track(harness());
    await h.processor.charge(charge('pm_card_async', 'async-2'));
    const d = await h.next();
    const tampered = d.rawBody.replace('charge.succeeded', 'charge.failed');
    expect(tampered).not.toBe(d.rawBody);
    expect(() => h.processor.parseWebhook(tampered, d.headers)).toThrow(WebhookSignatureError);
    expect(() => h.processor.parseWebhook(d.rawBody, { ...d.headers, 'webhook-signature': 'v1,AAAA' })).toThrow(WebhookSignatureError);
    expect(() => h.processor.parseWebhook(d.rawBody, { ...d.headers, 'webhook-id': 'evt_local_other' })).toThrow(WebhookSignatureError);
    expect(() => h.processor.parseWebhook(d.rawBody, { ...d.headers, 'webhook-timestamp': String(Math.floor(Date.now() / 1000) - 3600) })).toThrow(
      WebhookSignatureError,
    );
    expect(() => h.processor.parseWebhook(d.rawBody, { 'webhook-id': d.headers['webhook-id'], 'webhook-signature': undefined })).toThrow(
      WebhookSignatureError,
    );
    const other = track(harness());
    expect(() => other.processor.parseWebhook(d.rawBody, d.headers)).toThrow(WebhookSignatureError);
    // Upper-case header names (as some frameworks hand them) still verify.
    const upper = Object.fromEntries(Object.entries(d.headers).map(([k, v]) => [k.toUpperCase(), v]));
    expect(h.processor.parseWebhook(d.rawBody, upper).type).toBe('charge.succeeded');
  });

  it('rejects a construction without a whsec_ secret', () => {
    const base = { baseUrl: BASE_URL, deliver: async () => undefined };
    expect(() => new LocalProcessor({ ...base, webhookSecret: 'plain-secret' })).toThrow(/whsec_/);
    expect(() => new LocalProcessor({ ...base, webhookSecret: 'whsec_' })).toThrow(/webhookSecret/);
  });
});

describe('LocalProcessor idempotency and refunds', { timeout: 10_000 }, () => {
  it('the same charge key answers the same result, with one effect and one event', async () => {
    const h = track(harness({ asyncDelayMs: 60_000 }));
    const a = await h.processor.charge(charge('pm_card_visa', 'same'));
    const b = await h.processor.charge(charge('pm_card_visa', 'same'));
    expect(b).toEqual(a);
    const c = await h.processor.charge(charge('pm_card_visa', 'other'));
    expect(c.chargeId).not.toBe(a.chargeId);

    const [p1, p2] = await Promise.all([h.processor.charge(charge('pm_card_async', 'async-same')), h.processor.charge(charge('pm_card_async', 'async-same'))]);
    expect(p2).toEqual(p1);
    expect(h.processor.pendingEvents).toBe(1);
  });

  it('a key reused with other parameters is refused', async () => {
    const h = track(harness());
    await h.processor.charge(charge('pm_card_visa', 'reuse', 2500));
    expect((await rejection(h.processor.charge(charge('pm_card_visa', 'reuse', 2600)))).code).toBe('idempotency_key_reused');
    expect((await rejection(h.processor.transfer(transfer('acct_local_x', 'reuse')))).code).toBe('idempotency_key_reused');
  });

  it('refunds are idempotent per key and never exceed what is left of the charge', async () => {
    const h = track(harness());
    const { chargeId } = await h.processor.charge(charge('pm_card_visa', 'c', 1000));
    const r1 = await h.processor.refund({ chargeId, amountCents: 600, metadata: { rental_id: 'rental-1' }, idempotencyKey: 'refund-a' });
    expect(r1).toEqual({ refundId: expect.stringMatching(/^re_local_/), status: 'succeeded' });
    // Same key: same refund, not a second 600.
    expect(await h.processor.refund({ chargeId, amountCents: 600, metadata: { rental_id: 'rental-1' }, idempotencyKey: 'refund-a' })).toEqual(r1);
    const over = await rejection(h.processor.refund({ chargeId, amountCents: 401, metadata: {}, idempotencyKey: 'refund-b' }));
    expect(over.code).toBe('amount_too_large');
    expect(over.message).toMatch(/400 cents/);
    // The refused attempt took nothing: the remaining 400 can still be refunded, then nothing more.
    expect((await h.processor.refund({ chargeId, amountCents: 400, metadata: {}, idempotencyKey: 'refund-c' })).status).toBe('succeeded');
    expect((await rejection(h.processor.refund({ chargeId, amountCents: 1, metadata: {}, idempotencyKey: 'refund-d' }))).code).toBe('amount_too_large');
  });

  it('refuses refunds of declined charges and of ids that are not local charges', async () => {
    const h = track(harness());
    const declined = await h.processor.charge(charge('pm_card_chargeDeclined', 'd'));
    expect((await rejection(h.processor.refund({ chargeId: declined.chargeId, amountCents: 100, metadata: {}, idempotencyKey: 'r1' }))).code).toBe(
      'charge_not_refundable',
    );
    expect((await rejection(h.processor.refund({ chargeId: 'pi_3Stripe', amountCents: 100, metadata: {}, idempotencyKey: 'r2' }))).code).toBe('resource_missing');
  });
});

describe('LocalProcessor connected accounts and transfers', { timeout: 10_000 }, () => {
  it('creates ready acct_local_ accounts idempotently, with placeholder links under baseUrl', async () => {
    const h = track(harness());
    const a = await h.processor.createConnectedAccount({ tenantId: 't1', idempotencyKey: 'acct-t1' });
    expect(a).toEqual({ accountId: expect.stringMatching(/^acct_local_[0-9a-f]{16}$/), ready: true });
    expect(await h.processor.createConnectedAccount({ tenantId: 't1', idempotencyKey: 'acct-t1' })).toEqual(a);
    const b = await h.processor.createConnectedAccount({ tenantId: 't2', idempotencyKey: 'acct-t2' });
    expect(b.accountId).not.toBe(a.accountId);
    expect(await h.processor.retrieveAccount(a.accountId)).toEqual({ accountId: a.accountId, ready: true });
    expect((await rejection(h.processor.retrieveAccount('acct_1Stripe'))).code).toBe('resource_missing');

    const onboarding = await h.processor.onboardingLink(a.accountId, { refreshUrl: 'https://app/refresh', returnUrl: 'https://app/return?x=1' });
    expect(onboarding.url).toBe(`${BASE_URL}/api/v1/marketplace/connect/local/${a.accountId}?return_url=${encodeURIComponent('https://app/return?x=1')}`);
    expect((await h.processor.dashboardLink(a.accountId)).url).toBe(`${BASE_URL}/api/v1/marketplace/connect/local/${a.accountId}/dashboard`);
  });

  it('a transfer answers pending, then transfer.paid with its metadata; the same key transfers once', async () => {
    const h = track(harness());
    const { accountId } = await h.processor.createConnectedAccount({ tenantId: 't1', idempotencyKey: 'acct' });
    const result = await h.processor.transfer(transfer(accountId, 'payout-1'));
    expect(result).toEqual({ transferId: expect.stringMatching(/^tr_local_[0-9a-f]{24}$/), status: 'pending' });
    expect(await h.processor.transfer(transfer(accountId, 'payout-1'))).toEqual(result);
    expect(h.processor.pendingEvents).toBe(1);
    const event = await h.nextEvent();
    expect(event).toEqual({ id: expect.stringMatching(/^evt_local_/), type: 'transfer.paid', objectId: result.transferId, metadata: { payout_id: 'payout-payout-1' } });
    expect(h.processor.pendingEvents).toBe(0);
    expect(h.delivered).toHaveLength(1);
  });

  it('a transfer to an account marked with failPayoutsTo, or ending in _fail, emits transfer.failed with a reason', async () => {
    const h = track(harness());
    const { accountId } = await h.processor.createConnectedAccount({ tenantId: 't1', idempotencyKey: 'acct' });
    h.processor.failPayoutsTo(accountId);
    const failing = await h.processor.transfer(transfer(accountId, 'payout-f'));
    expect(failing.status).toBe('pending');
    const failed = await h.nextEvent();
    expect(failed).toMatchObject({ type: 'transfer.failed', objectId: failing.transferId, metadata: { payout_id: 'payout-payout-f' } });
    expect(failed.failureReason).toContain(accountId);

    const suffixed = await h.processor.transfer(transfer('acct_local_abc_fail', 'payout-g'));
    expect(await h.nextEvent()).toMatchObject({ type: 'transfer.failed', objectId: suffixed.transferId, failureReason: expect.any(String) });

    // Other accounts still get paid.
    const other = await h.processor.createConnectedAccount({ tenantId: 't2', idempotencyKey: 'acct-2' });
    const ok = await h.processor.transfer(transfer(other.accountId, 'payout-h'));
    expect(await h.nextEvent()).toMatchObject({ type: 'transfer.paid', objectId: ok.transferId });
  });

  it('a transfer to a destination that is not a local account fails at once, without an event', async () => {
    const h = track(harness());
    const result = await h.processor.transfer(transfer('acct_1Stripe', 'payout-x'));
    expect(result).toEqual({ transferId: null, status: 'failed', failureReason: expect.stringContaining('acct_1Stripe') });
    expect(h.processor.pendingEvents).toBe(0);
    expect((await rejection(h.processor.transfer(transfer('acct_local_a', 'payout-0', 0)))).code).toBe('parameter_invalid_integer');
  });
});

describe('LocalProcessor delivery and close()', { timeout: 10_000 }, () => {
  it('retries a rejected delivery with the same event id and reports the failure', async () => {
    const errors: Array<{ id: string; attempt: number; final: boolean }> = [];
    let calls = 0;
    const seen: string[] = [];
    let done!: () => void;
    const delivered = new Promise<void>((resolve) => (done = resolve));
    const p = new LocalProcessor({
      webhookSecret: newSecret(),
      baseUrl: BASE_URL,
      asyncDelayMs: 5,
      retryDelayMs: 5,
      deliver: async (rawBody, headers) => {
        calls += 1;
        seen.push(JSON.parse(rawBody).id);
        p.parseWebhook(rawBody, headers);
        if (calls === 1) throw new Error('handler busy');
        done();
      },
      onDeliveryError: (_error, event) => errors.push({ id: event.id, attempt: event.attempt, final: event.final }),
    });
    open.push(p);
    await p.charge(charge('pm_card_async', 'retry'));
    await delivered;
    expect(calls).toBe(2);
    expect(seen[1]).toBe(seen[0]);
    expect(errors).toEqual([{ id: seen[0], attempt: 1, final: false }]);
  });

  it('pending timers do not keep the process alive', async () => {
    const h = track(harness({ asyncDelayMs: 60_000, transferDelayMs: 60_000 }));
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    await h.processor.charge(charge('pm_card_async', 'a'));
    await h.processor.transfer(transfer('acct_local_a', 't'));
    expect(h.processor.pendingEvents).toBe(2);
    expect(timers()).toBe(before);
  });

  it('close() cancels pending confirmations and settlements; later calls are refused', async () => {
    vi.useFakeTimers();
    const h = track(harness({ asyncDelayMs: 1000, transferDelayMs: 1000 }));
    await h.processor.charge(charge('pm_card_async', 'a'));
    await h.processor.transfer(transfer('acct_local_a', 't'));
    expect(h.processor.pendingEvents).toBe(2);
    expect(vi.getTimerCount()).toBe(2);
    await h.processor.close();
    expect(h.processor.pendingEvents).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(h.delivered).toHaveLength(0);
    expect((await rejection(h.processor.charge(charge('pm_card_visa', 'after')))).code).toBe('closed');

    // Control: without close(), the same clock advance delivers both events.
    const control = track(harness({ asyncDelayMs: 1000, transferDelayMs: 1000 }));
    await control.processor.charge(charge('pm_card_async', 'a'));
    await control.processor.transfer(transfer('acct_local_a', 't'));
    await vi.advanceTimersByTimeAsync(10_000);
    expect(control.delivered.map((d) => JSON.parse(d.rawBody).type).sort()).toEqual(['charge.succeeded', 'transfer.paid']);
  });

  it('close() waits for a delivery under way', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const deliveryStarted = new Promise<void>((resolve) => (started = resolve));
    let finished = false;
    const p = new LocalProcessor({
      webhookSecret: newSecret(),
      baseUrl: BASE_URL,
      asyncDelayMs: 5,
      deliver: async () => {
        started();
        await gate;
        finished = true;
      },
    });
    open.push(p);
    await p.charge(charge('pm_card_async', 'slow'));
    await deliveryStarted;
    let closed = false;
    const closing = p.close().then(() => (closed = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(closed).toBe(false);
    release();
    await closing;
    expect(finished).toBe(true);
  });
});

describe('LocalProcessor across a restart', () => {
  /** Start, rent with `pm_card_async`, stop before the confirmation is due; start again on the same storage: the rental becomes active. */
  async function pendingChargeSurvives(opts: StartOptions): Promise<void> {
    // Long enough that the first run stops before the confirmation is due.
    const env = { RATE_LIMIT_ENROLL_PER_10MIN: '1000', LOCAL_PROCESSOR_DELAY_MS: '4000' };
    let t: TestApp | undefined = await startApp({ ...opts, env });
    try {
      const op = await operatorAuth(t);
      const dev = await certifiedDeveloper(t, op);
      const buyer = await renter(t);
      const listingId = await publishedListing(t, dev);
      const rented = await t.request({ method: 'POST', url: '/api/v1/marketplace/rentals', headers: buyer.owner.auth, payload: { listing_id: listingId, payment_method: 'pm_card_async' } });
      expect(rented.status, JSON.stringify(rented.body)).toBe(201);
      expect(rented.body.status).toBe('pending');
      const id = rented.body.rental_id as string;
      await t.close();
      t = undefined;

      t = await startApp({ ...opts, env });
      const app = t;
      const rental = async () => (await app.request({ method: 'GET', url: `/api/v1/marketplace/rentals/${id}`, headers: buyer.owner.auth })).body;
      await expect.poll(async () => (await rental()).status, { timeout: 20_000, interval: 200 }).toBe('active');
      expect((await rental()).grant.spt_token).toMatch(/^ey/);
      const rows = async (q: ReturnType<typeof sql>) => ((await app.app.parley.database.db.execute(q)) as unknown as { rows: Record<string, unknown>[] }).rows;
      expect(await rows(sql`select type, delivered_at is not null as delivered from local_processor_events`)).toEqual([{ type: 'charge.succeeded', delivered: true }]);
      expect(await rows(sql`select count(*)::int as n from processor_events where type = 'charge.succeeded'`)).toEqual([{ n: 1 }]);
      const ledger = await app.request({ method: 'GET', url: '/api/v1/marketplace/ledger/verify', headers: op });
      expect(ledger.body).toMatchObject({ balanced: true });
    } finally {
      await t?.close();
    }
  }

  it.skipIf(backend === 'postgres')('PGlite data directory: a pm_card_async charge pending at shutdown settles after the restart', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-local-processor-'));
    try {
      await pendingChargeSurvives({ dataDir });
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000); // two on-disk PGlite starts (restart.test.ts)

  it.skipIf(backend !== 'postgres')('PostgreSQL database: a pm_card_async charge pending at shutdown settles after the restart', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-local-processor-'));
    const db = await createPgDatabase();
    try {
      await pendingChargeSurvives({ dataDir, databaseUrl: db.url });
    } finally {
      await db.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
