/**
 * The local processor's webhook route, `POST /api/v1/marketplace/webhooks/local` (design §8.26),
 * driven from outside: events signed in the Standard Webhooks format with the configured
 * `LOCAL_PROCESSOR_WEBHOOK_SECRET`. A `charge.succeeded` for a pending `pm_card_async` rental
 * activates it once; the replay answers `duplicate: true` and changes nothing (one ledger charge,
 * one `rental.activated` per tenant chain); a tampered body, a wrong secret, missing headers or a
 * stale timestamp are 400 and change nothing; an unknown event type is recorded once and ignored.
 * The processor's own asynchronous confirmation is delayed far beyond the test, so it cannot race.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Owner } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { certifiedDeveloper, operatorAuth, publishedListing, renter, type Developer } from '../../testing/marketplace-fixtures.js';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const OTHER_SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const URL = '/api/v1/marketplace/webhooks/local';

let seq = 0;
const eventId = () => `evt_test_${Date.now().toString(36)}_${++seq}`;

/** A local processor event body and its signed headers (payments/local.ts: `{id, type, created, data}`). */
function signed(type: string, data: Record<string, unknown>, opts: { secret?: string; id?: string; at?: Date } = {}) {
  const id = opts.id ?? eventId();
  const at = opts.at ?? new Date();
  const body = JSON.stringify({ id, type, created: Math.floor(at.getTime() / 1000), data });
  const headers = {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(opts.secret ?? SECRET).sign(id, at, body),
  };
  return { id, body, headers };
}

describe('local processor webhook route', () => {
  let t: TestApp;
  let op: { authorization: string };
  let dev: Developer;
  let buyer: { owner: Owner };
  let listingId: string;

  const exec = async <T = Record<string, unknown>>(q: ReturnType<typeof sql>) => ((await t.app.parley.database.db.execute(q)) as unknown as { rows: T[] }).rows;
  const post = (e: { body: string; headers: Record<string, string> }) => t.request({ method: 'POST', url: URL, headers: e.headers, payload: e.body });
  const rental = async (id: string) => (await t.request({ method: 'GET', url: `/api/v1/marketplace/rentals/${id}`, headers: buyer.owner.auth })).body;
  const count = async (q: ReturnType<typeof sql>) => (await exec<{ n: number }>(q))[0]!.n;
  const charges = (id: string) => count(sql`select count(*)::int as n from ledger_transactions where rental_id = ${id} and kind = 'charge'`);
  const activated = (tenantId: string, id: string) => count(sql`select count(*)::int as n from audit_events where tenant_id = ${tenantId} and type = 'rental.activated' and subject = ${id}`);
  const recorded = (id: string) => count(sql`select count(*)::int as n from processor_events where processor = 'local' and event_id = ${id}`);

  /** A pending rental paid with `pm_card_async`, and the charge id the processor gave it. */
  async function pendingRental(): Promise<{ rentalId: string; chargeId: string }> {
    const res = await t.request({ method: 'POST', url: '/api/v1/marketplace/rentals', headers: buyer.owner.auth, payload: { listing_id: listingId, payment_method: 'pm_card_async' } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.status).toBe('pending');
    const [row] = await exec<{ charge_id: string }>(sql`select charge_id from marketplace_rentals where id = ${res.body.rental_id}`);
    expect(row!.charge_id).toMatch(/^pi_local_/);
    return { rentalId: res.body.rental_id, chargeId: row!.charge_id };
  }

  beforeAll(async () => {
    // The processor's own confirmation would come after 10 minutes: every event here is ours.
    t = await startApp({ env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000', LOCAL_PROCESSOR_WEBHOOK_SECRET: SECRET, LOCAL_PROCESSOR_DELAY_MS: '600000' } });
    op = await operatorAuth(t);
    dev = await certifiedDeveloper(t, op);
    buyer = await renter(t);
    listingId = await publishedListing(t, dev);
  });
  afterAll(() => t?.close());

  it('a signed charge.succeeded activates the pending rental once; its replay is a duplicate that changes nothing', async () => {
    const { rentalId, chargeId } = await pendingRental();
    expect(await charges(rentalId)).toBe(0);
    const ev = signed('charge.succeeded', { object_id: chargeId, metadata: { rental_id: rentalId, listing_id: listingId } });

    const first = await post(ev);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toEqual({ received: true, duplicate: false });
    const active = await rental(rentalId);
    expect(active).toMatchObject({ status: 'active', amount_cents: 5000 });
    expect(active.grant.spt_token).toMatch(/^ey/);
    expect(await charges(rentalId)).toBe(1);
    expect(await activated(buyer.owner.tenantId, rentalId)).toBe(1);
    expect(await activated(dev.owner.tenantId, rentalId)).toBe(1);
    expect(await recorded(ev.id)).toBe(1);
    const [before] = await exec<{ activated_at: Date; grant_id: string }>(sql`select activated_at, grant_id from marketplace_rentals where id = ${rentalId}`);
    expect(before!.grant_id).toBeTruthy();
    const grantsIssued = () => count(sql`select count(*)::int as n from audit_events where tenant_id = ${dev.owner.tenantId} and type = 'grant.issued'`);
    const issued = await grantsIssued();

    const replay = await post(ev);
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual({ received: true, duplicate: true });
    expect(await charges(rentalId)).toBe(1);
    expect(await activated(buyer.owner.tenantId, rentalId)).toBe(1);
    expect(await activated(dev.owner.tenantId, rentalId)).toBe(1);
    expect(await recorded(ev.id)).toBe(1);
    const [after] = await exec<{ activated_at: Date; grant_id: string }>(sql`select activated_at, grant_id from marketplace_rentals where id = ${rentalId}`);
    expect(after).toEqual(before);
    // The same event re-signed with a fresh timestamp (a processor redelivery) is a duplicate as well.
    const redelivered = signed('charge.succeeded', { object_id: chargeId, metadata: { rental_id: rentalId, listing_id: listingId } }, { id: ev.id });
    expect((await post(redelivered)).body).toEqual({ received: true, duplicate: true });
    expect(await charges(rentalId)).toBe(1);

    expect(await grantsIssued()).toBe(issued); // no second SPT
    const v = await t.request({ method: 'GET', url: '/api/v1/marketplace/ledger/verify', headers: op });
    expect(v.body.balanced).toBe(true);
  });

  it('a tampered body, a wrong secret, missing headers or a stale timestamp are 400 and change nothing', async () => {
    const { rentalId, chargeId } = await pendingRental();
    const data = { object_id: chargeId, metadata: { rental_id: rentalId, listing_id: listingId } };

    const good = signed('charge.succeeded', data);
    const tampered = { ...good, body: good.body.replace('charge.succeeded', 'charge.failed') };
    expect(tampered.body).not.toBe(good.body);
    const wrongSecret = signed('charge.succeeded', data, { secret: OTHER_SECRET });
    const stale = signed('charge.succeeded', data, { at: new Date(Date.now() - 10 * 60_000) });
    const future = signed('charge.succeeded', data, { at: new Date(Date.now() + 10 * 60_000) });
    const { 'webhook-signature': _sig, ...unsigned } = good.headers;
    const badSig = { ...good, headers: { ...good.headers, 'webhook-signature': 'v1,AAAA' } };
    const otherId = { ...good, headers: { ...good.headers, 'webhook-id': 'evt_someone_else' } };
    for (const [what, e] of Object.entries({ tampered, wrongSecret, stale, future, badSig, otherId, unsigned: { body: good.body, headers: unsigned } })) {
      const res = await post(e);
      expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(400);
    }
    // A signed body that is not a local event is refused too.
    const notAnEvent = signed('charge.succeeded', {});
    const bare = JSON.stringify({ hello: 'world' });
    const at = new Date();
    const res = await post({ body: bare, headers: { ...notAnEvent.headers, 'webhook-signature': new Webhook(SECRET).sign(notAnEvent.id, at, bare), 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)) } });
    expect(res.status).toBe(400);
    expect((await post(notAnEvent)).status).toBe(400);

    expect((await rental(rentalId)).status).toBe('pending');
    expect(await charges(rentalId)).toBe(0);
    expect(await recorded(good.id)).toBe(0);
    // ... and the untampered event still works afterwards.
    expect((await post(good)).body).toEqual({ received: true, duplicate: false });
    expect((await rental(rentalId)).status).toBe('active');
  });

  it('a signed charge.failed cancels the pending rental with payment_failed, once', async () => {
    const { rentalId, chargeId } = await pendingRental();
    const ev = signed('charge.failed', { object_id: chargeId, metadata: { rental_id: rentalId }, failure_reason: 'insufficient funds' });
    expect((await post(ev)).body).toEqual({ received: true, duplicate: false });
    expect(await rental(rentalId)).toMatchObject({ status: 'cancelled', reason: 'payment_failed' });
    expect((await post(ev)).body).toEqual({ received: true, duplicate: true });
    expect(await charges(rentalId)).toBe(0);
    expect(await count(sql`select count(*)::int as n from audit_events where tenant_id = ${buyer.owner.tenantId} and type = 'rental.payment_failed' and subject = ${rentalId}`)).toBe(1);
    // a late success for the same charge under another event id does not revive it
    const late = signed('charge.succeeded', { object_id: chargeId, metadata: { rental_id: rentalId } });
    expect((await post(late)).body).toEqual({ received: true, duplicate: false });
    expect((await rental(rentalId)).status).toBe('cancelled');
    expect(await charges(rentalId)).toBe(0);
  });

  it('an unknown event type (and an event naming no known rental) is recorded once and ignored', async () => {
    const before = await count(sql`select count(*)::int as n from ledger_transactions`);
    const unknown = signed('customer.created', { object_id: 'cus_local_1', metadata: { rental_id: '00000000-0000-4000-8000-000000000000' } });
    expect((await post(unknown)).body).toEqual({ received: true, duplicate: false });
    expect(await exec(sql`select type from processor_events where processor = 'local' and event_id = ${unknown.id}`)).toEqual([{ type: 'customer.created' }]);
    expect((await post(unknown)).body).toEqual({ received: true, duplicate: true });
    expect(await recorded(unknown.id)).toBe(1);

    const orphan = signed('charge.succeeded', { object_id: 'pi_local_nothing', metadata: { rental_id: '00000000-0000-4000-8000-000000000000' } });
    expect((await post(orphan)).body).toEqual({ received: true, duplicate: false });
    expect((await post(orphan)).body).toEqual({ received: true, duplicate: true });
    expect(await recorded(orphan.id)).toBe(1);
    expect(await count(sql`select count(*)::int as n from ledger_transactions`)).toBe(before);
  });

  // KNOWN BUG (reported, not fixed here): processor-events.ts passes `metadata.rental_id` /
  // `metadata.payout_id` to a uuid query unchecked, so a correctly signed event whose metadata holds
  // a non-UUID value (e.g. another integration's object on the same Stripe account) fails with a
  // database error mapped to 400 and is never recorded: the processor redelivers it for ever. The
  // documented behaviour (docs/decisions.md, processor-events.ts) is "an unknown rental ... is
  // still recorded once". Fix: treat a non-UUID id as unknown (`asUuid`) before the lookups.
  it('a signed event whose metadata names no valid rental or payout id is recorded once and ignored', async () => {
    const outcomes: Record<string, unknown> = {};
    for (const [type, metadata] of [
      ['charge.succeeded', { rental_id: 'not-a-uuid' }],
      ['transfer.paid', { payout_id: 'not-a-uuid' }],
    ] as const) {
      const ev = signed(type, { object_id: 'obj_local_1', metadata });
      const res = await post(ev);
      outcomes[type] = { status: res.status, body: res.body, recorded: await recorded(ev.id) };
    }
    const ok = { status: 200, body: { received: true, duplicate: false }, recorded: 1 };
    expect(outcomes).toEqual({ 'charge.succeeded': ok, 'transfer.paid': ok });
  });

  it('the Stripe webhook route is 404 while the local processor is configured', async () => {
    const ev = signed('charge.succeeded', { object_id: 'pi_x', metadata: {} });
    const res = await t.request({ method: 'POST', url: '/api/v1/marketplace/webhooks/stripe', headers: ev.headers, payload: ev.body });
    expect(res.status).toBe(404);
    expect(await recorded(ev.id)).toBe(0);
  });
});
