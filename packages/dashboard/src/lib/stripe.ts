/**
 * Stripe's Payment Element in the web app, used only when the service charges rentals through
 * Stripe (`GET /marketplace/processor` answers `stripe` with a publishable key). Stripe.js is
 * loaded from js.stripe.com, as Stripe requires (never bundled); the service's Content-Security-
 * Policy admits it only in that mode. The card details stay in Stripe's frames: the app gets a
 * PaymentMethod id (`pm_…`) and rents with it (Stripe.js reference: "Create a PaymentMethod with
 * Elements", deferred intent with `paymentMethodCreation: 'manual'`).
 *
 * Only the few Stripe.js calls used here are typed (no `@stripe/stripe-js` dependency).
 */

/** Where Stripe.js is served (Stripe: "always load Stripe.js directly from https://js.stripe.com"). */
export const STRIPE_JS_URL = 'https://js.stripe.com/v3/';

/** An error as Stripe.js reports it. */
interface StripeError {
  message?: string;
}

/** The Payment Element (`elements.create('payment')`). */
export interface StripePaymentElement {
  mount(target: HTMLElement): void;
  destroy(): void;
}

/** An Elements group in deferred-intent mode. */
export interface StripeElements {
  create(type: 'payment', options?: Record<string, unknown>): StripePaymentElement;
  submit(): Promise<{ error?: StripeError }>;
}

/** The Stripe.js instance of a publishable key (the calls this app makes). */
export interface StripeJs {
  elements(options: { mode: 'setup'; currency: 'usd'; paymentMethodCreation: 'manual'; paymentMethodTypes: string[] }): StripeElements;
  createPaymentMethod(options: { elements: StripeElements }): Promise<{ paymentMethod?: { id: string }; error?: StripeError }>;
}

/** `window.Stripe` once Stripe.js ran. */
export type StripeFactory = (publishableKey: string) => StripeJs;

/** Where the loader looks for and adds Stripe.js (the page's; tests pass their own). */
export interface StripeHost {
  win: { Stripe?: StripeFactory };
  doc: Pick<Document, 'createElement' | 'head'>;
}

let loading: Promise<StripeFactory> | undefined;

/**
 * `window.Stripe`, adding the Stripe.js script once when the page has none yet.
 * @throws Error when the script cannot be loaded (offline, blocked by a policy); a later call retries.
 */
export function loadStripeJs(host: StripeHost = { win: window as StripeHost['win'], doc: document }): Promise<StripeFactory> {
  if (host.win.Stripe) return Promise.resolve(host.win.Stripe);
  loading ??= new Promise<StripeFactory>((resolve, reject) => {
    const script = host.doc.createElement('script');
    script.src = STRIPE_JS_URL;
    script.async = true;
    script.onload = () => (host.win.Stripe ? resolve(host.win.Stripe) : reject(new Error('Stripe.js loaded but did not define Stripe')));
    script.onerror = () => reject(new Error(`Stripe.js could not be loaded from ${STRIPE_JS_URL}`));
    host.doc.head.appendChild(script);
  }).catch((err: unknown) => {
    loading = undefined;
    throw err;
  });
  return loading;
}

/** A mounted Payment Element: `paymentMethod()` validates the details and answers the new `pm_…` id. */
export interface PaymentForm {
  paymentMethod(): Promise<string>;
  destroy(): void;
}

/**
 * Mount a card Payment Element in `target`. The element collects card details for a charge the
 * service makes afterwards (off-session, in USD), so Elements runs in `setup` mode.
 */
export function mountPaymentForm(stripe: StripeJs, target: HTMLElement): PaymentForm {
  const elements = stripe.elements({ mode: 'setup', currency: 'usd', paymentMethodCreation: 'manual', paymentMethodTypes: ['card'] });
  const element = elements.create('payment');
  element.mount(target);
  return {
    async paymentMethod() {
      const submitted = await elements.submit();
      if (submitted.error) throw new Error(submitted.error.message ?? 'the card details are not complete');
      const made = await stripe.createPaymentMethod({ elements });
      if (made.error || !made.paymentMethod) throw new Error(made.error?.message ?? 'Stripe made no payment method');
      return made.paymentMethod.id;
    },
    destroy: () => element.destroy(),
  };
}
