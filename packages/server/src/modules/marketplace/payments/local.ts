/**
 * The embedded local payment processor (design §8.26): the default when `STRIPE_SECRET_KEY` is not
 * set, so the whole marketplace flow (design §8.24) runs on a fresh machine without network. No
 * money moves; it behaves like Stripe where the marketplace can tell:
 *
 * - payment methods: `pm_card_visa` succeeds at once; `pm_card_chargeDeclined` is declined ("Your
 *   card was declined."); `pm_card_async` answers `pending` and, `asyncDelayMs` later, emits a
 *   signed `charge.succeeded` event. Any other payment method is declined with a reason naming the
 *   three. Like Stripe, a USD charge below 50 cents is refused ({@link ProcessorError}
 *   `amount_too_small`).
 * - connected accounts: `acct_local_<hex>`, ready at once. Any `acct_local_…` id is accepted as
 *   ready (so ids stored before a restart keep working). Onboarding and dashboard links are local
 *   placeholders under `baseUrl`: `${baseUrl}/api/v1/marketplace/connect/local/${accountId}`
 *   (`?return_url=…`) and the same path plus `/dashboard`; nothing has to be filled in.
 * - refunds succeed at once; refunding more than is left of a charge, or a charge that is not
 *   (yet) succeeded, throws {@link ProcessorError}.
 * - transfers answer `pending` with a `tr_local_…` id and, `transferDelayMs` later, emit
 *   `transfer.paid`, or `transfer.failed` with a reason when the destination was marked failing
 *   with {@link LocalProcessor.failPayoutsTo} (before the transfer) or its id ends in `_fail`
 *   (test controls). A destination that is not an `acct_local_…` id fails at once
 *   (`{status: 'failed'}`), as Stripe refuses an unknown destination.
 * - idempotency: the same idempotency key answers the same result (or the same error) without a
 *   second effect and without a second event; reusing a key with other parameters throws
 *   {@link ProcessorError} `idempotency_key_reused`, as Stripe does.
 *
 * Events are JSON `{id: 'evt_local_…', type, created, data: {object_id, metadata, failure_reason?,
 * ready?}}`, signed in the Standard Webhooks format (headers `webhook-id` = the event id,
 * `webhook-timestamp`, `webhook-signature`) with the `webhookSecret`, and handed to the `deliver`
 * callback — which the marketplace wires to the same handler as `POST
 * /api/v1/marketplace/webhooks/local`, so {@link LocalProcessor.parseWebhook} verifies them like any
 * request. A delivery that rejects is retried (`deliveryAttempts`, default 3, backoff from
 * `retryDelayMs`); the handler must therefore process each event id once (it does: design §8.26).
 *
 * Promised events (a `pm_card_async` confirmation, a transfer's settlement) are written to the
 * {@link LocalEventStore} (the service's database: local-store.ts) before the call answers, with
 * their id and due time, and marked there once `deliver` accepted them; {@link LocalProcessor.recover}
 * (at start and on every rental poll) schedules the ones no timer of this process holds — those of
 * a previous run, or of another instance that stopped — so every pending charge and transfer
 * settles after a restart. An event may then reach the handler twice (another live instance, a
 * crash between delivery and mark): it keeps its id, and the handler processes each id once.
 * Without a store (unit tests) they live in memory only. The rest of the state (charges,
 * idempotency keys, failing accounts) is in memory: refunds of a `pi_local_…` charge this process
 * does not know (made before a restart) are accepted without the remaining-amount check (the
 * ledger is the record of what is left).
 */
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
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

/** Test payment method that succeeds at once. */
export const LOCAL_PM_SUCCEEDS = 'pm_card_visa';
/** Test payment method that is declined at once. */
export const LOCAL_PM_DECLINED = 'pm_card_chargeDeclined';
/** Test payment method that answers `pending`, then is confirmed by a `charge.succeeded` event. */
export const LOCAL_PM_ASYNC = 'pm_card_async';
/** The decline reason of {@link LOCAL_PM_DECLINED} (Stripe's wording). */
export const LOCAL_DECLINE_REASON = 'Your card was declined.';

const UNKNOWN_PM_REASON =
  `The local payment processor accepts only its test payment methods: ${LOCAL_PM_SUCCEEDS} (succeeds), ` +
  `${LOCAL_PM_DECLINED} (declined) and ${LOCAL_PM_ASYNC} (confirmed a moment later).`;

/**
 * The event delivery callback: the raw JSON body and the Standard Webhooks headers (lower-case
 * names: `content-type`, `webhook-id`, `webhook-timestamp`, `webhook-signature`), exactly what
 * `POST /api/v1/marketplace/webhooks/local` would receive. Reject to have it retried.
 */
export type LocalEventDelivery = (rawBody: string, headers: Record<string, string>) => Promise<void>;

/** The `data` of a local event (see the module comment). */
export interface LocalEventData {
  object_id: string;
  metadata: Record<string, string>;
  failure_reason?: string;
  ready?: boolean;
}

/** An event the processor promised, with its id and when it is due. */
export interface StoredLocalEvent {
  id: string;
  type: string;
  data: LocalEventData;
  deliverAt: Date;
}

/** Where the processor keeps its promised events until they are delivered (module comment). */
export interface LocalEventStore {
  /** Record an event (before the call that promised it answers). */
  save(event: StoredLocalEvent): Promise<void>;
  /** `deliver` accepted the event: it is not delivered again. */
  delivered(id: string): Promise<void>;
  /** Every event not delivered yet. */
  pending(): Promise<StoredLocalEvent[]>;
}

/** Constructor options of {@link LocalProcessor}. */
export interface LocalProcessorOptions {
  /** Standard Webhooks secret (`whsec_` + base64 of at least 24 random bytes) signing the events. */
  webhookSecret: string;
  /** Public base URL of this server (e.g. `http://127.0.0.1:8080`), for the placeholder links. */
  baseUrl: string;
  /** Receives every event; wire it to the local webhook route's handler. */
  deliver: LocalEventDelivery;
  /** Delay before a `pm_card_async` charge is confirmed, in ms (default 200). */
  asyncDelayMs?: number;
  /** Delay before a transfer settles (`transfer.paid` / `transfer.failed`), in ms (default 200). */
  transferDelayMs?: number;
  /** Deliveries of one event before giving up (default 3; at least 1). */
  deliveryAttempts?: number;
  /** Delay before the first redelivery, in ms, doubled each time (default 1000). */
  retryDelayMs?: number;
  /** Told of each failed delivery attempt, and of an event delivered but not marked in the store (default: `console.error`). */
  onDeliveryError?: (error: unknown, event: { id: string; type: string; attempt: number; final: boolean }) => void;
  /** Keeps promised events across restarts (module comment); without one they live in memory only. */
  store?: LocalEventStore;
}

/** The body of a local event (see the module comment). */
interface LocalEventBody {
  id: string;
  type: string;
  created: number;
  data: LocalEventData;
}

interface LocalCharge {
  amountCents: number;
  refundedCents: number;
  status: 'succeeded' | 'pending' | 'declined';
}

interface IdempotentEntry {
  fingerprint: string;
  outcome: Promise<unknown>;
}

const MIN_CHARGE_CENTS = 50;

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/** JSON with object keys sorted, so equal parameters give equal fingerprints. */
function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

function assertAmount(amountCents: number): void {
  if (!Number.isSafeInteger(amountCents) || amountCents <= 0) {
    throw new ProcessorError(`Invalid amount ${amountCents}: a positive integer number of cents is required`, 'parameter_invalid_integer');
  }
}

function assertCurrency(currency: string): void {
  if (currency !== 'usd') throw new ProcessorError(`Unsupported currency "${currency}" (only usd)`, 'currency_unsupported');
}

/**
 * The embedded {@link PaymentProcessor} (design §8.26; behaviour in the module comment). Construct
 * once per server with {@link LocalProcessorOptions}; call {@link close} on shutdown. Methods throw
 * {@link ProcessorError} for a request Stripe would refuse (bad amount, over-refund, reused key) and
 * after `close()`; `parseWebhook` throws {@link WebhookSignatureError}.
 */
export class LocalProcessor implements PaymentProcessor {
  readonly name = 'local' as const;
  private readonly webhook: Webhook;
  private readonly baseUrl: string;
  private readonly deliver: LocalEventDelivery;
  private readonly asyncDelayMs: number;
  private readonly transferDelayMs: number;
  private readonly deliveryAttempts: number;
  private readonly retryDelayMs: number;
  private readonly onDeliveryError: NonNullable<LocalProcessorOptions['onDeliveryError']>;
  private readonly store: LocalEventStore | undefined;
  private readonly charges = new Map<string, LocalCharge>();
  /** Ids of the events a timer of this process holds (scheduled, or being delivered or redelivered). */
  private readonly armed = new Set<string>();
  private readonly failingAccounts = new Set<string>();
  private readonly idempotency = new Map<string, IdempotentEntry>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly inFlight = new Set<Promise<void>>();
  private closed = false;

  constructor(options: LocalProcessorOptions) {
    if (!options.webhookSecret?.startsWith('whsec_')) throw new Error('LocalProcessor: webhookSecret must be a whsec_… secret');
    try {
      this.webhook = new Webhook(options.webhookSecret);
    } catch (error) {
      throw new Error(`LocalProcessor: invalid webhookSecret (${error instanceof Error ? error.message : String(error)})`, { cause: error });
    }
    if (!options.baseUrl) throw new Error('LocalProcessor: baseUrl is required');
    if (typeof options.deliver !== 'function') throw new Error('LocalProcessor: deliver is required');
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.deliver = options.deliver;
    this.asyncDelayMs = options.asyncDelayMs ?? 200;
    this.transferDelayMs = options.transferDelayMs ?? 200;
    this.deliveryAttempts = Math.max(1, options.deliveryAttempts ?? 3);
    this.retryDelayMs = options.retryDelayMs ?? 1000;
    this.store = options.store;
    this.onDeliveryError =
      options.onDeliveryError ??
      ((error, event) =>
        console.error(
          `local payment processor: delivery of ${event.type} ${event.id} failed (attempt ${event.attempt}${event.final ? ', giving up' : ''}):`,
          error,
        ));
  }

  /** Test control: every later transfer to `accountId` settles as `transfer.failed`. */
  failPayoutsTo(accountId: string): void {
    this.failingAccounts.add(accountId);
  }

  /** Events scheduled (or being redelivered) and not yet handed to `deliver`. */
  get pendingEvents(): number {
    return this.timers.size;
  }

  /**
   * Cancel every pending event (async confirmations, transfer settlements, redeliveries) and wait
   * for deliveries under way. Later calls throw. Events in the store stay there for the next
   * {@link recover}.
   */
  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.armed.clear();
    await Promise.allSettled([...this.inFlight]);
  }

  /**
   * Schedule every undelivered event of the store that no timer of this process holds, at its due
   * time (at once when overdue): a previous run's, or a stopped instance's. Answers how many.
   */
  async recover(): Promise<number> {
    if (!this.store || this.closed) return 0;
    let n = 0;
    for (const event of await this.store.pending()) {
      if (this.closed || this.armed.has(event.id)) continue;
      this.arm(event);
      n++;
    }
    return n;
  }

  /** A new `acct_local_<hex>` account, ready at once; the same key answers the same account. */
  createConnectedAccount(input: { tenantId: string; idempotencyKey: string }): Promise<ConnectedAccountInfo> {
    return this.once('account', input.idempotencyKey, { tenantId: input.tenantId }, async () => {
      const accountId = `acct_local_${hex(8)}`;
      return { accountId, ready: true };
    });
  }

  /** Any `acct_local_…` id is ready; another id throws {@link ProcessorError} `resource_missing`. */
  async retrieveAccount(accountId: string): Promise<ConnectedAccountInfo> {
    this.assertOpen();
    if (!accountId.startsWith('acct_local_')) throw new ProcessorError(`No such account: ${accountId}`, 'resource_missing');
    return { accountId, ready: true };
  }

  /** Placeholder: `${baseUrl}/api/v1/marketplace/connect/local/${accountId}?return_url=…` (local accounts need no onboarding). */
  async onboardingLink(accountId: string, urls: { refreshUrl: string; returnUrl: string }): Promise<{ url: string }> {
    await this.retrieveAccount(accountId);
    return { url: `${this.accountUrl(accountId)}?return_url=${encodeURIComponent(urls.returnUrl)}` };
  }

  /** Placeholder: `${baseUrl}/api/v1/marketplace/connect/local/${accountId}/dashboard`. */
  async dashboardLink(accountId: string): Promise<{ url: string }> {
    await this.retrieveAccount(accountId);
    return { url: `${this.accountUrl(accountId)}/dashboard` };
  }

  /** Charge by test payment method (module comment); `chargeId` is `pi_local_<hex>`. */
  charge(input: ChargeInput): Promise<ChargeResult> {
    const { idempotencyKey, ...params } = input;
    return this.once('charge', idempotencyKey, params, async (): Promise<ChargeResult> => {
      assertAmount(input.amountCents);
      assertCurrency(input.currency);
      if (input.amountCents < MIN_CHARGE_CENTS) {
        throw new ProcessorError(`Amount must be at least ${MIN_CHARGE_CENTS} cents`, 'amount_too_small');
      }
      const chargeId = `pi_local_${hex(12)}`;
      const metadata = { ...input.metadata };
      switch (input.paymentMethod) {
        case LOCAL_PM_SUCCEEDS:
          this.charges.set(chargeId, { amountCents: input.amountCents, refundedCents: 0, status: 'succeeded' });
          return { chargeId, status: 'succeeded' };
        case LOCAL_PM_ASYNC: {
          await this.schedule(this.asyncDelayMs, 'charge.succeeded', { object_id: chargeId, metadata });
          this.charges.set(chargeId, { amountCents: input.amountCents, refundedCents: 0, status: 'pending' });
          return { chargeId, status: 'pending' };
        }
        case LOCAL_PM_DECLINED:
          this.charges.set(chargeId, { amountCents: input.amountCents, refundedCents: 0, status: 'declined' });
          return { chargeId, status: 'declined', declineReason: LOCAL_DECLINE_REASON };
        default:
          this.charges.set(chargeId, { amountCents: input.amountCents, refundedCents: 0, status: 'declined' });
          return { chargeId, status: 'declined', declineReason: UNKNOWN_PM_REASON };
      }
    });
  }

  /**
   * Refund `amountCents` of a succeeded charge at once (`re_local_<hex>`, `succeeded`).
   * @throws ProcessorError `amount_too_large` beyond what is left, `charge_not_refundable` for a
   *   pending or declined charge, `resource_missing` for an id that is not `pi_local_…`.
   */
  refund(input: RefundInput): Promise<RefundResult> {
    const { idempotencyKey, ...params } = input;
    return this.once('refund', idempotencyKey, params, async (): Promise<RefundResult> => {
      assertAmount(input.amountCents);
      if (!input.chargeId.startsWith('pi_local_')) throw new ProcessorError(`No such charge: ${input.chargeId}`, 'resource_missing');
      const charge = this.charges.get(input.chargeId);
      if (charge) {
        if (charge.status !== 'succeeded') {
          throw new ProcessorError(`Charge ${input.chargeId} is ${charge.status} and cannot be refunded`, 'charge_not_refundable');
        }
        const left = charge.amountCents - charge.refundedCents;
        if (input.amountCents > left) {
          throw new ProcessorError(
            `Refund amount (${input.amountCents} cents) is greater than what is left of charge ${input.chargeId} (${left} cents)`,
            'amount_too_large',
          );
        }
        charge.refundedCents += input.amountCents;
      }
      return { refundId: `re_local_${hex(12)}`, status: 'succeeded' };
    });
  }

  /** Transfer: `pending` with `tr_local_<hex>`, then `transfer.paid` or `transfer.failed` (module comment). */
  transfer(input: TransferInput): Promise<TransferResult> {
    const { idempotencyKey, ...params } = input;
    return this.once('transfer', idempotencyKey, params, async (): Promise<TransferResult> => {
      assertAmount(input.amountCents);
      assertCurrency(input.currency);
      const destination = input.destinationAccountId;
      if (!destination.startsWith('acct_local_')) {
        return { transferId: null, status: 'failed', failureReason: `No such destination account: ${destination}` };
      }
      const transferId = `tr_local_${hex(12)}`;
      const metadata = { ...input.metadata };
      if (this.failingAccounts.has(destination) || destination.endsWith('_fail')) {
        await this.schedule(this.transferDelayMs, 'transfer.failed', {
          object_id: transferId,
          metadata,
          failure_reason: `The destination account ${destination} cannot receive payouts (local test account marked failing).`,
        });
      } else {
        await this.schedule(this.transferDelayMs, 'transfer.paid', { object_id: transferId, metadata });
      }
      return { transferId, status: 'pending' };
    });
  }

  /**
   * Verify a local event (Standard Webhooks signature with the `webhookSecret`, timestamp within
   * 5 minutes) and normalise it: `objectId` = `data.object_id`, `failureReason` =
   * `data.failure_reason`, `ready` = `data.ready`.
   * @throws WebhookSignatureError for missing or wrong signature headers, a stale timestamp, or a
   *   body that is not a local event.
   */
  parseWebhook(rawBody: string, headers: Record<string, string | undefined>): ProcessorEvent {
    const present: Record<string, string> = {};
    for (const [k, v] of Object.entries(headers)) if (typeof v === 'string') present[k.toLowerCase()] = v;
    let body: unknown;
    try {
      body = this.webhook.verify(rawBody, present);
    } catch (error) {
      throw new WebhookSignatureError(`Invalid local webhook: ${error instanceof Error ? error.message : String(error)}`);
    }
    const event = body as Partial<LocalEventBody> | null;
    const data = event?.data;
    if (!event || typeof event.id !== 'string' || typeof event.type !== 'string' || !data || typeof data.object_id !== 'string') {
      throw new WebhookSignatureError('Invalid local webhook: not a local processor event');
    }
    const metadata: Record<string, string> = {};
    if (data.metadata && typeof data.metadata === 'object') {
      for (const [k, v] of Object.entries(data.metadata)) if (typeof v === 'string') metadata[k] = v;
    }
    return {
      id: event.id,
      type: event.type,
      objectId: data.object_id,
      metadata,
      ...(typeof data.failure_reason === 'string' ? { failureReason: data.failure_reason } : {}),
      ...(typeof data.ready === 'boolean' ? { ready: data.ready } : {}),
    };
  }

  private accountUrl(accountId: string): string {
    return `${this.baseUrl}/api/v1/marketplace/connect/local/${encodeURIComponent(accountId)}`;
  }

  private assertOpen(): void {
    if (this.closed) throw new ProcessorError('The local payment processor is closed', 'closed');
  }

  /**
   * Run `effect` once per idempotency key: a repeated key with the same operation and parameters
   * answers the first outcome (result or error); with other parameters it is refused.
   */
  private once<T>(operation: string, key: string, params: unknown, effect: () => Promise<T>): Promise<T> {
    try {
      this.assertOpen();
      if (!key) throw new ProcessorError('An idempotency key is required', 'idempotency_key_missing');
    } catch (error) {
      return Promise.reject(error);
    }
    const fingerprint = `${operation}:${stableJson(params)}`;
    const existing = this.idempotency.get(key);
    if (existing) {
      if (existing.fingerprint !== fingerprint) {
        return Promise.reject(
          new ProcessorError(`Idempotency key "${key}" was already used with other parameters`, 'idempotency_key_reused'),
        );
      }
      return existing.outcome as Promise<T>;
    }
    const outcome = effect();
    this.idempotency.set(key, { fingerprint, outcome });
    return outcome;
  }

  /**
   * Promise an event `delayMs` from now: recorded in the store first (a store failure refuses the
   * call, as an unreachable processor would), then armed.
   */
  private async schedule(delayMs: number, type: string, data: LocalEventData): Promise<void> {
    const event: StoredLocalEvent = { id: `evt_local_${hex(12)}`, type, data, deliverAt: new Date(Date.now() + delayMs) };
    try {
      await this.store?.save(event);
    } catch (error) {
      throw new ProcessorError(`The local payment processor could not record its event: ${error instanceof Error ? error.message : String(error)}`, 'api_error');
    }
    this.arm(event);
  }

  /** At the event's due time, settle what this process knows of it (a confirmed charge) and deliver it. */
  private arm(event: StoredLocalEvent): void {
    this.armed.add(event.id);
    this.setTimer(Math.max(0, event.deliverAt.getTime() - Date.now()), () => {
      if (event.type === 'charge.succeeded') {
        const charge = this.charges.get(event.data.object_id);
        if (charge?.status === 'pending') charge.status = 'succeeded';
      }
      this.attemptDelivery({ id: event.id, type: event.type, created: Math.floor(Date.now() / 1000), data: event.data }, 1);
    });
  }

  private setTimer(delayMs: number, fn: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (!this.closed) fn();
    }, delayMs);
    timer.unref();
    this.timers.add(timer);
  }

  /** Tell `onDeliveryError`; a failing reporter must not stop the redelivery. */
  private report(error: unknown, event: LocalEventBody, attempt: number, final: boolean): void {
    try {
      this.onDeliveryError(error, { id: event.id, type: event.type, attempt, final });
    } catch {
      // ignored: see above
    }
  }

  /** Sign (fresh timestamp per attempt) and hand the event to `deliver`; reschedule on rejection. */
  private attemptDelivery(event: LocalEventBody, attempt: number): void {
    const rawBody = JSON.stringify(event);
    const now = new Date();
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'webhook-id': event.id,
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': this.webhook.sign(event.id, now, rawBody),
    };
    const delivery = (async () => {
      try {
        await this.deliver(rawBody, headers);
      } catch (error) {
        const final = attempt >= this.deliveryAttempts || this.closed;
        this.report(error, event, attempt, final);
        if (!final) this.setTimer(this.retryDelayMs * 2 ** (attempt - 1), () => this.attemptDelivery(event, attempt + 1));
        // Given up: the store keeps it for the next recover().
        else this.armed.delete(event.id);
        return;
      }
      this.armed.delete(event.id);
      // Not marked: delivered again after a restart, and the handler processes each id once.
      await this.store?.delivered(event.id).catch((error: unknown) => this.report(error, event, attempt, true));
    })();
    this.inFlight.add(delivery);
    void delivery.then(() => this.inFlight.delete(delivery));
  }
}
