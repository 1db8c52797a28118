/**
 * What a renter's client needs beyond the listing (the owners' web app renting an agent):
 * `GET /api/v1/marketplace/processor` (the processor in use: the local processor's test payment
 * methods, or Stripe with `STRIPE_PUBLISHABLE_KEY`), the web app's Content-Security-Policy that
 * admits Stripe.js only in Stripe mode, and `GET /api/v1/marketplace/listings/{id}/capabilities`
 * (the listed capabilities with their SLA, for authenticated callers, published listings only).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { DASHBOARD_CSP } from '../../src/http/dashboard.js';
import { newOwner } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { certifiedDeveloper, listingBody, operatorAuth, publishedListing, type Developer } from '../../testing/marketplace-fixtures.js';

const STRIPE_ENV = { STRIPE_SECRET_KEY: 'sk_test_renter_routes', STRIPE_WEBHOOK_SECRET: 'whsec_renter_routes' };
const SCHEMA = { type: 'object', properties: { topic: { type: 'string' } }, required: ['topic'] };

describe('marketplace routes for renters', () => {
  let dir: string;
  let local: TestApp;
  let stripe: TestApp;
  let dev: Developer;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-renter-routes-'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html><title>app</title>');
    [local, stripe] = await Promise.all([
      startApp({ env: { DASHBOARD_DIR: dir, RATE_LIMIT_ENROLL_PER_10MIN: '1000' } }),
      startApp({ env: { DASHBOARD_DIR: dir, ...STRIPE_ENV, STRIPE_PUBLISHABLE_KEY: 'pk_test_51abcDEF' } }),
    ]);
    dev = await certifiedDeveloper(local, await operatorAuth(local));
  });
  afterAll(async () => {
    await Promise.all([local?.close(), stripe?.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  const page = (t: TestApp) => t.app.inject({ method: 'GET', url: '/marketplace', headers: { accept: 'text/html' } });

  it('the local processor: its three test payment methods, no publishable key, and no Stripe in the app’s policy', async () => {
    const res = await local.request({ method: 'GET', url: '/api/v1/marketplace/processor' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ processor: 'local', publishable_key: null, test_payment_methods: ['pm_card_visa', 'pm_card_chargeDeclined', 'pm_card_async'] });
    const csp = String((await page(local)).headers['content-security-policy']);
    expect(csp).toBe(DASHBOARD_CSP);
    expect(csp).not.toContain('stripe');
  });

  it('Stripe mode: the publishable key, and Stripe.js admitted by the app’s policy (script, frames, API), nothing else widened', async () => {
    const res = await stripe.request({ method: 'GET', url: '/api/v1/marketplace/processor' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ processor: 'stripe', publishable_key: 'pk_test_51abcDEF', test_payment_methods: [] });
    const directives = Object.fromEntries(
      String((await page(stripe)).headers['content-security-policy'])
        .split('; ')
        .map((d) => [d.split(' ')[0], d.split(' ').slice(1)]),
    );
    expect(directives['script-src']).toEqual(["'self'", 'https://js.stripe.com', 'https://*.js.stripe.com']);
    expect(directives['frame-src']).toEqual(["'self'", 'https://js.stripe.com', 'https://*.js.stripe.com', 'https://hooks.stripe.com']);
    expect(directives['connect-src']).toEqual(["'self'", 'https://api.stripe.com']);
    expect(directives['default-src']).toEqual(["'self'"]);
    expect(directives['frame-ancestors']).toEqual(["'none'"]);
    // The API's own answers keep the data policy.
    expect((await stripe.app.inject({ method: 'GET', url: '/api/v1/marketplace/processor' })).headers['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'");
  });

  it('Stripe without STRIPE_PUBLISHABLE_KEY answers a null key; a malformed key stops the start', async () => {
    expect(loadConfig({ ...STRIPE_ENV }).marketplace.stripe?.publishableKey).toBeUndefined();
    expect(() => loadConfig({ ...STRIPE_ENV, STRIPE_PUBLISHABLE_KEY: 'sk_test_oops' })).toThrow(/STRIPE_PUBLISHABLE_KEY/);
  });

  it('a listing’s capabilities: the listed ones with their SLA, for authenticated callers; 404 for another tenant’s draft', async () => {
    const register = async (name: string, sla?: object) => {
      const r = await local.request({ method: 'POST', url: `/api/v1/hub/${dev.address}/capabilities`, headers: dev.owner.auth, payload: { name, version: '1.0.0', description: `${name} capability`, input_schema: SCHEMA, ...(sla ? { sla } : {}) } });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
    };
    await register('research', { latency_p95_ms: 1500, uptime_sla: 0.995 });
    await register('translate');
    const listingId = await publishedListing(local, dev, { capabilities: ['research', 'summarize'] });
    const buyer = await newOwner(local, 'Capability Reader');

    const res = await local.request({ method: 'GET', url: `/api/v1/marketplace/listings/${listingId}/capabilities`, headers: buyer.auth });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.capabilities).toEqual([
      expect.objectContaining({ name: 'research', version: '1.0.0', description: 'research capability', input_schema: SCHEMA, sla: { latency_p95_ms: 1500, uptime_sla: 0.995 }, certification_tier: expect.any(String) }),
    ]);

    expect((await local.request({ method: 'GET', url: `/api/v1/marketplace/listings/${listingId}/capabilities` })).status).toBe(401);
    const draft = await local.request({ method: 'POST', url: '/api/v1/marketplace/listings', headers: dev.owner.auth, payload: listingBody(dev.address, { capabilities: ['research'] }) });
    expect(draft.status).toBe(201);
    const foreign = await local.request({ method: 'GET', url: `/api/v1/marketplace/listings/${draft.body.listing_id}/capabilities`, headers: buyer.auth });
    expect(foreign.status).toBe(404);
    expect(foreign.body.detail).toMatch(/listing/);
    const own = await local.request({ method: 'GET', url: `/api/v1/marketplace/listings/${draft.body.listing_id}/capabilities`, headers: dev.owner.auth });
    expect(own.status).toBe(200);
    expect(own.body.capabilities.map((c: { name: string }) => c.name)).toEqual(['research']);
  });
});
