/**
 * Discovery leaves out agents that verify-agent calls `suspended` (contract §4.10, §4.11, §4.16):
 * an identity suspended, or whose bound agent device is revoked, is in neither the hub search nor
 * the marketplace's listing search (anonymous or authenticated, by text or by hub address), while
 * its owner still sees the listing among its own, and it cannot be rented by id; an identity
 * active again is found again.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../../testing/harness.js';
import { certifiedDeveloper, operatorAuth, publishedListing, renter, type Developer } from '../../testing/marketplace-fixtures.js';
import type { Owner } from '../../testing/flows.js';

describe('discovery leaves out suspended agents', () => {
  let t: TestApp;
  let buyer: Owner;
  let operator: { authorization: string };

  beforeAll(async () => {
    t = await startApp({ env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000' } });
    operator = await operatorAuth(t);
    buyer = (await renter(t)).owner;
  });
  afterAll(() => t?.close());

  const superuser = (q: ReturnType<typeof sql>) => t.app.parley.database.db.execute(q);
  const get = async (url: string, headers: Record<string, string> = {}) => {
    const res = await t.request({ method: 'GET', url, headers });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body;
  };
  const hubFinds = async (dev: Developer) => (await get(`/api/v1/hub/search?query=${dev.address}`)).results.some((r: { hub_address: string }) => r.hub_address === dev.address);
  const listingIds = async (query: string, headers?: Record<string, string>) => (await get(`/api/v1/marketplace/listings?${query}`, headers)).listings.map((l: { listing_id: string }) => l.listing_id);
  /** Where the listing `id` of `dev` is found: anonymous text search, authenticated, by hub address, the owner's own. */
  const foundIn = async (dev: Developer, id: string) => ({
    anonymous: (await listingIds('query=research')).includes(id),
    authenticated: (await listingIds('capability=summarize', buyer.auth)).includes(id),
    byAddress: (await listingIds(`hub_address=${dev.address}`, buyer.auth)).includes(id),
    mine: (await listingIds('mine=true', dev.owner.auth)).includes(id),
  });
  const everywhere = { anonymous: true, authenticated: true, byAddress: true, mine: true };
  const onlyMine = { anonymous: false, authenticated: false, byAddress: false, mine: true };

  it('a suspended identity leaves the hub and marketplace searches, and comes back when active again', async () => {
    const dev = await certifiedDeveloper(t, operator);
    const id = await publishedListing(t, dev);
    expect(await hubFinds(dev)).toBe(true);
    expect(await foundIn(dev, id)).toEqual(everywhere);

    await superuser(sql`update hub_identities set status = 'suspended' where id = ${dev.identityId}`);
    expect(await hubFinds(dev)).toBe(false);
    expect(await foundIn(dev, id)).toEqual(onlyMine);
    // Nor can it be rented by id while suspended.
    const rent = await t.request({ method: 'POST', url: '/api/v1/marketplace/rentals', headers: buyer.auth, payload: { listing_id: id, payment_method: 'pm_card_visa' } });
    expect(rent.status, JSON.stringify(rent.body)).toBe(409);
    expect(rent.body.detail).toMatch(/suspended/);

    await superuser(sql`update hub_identities set status = 'active' where id = ${dev.identityId}`);
    expect(await foundIn(dev, id)).toEqual(everywhere);
  });

  it('an identity whose agent device is revoked leaves the hub and marketplace searches', async () => {
    const dev = await certifiedDeveloper(t, operator);
    const id = await publishedListing(t, dev);
    expect(await foundIn(dev, id)).toEqual(everywhere);

    const revoked = await t.request({ method: 'PATCH', url: `/api/v1/devices/${dev.agent.deviceId}/revoke`, headers: dev.owner.auth });
    expect(revoked.status).toBe(200);
    expect((await get(`/api/v1/verify/${dev.address}`)).status).toBe('suspended');
    expect(await hubFinds(dev)).toBe(false);
    expect(await foundIn(dev, id)).toEqual(onlyMine);
  });
});
