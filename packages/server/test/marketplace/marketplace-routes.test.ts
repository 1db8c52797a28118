/**
 * Marketplace route matrix (contract §4.16; design §8.23, §8.25, §8.35): every row of the contract's
 * marketplace area except the two processor webhooks (marketplace-webhooks.test.ts) — success,
 * 400 on a bad path id, body or query, 401 without (or with bad) credentials on the rows that are
 * not public, 403/404 across tenants (a third tenant sees nothing of a listing draft, a rental or a
 * dispute it is no party to; the developer may not cancel or complete its renter's rental), API keys
 * of the developer tenant (with and without `X-Workspace-Id`), agent and owner device JWTs, and the
 * isolation of the two parties' audit trails, telemetry and rooms from each other.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { marketplaceRoutes } from '@parley/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activeAgent, type Agent, type Owner, type OwnerDevice } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { newDeviceKeys } from '../../testing/keys.js';
import { certifiedDeveloper, listingBody, operatorAuth, publishedListing, renter, type Developer } from '../../testing/marketplace-fixtures.js';
import { wsAddress, WsPool } from '../../testing/ws-client.js';

type Row = keyof typeof marketplaceRoutes;
type Headers = Record<string, string>;

/** What each row takes: which id fills `{id}`, a valid and an invalid body, an invalid query; who may call it. */
interface Case {
  id?: 'listing' | 'rental' | 'dispute';
  body?: Record<string, unknown>;
  badBodies?: unknown[];
  badQueries?: string[];
  /** `operator`: an owner-any row for platform operators; `public`: anonymous callers allowed. */
  who: 'owner' | 'operator' | 'public';
}

/**
 * Rows this matrix leaves to other suites: the processor webhooks (marketplace-webhooks.test.ts)
 * and the cross-tenant rental room (`rentals/{id}/members|messages`, being built concurrently with
 * this file; device-auth rows that need their own flows).
 */
const ELSEWHERE = ['stripeWebhook', 'localProcessorWebhook', 'rentalMembers', 'sendRentalMessage', 'rentalMessages'] as const;

/** The listing writes: owner JWT, or an API key with `X-Workspace-Id` (design §8.23). */
const LISTING_WRITES: readonly Row[] = ['createListing', 'updateListing', 'publishListing', 'pauseListing', 'resumeListing', 'delistListing'];
/** The auth mode of a row of the matrix: the other workspace-auth rows also take an agent's own device JWT (`any`, design §8.27). */
const modeOf = (row: Row, who: Case['who']) =>
  who === 'public' ? 'public' : who === 'operator' ? 'owner-any' : row === 'setPaymentMethod' ? 'owner' : LISTING_WRITES.includes(row) ? 'owner-or-apikey' : 'any';

const validListing = listingBody('mkt-placeholder');
const MATRIX: Record<Exclude<Row, (typeof ELSEWHERE)[number]>, Case> = {
  searchListings: { who: 'public', badQueries: ['limit=0', 'limit=101', 'tier=platinum', 'min_price_cents=-1', 'mine=perhaps'] },
  getListing: { who: 'public', id: 'listing' },
  listingCapabilities: { who: 'owner', id: 'listing' },
  createListing: {
    who: 'owner',
    body: validListing,
    badBodies: [{}, { ...validListing, pricing: { model: 'per_hour', price_cents: 49 } }, { ...validListing, category: 'Not A Slug' }, { ...validListing, title: '   ' }, { ...validListing, min_tier: 'verified' }],
  },
  updateListing: { who: 'owner', id: 'listing', body: { title: 'x' }, badBodies: [{ pricing: { model: 'per_year', price_cents: 100 } }, { term_hours: 0 }, { sla: { uptime_sla: 2 } }] },
  publishListing: { who: 'owner', id: 'listing' },
  pauseListing: { who: 'owner', id: 'listing' },
  resumeListing: { who: 'owner', id: 'listing' },
  delistListing: { who: 'owner', id: 'listing' },
  createRental: { who: 'owner', body: { listing_id: randomUUID(), payment_method: 'pm_card_visa' }, badBodies: [{}, { listing_id: 'not-a-uuid' }, { listing_id: randomUUID(), payment_method: '' }] },
  listRentals: { who: 'owner', badQueries: ['status=bogus', 'role=admin', 'limit=0'] },
  getRental: { who: 'owner', id: 'rental' },
  cancelRental: { who: 'owner', id: 'rental' },
  completeRental: { who: 'owner', id: 'rental' },
  fileDispute: { who: 'owner', id: 'rental', body: { reason: 'late' }, badBodies: [{}, { reason: '' }, { reason: 'late', evidence_refs: [{ type: 'email', id: 'x' }] }] },
  listDisputes: { who: 'operator', badQueries: ['status=closed', 'limit=0'] },
  getDispute: { who: 'operator', id: 'dispute' },
  addDisputeNote: { who: 'owner', id: 'dispute', body: { note: 'more' }, badBodies: [{}, { note: ' ' }] },
  resolveDispute: { who: 'operator', id: 'dispute', body: { outcome: 'none', note: 'ok' }, badBodies: [{}, { outcome: 'maybe', note: 'x' }, { outcome: 'partial', amount_cents: 0, note: 'x' }] },
  listPayouts: { who: 'owner', badQueries: ['limit=0', 'limit=201'] },
  payoutSummary: { who: 'owner' },
  connectDashboard: { who: 'owner' },
  getPaymentMethod: { who: 'owner' },
  setPaymentMethod: { who: 'owner', body: { payment_method: 'pm_card_visa' }, badBodies: [{}, { payment_method: '' }] },
  paymentProcessor: { who: 'public' },
  verifyLedger: { who: 'operator' },
};
const ROWS = Object.keys(MATRIX) as (keyof typeof MATRIX)[];

describe('marketplace routes', () => {
  let t: TestApp;
  const pool = new WsPool();
  let op: { authorization: string };
  let dev: Developer;
  let buyer: { owner: Owner; device: OwnerDevice };
  let stranger: { owner: Owner; device: OwnerDevice };

  const req = (method: string, url: string, headers: Headers = {}, payload?: unknown) =>
    t.request({ method: method as 'GET', url, headers, ...(payload !== undefined ? { payload: payload as object } : {}) });
  const call = (row: Row, id: string | undefined, headers: Headers = {}, payload?: unknown, query = '') => {
    const r = marketplaceRoutes[row];
    return req(r.method, `${r.path.replace('{id}', id ?? '')}${query ? `?${query}` : ''}`, headers, payload);
  };
  const L = (id: string, action = '') => `/api/v1/marketplace/listings/${id}${action ? `/${action}` : ''}`;
  const R = (id: string, action = '') => `/api/v1/marketplace/rentals/${id}${action ? `/${action}` : ''}`;
  const draft = async (d: Developer = dev, headers: Headers = d.owner.auth, over: Record<string, unknown> = {}) => {
    const res = await req('POST', '/api/v1/marketplace/listings', headers, listingBody(d.address, over));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.listing_id as string;
  };
  const rent = async (listingId: string, who: Owner = buyer.owner, paymentMethod = 'pm_card_visa') => {
    const res = await req('POST', '/api/v1/marketplace/rentals', who.auth, { listing_id: listingId, payment_method: paymentMethod });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body as { rental_id: string; status: string };
  };
  const fileDispute = async (rentalId: string, who: Owner = buyer.owner) => {
    const res = await req('POST', R(rentalId, 'dispute'), who.auth, { reason: 'answers were late' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.dispute_id as string;
  };
  const auditOf = async (o: Owner) => {
    const res = await req('GET', '/api/v1/audit/events?limit=200', o.auth);
    expect(res.status).toBe(200);
    return res.body.events as { event_id: string; type: string; subject: string | null; actor: string }[];
  };

  beforeAll(async () => {
    t = await startApp({ listen: true, env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000', LOCAL_PROCESSOR_DELAY_MS: '20' } });
    op = await operatorAuth(t);
    dev = await certifiedDeveloper(t, op);
    buyer = await renter(t);
    stranger = await renter(t, 'Stranger LLC');
  });
  afterAll(async () => {
    await pool.closeAll();
    await t?.close();
  });

  it('the matrix covers every marketplace row but the processor webhooks (and the rental-room rows, see ELSEWHERE)', () => {
    const all = Object.keys(marketplaceRoutes).filter((r) => !(ELSEWHERE as readonly string[]).includes(r));
    expect([...ROWS].sort()).toEqual(all.sort());
    expect(Object.keys(marketplaceRoutes)).toEqual(expect.arrayContaining(['stripeWebhook', 'localProcessorWebhook']));
    for (const row of ROWS) expect(marketplaceRoutes[row].auth, row).toBe(modeOf(row, MATRIX[row].who));
  });

  it('401 without credentials and with a bad bearer token on every row that is not public; public rows answer anonymously', async () => {
    for (const row of ROWS) {
      const c = MATRIX[row];
      const id = c.id ? randomUUID() : undefined;
      if (c.who === 'public') {
        expect((await call(row, id, { authorization: 'Bearer not-a-token' })).status, row).toBe(401);
        continue;
      }
      expect((await call(row, id, {}, c.body)).status, `${row} without credentials`).toBe(401);
      expect((await call(row, id, { authorization: 'Bearer not-a-token' }, c.body)).status, `${row} with a bad token`).toBe(401);
      expect((await call(row, id, { 'x-api-key': `svc_agent_sk_prod_${randomBytes(32).toString('hex')}` }, c.body)).status, `${row} with an unknown API key`).toBe(401);
    }
    const pub = await publishedListing(t, dev);
    const anonSearch = await call('searchListings', undefined);
    expect(anonSearch.status).toBe(200);
    expect(anonSearch.body.listings.map((l: { listing_id: string }) => l.listing_id)).toContain(pub);
    const anon = await call('getListing', pub);
    expect(anon.status).toBe(200);
    expect(anon.body.tenant_id).toBeUndefined();
    expect((await call('getListing', await draft())).status).toBe(404);
  });

  it('400 on a bad id in the path, a bad body or a bad query (with valid credentials)', async () => {
    for (const row of ROWS) {
      const c = MATRIX[row];
      const auth = c.who === 'operator' ? op : dev.owner.auth;
      if (c.id) {
        for (const bad of ['not-a-uuid', '12345', `${randomUUID()}x`]) {
          const res = await call(row, bad, auth, c.body);
          expect(res.status, `${row} with id ${bad}: ${JSON.stringify(res.body)}`).toBe(400);
        }
      }
      for (const body of c.badBodies ?? []) {
        const res = await call(row, c.id ? randomUUID() : undefined, auth, body);
        expect(res.status, `${row} with body ${JSON.stringify(body)}`).toBe(400);
      }
      for (const q of c.badQueries ?? []) {
        const res = await call(row, undefined, auth, undefined, q);
        expect(res.status, `${row}?${q}`).toBe(400);
      }
    }
  });

  it('success on every row: listing transitions, rentals, disputes, payouts, payment method, ledger check', async () => {
    const ok = async (row: Row, id: string | undefined, headers: Headers, payload?: unknown, status = 200, query = '') => {
      const res = await call(row, id, headers, payload, query);
      expect(res.status, `${row}: ${JSON.stringify(res.body)}`).toBe(status);
      return res.body;
    };
    const devAuth = dev.owner.auth;
    const created = await ok('createListing', undefined, devAuth, listingBody(dev.address, { title: 'Matrix listing', category: 'matrix' }), 201);
    const id = created.listing_id as string;
    expect(created.status).toBe('draft');
    expect((await ok('updateListing', id, devAuth, { description: 'updated', min_score: null })).description).toBe('updated');
    expect((await ok('publishListing', id, devAuth)).status).toBe('published');
    expect((await ok('pauseListing', id, devAuth)).status).toBe('paused');
    expect((await ok('resumeListing', id, devAuth)).status).toBe('published');
    expect((await ok('getListing', id, buyer.owner.auth)).tenant_id).toBe(dev.owner.tenantId);
    expect((await ok('searchListings', undefined, buyer.owner.auth, undefined, 200, 'category=matrix')).listings.map((l: { listing_id: string }) => l.listing_id)).toEqual([id]);

    expect((await ok('setPaymentMethod', undefined, buyer.owner.auth, { payment_method: 'pm_card_visa' })).payment_method).toBe('pm_card_visa');
    expect((await ok('getPaymentMethod', undefined, buyer.owner.auth)).payment_method).toBe('pm_card_visa');
    const rental = await ok('createRental', undefined, buyer.owner.auth, { listing_id: id }, 201);
    expect(rental.status).toBe('active');
    expect((await ok('getRental', rental.rental_id, buyer.owner.auth)).role).toBe('renter');
    expect((await ok('listRentals', undefined, dev.owner.auth, undefined, 200, 'role=developer')).rentals.map((r: { rental_id: string }) => r.rental_id)).toContain(rental.rental_id);
    expect((await ok('completeRental', rental.rental_id, buyer.owner.auth)).status).toBe('completed');
    const second = await rent(id);
    expect((await ok('cancelRental', second.rental_id, buyer.owner.auth)).status).toBe('cancelled');
    const third = await rent(id);
    const dispute = await ok('fileDispute', third.rental_id, dev.owner.auth, { reason: 'renter abused the agent' }, 201);
    expect(dispute).toMatchObject({ status: 'open', filed_by_tenant_id: dev.owner.tenantId });
    expect((await ok('addDisputeNote', dispute.dispute_id, buyer.owner.auth, { note: 'we did not' }, 201)).notes).toHaveLength(1);
    expect((await ok('getDispute', dispute.dispute_id, buyer.owner.auth)).dispute_id).toBe(dispute.dispute_id);
    expect((await ok('listDisputes', undefined, dev.owner.auth)).disputes.map((d: { dispute_id: string }) => d.dispute_id)).toContain(dispute.dispute_id);
    expect((await ok('resolveDispute', dispute.dispute_id, op, { outcome: 'none', note: 'no evidence' })).status).toBe('resolved');
    expect((await ok('delistListing', id, devAuth)).status).toBe('delisted');

    const dash = await ok('connectDashboard', undefined, devAuth);
    expect(dash).toMatchObject({ kind: 'dashboard', account_id: expect.stringMatching(/^acct_local_/) });
    expect((await ok('payoutSummary', undefined, devAuth)).balance_cents).toBeGreaterThan(0);
    expect((await ok('listPayouts', undefined, devAuth)).payouts).toEqual([]);
    expect((await ok('verifyLedger', undefined, op)).balanced).toBe(true);
  });

  it("a third tenant sees nothing of another's draft, rental or dispute (404), and changes nothing", async () => {
    const s = stranger.owner.auth;
    const d = await draft();
    for (const action of ['', 'publish', 'pause', 'resume', 'delist']) {
      const res = action ? await req('POST', L(d, action), s) : await req('GET', L(d), s);
      expect(res.status, `stranger ${action || 'get'} draft`).toBe(404);
    }
    expect((await req('PATCH', L(d), s, { title: 'mine now' })).status).toBe(404);
    // the renter, too, cannot read or touch the developer's draft
    expect((await req('GET', L(d), buyer.owner.auth)).status).toBe(404);
    expect((await req('PATCH', L(d), buyer.owner.auth, { title: 'mine now' })).status).toBe(404);
    const mine = await req('GET', '/api/v1/marketplace/listings?mine=true', s);
    expect(mine.body.listings.map((l: { listing_id: string }) => l.listing_id)).not.toContain(d);
    const still = await req('GET', L(d), dev.owner.auth);
    expect(still.body).toMatchObject({ status: 'draft', title: listingBody(dev.address).title });

    // Another tenant's PUBLISHED listing is readable, but not writable.
    const pub = await publishedListing(t, dev);
    expect((await req('GET', L(pub), s)).status).toBe(200);
    for (const action of ['pause', 'delist', 'publish', 'resume']) expect((await req('POST', L(pub, action), s)).status, `stranger ${action} published`).toBe(404);
    expect((await req('PATCH', L(pub), s, { title: 'hijacked' })).status).toBe(404);
    expect((await req('GET', L(pub), dev.owner.auth)).body).toMatchObject({ status: 'published', title: listingBody(dev.address).title });

    // A paused (or delisted) listing leaves the public catalogue: 404 for others, still readable by its owner.
    const paused = await publishedListing(t, dev);
    expect((await req('POST', L(paused, 'pause'), dev.owner.auth)).status).toBe(200);
    expect((await req('GET', L(paused), s)).status).toBe(404);
    expect((await req('GET', L(paused))).status).toBe(404);
    expect((await req('GET', L(paused), dev.owner.auth)).body.status).toBe('paused');

    const r = await rent(pub);
    // evidence naming a third tenant's audit event is refused (400), even though the id exists
    const [foreignEvent] = await auditOf(stranger.owner);
    expect(foreignEvent).toBeDefined();
    const refused = await req('POST', R(r.rental_id, 'dispute'), buyer.owner.auth, { reason: 'see this', evidence_refs: [{ type: 'audit_event', id: foreignEvent!.event_id }] });
    expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    expect((await req('GET', R(r.rental_id), buyer.owner.auth)).body.status).toBe('active');
    for (const action of ['', 'cancel', 'complete']) {
      const res = action ? await req('POST', R(r.rental_id, action), s) : await req('GET', R(r.rental_id), s);
      expect(res.status, `stranger ${action || 'get'} rental`).toBe(404);
    }
    expect((await req('POST', R(r.rental_id, 'dispute'), s, { reason: 'meddling' })).status).toBe(404);
    const listed = await req('GET', '/api/v1/marketplace/rentals', s);
    const listedDev = await req('GET', '/api/v1/marketplace/rentals?role=developer', s);
    expect([...listed.body.rentals, ...listedDev.body.rentals].map((x: { rental_id: string }) => x.rental_id)).not.toContain(r.rental_id);

    const disputeId = await fileDispute(r.rental_id);
    expect((await req('GET', `/api/v1/marketplace/disputes/${disputeId}`, s)).status).toBe(404);
    expect((await req('POST', `/api/v1/marketplace/disputes/${disputeId}/notes`, s, { note: 'I saw it all' })).status).toBe(404);
    expect((await req('GET', '/api/v1/marketplace/disputes', s)).body.disputes).toEqual([]);
    // only an operator resolves: the parties themselves get 403
    for (const who of [buyer.owner.auth, dev.owner.auth, s]) expect((await req('POST', `/api/v1/marketplace/disputes/${disputeId}/resolve`, who, { outcome: 'refund', note: 'x' })).status).toBe(403);
    expect((await req('GET', `/api/v1/marketplace/disputes/${disputeId}`, dev.owner.auth)).body.notes).toEqual([]);
    for (const who of [buyer.owner.auth, dev.owner.auth]) expect((await req('GET', '/api/v1/marketplace/ledger/verify', who)).status).toBe(403);
    // The rental is unchanged by all of the above.
    expect((await req('GET', R(r.rental_id), buyer.owner.auth)).body.status).toBe('disputed');
  });

  it('the developer can read the rental but cannot cancel or complete it (403); the renter still can', async () => {
    const pub = await publishedListing(t, dev);
    const r = await rent(pub);
    const asDev = await req('GET', R(r.rental_id), dev.owner.auth);
    expect(asDev.status).toBe(200);
    expect(asDev.body.role).toBe('developer');
    expect((await req('POST', R(r.rental_id, 'cancel'), dev.owner.auth)).status).toBe(403);
    expect((await req('POST', R(r.rental_id, 'complete'), dev.owner.auth)).status).toBe(403);
    expect((await req('GET', R(r.rental_id), buyer.owner.auth)).body.status).toBe('active');
    expect((await req('POST', R(r.rental_id, 'complete'), buyer.owner.auth)).body.status).toBe('completed');
  });

  it('other principals: an agent device JWT may not write listings (403), an owner without tenant is refused; public rows accept both', async () => {
    const agentAuth = dev.agent.auth;
    expect((await req('POST', '/api/v1/marketplace/listings', agentAuth, listingBody(dev.address))).status).toBe(403);
    expect((await req('GET', '/api/v1/marketplace/listings', agentAuth)).status).toBe(200);
    const lone = { authorization: `Bearer ${await t.ownerToken(`lone-${Date.now()}@example.com`)}` };
    expect((await req('GET', '/api/v1/marketplace/rentals', lone)).status).toBe(403);
    expect((await req('GET', '/api/v1/marketplace/payouts/summary', lone)).status).toBe(403);
    expect((await req('GET', '/api/v1/marketplace/disputes', lone)).status).toBe(403);
    expect((await req('GET', '/api/v1/marketplace/ledger/verify', lone)).status).toBe(403);
    const anonLike = await req('GET', '/api/v1/marketplace/listings', lone);
    expect(anonLike.status).toBe(200);
    expect(anonLike.body.listings.every((l: { tenant_id?: string }) => l.tenant_id === undefined)).toBe(true);
  });

  /** An API key of `owner`'s tenant bound to key material (trust on first use) and member of a new workspace: its headers with and without `X-Workspace-Id`. */
  const workspaceKey = async (owner: Owner, name: string) => {
    const created = await req('POST', '/api/v1/api-keys', owner.auth, { name, env: 'prod' });
    expect(created.status).toBe(201);
    const keys = newDeviceKeys();
    const ws = await pool.open(wsAddress(t.wsUrl, { token: created.body.key }));
    ws.send('client_key_register', { identity_public_key: keys.identityPublicKey, ephemeral_public_key: keys.ephemeralPublicKey, signature: keys.proof() });
    const accepted = await ws.next('client_key_accepted');
    await ws.close();
    const w = await req('POST', '/api/v1/workspaces', owner.auth, { name: `${name} team`, members: [{ device_id: accepted.data.device_id, role: 'admin' }] });
    expect(w.status, JSON.stringify(w.body)).toBe(201);
    return { keyId: created.body.id as string, workspaceId: w.body.id as string, inWs: { 'x-api-key': created.body.key as string, 'x-workspace-id': w.body.id as string }, noWs: { 'x-api-key': created.body.key as string } };
  };

  it('an API key without X-Workspace-Id creates and changes no listing (403, design §8.23) but reads payouts and rentals; owner-only and operator rows refuse it', async () => {
    const created = await req('POST', '/api/v1/api-keys', dev.owner.auth, { name: 'market-bot', env: 'prod' });
    expect(created.status).toBe(201);
    const key = { 'x-api-key': created.body.key as string };
    const refused = await req('POST', '/api/v1/marketplace/listings', key, listingBody(dev.address, { title: 'Listed by a key' }));
    expect(refused.status, JSON.stringify(refused.body)).toBe(403);
    expect(refused.body.detail).toMatch(/X-Workspace-Id/);
    // The owner's listing: every change by the key is refused, and nothing changes.
    const listingId = await draft(dev, dev.owner.auth, { title: 'Owner listing' });
    expect((await req('PATCH', L(listingId), key, { title: 'changed by a key' })).status).toBe(403);
    expect((await req('POST', L(listingId, 'publish'), key)).status).toBe(403);
    expect((await req('POST', L(listingId, 'publish'), dev.owner.auth)).body.status).toBe('published');
    for (const action of ['pause', 'resume', 'delist']) expect((await req('POST', L(listingId, action), key)).status, action).toBe(403);
    expect((await req('GET', L(listingId), dev.owner.auth)).body).toMatchObject({ status: 'published', title: 'Owner listing' });
    const mine = (await req('GET', '/api/v1/marketplace/listings?mine=true&limit=100', dev.owner.auth)).body.listings as { title: string }[];
    expect(mine.map((l) => l.title)).not.toContain('Listed by a key');
    expect((await auditOf(dev.owner)).filter((e) => e.type.startsWith('listing.') && e.actor === `api_key:${created.body.id}`)).toEqual([]);
    // Reads stay open to the key.
    const payouts = await req('GET', '/api/v1/marketplace/payouts', key);
    expect(payouts.status).toBe(200);
    expect(Array.isArray(payouts.body.payouts)).toBe(true);
    const summary = await req('GET', '/api/v1/marketplace/payouts/summary', key);
    expect(summary.status).toBe(200);
    expect(summary.body).toMatchObject({ currency: 'usd', minimum_payout_cents: 1000 });
    expect((await req('GET', '/api/v1/marketplace/rentals?role=developer', key)).status).toBe(200);
    // owner-only and operator rows
    expect((await req('PUT', '/api/v1/marketplace/payment-method', key, { payment_method: 'pm_card_visa' })).status).toBe(403);
    expect((await req('GET', '/api/v1/marketplace/ledger/verify', key)).status).toBe(403);
    expect((await req('GET', '/api/v1/marketplace/disputes', key)).status).toBe(403);
    // a malformed X-Workspace-Id is a 400; an unbound key naming a workspace is refused before the route runs
    expect((await req('GET', '/api/v1/marketplace/payouts', { ...key, 'x-workspace-id': 'not-a-uuid' })).status).toBe(400);
    expect((await req('GET', '/api/v1/marketplace/payouts', { ...key, 'x-workspace-id': randomUUID() })).status).toBe(403);
  });

  it('a key with X-Workspace-Id files its listing under the workspace, and only that workspace may change it (403 otherwise); another tenant\'s key sees none of it (404)', async () => {
    const k = await workspaceKey(dev.owner, 'ws-bot');
    const listingId = await draft(dev, k.inWs, { title: 'Workspace listing' });
    expect((await req('GET', L(listingId), dev.owner.auth)).body.workspace_id).toBe(k.workspaceId);
    const refused = await req('POST', L(listingId, 'publish'), k.noWs);
    expect(refused.status).toBe(403);
    expect((await req('GET', L(listingId), dev.owner.auth)).body.status).toBe('draft');
    const pub = await req('POST', L(listingId, 'publish'), k.inWs);
    expect(pub.body).toMatchObject({ status: 'published', tenant_id: dev.owner.tenantId, workspace_id: k.workspaceId });
    expect((await auditOf(dev.owner)).find((e) => e.type === 'listing.published' && e.subject === listingId)?.actor).toBe(`api_key:${k.keyId}`);
    // another tenant's key, even with a workspace of its own, cannot touch the developer's listings
    const foreign = await workspaceKey(stranger.owner, 'snoop');
    expect((await req('POST', L(listingId, 'pause'), foreign.inWs)).status).toBe(404);
    expect((await req('GET', '/api/v1/marketplace/listings?mine=true', foreign.inWs)).body.listings.map((l: { listing_id: string }) => l.listing_id)).not.toContain(listingId);
    // the tenant's owner is not limited to a workspace
    expect((await req('POST', L(listingId, 'pause'), dev.owner.auth)).body.status).toBe('paused');
  });

  it("an agent's own device JWT acts where its API key would (design §8.27): rents with the default payment method, reads the rental and its SPT, lists its workspaces; listing writes and an owner device's JWT are refused (403)", async () => {
    const agent = await activeAgent(t, buyer.owner);
    const pub = await publishedListing(t, dev, { title: 'Rented by a device' });
    expect((await req('PUT', '/api/v1/marketplace/payment-method', buyer.owner.auth, { payment_method: 'pm_card_visa' })).status).toBe(200);
    const rented = await req('POST', '/api/v1/marketplace/rentals', agent.auth, { listing_id: pub });
    expect(rented.status, JSON.stringify(rented.body)).toBe(201);
    expect(rented.body).toMatchObject({ status: 'active', role: 'renter', renter_tenant_id: buyer.owner.tenantId });
    const id = rented.body.rental_id as string;
    const got = await req('GET', R(id), agent.auth);
    expect(got.status).toBe(200);
    expect(got.body.grant.spt_token).toMatch(/^ey/);
    expect((await req('GET', '/api/v1/marketplace/rentals', agent.auth)).body.rentals.map((r: { rental_id: string }) => r.rental_id)).toContain(id);
    expect((await req('GET', '/api/v1/marketplace/payouts/summary', agent.auth)).status).toBe(200);
    expect((await req('GET', '/api/v1/marketplace/payment-method', agent.auth)).body.payment_method).toBe('pm_card_visa');
    expect((await auditOf(buyer.owner)).find((e) => e.type === 'rental.created' && e.subject === id)?.actor).toBe(`device:${agent.deviceId}`);
    // the developer's agent reads it as the developer; another tenant's agent does not see it
    expect((await req('GET', R(id), dev.agent.auth)).body.role).toBe('developer');
    expect((await req('GET', R(id), (await activeAgent(t, stranger.owner)).auth)).status).toBe(404);
    // workspaces and team rooms: the agent's own
    const w = await req('POST', '/api/v1/workspaces', buyer.owner.auth, { name: 'Buyer team', members: [{ device_id: agent.deviceId }] });
    expect(w.status, JSON.stringify(w.body)).toBe(201);
    const listed = await req('GET', '/api/v1/workspaces', agent.auth);
    expect(listed.status).toBe(200);
    expect(listed.body.workspaces).toEqual([{ id: w.body.id, name: 'Buyer team', role: 'member' }]);
    const rooms = await req('GET', '/api/v1/team-rooms', agent.auth);
    expect(rooms.status).toBe(200);
    expect(rooms.body.team_rooms).toEqual([]);
    // listing writes need an owner, or a key naming its workspace
    expect((await req('POST', L(pub, 'pause'), dev.agent.auth)).status).toBe(403);
    expect((await req('GET', L(pub), dev.owner.auth)).body.status).toBe('published');
    // Owner devices get no device JWT from any route; mint one with the service's key to show the routes refuse it.
    const { token } = await t.app.parley.deviceTokens.issue(buyer.device.deviceId, buyer.owner.tenantId);
    const ownerDevice = { authorization: `Bearer ${token}` };
    expect((await req('POST', '/api/v1/marketplace/rentals', ownerDevice, { listing_id: pub })).status).toBe(403);
    for (const url of ['/api/v1/marketplace/rentals', R(id), '/api/v1/workspaces', '/api/v1/team-rooms']) expect((await req('GET', url, ownerDevice)).status, url).toBe(403);
  });

  describe('isolation between the renter and the developer', () => {
    let devRoom: string;
    let buyerRoom: string;
    let buyerAgent: Agent;
    const traceDev = randomBytes(16).toString('hex');
    const traceBuyer = randomBytes(16).toString('hex');
    const now = BigInt(Date.now()) * 1_000_000n;
    const otlp = (name: string, traceId: string) => ({
      resourceSpans: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'agent' } }] },
          scopeSpans: [{ scope: { name: 'test' }, spans: [{ traceId, spanId: randomBytes(8).toString('hex'), name, kind: 1, startTimeUnixNano: String(now), endTimeUnixNano: String(now + 1_000_000n), status: { code: 1 } }] }],
        },
      ],
    });

    beforeAll(async () => {
      // Both tenants are parties of a rental, and each has telemetry, a room and audit events of its own.
      const pub = await publishedListing(t, dev, { title: 'Isolation listing' });
      await rent(pub);
      buyerAgent = await activeAgent(t, buyer.owner);
      expect((await req('POST', '/api/v1/telemetry/ingest', dev.agent.auth, otlp('dev.secret.task', traceDev))).status).toBe(200);
      expect((await req('POST', '/api/v1/telemetry/ingest', buyerAgent.auth, otlp('buyer.secret.task', traceBuyer))).status).toBe(200);
      const r1 = await req('POST', '/api/v1/rooms', dev.owner.auth, { name: 'dev private room', member_device_ids: [dev.agent.deviceId] });
      expect(r1.status, JSON.stringify(r1.body)).toBe(201);
      devRoom = r1.body.room_id;
      const r2 = await req('POST', '/api/v1/rooms', buyer.owner.auth, { name: 'buyer private room', member_device_ids: [buyerAgent.deviceId] });
      expect(r2.status, JSON.stringify(r2.body)).toBe(201);
      buyerRoom = r2.body.room_id;
    });

    it("audit events: each party's trail holds only its own events (the shared rental events are separate copies)", async () => {
      const devEvents = await auditOf(dev.owner);
      const buyerEvents = await auditOf(buyer.owner);
      expect(devEvents.length).toBeGreaterThan(0);
      expect(buyerEvents.length).toBeGreaterThan(0);
      const devIds = new Set(devEvents.map((e) => e.event_id));
      expect(buyerEvents.filter((e) => devIds.has(e.event_id))).toEqual([]);
      // both have their own rental.created; only the developer has listing events, only the renter its payment-method change
      expect(devEvents.map((e) => e.type)).toEqual(expect.arrayContaining(['rental.created', 'listing.created', 'listing.published']));
      expect(buyerEvents.map((e) => e.type)).toContain('rental.created');
      expect(buyerEvents.some((e) => e.type.startsWith('listing.'))).toBe(false);
      // event ids of the other tenant cannot be fetched by id filters either
      const devEventId = devEvents[0]!.event_id;
      const bySubject = await req('GET', `/api/v1/audit/events?subject=${encodeURIComponent(devEvents.find((e) => e.type === 'listing.created')!.subject!)}`, buyer.owner.auth);
      expect(bySubject.status).toBe(200);
      expect(bySubject.body.events).toEqual([]);
      expect(buyerEvents.map((e) => e.event_id)).not.toContain(devEventId);
      // and the reverse
      const buyerIds = new Set(buyerEvents.map((e) => e.event_id));
      expect(devEvents.filter((e) => buyerIds.has(e.event_id))).toEqual([]);
    });

    it("telemetry: neither party can read the other's agent spans (404) or see them in its activity", async () => {
      expect((await req('GET', `/api/v1/telemetry/${dev.agent.deviceId}`, buyer.owner.auth)).status).toBe(404);
      expect((await req('GET', `/api/v1/telemetry/${encodeURIComponent(dev.address)}`, buyer.owner.auth)).status).toBe(404);
      expect((await req('GET', `/api/v1/telemetry/${dev.agent.deviceId}/summary`, buyer.owner.auth)).status).toBe(404);
      expect((await req('GET', `/api/v1/telemetry/${buyerAgent.deviceId}`, dev.owner.auth)).status).toBe(404);
      const own = await req('GET', `/api/v1/telemetry/${dev.agent.deviceId}?trace_id=${traceDev}`, dev.owner.auth);
      expect(own.body.spans.map((s: { name: string }) => s.name)).toEqual(['dev.secret.task']);
      const buyerActivity = (await req('GET', '/api/v1/dashboard/activity?limit=200', buyer.owner.auth)).body.spans as { trace_id: string }[];
      const devActivity = (await req('GET', '/api/v1/dashboard/activity?limit=200', dev.owner.auth)).body.spans as { trace_id: string }[];
      expect(buyerActivity.map((s) => s.trace_id)).toContain(traceBuyer);
      expect(buyerActivity.map((s) => s.trace_id)).not.toContain(traceDev);
      expect(devActivity.map((s) => s.trace_id)).toContain(traceDev);
      expect(devActivity.map((s) => s.trace_id)).not.toContain(traceBuyer);
    });

    it("rooms: neither party lists or reads the other's rooms", async () => {
      const buyerRooms = (await req('GET', '/api/v1/rooms', buyer.owner.auth)).body.rooms.map((r: { room_id: string }) => r.room_id);
      const devRooms = (await req('GET', '/api/v1/rooms', dev.owner.auth)).body.rooms.map((r: { room_id: string }) => r.room_id);
      expect(buyerRooms).toContain(buyerRoom);
      expect(buyerRooms).not.toContain(devRoom);
      expect(devRooms).toContain(devRoom);
      expect(devRooms).not.toContain(buyerRoom);
      expect((await req('GET', `/api/v1/rooms/${devRoom}`, buyer.owner.auth)).status).toBe(404);
      expect((await req('GET', `/api/v1/rooms/${buyerRoom}`, dev.owner.auth)).status).toBe(404);
      expect((await req('GET', `/api/v1/rooms/${devRoom}`, buyerAgent.auth)).status).toBe(404);
    });
  });
});
