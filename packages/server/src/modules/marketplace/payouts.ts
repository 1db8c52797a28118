/**
 * Payouts, earnings and the processor account (contract §3.8, §4.16, §8; design §8.24, §8.26, §8.35).
 *
 * The weekly run (a cluster-wide job, jobs/marketplace.ts; also `cli payouts run`) pays every
 * developer tenant whose payable balance is at least the minimum (contract §8: 10.00 USD) and that has
 * a ready connected account; a smaller balance carries over. Per tenant, one transaction (holding
 * a per-tenant advisory lock, so concurrent runs serialise and the second sees the balance
 * already moved) creates the `pending` payout and posts its ledger transaction; the transfer is
 * then asked of the processor with the payout id as idempotency key; `completed` / `failed` follow
 * from its answer or its webhook event (a failure posts the reversal: the balance comes back).
 * A pending payout whose transfer was never asked (a crash in between) is retried by the next run
 * with the same idempotency key, so it is paid at most once.
 */
import { randomUUID } from 'node:crypto';
import type { ConnectDashboard, Payout, PayoutListQuery, PayoutPage, PayoutSummary } from '@parley/protocol';
import { and, desc, eq, isNull, lt, or } from 'drizzle-orm';
import type { Db, Tx } from '../../db/client.js';
import { xactLock } from '../../db/locks.js';
import { marketplacePayouts as P } from '../../db/schema/index.js';
import { crossTenant, withTenant } from '../../db/tenant.js';
import { decodeKeyset, encodeKeyset, pageLimit } from '../../lib/paging.js';
import type { Notifier } from '../../realtime/notifier.js';
import { appendAudit } from '../audit/index.js';
import type { MarketCaller } from './caller.js';
import * as ledger from './ledger.js';
import { ProcessorError, type PaymentProcessor } from './payments/processor.js';
import { processorFailed } from './rentals.js';
import { getAccount, insertAccount, setAccountStatus } from './settings-repo.js';

type PayoutRow = typeof P.$inferSelect;

/** contract §8: the minimum payout, in cents. */
export const MINIMUM_PAYOUT_CENTS = 1000;

const toPayout = (p: PayoutRow): Payout => ({
  payout_id: p.id,
  amount_cents: p.amountCents,
  currency: 'usd',
  status: p.status as Payout['status'],
  failure_reason: p.failureReason,
  created_at: p.createdAt.toISOString(),
  completed_at: p.completedAt?.toISOString() ?? null,
});

/** The next weekly run after `now`: Monday 00:00 UTC (the job's period is counted from its lease; this is the advertised date). */
export function nextPayoutDate(now: Date): Date {
  const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  const days = (8 - d.getUTCDay()) % 7 || 7;
  return new Date(d.getTime() + days * 86_400_000);
}

/** Counts of one payout run. */
export interface PayoutRunResult {
  run_id: string;
  paid: number;
  pending: number;
  failed: number;
  skipped_no_account: number;
  retried: number;
}

export class PayoutService {
  constructor(private readonly deps: { db: Db; processor: PaymentProcessor; notifier: Notifier; publicUrl: string; minimumCents: number; listDefault: number; listMax: number }) {}

  /** The tenant's payouts, newest first. */
  async list(c: MarketCaller, q: PayoutListQuery): Promise<PayoutPage> {
    const limit = pageLimit(q.limit, this.deps);
    const after = q.cursor !== undefined ? decodeKeyset(q.cursor) : undefined;
    const rows = await withTenant(this.deps.db, c.tenantId, (tx) =>
      tx
        .select()
        .from(P)
        .where(after ? or(lt(P.createdAt, after.at), and(eq(P.createdAt, after.at), lt(P.id, after.id))) : undefined)
        .orderBy(desc(P.createdAt), desc(P.id))
        .limit(limit + 1),
    );
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return { payouts: page.map(toPayout), next_cursor: rows.length > limit && last ? encodeKeyset(last.createdAt, last.id) : null };
  }

  /** Earnings from the ledger (module comment of ledger.ts; protocol `PayoutSummary`). */
  summary(c: MarketCaller, now = new Date()): Promise<PayoutSummary> {
    return withTenant(this.deps.db, c.tenantId, async (tx) => {
      const s = await ledger.sumsOf(tx, c.tenantId);
      const payable = s.developer_payable;
      return {
        currency: 'usd',
        earned_cents: -((payable.charge ?? 0) + (payable.refund ?? 0)),
        fees_cents: -ledger.total(s.platform_fees),
        paid_cents: -ledger.total(s.payouts),
        pending_cents: -ledger.total(s.processor_clearing),
        balance_cents: -ledger.total(payable),
        minimum_payout_cents: this.deps.minimumCents,
        next_payout_at: nextPayoutDate(now).toISOString(),
      };
    });
  }

  /**
   * The processor dashboard link of the tenant's connected account; the account is created on
   * first call, and while it is not ready the answer is an onboarding link. @throws 502.
   */
  async dashboard(c: MarketCaller): Promise<ConnectDashboard> {
    const { db, processor, publicUrl } = this.deps;
    try {
      let account = await withTenant(db, c.tenantId, (tx) => getAccount(tx, c.tenantId));
      if (!account) {
        const created = await processor.createConnectedAccount({ tenantId: c.tenantId, idempotencyKey: `connect:${c.tenantId}` });
        account = await withTenant(db, c.tenantId, async (tx) => {
          const row = await insertAccount(tx, { tenantId: c.tenantId, processor: processor.name, accountId: created.accountId, status: created.ready ? 'ready' : 'onboarding' });
          await appendAudit(tx, c.tenantId, { type: 'marketplace.account_connected', actor: c.actor, subject: row.accountId, data: { processor: processor.name, ready: created.ready } });
          return row;
        });
      }
      if (account.status !== 'ready') {
        const info = await processor.retrieveAccount(account.accountId);
        if (info.ready) await withTenant(db, c.tenantId, (tx) => setAccountStatus(tx, account!.accountId, 'ready'));
        else {
          const base = `${publicUrl.replace(/\/$/, '')}/api/v1/marketplace/connect/dashboard`;
          const link = await processor.onboardingLink(account.accountId, { refreshUrl: base, returnUrl: base });
          return { url: link.url, kind: 'onboarding', account_id: account.accountId };
        }
      }
      const link = await processor.dashboardLink(account.accountId);
      return { url: link.url, kind: 'dashboard', account_id: account.accountId };
    } catch (err) {
      throw err instanceof ProcessorError ? processorFailed(err) : err;
    }
  }

  /** One payout run over every developer tenant (module comment). Safe to run concurrently. */
  async run(): Promise<PayoutRunResult> {
    const runId = randomUUID();
    const out: PayoutRunResult = { run_id: runId, paid: 0, pending: 0, failed: 0, skipped_no_account: 0, retried: 0 };
    const unasked = await crossTenant(this.deps.db, 'payout run: pending payouts of every tenant', (tx) => tx.select().from(P).where(and(eq(P.status, 'pending'), isNull(P.transferId))));
    for (const p of unasked) {
      out.retried++;
      await this.transfer(p);
    }
    const due = await crossTenant(this.deps.db, 'payout run: payable balances of every developer (ledger)', (tx) => ledger.payableBalances(tx, this.deps.minimumCents));
    for (const { tenantId } of due) {
      const payout = await withTenant(this.deps.db, tenantId, async (tx) => {
        await xactLock(tx, `payout:${tenantId}`);
        const account = await getAccount(tx, tenantId);
        if (!account || account.status !== 'ready') return 'no_account' as const;
        const cents = -ledger.total((await ledger.sumsOf(tx, tenantId)).developer_payable);
        if (cents < this.deps.minimumCents) return null;
        const [p] = await tx.insert(P).values({ id: randomUUID(), tenantId, amountCents: cents, processor: this.deps.processor.name, accountId: account.accountId, runId }).returning();
        await ledger.post(tx, { kind: 'payout', reference: p!.id, payoutId: p!.id, postings: ledger.payoutPostings.started(tenantId, cents) });
        await appendAudit(tx, tenantId, { type: 'payout.created', actor: 'system', subject: p!.id, data: { amount_cents: cents, run_id: runId } });
        return p!;
      });
      if (payout === 'no_account') out.skipped_no_account++;
      if (!payout || payout === 'no_account') continue;
      const status = await this.transfer(payout);
      out[status === 'completed' ? 'paid' : status]++;
    }
    return out;
  }

  /** Ask the processor for a pending payout's transfer (idempotency key = payout id) and apply the answer. */
  private async transfer(p: PayoutRow): Promise<'completed' | 'pending' | 'failed'> {
    let res;
    try {
      res = await this.deps.processor.transfer({ destinationAccountId: p.accountId, amountCents: p.amountCents, currency: 'usd', metadata: { payout_id: p.id, tenant_id: p.tenantId }, idempotencyKey: `payout:${p.id}` });
    } catch {
      return 'pending'; // retried by the next run with the same key
    }
    await withTenant(this.deps.db, p.tenantId, (tx) => tx.update(P).set({ transferId: res.transferId ?? `none:${p.id}` }).where(eq(P.id, p.id)));
    if (res.status === 'pending') return 'pending';
    await this.settle(p.id, p.tenantId, res.status === 'paid' ? 'completed' : 'failed', res.failureReason);
    return res.status === 'paid' ? 'completed' : 'failed';
  }

  /**
   * pending -> completed | failed (from the transfer answer or a processor event; once). Posts
   * the settlement or the reversal. `recordEvent` records the event in the same transaction.
   */
  async settle(payoutId: string, tenantId: string, status: 'completed' | 'failed', reason?: string, recordEvent?: (tx: Tx) => Promise<boolean>): Promise<void> {
    const row = await withTenant(this.deps.db, tenantId, async (tx) => {
      if (recordEvent && !(await recordEvent(tx))) return null;
      const [p] = await tx.select().from(P).where(eq(P.id, payoutId)).for('update');
      if (!p || p.status !== 'pending') return null;
      const [u] = await tx
        .update(P)
        .set({ status, completedAt: new Date(), failureReason: status === 'failed' ? (reason ?? 'transfer failed') : null })
        .where(eq(P.id, p.id))
        .returning();
      const postings = status === 'completed' ? ledger.payoutPostings.settled(tenantId, p.amountCents) : ledger.payoutPostings.reversed(tenantId, p.amountCents);
      await ledger.post(tx, { kind: status === 'completed' ? 'payout_settled' : 'payout_reversal', reference: p.id, payoutId: p.id, postings });
      await appendAudit(tx, tenantId, { type: status === 'completed' ? 'payout.completed' : 'payout.failed', actor: 'system', subject: p.id, data: { amount_cents: p.amountCents, ...(reason ? { reason } : {}) } });
      return u!;
    });
    if (row) await this.deps.notifier.toOwners(tenantId, 'payout_updated', { payout_id: row.id, status: row.status, amount_cents: row.amountCents });
  }

  /** The tenant of a payout (cross-tenant lookup for processor events). */
  tenantOfPayout(payoutId: string): Promise<string | null> {
    return crossTenant(this.deps.db, 'processor events name a payout, not a tenant', async (tx) => (await tx.select({ t: P.tenantId }).from(P).where(eq(P.id, payoutId)))[0]?.t ?? null);
  }
}
