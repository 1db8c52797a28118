/**
 * Renting a listing (`POST /marketplace/rentals {listing_id, payment_method}`) with a payment
 * method of the processor in use (`GET /marketplace/processor`): the embedded local processor's
 * test cards (`pm_card_visa` succeeds, `pm_card_chargeDeclined` is declined with a 402 whose
 * detail is shown as is, `pm_card_async` stays pending until the processor confirms), or Stripe's
 * card form when Stripe charges rentals. The new rental's status follows live (`rental_updated`
 * socket events refresh it): pending, then active with a link to its room.
 */
import type { Listing, Rental } from '@parley/sdk';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { useOwner } from '../../app/owner-context';
import { Badge, ErrorNote, Loading, Time } from '../../components/ui';
import { formatCents, words } from '../../lib/format';
import { priceText, TEST_CARD_TEXT } from '../../lib/market-browse';
import { useRootMutation } from '../../lib/mutate';
import { Field } from '../form-parts';
import { StripeCard } from './StripeCard';

const TONE = { pending: 'neutral', active: 'good', suspended: 'warn', completed: 'info', cancelled: 'bad', disputed: 'bad', resolved: 'info' } as const;

/** The rental just made, refreshed by socket events until it settles. */
function RentalProgress({ rental }: { rental: Rental }) {
  const { client } = useOwner();
  // Socket events refresh it; while pending, a slow poll covers an event that came before this mounted.
  const live = useQuery({
    queryKey: ['market', 'rental', rental.rental_id],
    queryFn: () => client.getRental(rental.rental_id),
    initialData: rental,
    refetchInterval: (q) => (q.state.data?.status === 'pending' ? 3000 : false),
  });
  const r = live.data;
  return (
    <div className="stack" role="status" data-testid="rent-result" data-rental-id={r.rental_id}>
      <p>
        Rental of <strong>{r.hub_address}</strong>: <Badge tone={TONE[r.status]}>{r.status}</Badge> {formatCents(r.amount_cents)} charged
        {r.reason && r.reason !== r.status && <span className="muted"> ({words(r.reason)})</span>}
      </p>
      {r.status === 'pending' && <p className="muted">Waiting for the payment processor to confirm the payment…</p>}
      {(r.status === 'active' || r.status === 'suspended') && (
        <p>
          Until <Time iso={r.ends_at} />. <Link to={`/marketplace/rentals/${r.rental_id}`}>Open the rental room</Link>
        </p>
      )}
    </div>
  );
}

/** Choose a payment method and rent listing `l`. */
export function RentDialog({ l }: { l: Listing }) {
  const { client } = useOwner();
  const processor = useQuery({ queryKey: ['market', 'processor'], queryFn: () => client.paymentProcessor(), staleTime: Infinity });
  const rent = useRootMutation('market', (payment_method: string) => client.createRental({ listing_id: l.listing_id, payment_method }));
  const [method, setMethod] = useState('');
  const info = processor.data;
  const payLabel = `Rent for ${priceText(l.pricing)}`;
  const chosen = method || info?.test_payment_methods[0] || '';
  return (
    <div className="stack" role="group" aria-label={`Rent ${l.title}`}>
      <ErrorNote error={processor.error} />
      {processor.isPending && <Loading what="Asking which payment processor is in use" />}
      {info?.processor === 'local' && (
        <form
          className="stack"
          onSubmit={(e) => {
            e.preventDefault();
            rent.mutate(chosen);
          }}
        >
          <fieldset className="group">
            <legend>Payment method (test cards of the embedded processor: no money moves)</legend>
            {info.test_payment_methods.map((pm) => (
              <label key={pm} className="check">
                <input type="radio" name={`pm-${l.listing_id}`} value={pm} checked={chosen === pm} onChange={() => setMethod(pm)} />
                {TEST_CARD_TEXT[pm] ?? pm} <code>{pm}</code>
              </label>
            ))}
          </fieldset>
          <div className="row">
            <button type="submit" className="primary" disabled={rent.isPending || !chosen}>
              {payLabel}
            </button>
          </div>
        </form>
      )}
      {info?.processor === 'stripe' && info.publishable_key && <StripeCard publishableKey={info.publishable_key} payLabel={payLabel} pending={rent.isPending} onPaymentMethod={(pm) => rent.mutate(pm)} />}
      {info?.processor === 'stripe' && !info.publishable_key && (
        <form
          className="stack"
          onSubmit={(e) => {
            e.preventDefault();
            rent.mutate(method.trim());
          }}
        >
          <Field label="Stripe payment method id" hint="pm_…; this service has no STRIPE_PUBLISHABLE_KEY, so the card form is not available here">
            {(id, hintId) => <input id={id} aria-describedby={hintId} value={method} required onChange={(e) => setMethod(e.target.value)} />}
          </Field>
          <div className="row">
            <button type="submit" className="primary" disabled={rent.isPending || !method.trim()}>
              {payLabel}
            </button>
          </div>
        </form>
      )}
      <ErrorNote error={rent.error} />
      {rent.data && <RentalProgress key={rent.data.rental_id} rental={rent.data} />}
    </div>
  );
}
