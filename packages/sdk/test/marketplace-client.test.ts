/**
 * The SDK's marketplace methods against a real server over HTTP (contract §4.16; design §8.23, §8.29):
 * the tenant's default payment method round trip, an anonymous listing search, a draft listing for
 * a registered hub identity read back, and publishing refused (409) while the identity is unverified.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '@parley/server/testing';
import { ParleyApiError } from '../src/client/errors.js';
import { ParleyClient } from '../src/client/rest.js';
import { bytesToBase64, ed25519Keygen } from '../src/crypto/primitives.js';

const stamp = Date.now().toString(36);
const address = `sdk-mkt-${stamp}`;

describe('marketplace through the SDK', () => {
  let t: TestApp;
  let owner: ParleyClient;
  let anonymous: ParleyClient;

  beforeAll(async () => {
    t = await startApp({ listen: true });
    owner = new ParleyClient({ baseUrl: t.baseUrl, ownerToken: await t.ownerToken(`sdk-mkt-owner-${stamp}@example.com`) });
    const tenant = await owner.createTenant({ name: 'Marketplace SDK Co' });
    owner.setTenantId(tenant.tenant_id);
    anonymous = new ParleyClient({ baseUrl: t.baseUrl });
  });
  afterAll(() => t?.close());

  it('sets and reads the default payment method', async () => {
    expect(await owner.getPaymentMethod()).toEqual({ payment_method: null });
    expect(await owner.setPaymentMethod({ payment_method: 'pm_card_visa' })).toEqual({ payment_method: 'pm_card_visa' });
    expect(await owner.getPaymentMethod()).toEqual({ payment_method: 'pm_card_visa' });
  });

  it('searches listings anonymously', async () => {
    expect(await anonymous.searchListings()).toEqual({ listings: [], next_cursor: null });
  });

  it('creates a draft listing, reads it back, and cannot publish it for an unverified identity', async () => {
    await owner.registerHub({ hub_address: address, display_name: 'Market agent', public_key: bytesToBase64(ed25519Keygen().publicKey) });
    const created = await owner.createListing({
      hub_address: address,
      title: 'Research assistant',
      category: 'research',
      capabilities: ['web_search'],
      pricing: { model: 'per_task', price_cents: 500 },
    });
    expect(created).toMatchObject({ hub_address: address, title: 'Research assistant', status: 'draft', trust_tier: 'unverified', published_at: null });

    const read = await owner.getListing(created.listing_id);
    expect(read).toMatchObject({ listing_id: created.listing_id, hub_address: address, status: 'draft', pricing: { model: 'per_task', price_cents: 500 } });

    const err = await owner.publishListing(created.listing_id).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ParleyApiError);
    expect((err as ParleyApiError).status).toBe(409);
    expect((await owner.getListing(created.listing_id)).status).toBe('draft');
  });
});
