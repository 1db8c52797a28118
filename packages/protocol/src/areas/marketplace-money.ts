/**
 * Marketplace disputes, payouts, the processor's connect dashboard, the tenant's default payment
 * method and the ledger check (contract §2.13, §3.8; design §8.24–§8.26, §8.29). Money is integer
 * US cents. Routes: `marketplace.ts`.
 */
import { Type, type Static } from '@sinclair/typebox';
import { lit, Nullable, Timestamp, Uuid } from '../common.js';
import { Page, PageCursor, PageLimit } from '../paging.js';

/** An evidence reference (design §8.35): a trace id (32 hex) or an audit event id (UUID) of one of the two tenants. */
export const EvidenceRef = Type.Object({ type: Type.Union([Type.Literal('trace'), Type.Literal('audit_event')]), id: Type.String({ minLength: 1, maxLength: 64 }) });
export type EvidenceRef = Static<typeof EvidenceRef>;
const EvidenceRefs = Type.Array(EvidenceRef, { maxItems: 50 });

/** `POST /api/v1/marketplace/rentals/{id}/dispute` body (contract §2.13). */
export const FileDisputeRequest = Type.Object({ reason: Type.String({ minLength: 1, maxLength: 2000, pattern: '\\S' }), evidence_refs: Type.Optional(EvidenceRefs) });
export type FileDisputeRequest = Static<typeof FileDisputeRequest>;

/** `POST /api/v1/marketplace/disputes/{id}/notes` body: a note and more evidence from either party. */
export const DisputeNoteRequest = Type.Object({ note: Type.String({ minLength: 1, maxLength: 2000, pattern: '\\S' }), evidence_refs: Type.Optional(EvidenceRefs) });
export type DisputeNoteRequest = Static<typeof DisputeNoteRequest>;

/** Dispute outcomes (design §8.9, §8.24). */
export const DISPUTE_OUTCOMES = ['refund', 'partial', 'none'] as const;

/** `POST /api/v1/marketplace/disputes/{id}/resolve` body (operator, design §8.25): `amount_cents` only (and required) with `partial`. */
export const ResolveDisputeRequest = Type.Object({
  outcome: lit(DISPUTE_OUTCOMES),
  amount_cents: Type.Optional(Type.Integer({ minimum: 1 })),
  note: Type.String({ minLength: 1, maxLength: 2000, pattern: '\\S' }),
});
export type ResolveDisputeRequest = Static<typeof ResolveDisputeRequest>;

/** A note on a dispute. */
export const DisputeNote = Type.Object({ author_tenant_id: Uuid, note: Type.String(), evidence_refs: Type.Array(EvidenceRef), created_at: Timestamp });
export type DisputeNote = Static<typeof DisputeNote>;

/** A dispute (contract §2.13): `open` until an operator resolves it. */
export const Dispute = Type.Object({
  dispute_id: Uuid,
  rental_id: Uuid,
  renter_tenant_id: Uuid,
  developer_tenant_id: Uuid,
  filed_by_tenant_id: Uuid,
  status: Type.Union([Type.Literal('open'), Type.Literal('resolved')]),
  reason: Type.String(),
  evidence_refs: Type.Array(EvidenceRef),
  notes: Type.Array(DisputeNote),
  outcome: Nullable(lit(DISPUTE_OUTCOMES)),
  amount_cents: Nullable(Type.Integer({ description: 'refunded by the resolution' })),
  resolution_note: Nullable(Type.String()),
  created_at: Timestamp,
  resolved_at: Nullable(Timestamp),
});
export type Dispute = Static<typeof Dispute>;

/** `GET /api/v1/marketplace/disputes` query: operators see every tenant's disputes, owners their tenant's. */
export const DisputeListQuery = Type.Object({
  status: Type.Optional(Type.Union([Type.Literal('open'), Type.Literal('resolved')])),
  limit: PageLimit(),
  cursor: PageCursor(),
});
export type DisputeListQuery = Static<typeof DisputeListQuery>;

export const DisputePage = Page('disputes', Dispute);
export type DisputePage = Static<typeof DisputePage>;

// ---------------------------------------------------------------- payouts, connect, payment method, ledger

/** Payout statuses (contract §2.13, §3.8). */
export const PAYOUT_STATUSES = ['pending', 'completed', 'failed'] as const;

/** A payout to the developer tenant's connected account (contract §3.8). */
export const Payout = Type.Object({
  payout_id: Uuid,
  amount_cents: Type.Integer(),
  currency: Type.Literal('usd'),
  status: lit(PAYOUT_STATUSES),
  failure_reason: Nullable(Type.String()),
  created_at: Timestamp,
  completed_at: Nullable(Timestamp),
});
export type Payout = Static<typeof Payout>;

export const PayoutListQuery = Type.Object({
  limit: PageLimit(),
  cursor: PageCursor(),
});
export type PayoutListQuery = Static<typeof PayoutListQuery>;

export const PayoutPage = Page('payouts', Payout);
export type PayoutPage = Static<typeof PayoutPage>;

/**
 * `GET /api/v1/marketplace/payouts/summary`, from the ledger: `earned_cents` the developer's
 * share of charges net of refunds, `fees_cents` the platform fees on its rentals net of refunds,
 * `paid_cents` completed payouts, `pending_cents` payouts in flight, `balance_cents` what the
 * next payout would pay (negative after a refund of money already paid out).
 */
export const PayoutSummary = Type.Object({
  currency: Type.Literal('usd'),
  earned_cents: Type.Integer(),
  fees_cents: Type.Integer(),
  paid_cents: Type.Integer(),
  pending_cents: Type.Integer(),
  balance_cents: Type.Integer(),
  minimum_payout_cents: Type.Integer(),
  next_payout_at: Timestamp,
});
export type PayoutSummary = Static<typeof PayoutSummary>;

/** `GET /api/v1/marketplace/connect/dashboard`: the processor dashboard, or onboarding while the account is not ready. */
export const ConnectDashboard = Type.Object({ url: Type.String(), kind: Type.Union([Type.Literal('onboarding'), Type.Literal('dashboard')]), account_id: Type.String() });
export type ConnectDashboard = Static<typeof ConnectDashboard>;

/** `PUT /api/v1/marketplace/payment-method` body and answer (design §8.29). */
export const PaymentMethodRequest = Type.Object({ payment_method: Type.String({ minLength: 1, maxLength: 200 }) });
export type PaymentMethodRequest = Static<typeof PaymentMethodRequest>;
export const PaymentMethodInfo = Type.Object({ payment_method: Nullable(Type.String()) });
export type PaymentMethodInfo = Static<typeof PaymentMethodInfo>;

/**
 * `GET /api/v1/marketplace/processor`: which payment processor charges rentals, so that a client
 * knows how to make a `payment_method`. `stripe`: a PaymentMethod id (`pm_…`) made in the browser
 * with Stripe.js and `publishable_key` (null when `STRIPE_PUBLISHABLE_KEY` is not set);
 * `local`: one of `test_payment_methods`.
 */
export const PaymentProcessorInfo = Type.Object({
  processor: Type.Union([Type.Literal('stripe'), Type.Literal('local')]),
  publishable_key: Nullable(Type.String({ description: 'Stripe publishable key (pk_…), for Stripe.js' })),
  test_payment_methods: Type.Array(Type.String(), { description: 'the local processor’s test payment methods; empty with Stripe' }),
});
export type PaymentProcessorInfo = Static<typeof PaymentProcessorInfo>;

/** `GET /api/v1/marketplace/ledger/verify` (operators, design §8.35). */
export const LedgerVerification = Type.Object({ balanced: Type.Boolean(), transactions: Type.Integer(), imbalance_cents: Type.Integer(), unbalanced_transactions: Type.Array(Uuid) });
export type LedgerVerification = Static<typeof LedgerVerification>;

/** A processor webhook was accepted (processed now, or already processed before: `duplicate`). */
export const WebhookAck = Type.Object({ received: Type.Literal(true), duplicate: Type.Boolean() });
export type WebhookAck = Static<typeof WebhookAck>;
