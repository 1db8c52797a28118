/**
 * The renter's screens against a fake REST client: the listing search (the query it sends, a bad
 * price refused in place, the tenant's own listing not rentable), the payment step with the local
 * processor's test cards (a 402's detail shown as is, a pending rental turning active), Stripe's
 * Payment Element path with a fake Stripe.js (no network: the PaymentMethod id it makes is what
 * the rental is created with), Stripe without a publishable key, and a clean axe-core run
 * (structure rules; colour contrast needs a real browser).
 */
import { ParleyApiError, type Listing, type PaymentProcessorInfo, type Rental } from '@parley/sdk';
import { act, cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import axe from 'axe-core';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { renderInApp } from './render';

const L1 = '00000000-0000-4000-8000-0000000000c1';
const L2 = '00000000-0000-4000-8000-0000000000c2';
const R1 = '00000000-0000-4000-8000-0000000000d1';
const AT = '2026-03-01T12:00:00.000Z';

const listing = (listing_id: string, title: string): Listing => ({
  listing_id,
  hub_address: 'deep-research',
  title,
  description: 'Finds sources.',
  category: 'research',
  capabilities: ['research'],
  pricing: { model: 'per_hour', price_cents: 2500, currency: 'usd' },
  status: 'published',
  trust_tier: 'certified',
  trust_score: 0.82,
  published_at: AT,
  sla: { latency_p95_ms: 1500, uptime_sla: 0.995 },
  term_hours: 2,
});
const rental = (status: Rental['status']): Rental => ({
  rental_id: R1,
  listing_id: L1,
  hub_address: 'deep-research',
  role: 'renter',
  status,
  room_id: status === 'pending' ? null : R1,
  renter_tenant_id: '00000000-0000-4000-8000-0000000000e1',
  developer_tenant_id: '00000000-0000-4000-8000-0000000000e2',
  pricing_model: 'per_hour',
  amount_cents: 5000,
  fee_cents: 1000,
  refunded_cents: 0,
  currency: 'usd',
  term_hours: 2,
  starts_at: status === 'pending' ? null : AT,
  ends_at: status === 'pending' ? null : AT,
  reason: null,
  created_at: AT,
});
const LOCAL: PaymentProcessorInfo = { processor: 'local', publishable_key: null, test_payment_methods: ['pm_card_visa', 'pm_card_chargeDeclined', 'pm_card_async'] };

const client = {
  searchListings: vi.fn(async (q: { mine?: boolean }) => ({ listings: q.mine ? [listing(L2, 'Mine')] : [listing(L1, 'Deep research'), listing(L2, 'Mine')], next_cursor: null })),
  searchHub: vi.fn(async () => ({ results: [] })),
  getHubProfile: vi.fn(),
  listingCapabilities: vi.fn(async () => ({ capabilities: [] })),
  paymentProcessor: vi.fn(async (): Promise<PaymentProcessorInfo> => LOCAL),
  createRental: vi.fn(async (_body: { listing_id: string; payment_method?: string }): Promise<Rental> => rental('active')),
  getRental: vi.fn(async () => rental('active')),
};

vi.mock('../src/app/owner-context', () => ({ useOwner: () => ({ client, deviceId: 'owner' }) }));

const { RentAgent } = await import('../src/screens/market/Browse');
const { RentDialog } = await import('../src/screens/market/RentDialog');

async function axeViolations(container: HTMLElement): Promise<string[]> {
  const r = await axe.run(container, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] }, rules: { 'color-contrast': { enabled: false }, region: { enabled: false } } });
  return r.violations.map((v) => `${v.id}: ${v.nodes.map((n) => String(n.target)).join(' ')}`);
}

beforeEach(() => {
  sessionStorage.clear();
  vi.clearAllMocks();
  delete (window as { Stripe?: unknown }).Stripe;
});
afterEach(() => {
  cleanup();
  vi.useRealTimers();
});

describe('Rent an agent', () => {
  it('searches with the form’s values (dollars as cents); the own listing is shown but not rentable', async () => {
    const { container } = renderInApp(<RentAgent />);
    expect(screen.getAllByRole('heading', { level: 1 }).map((h) => h.textContent)).toEqual(['Rent an agent']);
    await screen.findByTestId(`listing-${L1}`);
    expect(client.searchListings).toHaveBeenCalledWith({ limit: 20 });
    await waitFor(() => expect(within(screen.getByTestId(`listing-${L2}`)).getByText('Your listing')).toBeTruthy());
    expect(within(screen.getByTestId(`listing-${L2}`)).queryByRole('button', { name: 'Rent' })).toBeNull();
    expect(within(screen.getByTestId(`listing-${L1}`)).getByRole('button', { name: 'Rent' })).toBeTruthy();

    fireEvent.change(screen.getByLabelText('Search'), { target: { value: 'deep' } });
    fireEvent.change(screen.getByLabelText('Minimum trust tier'), { target: { value: 'enterprise' } });
    fireEvent.change(screen.getByLabelText('Highest price (USD)'), { target: { value: '30' } });
    fireEvent.click(screen.getByRole('button', { name: 'Search listings' }));
    await waitFor(() => expect(client.searchListings).toHaveBeenCalledWith({ limit: 20, query: 'deep', tier: 'enterprise', max_price_cents: 3000 }));

    const calls = client.searchListings.mock.calls.length;
    fireEvent.change(screen.getByLabelText('Lowest price (USD)'), { target: { value: 'cheap' } });
    fireEvent.click(screen.getByRole('button', { name: 'Search listings' }));
    expect((await screen.findByRole('alert')).textContent).toBe('Give the lowest price in US dollars, for example 12.50.');
    expect(client.searchListings.mock.calls.length).toBe(calls);
    expect(await axeViolations(container)).toEqual([]);
  });
});

describe('renting with the local processor', () => {
  it('offers its test cards; a decline shows the 402 detail as is; the Visa card rents at once', async () => {
    const { container } = renderInApp(<RentDialog l={listing(L1, 'Deep research')} />);
    const visa = await screen.findByRole('radio', { name: /Test Visa card: succeeds at once/ });
    expect((visa as HTMLInputElement).checked).toBe(true);
    expect(screen.getAllByRole('radio').map((r) => (r as HTMLInputElement).value)).toEqual(LOCAL.test_payment_methods);

    client.createRental.mockRejectedValueOnce(new ParleyApiError({ status: 402, detail: 'payment declined: Your card was declined.', method: 'POST', path: '/api/v1/marketplace/rentals' }));
    fireEvent.click(screen.getByRole('radio', { name: /declined/ }));
    fireEvent.click(screen.getByRole('button', { name: 'Rent for $25.00 per hour' }));
    expect((await screen.findByRole('alert')).textContent).toBe('payment declined: Your card was declined. (402)');
    expect(client.createRental).toHaveBeenLastCalledWith({ listing_id: L1, payment_method: 'pm_card_chargeDeclined' });
    expect(screen.queryByTestId('rent-result')).toBeNull();

    fireEvent.click(visa);
    fireEvent.click(screen.getByRole('button', { name: 'Rent for $25.00 per hour' }));
    const result = await screen.findByTestId('rent-result');
    expect(client.createRental).toHaveBeenLastCalledWith({ listing_id: L1, payment_method: 'pm_card_visa' });
    expect(screen.queryByRole('alert')).toBeNull();
    expect(result.textContent).toContain('active');
    expect(result.textContent).toContain('$50.00 charged');
    expect(within(result).getByRole('link', { name: 'Open the rental room' }).getAttribute('href')).toBe(`/marketplace/rentals/${R1}`);
    expect(await axeViolations(container)).toEqual([]);
  });

  it('an asynchronous card shows the rental pending, then active once the service says so', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    client.createRental.mockResolvedValueOnce(rental('pending'));
    client.getRental.mockResolvedValueOnce(rental('pending')).mockResolvedValue(rental('active'));
    renderInApp(<RentDialog l={listing(L1, 'Deep research')} />);
    fireEvent.click(await screen.findByRole('radio', { name: /pending first/ }));
    fireEvent.click(screen.getByRole('button', { name: 'Rent for $25.00 per hour' }));
    const result = await screen.findByTestId('rent-result');
    expect(result.textContent).toContain('pending');
    expect(result.textContent).toContain('Waiting for the payment processor');
    await act(async () => {
      await vi.advanceTimersByTimeAsync(7_000);
    });
    await waitFor(() => expect(screen.getByTestId('rent-result').textContent).toContain('active'));
    expect(client.getRental).toHaveBeenCalledWith(R1);
  });
});

describe('renting with Stripe', () => {
  it('mounts Stripe’s Payment Element with the publishable key and rents with the PaymentMethod it makes', async () => {
    client.paymentProcessor.mockResolvedValueOnce({ processor: 'stripe', publishable_key: 'pk_test_51abc', test_payment_methods: [] });
    const mount = vi.fn();
    const elements = { create: vi.fn(() => ({ mount, destroy: vi.fn() })), submit: vi.fn(async () => ({})) };
    const stripe = { elements: vi.fn(() => elements), createPaymentMethod: vi.fn(async () => ({ paymentMethod: { id: 'pm_1StripeMade' } })) };
    const factory = vi.fn(() => stripe);
    (window as { Stripe?: unknown }).Stripe = factory;
    renderInApp(<RentDialog l={listing(L1, 'Deep research')} />);
    const pay = await screen.findByRole('button', { name: 'Rent for $25.00 per hour' });
    await waitFor(() => expect((pay as HTMLButtonElement).disabled).toBe(false));
    expect(factory).toHaveBeenCalledWith('pk_test_51abc');
    expect(mount).toHaveBeenCalledWith(screen.getByTestId('stripe-payment-element'));
    expect(screen.queryByRole('radio')).toBeNull();
    fireEvent.click(pay);
    await screen.findByTestId('rent-result');
    expect(client.createRental).toHaveBeenCalledWith({ listing_id: L1, payment_method: 'pm_1StripeMade' });
  });

  it('a Stripe error is shown and nothing is rented', async () => {
    client.paymentProcessor.mockResolvedValueOnce({ processor: 'stripe', publishable_key: 'pk_test_51abc', test_payment_methods: [] });
    const elements = { create: vi.fn(() => ({ mount: vi.fn(), destroy: vi.fn() })), submit: vi.fn(async () => ({ error: { message: 'Your card number is incomplete.' } })) };
    (window as { Stripe?: unknown }).Stripe = () => ({ elements: () => elements, createPaymentMethod: vi.fn() });
    renderInApp(<RentDialog l={listing(L1, 'Deep research')} />);
    const pay = await screen.findByRole('button', { name: 'Rent for $25.00 per hour' });
    await waitFor(() => expect((pay as HTMLButtonElement).disabled).toBe(false));
    fireEvent.click(pay);
    expect((await screen.findByRole('alert')).textContent).toBe('Your card number is incomplete.');
    expect(client.createRental).not.toHaveBeenCalled();
  });

  it('without a publishable key, a PaymentMethod id is typed instead', async () => {
    client.paymentProcessor.mockResolvedValueOnce({ processor: 'stripe', publishable_key: null, test_payment_methods: [] });
    renderInApp(<RentDialog l={listing(L1, 'Deep research')} />);
    fireEvent.change(await screen.findByLabelText('Stripe payment method id'), { target: { value: ' pm_typed ' } });
    fireEvent.click(screen.getByRole('button', { name: 'Rent for $25.00 per hour' }));
    await screen.findByTestId('rent-result');
    expect(client.createRental).toHaveBeenCalledWith({ listing_id: L1, payment_method: 'pm_typed' });
  });
});
