/**
 * Marketplace payouts (contract §3.8, §8; design §8.24, §8.26): the minimum payout (a balance under
 * 10.00 USD carries over and is paid once a later rental lifts it), a failed transfer (the payout
 * becomes `failed`, the reversal gives the balance back, the next run pays it), and — on
 * PostgreSQL — two app instances sharing one database running the payout at the same moment pay
 * exactly one payout per developer. The ledger check stays balanced throughout.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalProcessor } from '../../src/modules/marketplace/payments/local.js';
import type { Owner } from '../../testing/flows.js';
import { backend, startApp, type TestApp } from '../../testing/harness.js';
import { certifiedDeveloper, operatorAuth, publishedListing, renter, type Developer } from '../../testing/marketplace-fixtures.js';

const ENV = { RATE_LIMIT_ENROLL_PER_10MIN: '1000', LOCAL_PROCESSOR_DELAY_MS: '20' };

describe('marketplace payouts', () => {
  let t: TestApp;
  let op: { authorization: string };
  let buyer: { owner: Owner };

  const exec = async <T = Record<string, unknown>>(q: ReturnType<typeof sql>) => ((await t.app.parley.database.db.execute(q)) as unknown as { rows: T[] }).rows;
  const get = async (o: Owner, url: string) => {
    const res = await t.request({ method: 'GET', url: `/api/v1/marketplace/${url}`, headers: o.auth });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body;
  };
  const summary = (d: Developer) => get(d.owner, 'payouts/summary') as Promise<{ balance_cents: number; paid_cents: number; pending_cents: number; earned_cents: number }>;
  const payouts = async (d: Developer) => (await get(d.owner, 'payouts')).payouts as { payout_id: string; amount_cents: number; status: string; failure_reason: string | null }[];
  const statuses = async (d: Developer) => (await payouts(d)).map((p) => p.status);
  const ledgerOk = async () => {
    const v = await t.request({ method: 'GET', url: '/api/v1/marketplace/ledger/verify', headers: op });
    expect(v.status).toBe(200);
    expect(v.body).toMatchObject({ balanced: true, imbalance_cents: 0, unbalanced_transactions: [] });
  };
  /** Ledger transactions of each kind naming `tenantId`'s payouts. */
  const payoutTransactions = async (tenantId: string) =>
    Object.fromEntries(
      (
        await exec<{ kind: string; n: number }>(sql`select lt.kind, count(*)::int as n from ledger_transactions lt join marketplace_payouts p on p.id = lt.payout_id
                                                   where p.tenant_id = ${tenantId} group by lt.kind`)
      ).map((r) => [r.kind, r.n]),
    );

  /** A certified developer with a ready connected account (created by the dashboard call). */
  async function developer(): Promise<{ dev: Developer; accountId: string }> {
    const dev = await certifiedDeveloper(t, op);
    const dash = await t.request({ method: 'GET', url: '/api/v1/marketplace/connect/dashboard', headers: dev.owner.auth });
    expect(dash.status, JSON.stringify(dash.body)).toBe(200);
    expect(dash.body.kind).toBe('dashboard');
    return { dev, accountId: dash.body.account_id };
  }
  /** One per_task rental of `priceCents`, paid at once: the developer earns 80 % of it (fee 20 %). */
  async function earn(dev: Developer, priceCents: number): Promise<void> {
    const listingId = await publishedListing(t, dev, { pricing: { model: 'per_task', price_cents: priceCents } });
    const r = await t.request({ method: 'POST', url: '/api/v1/marketplace/rentals', headers: buyer.owner.auth, payload: { listing_id: listingId, payment_method: 'pm_card_visa' } });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body).toMatchObject({ status: 'active', amount_cents: priceCents, fee_cents: priceCents / 5 });
  }

  beforeAll(async () => {
    t = await startApp({ env: ENV });
    op = await operatorAuth(t);
    buyer = await renter(t);
  });
  afterAll(() => t?.close());

  it('a balance under 10.00 is not paid and carries over; a later rental lifts it and the next run pays all of it once', async () => {
    const { dev } = await developer();
    await earn(dev, 1000); // 800 for the developer
    expect(await summary(dev)).toMatchObject({ balance_cents: 800, earned_cents: 800, paid_cents: 0 });
    await t.app.parley.marketplace.payouts.run();
    expect(await payouts(dev)).toEqual([]);
    expect(await summary(dev)).toMatchObject({ balance_cents: 800, pending_cents: 0, paid_cents: 0 });
    expect(await payoutTransactions(dev.owner.tenantId)).toEqual({});

    await earn(dev, 500); // +400: 1200 >= 1000
    expect((await summary(dev)).balance_cents).toBe(1200);
    await t.app.parley.marketplace.payouts.run();
    await expect.poll(() => statuses(dev), { timeout: 5000 }).toEqual(['completed']);
    expect((await payouts(dev))[0]!.amount_cents).toBe(1200);
    expect(await summary(dev)).toMatchObject({ balance_cents: 0, pending_cents: 0, paid_cents: 1200, earned_cents: 1200 });
    expect(await payoutTransactions(dev.owner.tenantId)).toEqual({ payout: 1, payout_settled: 1 });

    // Nothing left: another run pays nothing more.
    await t.app.parley.marketplace.payouts.run();
    expect(await statuses(dev)).toEqual(['completed']);
    await ledgerOk();
  });

  it('a failed transfer marks the payout failed, the reversal gives the balance back, and the next run pays it', async () => {
    const processor = t.app.parley.marketplace.processor as LocalProcessor;
    expect(processor.name).toBe('local');
    const { dev, accountId } = await developer();
    await earn(dev, 2500); // 2000 for the developer
    processor.failPayoutsTo(accountId);

    await t.app.parley.marketplace.payouts.run();
    await expect.poll(() => statuses(dev), { timeout: 5000 }).toEqual(['failed']);
    const [failed] = await payouts(dev);
    expect(failed).toMatchObject({ amount_cents: 2000, status: 'failed' });
    expect(failed!.failure_reason).toMatch(/cannot receive payouts/);
    expect(await summary(dev)).toMatchObject({ balance_cents: 2000, pending_cents: 0, paid_cents: 0 });
    expect(await payoutTransactions(dev.owner.tenantId)).toEqual({ payout: 1, payout_reversal: 1 });
    await ledgerOk();

    // The account is fixed. LocalProcessor has no public control to stop failing an account, so
    // the test clears its private set (test-only reach into the embedded processor).
    (processor as unknown as { failingAccounts: Set<string> }).failingAccounts.delete(accountId);
    await t.app.parley.marketplace.payouts.run();
    await expect.poll(() => statuses(dev), { timeout: 5000 }).toEqual(['completed', 'failed']);
    const [paid] = await payouts(dev);
    expect(paid).toMatchObject({ amount_cents: 2000, status: 'completed', failure_reason: null });
    expect(paid!.payout_id).not.toBe(failed!.payout_id);
    expect(await summary(dev)).toMatchObject({ balance_cents: 0, pending_cents: 0, paid_cents: 2000 });
    expect(await payoutTransactions(dev.owner.tenantId)).toEqual({ payout: 2, payout_reversal: 1, payout_settled: 1 });
    const types = (await exec<{ type: string }>(sql`select type from audit_events where tenant_id = ${dev.owner.tenantId} and type like 'payout.%' order by seq`)).map((r) => r.type);
    expect(types).toEqual(['payout.created', 'payout.failed', 'payout.created', 'payout.completed']);
    await ledgerOk();
  });

  it.skipIf(backend !== 'postgres')('two instances on one PostgreSQL database running the payout at the same moment pay one payout per developer', async () => {
    const raw = t.app.parley.database.raw;
    if (raw.kind !== 'pg') throw new Error('expected PostgreSQL');
    const t2 = await startApp({ env: ENV, databaseUrl: raw.url });
    try {
      const devs: Developer[] = [];
      for (const price of [1500, 2500, 5000]) {
        const { dev } = await developer();
        await earn(dev, price);
        devs.push(dev);
      }
      const { dev: small } = await developer();
      await earn(small, 1000); // 800: under the minimum in both instances

      const runs = await Promise.all([
        t.app.parley.marketplace.payouts.run(),
        t2.app.parley.marketplace.payouts.run(),
        t.app.parley.marketplace.payouts.run(),
        t2.app.parley.marketplace.payouts.run(),
      ]);
      // Across every racing run, each developer's payout was created exactly once.
      expect(runs.reduce((n, r) => n + r.paid + r.pending + r.failed, 0)).toBe(devs.length);
      for (const [i, dev] of devs.entries()) {
        const rows = await exec<{ amount_cents: number }>(sql`select amount_cents from marketplace_payouts where tenant_id = ${dev.owner.tenantId}`);
        expect(rows, `developer ${i}`).toEqual([{ amount_cents: [1200, 2000, 4000][i] }]);
        expect((await payoutTransactions(dev.owner.tenantId)).payout, `developer ${i}`).toBe(1);
      }
      expect(await exec(sql`select id from marketplace_payouts where tenant_id = ${small.owner.tenantId}`)).toEqual([]);
      for (const dev of devs) await expect.poll(() => statuses(dev), { timeout: 5000 }).toEqual(['completed']);
      for (const dev of devs) {
        expect((await summary(dev)).balance_cents).toBe(0);
        expect(await payoutTransactions(dev.owner.tenantId)).toEqual({ payout: 1, payout_settled: 1 });
      }
      expect((await summary(small)).balance_cents).toBe(800);
      // A second race finds nothing to pay.
      await Promise.all([t.app.parley.marketplace.payouts.run(), t2.app.parley.marketplace.payouts.run()]);
      for (const dev of devs) expect(await statuses(dev)).toEqual(['completed']);
      await ledgerOk();
    } finally {
      await t2.close();
    }
  });
});
