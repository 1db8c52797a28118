/**
 * Marketplace (contract §3.6, §3.7, §4.16; design §8.23–§8.26, §8.35) through the HTTP API on the
 * embedded local processor: listing transitions, search views, rentals paid at once, declined and
 * confirmed asynchronously by a signed webhook event, the renter's SPT, cancel with the pro-rata
 * refund, disputes resolved by an operator, payouts with the minimum, and the ledger check.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { startApp, type TestApp } from '../../testing/harness.js';
import { certifiedDeveloper, listingBody, operatorAuth, publishedListing, renter, type Developer } from '../../testing/marketplace-fixtures.js';
import type { Owner } from '../../testing/flows.js';

describe('marketplace', () => {
  let t: TestApp;
  let op: { authorization: string };
  let dev: Developer;
  let buyer: { owner: Owner; device: { deviceId: string } };

  const exec = async <T = Record<string, unknown>>(q: ReturnType<typeof sql>) => ((await t.app.parley.database.db.execute(q)) as unknown as { rows: T[] }).rows;
  const rent = (o: Owner, listingId: string, paymentMethod = 'pm_card_visa') =>
    t.request({ method: 'POST', url: '/api/v1/marketplace/rentals', headers: o.auth, payload: { listing_id: listingId, payment_method: paymentMethod } });
  const ledgerOk = async () => {
    const v = await t.request({ method: 'GET', url: '/api/v1/marketplace/ledger/verify', headers: op });
    expect(v.status).toBe(200);
    expect(v.body.balanced).toBe(true);
    return v.body as { transactions: number };
  };
  const auditTypes = async (tenantId: string) => (await exec<{ type: string }>(sql`select type from audit_events where tenant_id = ${tenantId} order by seq`)).map((r) => r.type);

  beforeAll(async () => {
    t = await startApp({ env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000', LOCAL_PROCESSOR_DELAY_MS: '20' } });
    op = await operatorAuth(t);
    dev = await certifiedDeveloper(t, op);
    buyer = await renter(t);
  });
  afterAll(() => t?.close());

  it('listing lifecycle: draft -> published -> paused -> published -> delisted, invalid transitions 409, audited', async () => {
    const created = await t.request({ method: 'POST', url: '/api/v1/marketplace/listings', headers: dev.owner.auth, payload: listingBody(dev.address) });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ status: 'draft', hub_address: dev.address, trust_tier: 'certified', pricing: { model: 'per_hour', price_cents: 2500, currency: 'usd' } });
    const id = created.body.listing_id as string;
    const act = (what: string) => t.request({ method: 'POST', url: `/api/v1/marketplace/listings/${id}/${what}`, headers: dev.owner.auth });
    expect((await act('pause')).status).toBe(409);
    expect((await act('resume')).status).toBe(409);
    expect((await act('publish')).body.status).toBe('published');
    expect((await act('publish')).status).toBe(409);
    expect((await act('pause')).body.status).toBe('paused');
    expect((await act('resume')).body.status).toBe('published');
    expect((await act('delist')).body.status).toBe('delisted');
    expect((await act('delist')).status).toBe(409);
    const patch = await t.request({ method: 'PATCH', url: `/api/v1/marketplace/listings/${id}`, headers: dev.owner.auth, payload: { title: 'x' } });
    expect(patch.status).toBe(409);
    const types = await auditTypes(dev.owner.tenantId);
    for (const ty of ['listing.created', 'listing.published', 'listing.paused', 'listing.resumed', 'listing.delisted']) expect(types).toContain(ty);
  });

  it('an unverified identity cannot be published (409), and another tenant cannot touch a listing (404)', async () => {
    const reg = await t.request({ method: 'POST', url: '/api/v1/hub/identities', headers: dev.owner.auth, payload: { hub_address: `plain-${Date.now()}`, display_name: 'Plain', public_key: (await import('../../testing/keys.js')).hubOwnerKey() } });
    expect(reg.status).toBe(201);
    const created = await t.request({ method: 'POST', url: '/api/v1/marketplace/listings', headers: dev.owner.auth, payload: listingBody(reg.body.hub_address) });
    expect(created.status).toBe(201);
    const pub = await t.request({ method: 'POST', url: `/api/v1/marketplace/listings/${created.body.listing_id}/publish`, headers: dev.owner.auth });
    expect(pub.status).toBe(409);
    expect(pub.body.detail).toMatch(/certified/);
    const foreign = await t.request({ method: 'PATCH', url: `/api/v1/marketplace/listings/${created.body.listing_id}`, headers: buyer.owner.auth, payload: { title: 'mine now' } });
    expect(foreign.status).toBe(404);
    expect((await t.request({ method: 'GET', url: `/api/v1/marketplace/listings/${created.body.listing_id}`, headers: buyer.owner.auth })).status).toBe(404);
    const unknownIdentity = await t.request({ method: 'POST', url: '/api/v1/marketplace/listings', headers: buyer.owner.auth, payload: listingBody(dev.address) });
    expect(unknownIdentity.status).toBe(404);
  });

  it('search: filters, anonymous reduced view capped at 20, owners see every field, bad input 400', async () => {
    const id = await publishedListing(t, dev, { title: 'Quantum chemistry literature digest', category: 'science', pricing: { model: 'per_task', price_cents: 9900 } });
    const anon = await t.request({ method: 'GET', url: '/api/v1/marketplace/listings?query=quantum%20chemistry' });
    expect(anon.status).toBe(200);
    const hit = anon.body.listings.find((l: { listing_id: string }) => l.listing_id === id);
    expect(hit).toBeDefined();
    expect(hit.tenant_id).toBeUndefined();
    expect(hit.sla).toBeUndefined();
    expect(hit.pricing).toEqual({ model: 'per_task', price_cents: 9900 });
    const authed = await t.request({ method: 'GET', url: '/api/v1/marketplace/listings?category=science', headers: buyer.owner.auth });
    expect(authed.body.listings.map((l: { listing_id: string }) => l.listing_id)).toEqual([id]);
    expect(authed.body.listings[0].tenant_id).toBe(dev.owner.tenantId);
    const priced = await t.request({ method: 'GET', url: '/api/v1/marketplace/listings?min_price_cents=9000&max_price_cents=10000', headers: buyer.owner.auth });
    expect(priced.body.listings.every((l: { pricing: { price_cents: number } }) => l.pricing.price_cents >= 9000 && l.pricing.price_cents <= 10000)).toBe(true);
    const enterprise = await t.request({ method: 'GET', url: '/api/v1/marketplace/listings?tier=enterprise', headers: buyer.owner.auth });
    expect(enterprise.body.listings).toEqual([]);
    const cap = await t.request({ method: 'GET', url: '/api/v1/marketplace/listings?capability=summarize', headers: buyer.owner.auth });
    expect(cap.body.listings.length).toBeGreaterThan(0);
    expect((await t.request({ method: 'GET', url: '/api/v1/marketplace/listings?limit=50' })).body.listings.length).toBeLessThanOrEqual(20);
    expect((await t.request({ method: 'GET', url: '/api/v1/marketplace/listings?limit=101', headers: buyer.owner.auth })).status).toBe(400);
    expect((await t.request({ method: 'GET', url: '/api/v1/marketplace/listings?min_price_cents=10&max_price_cents=5', headers: buyer.owner.auth })).status).toBe(400);
    expect((await t.request({ method: 'GET', url: '/api/v1/marketplace/listings?cursor=nope', headers: buyer.owner.auth })).status).toBe(400);
    expect((await t.request({ method: 'GET', url: '/api/v1/marketplace/listings?mine=true' })).status).toBe(400);
    const mine = await t.request({ method: 'GET', url: '/api/v1/marketplace/listings?mine=true', headers: dev.owner.auth });
    expect(mine.body.listings.some((l: { status: string }) => l.status === 'delisted')).toBe(true);
  });

  it('search pages through results with next_cursor without repeats', async () => {
    for (let i = 0; i < 5; i++) await publishedListing(t, dev, { title: `Pager listing ${i}`, category: 'pager' });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const url: string = `/api/v1/marketplace/listings?category=pager&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const page = await t.request({ method: 'GET', url, headers: buyer.owner.auth });
      expect(page.status).toBe(200);
      seen.push(...page.body.listings.map((l: { listing_id: string }) => l.listing_id));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(seen.length).toBe(5);
    expect(new Set(seen).size).toBe(5);
    const ranked: string[] = [];
    cursor = null;
    do {
      const url: string = `/api/v1/marketplace/listings?query=pager&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const page = await t.request({ method: 'GET', url, headers: buyer.owner.auth });
      ranked.push(...page.body.listings.map((l: { listing_id: string }) => l.listing_id));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(new Set(ranked)).toEqual(new Set(seen));
  });

  it('anonymous search answers at most 20 results in total: paging stops at the 20th without a next_cursor, a made-up cursor gains nothing; authenticated callers page on', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 23; i++) ids.push(await publishedListing(t, dev, { title: `Capped listing ${i}`, category: 'capped' }));
    type Page = { listings: { listing_id: string }[]; next_cursor: string | null };
    const pageOf = async (query: string, auth?: { authorization: string }): Promise<Page> => {
      const res = await t.request({ method: 'GET', url: `/api/v1/marketplace/listings?${query}`, ...(auth ? { headers: auth } : {}) });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body as Page;
    };
    const all = async (query: string, auth?: { authorization: string }) => {
      const seen: string[] = [];
      const sizes: number[] = [];
      let cursor: string | null = null;
      do {
        const page: Page = await pageOf(`${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, auth);
        seen.push(...page.listings.map((l) => l.listing_id));
        sizes.push(page.listings.length);
        cursor = page.next_cursor;
      } while (cursor);
      return { seen, sizes };
    };
    for (const query of ['category=capped&limit=8', 'query=capped&limit=8']) {
      const anon = await all(query);
      expect(anon.sizes, query).toEqual([8, 8, 4]);
      expect(new Set(anon.seen).size).toBe(20);
      const authed = await all(query, buyer.owner.auth);
      expect(new Set(authed.seen)).toEqual(new Set(ids));
      expect(authed.seen.slice(0, 20)).toEqual(anon.seen);
      // The cursor an authenticated caller got after 20 results answers nothing more to an anonymous one.
      const deep = await pageOf(`${query.replace('limit=8', 'limit=20')}`, buyer.owner.auth);
      expect(deep.next_cursor).not.toBeNull();
      expect(await pageOf(`${query}&cursor=${encodeURIComponent(deep.next_cursor!)}`)).toEqual({ listings: [], next_cursor: null });
      // After the 10th, what is left of the 20: ten more at most, and no cursor beyond them.
      const tenth = await pageOf(`${query.replace('limit=8', 'limit=10')}`);
      const rest = await pageOf(`${query.replace('limit=8', 'limit=20')}&cursor=${encodeURIComponent(tenth.next_cursor!)}`);
      expect(rest.listings.map((l) => l.listing_id)).toEqual(anon.seen.slice(10, 20));
      expect(rest.next_cursor).toBeNull();
    }
  });

  it('a rental paid at once is active with an SPT for the listed skills; both tenants audit it; the ledger balances', async () => {
    const listingId = await publishedListing(t, dev);
    expect((await rent(dev.owner, listingId)).status).toBe(409); // own listing
    const res = await rent(buyer.owner, listingId);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ status: 'active', role: 'renter', amount_cents: 5000, fee_cents: 1000, refunded_cents: 0, pricing_model: 'per_hour', term_hours: 2 });
    expect(res.body.grant.spt_token).toMatch(/^ey/);
    const v = await t.request({ method: 'POST', url: '/api/v1/grants/validate', payload: { token: res.body.grant.spt_token, skill: 'summarize', audience: t.config.publicUrl } });
    expect(v.body.valid, JSON.stringify(v.body)).toBe(true);
    const asDev = await t.request({ method: 'GET', url: `/api/v1/marketplace/rentals/${res.body.rental_id}`, headers: dev.owner.auth });
    expect(asDev.body.role).toBe('developer');
    expect(asDev.body.grant).toBeUndefined();
    const devList = await t.request({ method: 'GET', url: '/api/v1/marketplace/rentals?role=developer&status=active', headers: dev.owner.auth });
    expect(devList.body.rentals.map((r: { rental_id: string }) => r.rental_id)).toContain(res.body.rental_id);
    expect(await auditTypes(buyer.owner.tenantId)).toEqual(expect.arrayContaining(['rental.created', 'rental.activated']));
    expect(await auditTypes(dev.owner.tenantId)).toEqual(expect.arrayContaining(['rental.created', 'rental.activated', 'grant.issued']));
    await ledgerOk();
    const summary = await t.request({ method: 'GET', url: '/api/v1/marketplace/payouts/summary', headers: dev.owner.auth });
    expect(summary.body.earned_cents).toBeGreaterThanOrEqual(4000);
    expect(summary.body.balance_cents).toBe(summary.body.earned_cents);
  });

  it('a declined card answers 402 and leaves a cancelled rental; an async card is confirmed by a signed webhook event', async () => {
    const listingId = await publishedListing(t, dev);
    const declined = await rent(buyer.owner, listingId, 'pm_card_chargeDeclined');
    expect(declined.status).toBe(402);
    expect(declined.body.detail).toMatch(/declined/);
    const cancelled = await t.request({ method: 'GET', url: '/api/v1/marketplace/rentals?status=cancelled', headers: buyer.owner.auth });
    expect(cancelled.body.rentals.some((r: { reason: string }) => r.reason === 'payment_failed')).toBe(true);

    const pending = await rent(buyer.owner, listingId, 'pm_card_async');
    expect(pending.status).toBe(201);
    expect(pending.body.status).toBe('pending');
    await expect
      .poll(async () => (await t.request({ method: 'GET', url: `/api/v1/marketplace/rentals/${pending.body.rental_id}`, headers: buyer.owner.auth })).body.status, { timeout: 5000 })
      .toBe('active');
    const events = await exec<{ n: number }>(sql`select count(*)::int as n from processor_events where type = 'charge.succeeded'`);
    expect(events[0]!.n).toBeGreaterThan(0);
    expect((await t.request({ method: 'POST', url: '/api/v1/marketplace/webhooks/local', payload: { id: 'evt_forged', type: 'charge.succeeded' } })).status).toBe(400);
    expect((await t.request({ method: 'POST', url: '/api/v1/marketplace/webhooks/stripe', payload: {} })).status).toBe(404);
    await ledgerOk();
  });

  it('cancel refunds the unused part pro rata, revokes the SPT, and only the renter may cancel', async () => {
    const listingId = await publishedListing(t, dev);
    const r = await rent(buyer.owner, listingId);
    expect(r.status).toBe(201);
    const id = r.body.rental_id as string;
    expect((await t.request({ method: 'POST', url: `/api/v1/marketplace/rentals/${id}/cancel`, headers: dev.owner.auth })).status).toBe(403);
    // Half the term has passed.
    await exec(sql`update marketplace_rentals set starts_at = now() - interval '1 hour', ends_at = now() + interval '1 hour' where id = ${id}`);
    const c = await t.request({ method: 'POST', url: `/api/v1/marketplace/rentals/${id}/cancel`, headers: buyer.owner.auth });
    expect(c.status).toBe(200);
    expect(c.body.status).toBe('cancelled');
    expect(c.body.refunded_cents).toBeGreaterThanOrEqual(2490);
    expect(c.body.refunded_cents).toBeLessThanOrEqual(2500);
    expect((await t.request({ method: 'POST', url: `/api/v1/marketplace/rentals/${id}/cancel`, headers: buyer.owner.auth })).status).toBe(409);
    const v = await t.request({ method: 'POST', url: '/api/v1/grants/validate', payload: { token: r.body.grant.spt_token, audience: t.config.publicUrl } });
    expect(v.body.valid).toBe(false);
    await ledgerOk();
  });

  it('complete by the renter, and at the end of the term by the job', async () => {
    const listingId = await publishedListing(t, dev);
    const a = await rent(buyer.owner, listingId);
    const done = await t.request({ method: 'POST', url: `/api/v1/marketplace/rentals/${a.body.rental_id}/complete`, headers: buyer.owner.auth });
    expect(done.body.status).toBe('completed');
    expect((await t.request({ method: 'POST', url: `/api/v1/marketplace/rentals/${a.body.rental_id}/complete`, headers: buyer.owner.auth })).status).toBe(409);
    const b = await rent(buyer.owner, listingId);
    await exec(sql`update marketplace_rentals set ends_at = now() - interval '1 second' where id = ${b.body.rental_id}`);
    expect(await t.app.parley.marketplace.rentals.completeDue()).toBeGreaterThanOrEqual(1);
    const after = await t.request({ method: 'GET', url: `/api/v1/marketplace/rentals/${b.body.rental_id}`, headers: buyer.owner.auth });
    expect(after.body).toMatchObject({ status: 'completed', reason: 'term_ended' });
  });

  it('a trust drop suspends an active rental at once and a recovery resumes it', async () => {
    await exec(sql`update hub_identities set trust_score = 0.9 where id = ${dev.identityId}`);
    const listingId = await publishedListing(t, dev, { min_score: 0.5 });
    const r = await rent(buyer.owner, listingId);
    expect(r.status).toBe(201);
    await exec(sql`update hub_identities set trust_score = 0.2 where id = ${dev.identityId}`);
    expect((await t.app.parley.marketplace.monitor.check()).suspended).toBeGreaterThanOrEqual(1);
    const s = await t.request({ method: 'GET', url: `/api/v1/marketplace/rentals/${r.body.rental_id}`, headers: buyer.owner.auth });
    expect(s.body).toMatchObject({ status: 'suspended', reason: 'trust_drop' });
    expect(s.body.grant).toBeUndefined();
    expect(await auditTypes(dev.owner.tenantId)).toContain('rental.suspended');
    await exec(sql`update hub_identities set trust_score = 0.9 where id = ${dev.identityId}`);
    expect((await t.app.parley.marketplace.monitor.check()).resumed).toBeGreaterThanOrEqual(1);
    const back = await t.request({ method: 'GET', url: `/api/v1/marketplace/rentals/${r.body.rental_id}`, headers: buyer.owner.auth });
    expect(back.body.status).toBe('active');
    expect(back.body.grant.spt_token).toMatch(/^ey/);
  });

  it('an operator tier grant that lowers a rented agent suspends its rental at once, and one that raises it back resumes it (no rental poll in between)', async () => {
    const graded = await certifiedDeveloper(t, op, 'Graded Co');
    const listingId = await publishedListing(t, graded);
    const r = await rent(buyer.owner, listingId);
    expect(r.status).toBe(201);
    expect(r.body.status).toBe('active');
    const grant = (tier: string) => t.request({ method: 'POST', url: `/api/v1/hub/identities/${graded.identityId}/tier`, headers: op, payload: { tier, reason: 'review' } });
    const rental = async () => (await t.request({ method: 'GET', url: `/api/v1/marketplace/rentals/${r.body.rental_id}`, headers: buyer.owner.auth })).body;
    expect((await grant('unverified')).status).toBe(200);
    expect(await rental()).toMatchObject({ status: 'suspended', reason: 'trust_drop' });
    expect(await auditTypes(graded.owner.tenantId)).toContain('rental.suspended');
    expect((await grant('certified')).status).toBe(200);
    const back = await rental();
    expect(back.status).toBe('active');
    expect(back.grant.spt_token).toMatch(/^ey/);
  });

  it("an identity not scored yet has contract §3.9's warm-up score 0.5 against min_score, at rental time and in the monitor", async () => {
    const unscored = await certifiedDeveloper(t, op, 'Unscored Co');
    const setScore = (score: number | null) => exec(sql`update hub_identities set trust_score = ${score} where id = ${unscored.identityId}`);
    await setScore(null);
    const profile = await t.request({ method: 'GET', url: `/api/v1/hub/${unscored.address}/profile` });
    expect(profile.body.trust_score).toBe(0.5);
    const atHalf = await publishedListing(t, unscored, { min_score: 0.5 });
    const above = await publishedListing(t, unscored, { min_score: 0.6 });
    const ok = await rent(buyer.owner, atHalf);
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    expect(ok.body.status).toBe('active');
    expect((await rent(buyer.owner, above)).status).toBe(409);
    // Scored, rented above both floors, then back to no score: the 0.5 floor holds, the 0.6 one does not.
    await setScore(0.9);
    const r6 = await rent(buyer.owner, above);
    expect(r6.body.status).toBe('active');
    await setScore(null);
    await t.app.parley.marketplace.monitor.check();
    const status = async (id: string) => (await t.request({ method: 'GET', url: `/api/v1/marketplace/rentals/${id}`, headers: buyer.owner.auth })).body.status;
    expect(await status(ok.body.rental_id)).toBe('active');
    expect(await status(r6.body.rental_id)).toBe('suspended');
  });

  it('disputes: evidence checked against both tenants, notes from both sides, operator resolution refunds through the ledger', async () => {
    const listingId = await publishedListing(t, dev);
    const r = await rent(buyer.owner, listingId);
    const id = r.body.rental_id as string;
    const [ev] = await exec<{ event_id: string }>(sql`select id as event_id from audit_events where tenant_id = ${dev.owner.tenantId} order by seq desc limit 1`);
    const foreign = await t.request({ method: 'POST', url: `/api/v1/marketplace/rentals/${id}/dispute`, headers: buyer.owner.auth, payload: { reason: 'slow', evidence_refs: [{ type: 'audit_event', id: '00000000-0000-4000-8000-000000000000' }] } });
    expect(foreign.status).toBe(400);
    const filed = await t.request({ method: 'POST', url: `/api/v1/marketplace/rentals/${id}/dispute`, headers: buyer.owner.auth, payload: { reason: 'answers were late', evidence_refs: [{ type: 'audit_event', id: ev!.event_id }] } });
    expect(filed.status, JSON.stringify(filed.body)).toBe(201);
    expect((await t.request({ method: 'GET', url: `/api/v1/marketplace/rentals/${id}`, headers: buyer.owner.auth })).body.status).toBe('disputed');
    const note = await t.request({ method: 'POST', url: `/api/v1/marketplace/disputes/${filed.body.dispute_id}/notes`, headers: dev.owner.auth, payload: { note: 'latency was within SLA' } });
    expect(note.status).toBe(201);
    expect(note.body.notes).toHaveLength(1);
    expect((await t.request({ method: 'POST', url: `/api/v1/marketplace/disputes/${filed.body.dispute_id}/resolve`, headers: buyer.owner.auth, payload: { outcome: 'none', note: 'x' } })).status).toBe(403);
    const list = await t.request({ method: 'GET', url: '/api/v1/marketplace/disputes?status=open', headers: op });
    expect(list.body.disputes.map((d: { dispute_id: string }) => d.dispute_id)).toContain(filed.body.dispute_id);
    expect((await t.request({ method: 'POST', url: `/api/v1/marketplace/disputes/${filed.body.dispute_id}/resolve`, headers: op, payload: { outcome: 'partial', note: 'half' } })).status).toBe(400);
    const resolved = await t.request({ method: 'POST', url: `/api/v1/marketplace/disputes/${filed.body.dispute_id}/resolve`, headers: op, payload: { outcome: 'partial', amount_cents: 1200, note: 'half' } });
    expect(resolved.status, JSON.stringify(resolved.body)).toBe(200);
    expect(resolved.body).toMatchObject({ status: 'resolved', outcome: 'partial', amount_cents: 1200 });
    expect((await t.request({ method: 'POST', url: `/api/v1/marketplace/disputes/${filed.body.dispute_id}/resolve`, headers: op, payload: { outcome: 'none', note: 'again' } })).status).toBe(409);
    const rental = await t.request({ method: 'GET', url: `/api/v1/marketplace/rentals/${id}`, headers: buyer.owner.auth });
    expect(rental.body).toMatchObject({ status: 'resolved', refunded_cents: 1200 });
    for (const tenant of [buyer.owner.tenantId, dev.owner.tenantId]) expect(await auditTypes(tenant)).toEqual(expect.arrayContaining(['dispute.filed', 'dispute.viewed', 'dispute.resolved']));
    await ledgerOk();
  });

  it('payouts: the developer connects an account, the run pays the balance once, the summary follows', async () => {
    const dash = await t.request({ method: 'GET', url: '/api/v1/marketplace/connect/dashboard', headers: dev.owner.auth });
    expect(dash.status, JSON.stringify(dash.body)).toBe(200);
    expect(dash.body.account_id).toMatch(/^acct_local_/);
    const before = await t.request({ method: 'GET', url: '/api/v1/marketplace/payouts/summary', headers: dev.owner.auth });
    expect(before.body.balance_cents).toBeGreaterThanOrEqual(1000);
    const [first, second] = await Promise.all([t.app.parley.marketplace.payouts.run(), t.app.parley.marketplace.payouts.run()]);
    expect(first!.paid + first!.pending + second!.paid + second!.pending).toBe(1);
    await expect
      .poll(async () => (await t.request({ method: 'GET', url: '/api/v1/marketplace/payouts', headers: dev.owner.auth })).body.payouts.map((p: { status: string }) => p.status), { timeout: 5000 })
      .toEqual(['completed']);
    const after = await t.request({ method: 'GET', url: '/api/v1/marketplace/payouts/summary', headers: dev.owner.auth });
    expect(after.body).toMatchObject({ balance_cents: 0, pending_cents: 0, paid_cents: before.body.balance_cents, minimum_payout_cents: 1000 });
    const again = await t.app.parley.marketplace.payouts.run();
    expect(again.paid + again.pending).toBe(0);
    expect(await auditTypes(dev.owner.tenantId)).toEqual(expect.arrayContaining(['payout.created', 'payout.completed']));
    await ledgerOk();
  });

  it('default payment method, route auth: 401 without credentials, 403 ledger check for non-operators', async () => {
    expect((await t.request({ method: 'GET', url: '/api/v1/marketplace/rentals' })).status).toBe(401);
    expect((await t.request({ method: 'GET', url: '/api/v1/marketplace/ledger/verify', headers: buyer.owner.auth })).status).toBe(403);
    const listingId = await publishedListing(t, dev);
    const none = await t.request({ method: 'POST', url: '/api/v1/marketplace/rentals', headers: buyer.owner.auth, payload: { listing_id: listingId } });
    expect(none.status).toBe(400);
    const set = await t.request({ method: 'PUT', url: '/api/v1/marketplace/payment-method', headers: buyer.owner.auth, payload: { payment_method: 'pm_card_visa' } });
    expect(set.status).toBe(200);
    expect((await t.request({ method: 'GET', url: '/api/v1/marketplace/payment-method', headers: buyer.owner.auth })).body.payment_method).toBe('pm_card_visa');
    const r = await t.request({ method: 'POST', url: '/api/v1/marketplace/rentals', headers: buyer.owner.auth, payload: { listing_id: listingId } });
    expect(r.status).toBe(201);
    expect((await t.request({ method: 'POST', url: '/api/v1/marketplace/rentals', headers: buyer.owner.auth, payload: { listing_id: 'not-a-uuid' } })).status).toBe(400);
  });

  it('X-Device-Id on a rental must name one of the renting owner\'s own owner devices', async () => {
    const listingId = await publishedListing(t, dev);
    const asDevice = (deviceId: string) =>
      t.request({ method: 'POST', url: '/api/v1/marketplace/rentals', headers: { ...buyer.owner.auth, 'x-device-id': deviceId }, payload: { listing_id: listingId, payment_method: 'pm_card_visa' } });
    const other = await renter(t, 'Other renter');
    // The rented agent's device (another tenant's) and another tenant's owner device are unknown here; nothing is recorded.
    for (const deviceId of [dev.agent.deviceId, other.device.deviceId]) {
      const res = await asDevice(deviceId);
      expect(res.status, deviceId).toBe(404);
      expect(typeof res.body.detail).toBe('string');
    }
    const before = await exec<{ n: number }>(sql`select count(*)::int as n from marketplace_rentals where listing_id = ${listingId}`);
    expect(before[0]!.n).toBe(0);
    const own = await asDevice(buyer.device.deviceId);
    expect(own.status, JSON.stringify(own.body)).toBe(201);
    const stored = await exec<{ renter_device_id: string }>(sql`select renter_device_id from marketplace_rentals where id = ${own.body.rental_id}`);
    expect(stored[0]!.renter_device_id).toBe(buyer.device.deviceId);
  });
});
