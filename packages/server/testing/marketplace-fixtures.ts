/**
 * Marketplace test flows (contract §4.16; design §8.23–§8.26): a platform operator, a listed agent
 * (an ACTIVE agent device with a hub identity, certified by the operator's tier grant, listed and
 * published), a renter with an owner device, and an active rental of the two.
 */
import { eq } from 'drizzle-orm';
import { expect } from 'vitest';
import { hubIdentities } from '../src/db/schema/index.js';
import { activeAgent, newOwner, registerOwnerDevice, type Agent, type Owner, type OwnerDevice } from './flows.js';
import type { TestApp } from './harness.js';
import { hubOwnerKey } from './keys.js';

let seq = 0;
/** A unique hub address. */
export const marketAddr = () => `mkt-${Date.now().toString(36)}-${++seq}`;

/** An operator's auth headers (dev identity provider, `parley_operator` claim, design §8.25). */
export async function operatorAuth(t: TestApp): Promise<{ authorization: string }> {
  return { authorization: `Bearer ${await t.ownerToken(`operator-${++seq}@example.com`, { parley_operator: true })}` };
}

/** A developer tenant with a certified, bound identity. */
export interface Developer {
  owner: Owner;
  agent: Agent;
  identityId: string;
  address: string;
}

/** An owner with an ACTIVE agent whose hub identity an operator certified. */
export async function certifiedDeveloper(t: TestApp, operator: { authorization: string }, name = 'Dev Co'): Promise<Developer> {
  const owner = await newOwner(t, name);
  const agent = await activeAgent(t, owner);
  return { owner, agent, ...(await certifyAgent(t, operator, owner, agent.deviceId)) };
}

/** A hub identity for `owner`'s ACTIVE agent device `deviceId`, certified by the operator's tier grant. */
export async function certifyAgent(t: TestApp, operator: { authorization: string }, owner: Owner, deviceId: string): Promise<{ identityId: string; address: string }> {
  const reg = await t.request({
    method: 'POST',
    url: '/api/v1/hub/identities',
    headers: owner.auth,
    payload: { hub_address: marketAddr(), display_name: 'Research agent', device_id: deviceId, public_key: hubOwnerKey(), capabilities: ['research', 'summarize'] },
  });
  expect(reg.status).toBe(201);
  const tier = await t.request({ method: 'POST', url: `/api/v1/hub/identities/${reg.body.id}/tier`, headers: operator, payload: { tier: 'certified', reason: 'reviewed' } });
  expect(tier.status, JSON.stringify(tier.body)).toBe(200);
  return { identityId: reg.body.id, address: reg.body.hub_address };
}

/** The body of a listing draft for `address` (overrides merged in). */
export const listingBody = (address: string, over: Record<string, unknown> = {}) => ({
  hub_address: address,
  title: 'Deep research on demand',
  description: 'Finds, reads and summarizes sources.',
  category: 'research',
  capabilities: ['research', 'summarize'],
  pricing: { model: 'per_hour', price_cents: 2500 },
  term_hours: 2,
  ...over,
});

/** Create and publish a listing; answers its id. */
export async function publishedListing(t: TestApp, dev: Pick<Developer, 'owner' | 'address'>, over: Record<string, unknown> = {}): Promise<string> {
  const created = await t.request({ method: 'POST', url: '/api/v1/marketplace/listings', headers: dev.owner.auth, payload: listingBody(dev.address, over) });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const pub = await t.request({ method: 'POST', url: `/api/v1/marketplace/listings/${created.body.listing_id}/publish`, headers: dev.owner.auth });
  expect(pub.status, JSON.stringify(pub.body)).toBe(200);
  return created.body.listing_id as string;
}

/** A renter tenant with an owner device. */
export async function renter(t: TestApp, name = 'Renter Inc'): Promise<{ owner: Owner; device: OwnerDevice }> {
  const owner = await newOwner(t, name);
  return { owner, device: await registerOwnerDevice(t, owner) };
}

/**
 * `renterOwner` rents a listing of `dev`'s certified agent (its trust score set to 0.9) with a test
 * card: the rental is active and its room open. Answers the rental id.
 */
export async function rentAgent(t: TestApp, dev: Pick<Developer, 'owner' | 'address' | 'identityId'>, renterOwner: Owner): Promise<string> {
  await t.app.parley.database.db.update(hubIdentities).set({ trustScore: 0.9 }).where(eq(hubIdentities.id, dev.identityId));
  const listingId = await publishedListing(t, dev, { min_score: 0.5 });
  const r = await t.request({ method: 'POST', url: '/api/v1/marketplace/rentals', headers: renterOwner.auth, payload: { listing_id: listingId, payment_method: 'pm_card_visa' } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  expect(r.body.status).toBe('active');
  return r.body.rental_id as string;
}

/** A certified developer's agent rented by a new renter tenant with an owner device ({@link rentAgent}). */
export async function activeRental(t: TestApp): Promise<{ dev: Developer; buyer: { owner: Owner; device: OwnerDevice }; rentalId: string }> {
  const dev = await certifiedDeveloper(t, await operatorAuth(t));
  const buyer = await renter(t);
  return { dev, buyer, rentalId: await rentAgent(t, dev, buyer.owner) };
}
