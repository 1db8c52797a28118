/**
 * The payment processor behind the marketplace (contract §4.16; design §8.24, §8.26): one interface,
 * two implementations — Stripe Connect (`stripe.ts`, when `STRIPE_SECRET_KEY` is set) and the
 * embedded local processor (`local.ts`, the default). The marketplace never talks to a processor
 * any other way.
 *
 * Model "separate charges and transfers" (design §8.24): the platform charges the renter's payment
 * method ({@link PaymentProcessor.charge}); the developer's share stays payable in the ledger; the
 * weekly payout moves it to the developer's connected account ({@link PaymentProcessor.transfer}).
 * Every call that moves money takes an idempotency key: the same key twice moves money once.
 * Amounts are integer cents; the currency is `usd`.
 */

/** Which implementation answers (stored on rentals and payouts). */
export type ProcessorName = 'stripe' | 'local';

/** A connected account of a developer tenant at the processor. */
export interface ConnectedAccountInfo {
  /** `acct_…` */
  accountId: string;
  /** true once the processor lets the account receive transfers (onboarding finished). */
  ready: boolean;
}

/** Outcome of a charge: `succeeded` at once, `pending` (confirmed later by a webhook event), or `declined`. */
export interface ChargeResult {
  /** The processor's id of the charge (Stripe: the PaymentIntent id `pi_…`). */
  chargeId: string;
  status: 'succeeded' | 'pending' | 'declined';
  /** Human-readable reason of a decline (never card data). */
  declineReason?: string;
}

/** Outcome of a refund. */
export interface RefundResult {
  refundId: string;
  status: 'succeeded' | 'pending' | 'failed';
}

/** Outcome of a transfer to a connected account: `paid` at once, `pending` (a webhook event tells later), or `failed`. */
export interface TransferResult {
  transferId: string | null;
  status: 'paid' | 'pending' | 'failed';
  failureReason?: string;
}

/**
 * A verified processor event, normalised. Types the marketplace acts on:
 * - `charge.succeeded` / `charge.failed`: a `pending` charge settled (`objectId` = chargeId);
 * - `transfer.paid` / `transfer.failed`: a `pending` transfer settled (`objectId` = transferId);
 * - `account.updated`: a connected account's readiness changed (`objectId` = accountId, `ready`).
 * Other types are accepted, recorded once and ignored.
 */
export interface ProcessorEvent {
  /** The processor's event id (`evt_…`): each is processed once (design §8.26). */
  id: string;
  type: 'charge.succeeded' | 'charge.failed' | 'transfer.paid' | 'transfer.failed' | 'account.updated' | (string & {});
  objectId: string;
  /** The metadata the marketplace attached to the object (e.g. `rental_id`, `payout_id`). */
  metadata: Record<string, string>;
  failureReason?: string;
  ready?: boolean;
}

/** Thrown by {@link PaymentProcessor.parseWebhook} for a missing or bad signature (the route answers 400). */
export class WebhookSignatureError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookSignatureError';
  }
}

/** Raised by the processor for a request it refuses or cannot reach (the marketplace answers 502 with `{detail}`). */
export class ProcessorError extends Error {
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
    this.name = 'ProcessorError';
  }
}

/** A charge of a payment method (integer cents, USD), with the caller's idempotency key. */
export interface ChargeInput {
  amountCents: number;
  currency: 'usd';
  paymentMethod: string;
  description: string;
  metadata: Record<string, string>;
  idempotencyKey: string;
}

/** A refund of part or all of a charge (cents <= what is left of it). */
export interface RefundInput {
  chargeId: string;
  amountCents: number;
  metadata: Record<string, string>;
  idempotencyKey: string;
}

/** A transfer from the platform balance to a connected account (cents, USD). */
export type TransferInput = {
  destinationAccountId: string;
  amountCents: number;
  currency: 'usd';
  metadata: Record<string, string>;
  idempotencyKey: string;
};

/** design §8.26: the operations the marketplace needs from a payment processor. */
export interface PaymentProcessor {
  readonly name: ProcessorName;

  /** Create a connected account for a developer tenant (`metadata.tenant_id`). Idempotent per key. */
  createConnectedAccount(input: { tenantId: string; idempotencyKey: string }): Promise<ConnectedAccountInfo>;

  /** The account's current readiness at the processor. */
  retrieveAccount(accountId: string): Promise<ConnectedAccountInfo>;

  /** A one-time onboarding link for an account that is not ready (Stripe: an Account Link). */
  onboardingLink(accountId: string, urls: { refreshUrl: string; returnUrl: string }): Promise<{ url: string }>;

  /** A login link to the processor's dashboard of a ready account (Stripe Express login link). */
  dashboardLink(accountId: string): Promise<{ url: string }>;

  /**
   * Charge `amountCents` to `paymentMethod` (confirmed at once, off-session). A decline is an
   * answer (`status: 'declined'`), not an exception; a processor outage throws {@link ProcessorError}.
   */
  charge(input: ChargeInput): Promise<ChargeResult>;

  /** Refund `amountCents` (<= what is left of the charge) of `chargeId`. */
  refund(input: RefundInput): Promise<RefundResult>;

  /** Transfer `amountCents` from the platform balance to a connected account (the weekly payout). */
  transfer(input: TransferInput): Promise<TransferResult>;

  /**
   * Verify and normalise a webhook request (the raw body exactly as received and its headers,
   * lower-cased names). @throws WebhookSignatureError when the signature is missing or wrong,
   * or the timestamp is outside the tolerance.
   */
  parseWebhook(rawBody: string, headers: Record<string, string | undefined>): ProcessorEvent;
}
