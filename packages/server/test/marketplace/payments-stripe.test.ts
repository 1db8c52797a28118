/**
 * StripeProcessor contract (design §8.24, §8.26) against a local HTTP double of the Stripe API: a
 * `node:http` server on 127.0.0.1 that records each request (method, path, headers, form-encoded
 * parameters) and answers canned Stripe-shaped JSON. Checks the parameters of every call, that
 * every POST carries an Idempotency-Key (the caller's, unchanged, also when repeated or retried),
 * the charge status mapping, 402 card errors -> declined, 5xx -> ProcessorError, transfer refusals
 * -> failed; and webhooks signed with the package's own `generateTestHeaderString` verify, tampered
 * bodies / wrong secrets / stale timestamps throw WebhookSignatureError, and the normalisation
 * table holds. No database.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ProcessorError, WebhookSignatureError } from '../../src/modules/marketplace/payments/processor.js';
import { StripeProcessor, stripeAccountReady, type StripeProcessorOptions } from '../../src/modules/marketplace/payments/stripe.js';

interface Recorded {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  params: Record<string, string>;
}
interface Canned {
  status: number;
  body: unknown;
}

const SECRET_KEY = 'sk_test_parley_double';
const WEBHOOK_SECRET = 'whsec_platform_test_secret';
const CONNECT_WEBHOOK_SECRET = 'whsec_connect_test_secret';

const stripeError = (status: number, error: Record<string, unknown>): Canned => ({ status, body: { error } });

/** The canned Stripe API: answers by route and by the parameters a test chooses. */
function answer(req: Recorded, overrides: Map<string, Canned[]>): Canned {
  const queued = overrides.get(`${req.method} ${req.path}`)?.shift();
  if (queued) return queued;
  const p = req.params;
  const metadata = Object.fromEntries(
    Object.entries(p)
      .filter(([k]) => k.startsWith('metadata['))
      .map(([k, v]) => [k.slice('metadata['.length, -1), v]),
  );
  if (req.method === 'POST' && req.path === '/v1/accounts') {
    return {
      status: 200,
      body: { id: 'acct_1NewExpress', object: 'account', type: 'express', details_submitted: false, charges_enabled: false, payouts_enabled: false, capabilities: { transfers: 'inactive' }, metadata },
    };
  }
  const accountMatch = /^\/v1\/accounts\/(acct_\w+)$/.exec(req.path);
  if (req.method === 'GET' && accountMatch) {
    const id = accountMatch[1]!;
    if (id === 'acct_missing') return stripeError(404, { type: 'invalid_request_error', code: 'resource_missing', message: `No such account: '${id}'`, param: 'account' });
    const ready = id === 'acct_ready';
    return {
      status: 200,
      body: { id, object: 'account', type: 'express', details_submitted: ready, charges_enabled: false, payouts_enabled: ready, capabilities: { transfers: ready ? 'active' : 'inactive' }, metadata: {} },
    };
  }
  if (req.method === 'POST' && req.path === '/v1/account_links') {
    return { status: 200, body: { object: 'account_link', url: `https://connect.stripe.com/setup/e/${p.account}/abc`, created: 1, expires_at: 2 } };
  }
  const loginMatch = /^\/v1\/accounts\/(acct_\w+)\/login_links$/.exec(req.path);
  if (req.method === 'POST' && loginMatch) {
    return { status: 200, body: { object: 'login_link', url: `https://connect.stripe.com/express/${loginMatch[1]}/xyz`, created: 1 } };
  }
  if (req.method === 'POST' && req.path === '/v1/payment_intents') {
    const pi = (id: string, status: string, extra: Record<string, unknown> = {}) => ({
      status: 200,
      body: { id, object: 'payment_intent', amount: Number(p.amount), currency: p.currency, status, metadata, last_payment_error: null, ...extra },
    });
    switch (p.payment_method) {
      case 'pm_card_visa':
        return pi('pi_succeeded', 'succeeded');
      case 'pm_processing':
        return pi('pi_processing', 'processing');
      case 'pm_requires_action':
        return pi('pi_requires_action', 'requires_action');
      case 'pm_requires_pm':
        return pi('pi_requires_pm', 'requires_payment_method', { last_payment_error: { type: 'card_error', code: 'card_declined', message: 'Your card has insufficient funds.' } });
      case 'pm_card_chargeDeclined':
        return stripeError(402, {
          type: 'card_error',
          code: 'card_declined',
          decline_code: 'generic_decline',
          message: 'Your card was declined.',
          charge: 'ch_declined',
          payment_intent: { id: 'pi_declined', object: 'payment_intent', status: 'requires_payment_method' },
        });
      case 'pm_card_bare_decline':
        return stripeError(402, { type: 'card_error', code: 'card_declined', decline_code: 'do_not_honor', message: '' });
      case 'pm_api_down':
        return stripeError(500, { type: 'api_error', message: 'An unknown error occurred' });
      default:
        return stripeError(400, { type: 'invalid_request_error', code: 'resource_missing', message: `No such PaymentMethod: '${p.payment_method}'`, param: 'payment_method' });
    }
  }
  if (req.method === 'POST' && req.path === '/v1/refunds') {
    if (Number(p.amount) > 5000) {
      return stripeError(400, { type: 'invalid_request_error', code: 'amount_too_large', message: 'Refund amount ($60.00) is greater than unrefunded amount on charge ($50.00)', param: 'amount' });
    }
    return { status: 200, body: { id: 're_1', object: 'refund', amount: Number(p.amount), payment_intent: p.payment_intent, status: p.amount === '1' ? 'pending' : 'succeeded', metadata } };
  }
  if (req.method === 'POST' && req.path === '/v1/transfers') {
    if (p.destination === 'acct_broke') {
      return stripeError(400, { type: 'invalid_request_error', code: 'balance_insufficient', message: 'You have insufficient available funds in your Stripe account.' });
    }
    if (p.destination === 'acct_outage') return stripeError(503, { type: 'api_error', message: 'Service unavailable' });
    return { status: 200, body: { id: 'tr_1', object: 'transfer', amount: Number(p.amount), currency: p.currency, destination: p.destination, metadata, reversed: false, amount_reversed: 0 } };
  }
  return stripeError(404, { type: 'invalid_request_error', message: `Unrecognized request URL (${req.method}: ${req.path})` });
}

describe('StripeProcessor against a local Stripe API double', { timeout: 10_000 }, () => {
  let server: http.Server;
  let port: number;
  const requests: Recorded[] = [];
  const overrides = new Map<string, Canned[]>();
  let stripe: StripeProcessor;
  const processor = (extra: Partial<StripeProcessorOptions> = {}) =>
    new StripeProcessor({ secretKey: SECRET_KEY, webhookSecret: WEBHOOK_SECRET, host: '127.0.0.1', port, protocol: 'http', maxNetworkRetries: 0, ...extra });
  const posts = () => requests.filter((r) => r.method === 'POST');
  const only = (): Recorded => {
    expect(requests).toHaveLength(1);
    return requests[0]!;
  };

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const url = new URL(req.url ?? '/', 'http://double');
        const raw = Buffer.concat(chunks).toString('utf8');
        const params = Object.fromEntries(new URLSearchParams(req.method === 'GET' ? url.search : raw));
        const recorded: Recorded = { method: req.method ?? '', path: url.pathname, headers: req.headers, params };
        requests.push(recorded);
        const { status, body } = answer(recorded, overrides);
        res.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_${requests.length}` });
        res.end(JSON.stringify(body));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    stripe = processor();
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  beforeEach(() => {
    requests.length = 0;
    overrides.clear();
  });

  describe('connected accounts', () => {
    it('creates an Express account with the transfers capability and metadata[tenant_id], under the caller key', async () => {
      const info = await stripe.createConnectedAccount({ tenantId: 'tenant-42', idempotencyKey: 'acct-key-1' });
      expect(info).toEqual({ accountId: 'acct_1NewExpress', ready: false });
      const req = only();
      expect(req.method).toBe('POST');
      expect(req.path).toBe('/v1/accounts');
      expect(req.params).toMatchObject({ type: 'express', 'metadata[tenant_id]': 'tenant-42', 'capabilities[transfers][requested]': 'true' });
      expect(req.headers['idempotency-key']).toBe('acct-key-1');
      expect(req.headers.authorization).toBe(`Bearer ${SECRET_KEY}`);
    });

    it('retrieves readiness: details submitted and transfers capability active', async () => {
      expect(await stripe.retrieveAccount('acct_ready')).toEqual({ accountId: 'acct_ready', ready: true });
      expect(await stripe.retrieveAccount('acct_pending')).toEqual({ accountId: 'acct_pending', ready: false });
      expect(requests.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /v1/accounts/acct_ready', 'GET /v1/accounts/acct_pending']);
      const missing = await stripe.retrieveAccount('acct_missing').catch((e: unknown) => e);
      expect(missing).toBeInstanceOf(ProcessorError);
      expect((missing as ProcessorError).code).toBe('resource_missing');
    });

    it('stripeAccountReady needs both details_submitted and an active transfers capability', () => {
      expect(stripeAccountReady({ details_submitted: true, capabilities: { transfers: 'active' } })).toBe(true);
      expect(stripeAccountReady({ details_submitted: true, capabilities: { transfers: 'pending' } })).toBe(false);
      expect(stripeAccountReady({ details_submitted: false, capabilities: { transfers: 'active' } })).toBe(false);
      expect(stripeAccountReady({ details_submitted: true })).toBe(false);
    });

    it('mints an onboarding Account Link and a dashboard login link, each POST under a fresh idempotency key', async () => {
      const urls = { refreshUrl: 'https://parley.test/refresh', returnUrl: 'https://parley.test/return' };
      expect(await stripe.onboardingLink('acct_pending', urls)).toEqual({ url: 'https://connect.stripe.com/setup/e/acct_pending/abc' });
      expect(await stripe.onboardingLink('acct_pending', urls)).toEqual({ url: 'https://connect.stripe.com/setup/e/acct_pending/abc' });
      expect(await stripe.dashboardLink('acct_ready')).toEqual({ url: 'https://connect.stripe.com/express/acct_ready/xyz' });
      const [link1, link2, login] = requests;
      expect(link1!.path).toBe('/v1/account_links');
      expect(link1!.params).toEqual({ account: 'acct_pending', type: 'account_onboarding', refresh_url: urls.refreshUrl, return_url: urls.returnUrl });
      expect(login!.method).toBe('POST');
      expect(login!.path).toBe('/v1/accounts/acct_ready/login_links');
      const keys = [link1, link2, login].map((r) => r!.headers['idempotency-key']);
      for (const key of keys) expect(key).toMatch(/^parley-(account|login)-link-[0-9a-f-]{36}$/);
      expect(new Set(keys).size).toBe(3);
    });
  });

  describe('charges', () => {
    const chargeInput = (paymentMethod: string, idempotencyKey = `charge-${paymentMethod}`) => ({
      amountCents: 2500,
      currency: 'usd' as const,
      paymentMethod,
      description: 'Rental of listing L1',
      metadata: { rental_id: 'rental-1', listing_id: 'L1' },
      idempotencyKey,
    });

    it('creates and confirms a PaymentIntent off-session in one call, with the form parameters and the caller key', async () => {
      expect(await stripe.charge(chargeInput('pm_card_visa', 'rental-1-charge'))).toEqual({ chargeId: 'pi_succeeded', status: 'succeeded' });
      const req = only();
      expect(req.method).toBe('POST');
      expect(req.path).toBe('/v1/payment_intents');
      expect(req.params).toEqual({
        amount: '2500',
        currency: 'usd',
        payment_method: 'pm_card_visa',
        confirm: 'true',
        off_session: 'true',
        'automatic_payment_methods[enabled]': 'true',
        'automatic_payment_methods[allow_redirects]': 'never',
        description: 'Rental of listing L1',
        'metadata[rental_id]': 'rental-1',
        'metadata[listing_id]': 'L1',
      });
      expect(req.headers['idempotency-key']).toBe('rental-1-charge');
    });

    it('forwards a repeated idempotency key unchanged', async () => {
      const a = await stripe.charge(chargeInput('pm_card_visa', 'same-key'));
      const b = await stripe.charge(chargeInput('pm_card_visa', 'same-key'));
      expect(b).toEqual(a);
      expect(requests.map((r) => r.headers['idempotency-key'])).toEqual(['same-key', 'same-key']);
      expect(requests[1]!.params).toEqual(requests[0]!.params);
    });

    it('maps processing and requires_action to pending, requires_payment_method to declined', async () => {
      expect(await stripe.charge(chargeInput('pm_processing'))).toEqual({ chargeId: 'pi_processing', status: 'pending' });
      expect(await stripe.charge(chargeInput('pm_requires_action'))).toEqual({ chargeId: 'pi_requires_action', status: 'pending' });
      expect(await stripe.charge(chargeInput('pm_requires_pm'))).toEqual({
        chargeId: 'pi_requires_pm',
        status: 'declined',
        declineReason: 'Your card has insufficient funds.',
      });
    });

    it('answers a 402 card_error as a decline with Stripe message and PaymentIntent id, not an exception', async () => {
      expect(await stripe.charge(chargeInput('pm_card_chargeDeclined'))).toEqual({
        chargeId: 'pi_declined',
        status: 'declined',
        declineReason: 'Your card was declined.',
      });
      expect(await stripe.charge(chargeInput('pm_card_bare_decline'))).toEqual({
        chargeId: '',
        status: 'declined',
        declineReason: 'The payment was declined (do_not_honor).',
      });
      expect(requests).toHaveLength(2);
    });

    it('turns a 5xx into a ProcessorError', async () => {
      const err = await stripe.charge(chargeInput('pm_api_down')).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ProcessorError);
      expect((err as ProcessorError).message).toMatch(/HTTP 500/);
      expect((err as ProcessorError).code).toBe('api_error');
      expect(requests).toHaveLength(1);
    });

    it('turns an invalid request (not a card error) into a ProcessorError with the Stripe code', async () => {
      const err = await stripe.charge(chargeInput('pm_unknown')).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ProcessorError);
      expect((err as ProcessorError).code).toBe('resource_missing');
    });

    it('retries a 5xx with the same idempotency key when retries are enabled', async () => {
      overrides.set('POST /v1/payment_intents', [stripeError(503, { type: 'api_error', message: 'try again' })]);
      const retrying = processor({ maxNetworkRetries: 1 });
      expect(await retrying.charge(chargeInput('pm_card_visa', 'retry-key'))).toEqual({ chargeId: 'pi_succeeded', status: 'succeeded' });
      expect(requests).toHaveLength(2);
      expect(requests.map((r) => r.headers['idempotency-key'])).toEqual(['retry-key', 'retry-key']);
    });

    it('cannot reach a closed port -> ProcessorError', async () => {
      const probe = http.createServer();
      await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
      const deadPort = (probe.address() as AddressInfo).port;
      await new Promise<void>((resolve) => probe.close(() => resolve()));
      const unreachable = processor({ port: deadPort });
      const err = await unreachable.charge(chargeInput('pm_card_visa')).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ProcessorError);
    });
  });

  describe('refunds and transfers', () => {
    it('refunds a PaymentIntent with amount and metadata under the caller key', async () => {
      expect(await stripe.refund({ chargeId: 'pi_succeeded', amountCents: 1200, metadata: { rental_id: 'rental-1' }, idempotencyKey: 'refund-key' })).toEqual({
        refundId: 're_1',
        status: 'succeeded',
      });
      const req = only();
      expect(req.path).toBe('/v1/refunds');
      expect(req.params).toEqual({ payment_intent: 'pi_succeeded', amount: '1200', 'metadata[rental_id]': 'rental-1' });
      expect(req.headers['idempotency-key']).toBe('refund-key');
      expect((await stripe.refund({ chargeId: 'pi_succeeded', amountCents: 1, metadata: {}, idempotencyKey: 'refund-key-2' })).status).toBe('pending');
    });

    it('an over-refund refused by Stripe is a ProcessorError', async () => {
      const err = await stripe.refund({ chargeId: 'pi_succeeded', amountCents: 6000, metadata: {}, idempotencyKey: 'refund-big' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ProcessorError);
      expect((err as ProcessorError).code).toBe('amount_too_large');
    });

    it('transfers to the connected account with amount, currency, destination and metadata -> paid', async () => {
      expect(
        await stripe.transfer({ destinationAccountId: 'acct_ready', amountCents: 4321, currency: 'usd', metadata: { payout_id: 'payout-7' }, idempotencyKey: 'payout-7' }),
      ).toEqual({ transferId: 'tr_1', status: 'paid' });
      const req = only();
      expect(req.path).toBe('/v1/transfers');
      expect(req.params).toEqual({ amount: '4321', currency: 'usd', destination: 'acct_ready', 'metadata[payout_id]': 'payout-7' });
      expect(req.headers['idempotency-key']).toBe('payout-7');
    });

    it('a transfer Stripe refuses is failed with the reason; an outage is a ProcessorError', async () => {
      expect(await stripe.transfer({ destinationAccountId: 'acct_broke', amountCents: 1000, currency: 'usd', metadata: {}, idempotencyKey: 'p1' })).toEqual({
        transferId: null,
        status: 'failed',
        failureReason: 'You have insufficient available funds in your Stripe account. (balance_insufficient)',
      });
      const err = await stripe
        .transfer({ destinationAccountId: 'acct_outage', amountCents: 1000, currency: 'usd', metadata: {}, idempotencyKey: 'p2' })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ProcessorError);
    });

    it("every POST carries an Idempotency-Key, the caller's forwarded as given", async () => {
      await stripe.createConnectedAccount({ tenantId: 't', idempotencyKey: 'k-acct' });
      await stripe.onboardingLink('acct_x', { refreshUrl: 'https://r', returnUrl: 'https://r' });
      await stripe.dashboardLink('acct_x');
      await stripe.charge({ amountCents: 100, currency: 'usd', paymentMethod: 'pm_card_visa', description: 'd', metadata: {}, idempotencyKey: 'k-charge' });
      await stripe.refund({ chargeId: 'pi_succeeded', amountCents: 100, metadata: {}, idempotencyKey: 'k-refund' });
      await stripe.transfer({ destinationAccountId: 'acct_x', amountCents: 100, currency: 'usd', metadata: {}, idempotencyKey: 'k-transfer' });
      expect(posts()).toHaveLength(6);
      for (const r of posts()) expect(r.headers['idempotency-key'], `${r.path}`).toBeTruthy();
      expect(posts().map((r) => r.headers['idempotency-key']).filter((k) => String(k).startsWith('k-'))).toEqual(['k-acct', 'k-charge', 'k-refund', 'k-transfer']);
    });
  });

  describe('webhooks', () => {
    const eventJson = (type: string, object: Record<string, unknown>, id = `evt_${type.replace(/\W/g, '_')}`) =>
      JSON.stringify({ id, object: 'event', api_version: Stripe.API_VERSION, created: 1_700_000_000, livemode: false, pending_webhooks: 1, request: { id: null, idempotency_key: null }, type, data: { object } });
    const sign = (payload: string, secret = WEBHOOK_SECRET, timestamp?: number) =>
      Stripe.webhooks.generateTestHeaderString({ payload, secret, ...(timestamp !== undefined ? { timestamp } : {}) });
    const parse = (payload: string, header: string, p = stripe) => p.parseWebhook(payload, { 'stripe-signature': header, 'content-type': 'application/json' });

    it('verifies a signed event', () => {
      const payload = eventJson('payment_intent.succeeded', { id: 'pi_1', object: 'payment_intent', metadata: { rental_id: 'r1' } });
      expect(parse(payload, sign(payload))).toEqual({ id: 'evt_payment_intent_succeeded', type: 'charge.succeeded', objectId: 'pi_1', metadata: { rental_id: 'r1' } });
    });

    it('rejects a tampered payload, a wrong secret, a missing header and a stale timestamp', () => {
      const payload = eventJson('payment_intent.succeeded', { id: 'pi_1', object: 'payment_intent', metadata: { rental_id: 'r1' } });
      const header = sign(payload);
      expect(() => parse(payload.replace('pi_1', 'pi_2'), header)).toThrow(WebhookSignatureError);
      expect(() => parse(payload, sign(payload, 'whsec_someone_else'))).toThrow(WebhookSignatureError);
      expect(() => stripe.parseWebhook(payload, {})).toThrow(WebhookSignatureError);
      expect(() => parse(payload, 't=1,v1=deadbeef')).toThrow(WebhookSignatureError);
      const stale = Math.floor(Date.now() / 1000) - 3600;
      expect(() => parse(payload, sign(payload, WEBHOOK_SECRET, stale))).toThrow(WebhookSignatureError);
      expect(() => parse('not json', sign('not json'))).toThrow(WebhookSignatureError);
    });

    it('accepts any of several endpoint secrets (platform and Connect endpoints)', () => {
      const both = processor({ webhookSecret: [WEBHOOK_SECRET, CONNECT_WEBHOOK_SECRET] });
      const payload = eventJson('account.updated', { id: 'acct_9', object: 'account', details_submitted: true, capabilities: { transfers: 'active' }, metadata: {} });
      expect(parse(payload, sign(payload, CONNECT_WEBHOOK_SECRET), both).ready).toBe(true);
      expect(parse(payload, sign(payload, WEBHOOK_SECRET), both).ready).toBe(true);
      expect(() => parse(payload, sign(payload, CONNECT_WEBHOOK_SECRET))).toThrow(WebhookSignatureError);
    });

    it('normalises the event table', () => {
      const cases: Array<[string, Record<string, unknown>, Record<string, unknown>]> = [
        ['payment_intent.succeeded', { id: 'pi_a', object: 'payment_intent', metadata: { rental_id: 'ra' } }, { type: 'charge.succeeded', objectId: 'pi_a', metadata: { rental_id: 'ra' } }],
        [
          'payment_intent.payment_failed',
          { id: 'pi_b', object: 'payment_intent', metadata: { rental_id: 'rb' }, last_payment_error: { type: 'card_error', code: 'card_declined', message: 'Your card has expired.' } },
          { type: 'charge.failed', objectId: 'pi_b', metadata: { rental_id: 'rb' }, failureReason: 'Your card has expired.' },
        ],
        [
          'transfer.reversed',
          { id: 'tr_c', object: 'transfer', amount: 5000, amount_reversed: 5000, reversed: true, metadata: { payout_id: 'pc' } },
          { type: 'transfer.failed', objectId: 'tr_c', metadata: { payout_id: 'pc' }, failureReason: 'The transfer was reversed (5000 of 5000 cents).' },
        ],
        [
          'account.updated',
          { id: 'acct_d', object: 'account', details_submitted: true, capabilities: { transfers: 'active' }, metadata: { tenant_id: 'td' } },
          { type: 'account.updated', objectId: 'acct_d', metadata: { tenant_id: 'td' }, ready: true },
        ],
        [
          'account.updated',
          { id: 'acct_e', object: 'account', details_submitted: false, capabilities: { transfers: 'inactive' }, metadata: { tenant_id: 'te' } },
          { type: 'account.updated', objectId: 'acct_e', metadata: { tenant_id: 'te' }, ready: false },
        ],
        ['charge.refunded', { id: 'ch_f', object: 'charge', metadata: {} }, { type: 'charge.refunded', objectId: 'ch_f', metadata: {} }],
        ['balance.available', { object: 'balance', available: [] }, { type: 'balance.available', objectId: '', metadata: {} }],
      ];
      cases.forEach(([type, object, expected], i) => {
        const payload = eventJson(type, object, `evt_${i}`);
        expect(parse(payload, sign(payload)), type).toEqual({ id: `evt_${i}`, ...expected });
      });
    });
  });
});
