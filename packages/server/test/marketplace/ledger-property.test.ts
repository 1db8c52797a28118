/**
 * The marketplace ledger balances after any sequence of rentals, cancellations, disputes and
 * payouts (design §8.24), and the money adds up: what renters paid
 * minus refunds equals platform fees plus what developers are owed, are being paid and were paid.
 * Also: the database refuses an unbalanced transaction and any edit of the ledger.
 */
import fc from 'fast-check';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crossTenant } from '../../src/db/tenant.js';
import { post, verifyLedger } from '../../src/modules/marketplace/ledger.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { certifiedDeveloper, operatorAuth, publishedListing, renter, type Developer } from '../../testing/marketplace-fixtures.js';
import type { Owner } from '../../testing/flows.js';

type Action = { kind: 'rent'; card: 'pm_card_visa' | 'pm_card_chargeDeclined' } | { kind: 'cancel'; half: boolean } | { kind: 'dispute'; outcome: 'refund' | 'partial' | 'none' } | { kind: 'complete' } | { kind: 'payout' };

describe('ledger property', () => {
  let t: TestApp;
  let dev: Developer;
  let buyer: Owner;
  let op: { authorization: string };
  let listingId: string;
  const exec = async <T = Record<string, unknown>>(q: ReturnType<typeof sql>) => ((await t.app.parley.database.db.execute(q)) as unknown as { rows: T[] }).rows;

  beforeAll(async () => {
    t = await startApp({ env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000', LOCAL_PROCESSOR_DELAY_MS: '1' } });
    op = await operatorAuth(t);
    dev = await certifiedDeveloper(t, op);
    buyer = (await renter(t)).owner;
    listingId = await publishedListing(t, dev, { pricing: { model: 'per_hour', price_cents: 777 }, term_hours: 3 });
    expect((await t.request({ method: 'GET', url: '/api/v1/marketplace/connect/dashboard', headers: dev.owner.auth })).status).toBe(200);
  });
  afterAll(() => t?.close());

  const action: fc.Arbitrary<Action> = fc.oneof(
    fc.record({ kind: fc.constant('rent' as const), card: fc.constantFrom('pm_card_visa' as const, 'pm_card_chargeDeclined' as const) }),
    fc.record({ kind: fc.constant('cancel' as const), half: fc.boolean() }),
    fc.record({ kind: fc.constant('dispute' as const), outcome: fc.constantFrom('refund' as const, 'partial' as const, 'none' as const) }),
    fc.record({ kind: fc.constant('complete' as const) }),
    fc.record({ kind: fc.constant('payout' as const) }),
  );

  async function apply(a: Action, active: string[]): Promise<void> {
    if (a.kind === 'rent') {
      const r = await t.request({ method: 'POST', url: '/api/v1/marketplace/rentals', headers: buyer.auth, payload: { listing_id: listingId, payment_method: a.card } });
      expect([201, 402]).toContain(r.status);
      if (r.status === 201) active.push(r.body.rental_id);
      return;
    }
    if (a.kind === 'payout') {
      await t.app.parley.marketplace.payouts.run();
      return;
    }
    const id = active.pop();
    if (!id) return;
    if (a.kind === 'cancel') {
      if (a.half) await exec(sql`update marketplace_rentals set starts_at = now() - interval '90 minutes', ends_at = now() + interval '90 minutes' where id = ${id}`);
      expect((await t.request({ method: 'POST', url: `/api/v1/marketplace/rentals/${id}/cancel`, headers: buyer.auth })).status).toBe(200);
    } else if (a.kind === 'complete') {
      expect((await t.request({ method: 'POST', url: `/api/v1/marketplace/rentals/${id}/complete`, headers: buyer.auth })).status).toBe(200);
    } else {
      const d = await t.request({ method: 'POST', url: `/api/v1/marketplace/rentals/${id}/dispute`, headers: buyer.auth, payload: { reason: 'property' } });
      expect(d.status).toBe(201);
      const body = a.outcome === 'partial' ? { outcome: 'partial', amount_cents: 100, note: 'p' } : { outcome: a.outcome, note: 'p' };
      expect((await t.request({ method: 'POST', url: `/api/v1/marketplace/disputes/${d.body.dispute_id}/resolve`, headers: op, payload: body })).status).toBe(200);
    }
  }

  it('after any sequence every transaction sums to zero and cash in = fees + payable + in flight + paid', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(action, { minLength: 1, maxLength: 8 }), async (actions) => {
        const active: string[] = [];
        for (const a of actions) await apply(a, active);
        const check = await verifyLedger(t.app.parley.database.db);
        expect(check).toMatchObject({ balanced: true, imbalance_cents: 0 });
        const sums = Object.fromEntries(
          (await exec<{ account: string; s: string }>(sql`select account, sum(amount_cents)::text as s from ledger_entries group by account`)).map((r) => [r.account, Number(r.s)]),
        );
        const charged = (sums.renter_charges ?? 0) + (sums.refunds ?? 0); // net cash from renters
        const owed = -(sums.platform_fees ?? 0) - (sums.developer_payable ?? 0) - (sums.processor_clearing ?? 0) - (sums.payouts ?? 0);
        expect(charged - owed + 0).toBe(0);
        const [r] = await exec<{ charged: string; refunded: string }>(sql`select coalesce(sum(amount_cents) filter (where charge_id is not null and status <> 'pending' and reason is distinct from 'payment_failed'), 0)::text as charged, coalesce(sum(refunded_cents), 0)::text as refunded from marketplace_rentals`);
        expect((sums.renter_charges ?? 0) - Number(r!.charged) + 0).toBe(0);
        expect((sums.refunds ?? 0) + Number(r!.refunded) + 0).toBe(0);
      }),
      { numRuns: 6 },
    );
  });

  it('the database refuses an unbalanced transaction and any UPDATE or DELETE of the ledger', async () => {
    const db = t.app.parley.database.db;
    await expect(crossTenant(db, 'test', (tx) => post(tx, { kind: 'charge', reference: 'bad', postings: [{ account: 'renter_charges', tenantId: null, amountCents: 5 }, { account: 'platform_fees', tenantId: null, amountCents: -4 }] }))).rejects.toThrow();
    await expect(crossTenant(db, 'test', (tx) => post(tx, { kind: 'charge', reference: 'twice', postings: [{ account: 'renter_charges', tenantId: null, amountCents: 5 }, { account: 'platform_fees', tenantId: null, amountCents: -5 }] }))).resolves.toMatch(/-/);
    await expect(crossTenant(db, 'test', (tx) => post(tx, { kind: 'charge', reference: 'twice', postings: [{ account: 'renter_charges', tenantId: null, amountCents: 5 }, { account: 'platform_fees', tenantId: null, amountCents: -5 }] }))).resolves.toBeNull();
    await expect(exec(sql`update ledger_entries set amount_cents = amount_cents + 1`)).rejects.toThrow();
    await expect(exec(sql`delete from ledger_transactions`)).rejects.toThrow();
    expect((await verifyLedger(db)).balanced).toBe(true);
  });
});
