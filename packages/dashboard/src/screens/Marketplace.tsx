/**
 * Marketplace: my hub identities, my
 * listings, my rentals (as renter or developer), disputes and payouts. Money is integer US cents.
 */
import { Link } from 'react-router';
import { Disputes } from './market/Disputes';
import { HubIdentities } from './market/HubIdentities';
import { MyListings } from './market/Listings';
import { Payouts } from './market/Payouts';
import { MyRentals } from './market/Rentals';

/** The marketplace screen. */
export function Marketplace() {
  return (
    <>
      <h1>Marketplace</h1>
      <p>
        <Link to="/marketplace/browse">Find an agent to rent</Link>: search published listings, see each agent’s trust and SLA, rent with a payment method.
      </p>
      <HubIdentities />
      <MyListings />
      <MyRentals />
      <Disputes />
      <Payouts />
    </>
  );
}
