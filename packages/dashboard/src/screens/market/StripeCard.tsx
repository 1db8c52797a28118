/**
 * The card form when Stripe charges rentals: Stripe's Payment Element (Stripe.js from
 * js.stripe.com, `lib/stripe.ts`) mounted in the page; "Pay" turns the details into a
 * PaymentMethod id and hands it to `onPaymentMethod`. The card number never reaches this app.
 */
import { useEffect, useRef, useState } from 'react';
import { ErrorNote, Loading } from '../../components/ui';
import { loadStripeJs, mountPaymentForm, type PaymentForm } from '../../lib/stripe';

/** Stripe's card form for `publishableKey`; `pending` while the rental is being made. */
export function StripeCard({ publishableKey, payLabel, pending, onPaymentMethod }: { publishableKey: string; payLabel: string; pending: boolean; onPaymentMethod: (paymentMethod: string) => void }) {
  const target = useRef<HTMLDivElement>(null);
  const form = useRef<PaymentForm | undefined>(undefined);
  const [ready, setReady] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    let live = true;
    loadStripeJs().then(
      (Stripe) => {
        if (!live || !target.current) return;
        form.current = mountPaymentForm(Stripe(publishableKey), target.current);
        setReady(true);
      },
      (err: unknown) => live && setError(err),
    );
    return () => {
      live = false;
      form.current?.destroy();
      form.current = undefined;
    };
  }, [publishableKey]);
  const pay = async () => {
    if (!form.current) return;
    setBusy(true);
    setError(undefined);
    try {
      onPaymentMethod(await form.current.paymentMethod());
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="stack">
      {!ready && !error && <Loading what="Loading Stripe’s card form" />}
      <div ref={target} data-testid="stripe-payment-element" />
      <ErrorNote error={error} />
      <div className="row">
        <button type="button" className="primary" onClick={() => void pay()} disabled={!ready || busy || pending}>
          {payLabel}
        </button>
      </div>
    </div>
  );
}
