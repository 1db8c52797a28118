/**
 * Stripe Connect implementation of {@link PaymentProcessor} (design §8.24 "separate charges and
 * transfers", §8.26), on the official `stripe` package (pinned 23.1.0; its default API version).
 * Used when `STRIPE_SECRET_KEY` is set; webhooks arrive at `POST /api/v1/marketplace/webhooks/stripe`
 * signed with `STRIPE_WEBHOOK_SECRET`.
 *
 * Mapping:
 * - connected account = an Express account (`accounts.create({type: 'express', capabilities:
 *   {transfers: {requested: true}}, metadata: {tenant_id}})`); only the `transfers` capability is
 *   requested because the platform, not the developer, charges the renter. `ready` =
 *   `details_submitted && capabilities.transfers === 'active'` ({@link stripeAccountReady}): the
 *   developer finished onboarding and Stripe accepts transfers to the account. `payouts_enabled`
 *   (moving the connected balance to the developer's bank) is Stripe's business after that and is
 *   not required: a transfer to an account whose bank payouts are paused still lands on its balance.
 * - onboarding = an Account Link (`type: 'account_onboarding'`); dashboard = an Express login link.
 * - charge = a PaymentIntent created and confirmed in one call, off-session, automatic payment
 *   methods without redirects. `succeeded` -> succeeded; `processing` / `requires_action` -> pending
 *   (settled later by `payment_intent.succeeded` / `payment_intent.payment_failed`);
 *   `requires_payment_method` / `canceled` -> declined; a card error (HTTP 402, `StripeCardError`)
 *   -> declined with Stripe's human-readable message; any other Stripe error -> {@link ProcessorError}.
 * - refund = `refunds.create({payment_intent, amount, metadata})`.
 * - transfer = `transfers.create({amount, currency, destination, metadata})` -> paid (a Stripe
 *   transfer is final when created; a later reversal arrives as `transfer.reversed` ->
 *   `transfer.failed`). A transfer Stripe refuses (HTTP 400: insufficient platform balance, the
 *   destination cannot receive transfers, …) -> `{status: 'failed', transferId: null,
 *   failureReason}`; an outage (5xx, network, auth, rate limit) -> {@link ProcessorError}.
 *
 * Every mutating call sends an idempotency key: the caller's for accounts, charges, refunds and
 * transfers (forwarded unchanged, so a retry after a timeout moves money once), a fresh one per call
 * for account links and login links (those are single-use URLs, a new call must mint a new one).
 */
import { randomUUID } from 'node:crypto';
import Stripe from 'stripe';
import {
  ProcessorError,
  WebhookSignatureError,
  type ChargeInput,
  type ChargeResult,
  type ConnectedAccountInfo,
  type PaymentProcessor,
  type ProcessorEvent,
  type RefundInput,
  type RefundResult,
  type TransferInput,
  type TransferResult,
} from './processor.js';

/** Constructor options of {@link StripeProcessor}. */
export interface StripeProcessorOptions {
  /** The platform's secret key (`sk_live_…` / `sk_test_…`, or a restricted `rk_…`): `STRIPE_SECRET_KEY`. */
  secretKey: string;
  /**
   * Signing secret(s) of the webhook endpoint(s) (`whsec_…`): `STRIPE_WEBHOOK_SECRET`. Stripe signs
   * events of the platform account and events of connected accounts (`account.updated`) from two
   * different endpoints with two different secrets; pass both (an array) when both endpoints point
   * at the same route. An event verifies when any of them matches.
   */
  webhookSecret: string | readonly string[];
  /** API host (default `api.stripe.com`); tests point it at a local HTTP double. */
  host?: string;
  /** API port (default 443). */
  port?: number;
  /** API protocol (default `https`). */
  protocol?: 'http' | 'https';
  /**
   * Automatic retries of a failed request (connection error, 409, 5xx) by the Stripe client, with
   * the SAME idempotency key, exponential backoff from 0.5 s. Default 2; 0 disables.
   */
  maxNetworkRetries?: number;
  /** Per-request timeout in milliseconds (default: the Stripe client's 80 000). */
  timeoutMs?: number;
  /** Accepted age of a webhook's signature timestamp, in seconds (default 300, Stripe's default). */
  webhookToleranceSeconds?: number;
}

/** Stripe's own readiness of a connected account for receiving transfers (see the module comment). */
export function stripeAccountReady(account: {
  details_submitted?: boolean | null;
  capabilities?: { transfers?: string | null } | null;
}): boolean {
  return account.details_submitted === true && account.capabilities?.transfers === 'active';
}

type StripeErrorLike = InstanceType<typeof Stripe.errors.StripeError>;

function isStripeError(error: unknown): error is StripeErrorLike {
  return error instanceof Stripe.errors.StripeError;
}

/** Turn any failure of a Stripe call into a {@link ProcessorError} (the marketplace answers 502). */
function toProcessorError(error: unknown, operation: string): ProcessorError {
  if (error instanceof ProcessorError) return error;
  if (isStripeError(error)) {
    const status = error.statusCode ? ` (HTTP ${error.statusCode})` : '';
    return new ProcessorError(`Stripe ${operation} failed${status}: ${error.message}`, error.code ?? error.rawType ?? error.type);
  }
  const message = error instanceof Error ? error.message : String(error);
  return new ProcessorError(`Stripe ${operation} failed: ${message}`);
}

/** A string-valued copy of a Stripe metadata object (anything else -> `{}`). */
function stringMetadata(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (typeof v === 'string') out[k] = v;
      else if (v !== null && v !== undefined) out[k] = String(v);
    }
  }
  return out;
}

/** Human-readable reason of a declined PaymentIntent (Stripe's message, or its codes). */
function declineReasonOf(lastError: { message?: string | null; decline_code?: string | null; code?: string | null } | null | undefined): string {
  if (lastError?.message) return lastError.message;
  const code = lastError?.decline_code ?? lastError?.code;
  return code ? `The payment was declined (${code}).` : 'The payment was declined.';
}

/**
 * {@link PaymentProcessor} on Stripe Connect (design §8.24, §8.26). Stateless: every answer comes
 * from Stripe. Construct once per process with {@link StripeProcessorOptions}; no `close()` needed.
 * Errors: every method but `parseWebhook` throws {@link ProcessorError} (with Stripe's `code`, or its
 * error type) when Stripe refuses the request or cannot be reached; `parseWebhook` throws
 * {@link WebhookSignatureError}.
 */
export class StripeProcessor implements PaymentProcessor {
  readonly name = 'stripe' as const;
  private readonly stripe: Stripe;
  private readonly webhookSecrets: readonly string[];
  private readonly toleranceSeconds: number;

  constructor(options: StripeProcessorOptions) {
    if (!options.secretKey) throw new Error('StripeProcessor: secretKey is required');
    const secrets = typeof options.webhookSecret === 'string' ? [options.webhookSecret] : [...options.webhookSecret];
    if (secrets.length === 0 || secrets.some((s) => !s)) throw new Error('StripeProcessor: webhookSecret is required');
    this.webhookSecrets = secrets;
    this.toleranceSeconds = options.webhookToleranceSeconds ?? 300;
    this.stripe = new Stripe(options.secretKey, {
      ...(options.host !== undefined ? { host: options.host } : {}),
      ...(options.port !== undefined ? { port: options.port } : {}),
      ...(options.protocol !== undefined ? { protocol: options.protocol } : {}),
      ...(options.timeoutMs !== undefined ? { timeout: options.timeoutMs } : {}),
      maxNetworkRetries: options.maxNetworkRetries ?? 2,
      telemetry: false,
      appInfo: { name: 'parley-marketplace' },
    });
  }

  /** `POST /v1/accounts` (Express, `transfers` capability, `metadata[tenant_id]`), idempotent per key. */
  async createConnectedAccount(input: { tenantId: string; idempotencyKey: string }): Promise<ConnectedAccountInfo> {
    try {
      const account = await this.stripe.accounts.create(
        {
          type: 'express',
          capabilities: { transfers: { requested: true } },
          metadata: { tenant_id: input.tenantId },
        },
        { idempotencyKey: input.idempotencyKey },
      );
      return { accountId: account.id, ready: stripeAccountReady(account) };
    } catch (error) {
      throw toProcessorError(error, 'account creation');
    }
  }

  /** `GET /v1/accounts/{id}`: readiness per {@link stripeAccountReady}. */
  async retrieveAccount(accountId: string): Promise<ConnectedAccountInfo> {
    try {
      const account = await this.stripe.accounts.retrieve(accountId);
      return { accountId: account.id, ready: stripeAccountReady(account) };
    } catch (error) {
      throw toProcessorError(error, 'account lookup');
    }
  }

  /** `POST /v1/account_links` (`type: account_onboarding`): a single-use URL, valid a few minutes. */
  async onboardingLink(accountId: string, urls: { refreshUrl: string; returnUrl: string }): Promise<{ url: string }> {
    try {
      const link = await this.stripe.accountLinks.create(
        { account: accountId, type: 'account_onboarding', refresh_url: urls.refreshUrl, return_url: urls.returnUrl },
        { idempotencyKey: `parley-account-link-${randomUUID()}` },
      );
      return { url: link.url };
    } catch (error) {
      throw toProcessorError(error, 'onboarding link');
    }
  }

  /** `POST /v1/accounts/{id}/login_links`: the Express dashboard of a ready account. */
  async dashboardLink(accountId: string): Promise<{ url: string }> {
    try {
      const link = await this.stripe.accounts.createLoginLink(accountId, {}, { idempotencyKey: `parley-login-link-${randomUUID()}` });
      return { url: link.url };
    } catch (error) {
      throw toProcessorError(error, 'dashboard link');
    }
  }

  /**
   * `POST /v1/payment_intents` with `confirm=true`, `off_session=true`,
   * `automatic_payment_methods[enabled]=true`, `automatic_payment_methods[allow_redirects]=never`.
   * `chargeId` is the PaymentIntent id (`pi_…`); for a card error it is the id of the PaymentIntent
   * Stripe reports with the error, or `''` when Stripe names none.
   */
  async charge(input: ChargeInput): Promise<ChargeResult> {
    let intent: Stripe.PaymentIntent;
    try {
      intent = await this.stripe.paymentIntents.create(
        {
          amount: input.amountCents,
          currency: input.currency,
          payment_method: input.paymentMethod,
          confirm: true,
          off_session: true,
          automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
          description: input.description,
          metadata: input.metadata,
        },
        { idempotencyKey: input.idempotencyKey },
      );
    } catch (error) {
      if (error instanceof Stripe.errors.StripeCardError) {
        const chargeId = error.payment_intent?.id ?? '';
        return { chargeId, status: 'declined', declineReason: declineReasonOf(error) };
      }
      throw toProcessorError(error, 'charge');
    }
    switch (intent.status) {
      case 'succeeded':
        return { chargeId: intent.id, status: 'succeeded' };
      case 'processing':
      case 'requires_action':
        return { chargeId: intent.id, status: 'pending' };
      case 'requires_payment_method':
      case 'canceled':
        return { chargeId: intent.id, status: 'declined', declineReason: declineReasonOf(intent.last_payment_error) };
      default:
        throw new ProcessorError(`Stripe charge answered an unexpected PaymentIntent status "${intent.status}" (${intent.id})`, 'unexpected_status');
    }
  }

  /**
   * `POST /v1/refunds` (`payment_intent`, `amount`, `metadata`). Status: `succeeded`; `pending` /
   * `requires_action` -> pending; `failed` / `canceled` -> failed. Refunding more than is left of
   * the charge is refused by Stripe -> {@link ProcessorError} (`code` e.g. `amount_too_large`).
   */
  async refund(input: RefundInput): Promise<RefundResult> {
    try {
      const refund = await this.stripe.refunds.create(
        { payment_intent: input.chargeId, amount: input.amountCents, metadata: input.metadata },
        { idempotencyKey: input.idempotencyKey },
      );
      const status: RefundResult['status'] =
        refund.status === 'succeeded' ? 'succeeded' : refund.status === 'failed' || refund.status === 'canceled' ? 'failed' : 'pending';
      return { refundId: refund.id, status };
    } catch (error) {
      throw toProcessorError(error, 'refund');
    }
  }

  /**
   * `POST /v1/transfers` (`amount`, `currency`, `destination`, `metadata`) -> `paid` with the
   * `tr_…` id. Stripe refusing the transfer (HTTP 400/402/403/404) -> `failed` with Stripe's
   * message; the same idempotency key replays that refusal, so a new attempt needs a new key.
   */
  async transfer(input: TransferInput): Promise<TransferResult> {
    try {
      const transfer = await this.stripe.transfers.create(
        { amount: input.amountCents, currency: input.currency, destination: input.destinationAccountId, metadata: input.metadata },
        { idempotencyKey: input.idempotencyKey },
      );
      return { transferId: transfer.id, status: 'paid' };
    } catch (error) {
      if (
        error instanceof Stripe.errors.StripeInvalidRequestError ||
        error instanceof Stripe.errors.StripeCardError ||
        error instanceof Stripe.errors.StripePermissionError
      ) {
        const code = error.code ? ` (${error.code})` : '';
        return { transferId: null, status: 'failed', failureReason: `${error.message}${code}` };
      }
      throw toProcessorError(error, 'transfer');
    }
  }

  /**
   * Verify `Stripe-Signature` over the raw body with `stripe.webhooks.constructEvent` (any of the
   * configured secrets; timestamp tolerance {@link StripeProcessorOptions.webhookToleranceSeconds})
   * and normalise:
   * - `payment_intent.succeeded` -> `charge.succeeded`;
   * - `payment_intent.payment_failed` -> `charge.failed` (`failureReason` =
   *   `last_payment_error.message`);
   * - `transfer.reversed` -> `transfer.failed` (`failureReason` names the reversed amount);
   * - `account.updated` -> `account.updated` with `ready` ({@link stripeAccountReady});
   * - any other type keeps its Stripe type.
   * `objectId` = `data.object.id` (`''` if absent), `metadata` = `data.object.metadata`.
   * Note Stripe also sends `payment_intent.succeeded` / `payment_failed` for charges that
   * {@link charge} already answered as succeeded / declined: the handler must ignore events for
   * objects that are not pending.
   * @throws WebhookSignatureError when the header is missing, no secret matches, the timestamp is
   *   outside the tolerance, or the body is not a Stripe event.
   */
  parseWebhook(rawBody: string, headers: Record<string, string | undefined>): ProcessorEvent {
    const signature = headers['stripe-signature'];
    if (!signature) throw new WebhookSignatureError('Missing Stripe-Signature header');
    let event: Stripe.Event | undefined;
    let lastError: unknown;
    for (const secret of this.webhookSecrets) {
      try {
        event = this.stripe.webhooks.constructEvent(rawBody, signature, secret, this.toleranceSeconds);
        break;
      } catch (error) {
        lastError = error;
      }
    }
    if (!event) {
      const message = lastError instanceof Error ? lastError.message : 'signature verification failed';
      throw new WebhookSignatureError(`Invalid Stripe webhook: ${message}`);
    }
    if (typeof event.id !== 'string' || typeof event.type !== 'string') {
      throw new WebhookSignatureError('Invalid Stripe webhook: not an event');
    }
    return normaliseStripeEvent(event);
  }
}

/** The {@link ProcessorEvent} of a verified Stripe event (the table of {@link StripeProcessor.parseWebhook}). */
function normaliseStripeEvent(event: Stripe.Event): ProcessorEvent {
  const object = (event.data?.object ?? {}) as unknown as Record<string, unknown>;
  const base = {
    id: event.id,
    objectId: typeof object.id === 'string' ? object.id : '',
    metadata: stringMetadata(object.metadata),
  };
  switch (event.type) {
    case 'payment_intent.succeeded':
      return { ...base, type: 'charge.succeeded' };
    case 'payment_intent.payment_failed': {
      const lastError = object.last_payment_error as Parameters<typeof declineReasonOf>[0];
      return { ...base, type: 'charge.failed', failureReason: declineReasonOf(lastError) };
    }
    case 'transfer.reversed': {
      const reversed = typeof object.amount_reversed === 'number' ? object.amount_reversed : undefined;
      const amount = typeof object.amount === 'number' ? object.amount : undefined;
      const detail = reversed !== undefined && amount !== undefined ? ` (${reversed} of ${amount} cents)` : '';
      return { ...base, type: 'transfer.failed', failureReason: `The transfer was reversed${detail}.` };
    }
    case 'account.updated':
      return { ...base, type: 'account.updated', ready: stripeAccountReady(object as Parameters<typeof stripeAccountReady>[0]) };
    default:
      return { ...base, type: event.type };
  }
}
