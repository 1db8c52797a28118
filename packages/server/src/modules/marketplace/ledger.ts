/**
 * The marketplace's double-entry ledger (design §8.24, §8.35). Every money movement is one
 * balanced transaction (entries in signed integer cents summing to zero, debit positive), written
 * in the SAME database transaction as the state change it belongs to, through the SECURITY
 * DEFINER function `parley_ledger_post` (migration 0021): the application role can append
 * balanced transactions and nothing else; a retried step (same kind and reference) posts nothing.
 * Balances are derived from entries, never stored.
 *
 * Accounts (the tenant each entry names is in parentheses):
 * - charge A of a rental, fee F:   renter_charges(renter) +A, platform_fees(developer) -F,
 *                                  developer_payable(developer) -(A-F)
 * - refund R = Rf + Rd (pro rata): refunds(renter) -R, platform_fees(developer) +Rf,
 *                                  developer_payable(developer) +Rd
 * - payout P started:              developer_payable(developer) +P, processor_clearing(developer) -P
 * - payout P completed:            processor_clearing(developer) +P, payouts(developer) -P
 * - payout P failed (reversal):    processor_clearing(developer) +P, developer_payable(developer) -P
 * Cash at the processor is renter_charges + refunds + payouts (+ processor_clearing in flight);
 * a developer's payable balance is -sum(developer_payable).
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { Db, Tx } from '../../db/client.js';
import { crossTenant } from '../../db/tenant.js';

/** Ledger accounts (design §8.24). */
export type LedgerAccount = 'renter_charges' | 'platform_fees' | 'developer_payable' | 'refunds' | 'payouts' | 'processor_clearing';

/** Transaction kinds; with `reference` (rental, refund or payout id) they identify a posting once. */
export type LedgerKind = 'charge' | 'refund' | 'payout' | 'payout_settled' | 'payout_reversal';

/** One entry: `amountCents` signed (debit positive), `tenantId` the party whose balance it moves. */
export interface Posting {
  account: LedgerAccount;
  tenantId: string | null;
  amountCents: number;
}

/** Fee of a charge: `floor(amount * bps / 10_000)` cents (design §8.24, `MARKETPLACE_FEE_BPS`). */
export const feeOf = (amountCents: number, feeBps: number): number => Math.floor((amountCents * feeBps) / 10_000);

/**
 * Split a refund of `refundCents` of a charge (`amountCents`, fee `feeCents`) into the platform's
 * and the developer's parts in proportion (design §8.35); the fee part rounds down, so the parts
 * always add up to the refund.
 */
export function splitRefund(refundCents: number, amountCents: number, feeCents: number): { fee: number; developer: number } {
  const fee = amountCents === 0 ? 0 : Math.floor((refundCents * feeCents) / amountCents);
  return { fee, developer: refundCents - fee };
}

/** The postings of a charge (module comment). */
export const chargePostings = (renter: string, developer: string, amountCents: number, feeCents: number): Posting[] => [
  { account: 'renter_charges', tenantId: renter, amountCents },
  { account: 'platform_fees', tenantId: developer, amountCents: -feeCents },
  { account: 'developer_payable', tenantId: developer, amountCents: -(amountCents - feeCents) },
];

/** The postings of a refund (module comment). */
export function refundPostings(renter: string, developer: string, refundCents: number, charge: { amountCents: number; feeCents: number }): Posting[] {
  const split = splitRefund(refundCents, charge.amountCents, charge.feeCents);
  return [
    { account: 'refunds', tenantId: renter, amountCents: -refundCents },
    { account: 'platform_fees', tenantId: developer, amountCents: split.fee },
    { account: 'developer_payable', tenantId: developer, amountCents: split.developer },
  ];
}

/** The postings of a payout's three steps (module comment). */
export const payoutPostings = {
  started: (developer: string, cents: number): Posting[] => [
    { account: 'developer_payable', tenantId: developer, amountCents: cents },
    { account: 'processor_clearing', tenantId: developer, amountCents: -cents },
  ],
  settled: (developer: string, cents: number): Posting[] => [
    { account: 'processor_clearing', tenantId: developer, amountCents: cents },
    { account: 'payouts', tenantId: developer, amountCents: -cents },
  ],
  reversed: (developer: string, cents: number): Posting[] => [
    { account: 'processor_clearing', tenantId: developer, amountCents: cents },
    { account: 'developer_payable', tenantId: developer, amountCents: -cents },
  ],
};

type Rows<T> = { rows: T[] };

/**
 * Append one balanced transaction inside `tx` (any scope). Answers its id, or null when a
 * transaction of the same `kind` and `reference` exists already (nothing written).
 * @throws when the entries do not sum to zero (a programming error: the database refuses it).
 */
export async function post(
  tx: Tx,
  t: { kind: LedgerKind; reference: string; rentalId?: string | null; payoutId?: string | null; memo?: string | null; postings: Posting[] },
): Promise<string | null> {
  const entries = JSON.stringify(t.postings.map((p) => ({ account: p.account, party_tenant_id: p.tenantId ?? '', amount_cents: p.amountCents })));
  const res = (await tx.execute(
    sql`select parley_ledger_post(${randomUUID()}::uuid, ${t.kind}, ${t.reference}, ${t.rentalId ?? null}::uuid, ${t.payoutId ?? null}::uuid, ${t.memo ?? null}, ${entries}::jsonb) as id`,
  )) as unknown as Rows<{ id: string | null }>;
  return res.rows[0]?.id ?? null;
}

/** Sums of a tenant's entries by account and kind: `sums[account][kind]` in cents (0 when none). */
export type LedgerSums = Record<LedgerAccount, Partial<Record<LedgerKind, number>>>;

/** The tenant's sums; `tx` must be scoped to `tenantId` (the database checks it). */
export async function sumsOf(tx: Tx, tenantId: string): Promise<LedgerSums> {
  const res = (await tx.execute(sql`select account, kind, amount_cents::text as amount_cents from parley_ledger_sums(${tenantId}::uuid)`)) as unknown as Rows<{
    account: LedgerAccount;
    kind: LedgerKind;
    amount_cents: string;
  }>;
  const out = { renter_charges: {}, platform_fees: {}, developer_payable: {}, refunds: {}, payouts: {}, processor_clearing: {} } as LedgerSums;
  for (const r of res.rows) out[r.account][r.kind] = Number(r.amount_cents);
  return out;
}

/** Total of one account over every kind. */
export const total = (s: Partial<Record<LedgerKind, number>>): number => Object.values(s).reduce((a, b) => a + (b ?? 0), 0);

/** Payable balance of developer tenants, cross-tenant (the payout job), for those at or above `minCents`. */
export async function payableBalances(tx: Tx, minCents: number): Promise<{ tenantId: string; cents: number }[]> {
  const res = (await tx.execute(sql`
    select party_tenant_id as tenant_id, (-sum(amount_cents))::text as cents from ledger_entries
    where account = 'developer_payable' and party_tenant_id is not null
    group by party_tenant_id having -sum(amount_cents) >= ${minCents}
    order by party_tenant_id`)) as unknown as Rows<{ tenant_id: string; cents: string }>;
  return res.rows.map((r) => ({ tenantId: r.tenant_id, cents: Number(r.cents) }));
}

/** `GET /marketplace/ledger/verify` and `cli ledger verify` (design §8.35). */
export interface LedgerCheck {
  balanced: boolean;
  transactions: number;
  imbalance_cents: number;
  unbalanced_transactions: string[];
}

/** Recompute every transaction's sum: balanced when each is zero (and so the whole ledger). */
export function verifyLedger(db: Db): Promise<LedgerCheck> {
  return crossTenant(db, 'the ledger is a platform table (design §8.24): the check reads every transaction', async (tx) => {
    const [count] = ((await tx.execute(sql`select count(*)::int as n from ledger_transactions`)) as unknown as Rows<{ n: number }>).rows;
    const bad = (
      (await tx.execute(sql`
        select t.id, coalesce(sum(e.amount_cents), 0)::text as s, count(e.id)::int as n from ledger_transactions t
        left join ledger_entries e on e.transaction_id = t.id group by t.id
        having coalesce(sum(e.amount_cents), 0) <> 0 or count(e.id) < 2`)) as unknown as Rows<{ id: string; s: string }>
    ).rows;
    const imbalance = bad.reduce((a, r) => a + Number(r.s), 0);
    return { balanced: bad.length === 0, transactions: count?.n ?? 0, imbalance_cents: imbalance, unbalanced_transactions: bad.map((r) => r.id) };
  });
}
