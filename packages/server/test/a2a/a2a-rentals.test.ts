/**
 * A2A channels backed by marketplace rentals (contract §3.5, §3.6, §4.13, §4.16, §4.19; design §8.5,
 * §8.35; docs/decisions.md "A2A channels backed by rentals"): with an ACTIVE rental of a listing,
 * any agent of the renter tenant (even unverified) opens a channel to the rented hub identity
 * without a federation agreement; it is approved at once (both agents get
 * `a2a_channel_approved`), the key exchange over sockets activates it and messages pass. A
 * capability the listing does not offer, another (unrented) hub of the developer and the reverse
 * direction are refused; once the rental is cancelled or completed the channel carries no
 * traffic (403 naming the status). Both tenants' audit chains hold the events and stay valid.
 */
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hubIdentities } from '../../src/db/schema/index.js';
import { newOwner, type Owner } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { keyAgent as newKeyAgent, type KeyAgent } from '../../testing/key-agents.js';
import { listingBody, operatorAuth } from '../../testing/marketplace-fixtures.js';
import { WsPool } from '../../testing/ws-client.js';

const CHANNELS = '/api/v1/a2a/channels';
const RENTALS = '/api/v1/marketplace/rentals';
const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('A2A channels backed by rentals', () => {
  let t: TestApp;
  let op: { authorization: string };
  const pool = new WsPool();
  /** The developer tenant: its rented agent and another, unrented hub; the listing. */
  let dev: Owner;
  let rented: KeyAgent;
  let unrented: KeyAgent;
  let listingId: string;
  /** The renter tenant, its unverified agents and one at tier enterprise (to reach the agreement check). */
  let buyer: Owner;
  let x: KeyAgent;
  let x2: KeyAgent;
  let xe: KeyAgent;

  beforeAll(async () => {
    t = await startApp({ listen: true });
    op = await operatorAuth(t);
    dev = await newOwner(t, 'Dev Co');
    rented = await keyAgent(dev, true);
    unrented = await keyAgent(dev, true);
    listingId = await publish(dev, rented.address);
    buyer = await newOwner(t, 'Renter Inc');
    x = await keyAgent(buyer);
    x2 = await keyAgent(buyer);
    xe = await keyAgent(buyer);
    await t.app.parley.database.db.update(hubIdentities).set({ trustTier: 'enterprise', trustScore: 0.9 }).where(eq(hubIdentities.id, xe.identityId));
    const pm = await t.request({ method: 'PUT', url: '/api/v1/marketplace/payment-method', headers: buyer.auth, payload: { payment_method: 'pm_card_visa' } });
    expect(pm.status, JSON.stringify(pm.body)).toBeLessThan(300);
  });
  afterAll(async () => {
    await pool.closeAll();
    await t?.close();
  });

  /**
   * An API key whose socket registered key material, with a hub identity bound to its device
   * (certified by the operator when `certify`; unverified otherwise).
   */
  async function keyAgent(owner: Owner, certify = false): Promise<KeyAgent> {
    const a = await newKeyAgent(t, pool, owner, { tier: null, prefix: 'mkt', capabilities: ['research', 'summarize'] });
    if (certify) {
      const tier = await t.request({ method: 'POST', url: `/api/v1/hub/identities/${a.identityId}/tier`, headers: op, payload: { tier: 'certified', reason: 'reviewed' } });
      expect(tier.status, JSON.stringify(tier.body)).toBe(200);
    }
    return a;
  }

  /** Create and publish a listing of `address` (capabilities research, summarize); answers its id. */
  async function publish(owner: Owner, address: string): Promise<string> {
    const created = await t.request({ method: 'POST', url: '/api/v1/marketplace/listings', headers: owner.auth, payload: listingBody(address) });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const pub = await t.request({ method: 'POST', url: `/api/v1/marketplace/listings/${created.body.listing_id}/publish`, headers: owner.auth });
    expect(pub.status, JSON.stringify(pub.body)).toBe(200);
    return created.body.listing_id as string;
  }

  /** The buyer rents the listing with its default payment method: an active rental. */
  async function rent(): Promise<string> {
    const r = await t.request({ method: 'POST', url: RENTALS, headers: buyer.auth, payload: { listing_id: listingId } });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.status).toBe('active');
    return r.body.rental_id as string;
  }

  const request = (a: KeyAgent, payload: Record<string, unknown>) => t.request({ method: 'POST', url: `${CHANNELS}/request`, headers: a.headers, payload });
  const send = (a: KeyAgent, id: string, ciphertext = 'secret') =>
    t.request({ method: 'POST', url: `${CHANNELS}/${id}/messages`, headers: a.headers, payload: { header_blob: b64('hdr'), ciphertext: b64(ciphertext) } });
  const events = async (owner: Owner, type: string, subject: string) =>
    (await t.request({ method: 'GET', url: `/api/v1/audit/events?type=${type}&subject=${subject}`, headers: owner.auth })).body.events as { actor: string; data: Record<string, unknown> }[];
  const verified = async (owner: Owner) => (await t.request({ method: 'GET', url: '/api/v1/audit/verify', headers: owner.auth })).body;

  /** Both sides' key exchange over the sockets: the channel becomes active. */
  async function activate(a: KeyAgent, b: KeyAgent, id: string): Promise<void> {
    a.ws.send('a2a_key_exchange', { channel_id: id, header_blob: b64('a-hs'), ciphertext: b64('a-welcome') });
    b.ws.send('a2a_key_exchange', { channel_id: id, header_blob: b64('b-hs'), ciphertext: b64('b-welcome') });
    expect((await a.ws.next('a2a_channel_activated')).data).toMatchObject({ channel_id: id });
    expect((await b.ws.next('a2a_channel_activated')).data).toMatchObject({ channel_id: id });
  }

  it('without a rental: 403 as today (an unverified agent for its tier, an enterprise one for the missing federation agreement)', async () => {
    const res = await request(x, { responder_hub_address: rented.address });
    expect(res.status).toBe(403);
    expect(res.body.detail).toMatch(/enterprise/);
    const agreement = await request(xe, { responder_hub_address: rented.address });
    expect(agreement.status).toBe(403);
    expect(agreement.body.detail).toMatch(/no active federation agreement/);
  });

  it('an active rental: any (unverified) renter agent opens a channel approved at once; key exchange, messages, audit in both chains', async () => {
    const rentalId = await rent();
    const res = await request(x, { responder_hub_address: rented.address, capability: 'research' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const id = res.body.channel_id as string;
    expect(res.body).toMatchObject({
      channelId: id,
      initiatorHubAddress: x.address,
      responderHubAddress: rented.address,
      status: 'approved',
      capability: 'research',
      federated: true,
      agreementId: null,
      rentalId,
      approvedAt: expect.any(String),
    });
    const xa = (await x.ws.next('a2a_channel_approved')).data;
    const ra = (await rented.ws.next('a2a_channel_approved')).data;
    expect(xa).toMatchObject({ channel_id: id, role: 'initiator', peer_hub_address: rented.address, peer_device_id: rented.deviceId, peer_identity_public_key: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(ra).toMatchObject({ channel_id: id, role: 'responder', peer_hub_address: x.address, peer_device_id: x.deviceId, peer_identity_public_key: expect.stringMatching(/^[0-9a-f]{64}$/) });
    // Approved already: the developer's owner has nothing to approve.
    expect((await t.request({ method: 'POST', url: `${CHANNELS}/${id}/approve`, headers: dev.auth })).status).toBe(409);

    await activate(x, rented, id);
    const sent = await send(x, id, 'hello rented agent');
    expect(sent.status, JSON.stringify(sent.body)).toBe(201);
    expect(sent.body).toMatchObject({ channel_id: id, outcome: 'delivered', traceparent: expect.stringMatching(/^00-/) });
    expect((await rented.ws.next('a2a_message')).data).toMatchObject({ message_id: sent.body.message_id, sender_device_id: x.deviceId, ciphertext: b64('hello rented agent') });
    const back = await send(rented, id, 'answer');
    expect(back.status).toBe(201);
    expect((await x.ws.next((f) => f.event === 'a2a_message' && f.data.sender_device_id === rented.deviceId)).data).toMatchObject({ ciphertext: b64('answer') });

    // Both parties list it with its rental.
    for (const a of [x, rented]) {
      const listed = (await t.request({ method: 'GET', url: CHANNELS, headers: a.headers })).body.channels.find((c: { channelId: string }) => c.channelId === id);
      expect(listed).toMatchObject({ status: 'active', rentalId });
    }

    // Audit: the request (with the rental) and the approval by the rental, in both chains.
    for (const o of [buyer, dev]) {
      const [requested] = await events(o, 'a2a_channel.requested', id);
      expect(requested?.data).toMatchObject({ rental_id: rentalId, federated: true, capability: 'research', initiator_device_id: x.deviceId, responder_device_id: rented.deviceId });
      const [approved] = await events(o, 'a2a_channel.approved', id);
      expect(approved).toMatchObject({ actor: `rental:${rentalId}`, data: { from: 'pending', to: 'approved', rental_id: rentalId } });
      expect(await verified(o)).toMatchObject({ valid: true });
    }
    expect((await events(buyer, 'a2a_channel.requested', id))[0]?.actor).toMatch(/^api_key:/);
    expect((await events(dev, 'a2a_channel.requested', id))[0]?.actor).toBe(`tenant:${buyer.tenantId}`);
  });

  it('refuses a capability the listing does not offer, an unrented hub of the developer and the reverse direction', async () => {
    const cap = await request(x2, { responder_hub_address: rented.address, capability: 'exfiltrate' });
    expect(cap.status).toBe(403);
    expect(cap.body.detail).toMatch(/research, summarize/);
    for (const a of [x2, xe]) {
      const other = await request(a, { responder_hub_address: unrented.address });
      expect(other.status).toBe(403);
      expect(other.body.detail).toMatch(a === xe ? /no active federation agreement/ : /enterprise/);
    }
    // The rental authorizes the renter's agents towards the rented agent, not the other way round.
    const reverse = await request(rented, { responder_hub_address: x2.address });
    expect(reverse.status).toBe(403);
  });

  it('a cancelled or completed rental closes its channels to traffic (403 naming the status)', async () => {
    // The still active rental from the previous test: x2 opens a channel under it.
    const [active] = (await t.request({ method: 'GET', url: `${RENTALS}?status=active`, headers: buyer.auth })).body.rentals as { rental_id: string }[];
    expect(active).toBeDefined();
    const opened = await request(x2, { responder_hub_address: rented.address, capability: 'summarize' });
    expect(opened.status, JSON.stringify(opened.body)).toBe(201);
    expect(opened.body).toMatchObject({ status: 'approved', rentalId: active!.rental_id });
    const pendingKeys = opened.body.channel_id as string;
    await x2.ws.next('a2a_channel_approved');
    await rented.ws.next('a2a_channel_approved');
    const [xChannel] = (await t.request({ method: 'GET', url: `${CHANNELS}?status=active`, headers: x.headers })).body.channels as { channelId: string }[];
    expect(xChannel).toBeDefined();

    const cancelled = await t.request({ method: 'POST', url: `${RENTALS}/${active!.rental_id}/cancel`, headers: buyer.auth });
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    const refused = await send(x, xChannel!.channelId);
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toMatch(new RegExp(`rental ${active!.rental_id} .*is cancelled`));
    expect((await send(rented, xChannel!.channelId)).status).toBe(403);
    // The key exchange of the approved channel is closed too.
    x2.ws.send('a2a_key_exchange', { channel_id: pendingKeys, header_blob: b64('hs'), ciphertext: b64('welcome') });
    expect((await x2.ws.next('error')).data.status).toBe(403);
    // No new channel either (without the rental the unverified agent falls back to today's rules), and the old one is revoked.
    expect((await request(x2, { responder_hub_address: rented.address })).status).toBe(403);
    expect((await t.request({ method: 'POST', url: `${CHANNELS}/${pendingKeys}/revoke`, headers: x2.headers })).status).toBe(200);

    // Rent again: a fresh channel works, until the renter completes the rental.
    const second = await rent();
    const again = await request(x2, { responder_hub_address: rented.address });
    expect(again.status, JSON.stringify(again.body)).toBe(201);
    expect(again.body).toMatchObject({ status: 'approved', rentalId: second, capability: null });
    const id = again.body.channel_id as string;
    await x2.ws.next('a2a_channel_approved');
    await rented.ws.next('a2a_channel_approved');
    await activate(x2, rented, id);
    expect((await send(x2, id)).status).toBe(201);
    const completed = await t.request({ method: 'POST', url: `${RENTALS}/${second}/complete`, headers: buyer.auth });
    expect(completed.status, JSON.stringify(completed.body)).toBe(200);
    const after = await send(x2, id);
    expect(after.status).toBe(403);
    expect(after.body.detail).toMatch(/is completed/);

    for (const o of [buyer, dev]) expect(await verified(o)).toMatchObject({ valid: true });
  });
});
