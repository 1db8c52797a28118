/**
 * The rental room (contract §4.16 "renting creates a cross-tenant encrypted room … when policies of
 * both tenants apply, the stricter wins"; design §8.35 suspension): members with their keys, the
 * renter's owner device and the rented agent exchanging ciphertext over REST and sockets, both
 * tenants' policies (block in one tenant wins over allow in the other; hold + approval), messages
 * held while the rental is suspended and delivered when it resumes, and who may do what.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { activeAgent, newOwner, type Owner } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { certifiedDeveloper, operatorAuth, publishedListing, renter, type Developer } from '../../testing/marketplace-fixtures.js';
import { wsAddress, WsPool } from '../../testing/ws-client.js';

const execOn = async <T = Record<string, unknown>>(t: TestApp, q: ReturnType<typeof sql>) => ((await t.app.parley.database.db.execute(q)) as unknown as { rows: T[] }).rows;
const envelope = (recipient: string) => ({ recipient_device_id: recipient, header_blob: randomBytes(24).toString('base64'), ciphertext: randomBytes(64).toString('base64') });

/** A certified developer's agent (trust 0.9) rented by a renter tenant: the rental is active, its room open. */
async function openRental(t: TestApp): Promise<{ dev: Developer; buyer: { owner: Owner; device: { deviceId: string } }; rentalId: string }> {
  const op = await operatorAuth(t);
  const dev = await certifiedDeveloper(t, op);
  await execOn(t, sql`update hub_identities set trust_score = 0.9 where id = ${dev.identityId}`);
  const buyer = await renter(t);
  const listingId = await publishedListing(t, dev, { min_score: 0.5 });
  const r = await t.request({ method: 'POST', url: '/api/v1/marketplace/rentals', headers: buyer.owner.auth, payload: { listing_id: listingId, payment_method: 'pm_card_visa' } });
  expect(r.status).toBe(201);
  expect(r.body.room_id).toBe(r.body.rental_id);
  return { dev, buyer, rentalId: r.body.rental_id as string };
}

describe('rental room', () => {
  let t: TestApp;
  let dev: Developer;
  let buyer: { owner: Owner; device: { deviceId: string } };
  let rentalId: string;
  const pool = new WsPool();
  const exec = <T = Record<string, unknown>>(q: ReturnType<typeof sql>) => execOn<T>(t, q);
  const asRenter = () => ({ ...buyer.owner.auth, 'x-device-id': buyer.device.deviceId });
  const fromRenter = (env = envelope(dev.agent.deviceId)) => t.request({ method: 'POST', url: `/api/v1/marketplace/rentals/${rentalId}/messages`, headers: asRenter(), payload: { envelopes: [env] } });
  const agentHistory = async () => (await t.request({ method: 'GET', url: `/api/v1/marketplace/rentals/${rentalId}/messages`, headers: dev.agent.auth })).body.messages as { message_id: string; ciphertext: string }[];

  beforeAll(async () => {
    t = await startApp({ listen: true, env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000' } });
    ({ dev, buyer, rentalId } = await openRental(t));
  });
  afterEach(() => pool.closeAll());
  afterAll(() => t?.close());

  it('both parties list the members with their keys; a third tenant cannot', async () => {
    for (const headers of [buyer.owner.auth, dev.owner.auth, dev.agent.auth]) {
      const m = await t.request({ method: 'GET', url: `/api/v1/marketplace/rentals/${rentalId}/members`, headers });
      expect(m.status).toBe(200);
      const byDevice = Object.fromEntries(m.body.members.map((x: { device_id: string }) => [x.device_id, x]));
      expect(byDevice[dev.agent.deviceId]).toMatchObject({ side: 'developer', kind: 'agent', tenant_id: dev.owner.tenantId, identity_public_key: dev.agent.keys.identityPublicKey });
      expect(byDevice[buyer.device.deviceId]).toMatchObject({ side: 'renter', kind: 'owner', tenant_id: buyer.owner.tenantId });
    }
    const stranger = await newOwner(t, 'Stranger');
    expect((await t.request({ method: 'GET', url: `/api/v1/marketplace/rentals/${rentalId}/members`, headers: stranger.auth })).status).toBe(404);
  });

  it('the renter and the agent exchange ciphertext: REST send, socket delivery, history; only ciphertext is stored', async () => {
    const ws = await pool.connect(wsAddress(t.wsUrl, { token: dev.agent.jwt }));
    const env = envelope(dev.agent.deviceId);
    const sent = await fromRenter(env);
    expect(sent.status, JSON.stringify(sent.body)).toBe(201);
    expect(sent.body.deliveries).toEqual([expect.objectContaining({ recipient_device_id: dev.agent.deviceId, outcome: 'delivered' })]);
    const frame = await ws.next('rental_message');
    expect(frame.data).toMatchObject({ rental_id: rentalId, sender_device_id: buyer.device.deviceId, ciphertext: env.ciphertext, header_blob: env.header_blob });
    expect((await agentHistory()).map((m) => m.ciphertext)).toContain(env.ciphertext);
    const reply = envelope(buyer.device.deviceId);
    const back = await t.request({ method: 'POST', url: `/api/v1/marketplace/rentals/${rentalId}/messages`, headers: dev.agent.auth, payload: { message_type: 'artifact', envelopes: [reply] } });
    expect(back.status).toBe(201);
    const mine = await t.request({ method: 'GET', url: `/api/v1/marketplace/rentals/${rentalId}/messages`, headers: asRenter() });
    expect(mine.body.messages.map((m: { ciphertext: string }) => m.ciphertext)).toEqual([env.ciphertext, reply.ciphertext]);
    const later = await t.request({ method: 'GET', url: `/api/v1/marketplace/rentals/${rentalId}/messages?since=${mine.body.next_cursor}`, headers: asRenter() });
    expect(later.body.messages).toEqual([]);
    const [stored] = await exec<{ ciphertext: Buffer | Uint8Array }>(sql`select ciphertext from marketplace_rental_messages where id = ${sent.body.deliveries[0].message_id}`);
    expect(Buffer.from(stored!.ciphertext).toString('base64')).toBe(env.ciphertext);
  });

  it('refuses: a recipient on the same side (400), no X-Device-Id (400), a device outside the room (403), bad base64 or an empty ciphertext (400)', async () => {
    const self = await t.request({ method: 'POST', url: `/api/v1/marketplace/rentals/${rentalId}/messages`, headers: asRenter(), payload: { envelopes: [envelope(buyer.device.deviceId)] } });
    expect(self.status).toBe(400);
    const noDevice = await t.request({ method: 'POST', url: `/api/v1/marketplace/rentals/${rentalId}/messages`, headers: buyer.owner.auth, payload: { envelopes: [envelope(dev.agent.deviceId)] } });
    expect(noDevice.status).toBe(400);
    const otherAgent = await activeAgent(t, dev.owner);
    const outsider = await t.request({ method: 'POST', url: `/api/v1/marketplace/rentals/${rentalId}/messages`, headers: otherAgent.auth, payload: { envelopes: [envelope(buyer.device.deviceId)] } });
    expect(outsider.status).toBe(403);
    const bad = await t.request({ method: 'POST', url: `/api/v1/marketplace/rentals/${rentalId}/messages`, headers: asRenter(), payload: { envelopes: [{ ...envelope(dev.agent.deviceId), ciphertext: 'not base64!' }] } });
    expect(bad.status).toBe(400);
    const empty = await fromRenter({ ...envelope(dev.agent.deviceId), ciphertext: '' });
    expect(empty.status).toBe(400);
    expect(empty.body.detail).toMatch(/ciphertext/);
    expect((await t.request({ method: 'POST', url: `/api/v1/marketplace/rentals/${rentalId}/messages`, payload: { envelopes: [envelope(dev.agent.deviceId)] } })).status).toBe(401);
  });

  it('an owner cannot act as the rented agent: X-Device-Id naming the agent is 403 for send and read, and leaves its messages undelivered', async () => {
    const sent = await fromRenter();
    expect(sent.status).toBe(201);
    const asAgent = { ...dev.owner.auth, 'x-device-id': dev.agent.deviceId };
    const forged = await t.request({ method: 'POST', url: `/api/v1/marketplace/rentals/${rentalId}/messages`, headers: asAgent, payload: { envelopes: [envelope(buyer.device.deviceId)] } });
    expect(forged.status, JSON.stringify(forged.body)).toBe(403);
    expect(forged.body.detail).toMatch(/owner device/);
    const read = await t.request({ method: 'GET', url: `/api/v1/marketplace/rentals/${rentalId}/messages`, headers: asAgent });
    expect(read.status).toBe(403);
    const [row] = await exec<{ delivered_at: unknown }>(sql`select delivered_at from marketplace_rental_messages where id = ${sent.body.deliveries[0].message_id}`);
    expect(row!.delivered_at).toBeNull();
    const renterAsAgent = await t.request({ method: 'GET', url: `/api/v1/marketplace/rentals/${rentalId}/messages`, headers: { ...buyer.owner.auth, 'x-device-id': dev.agent.deviceId } });
    expect(renterAsAgent.status).toBe(404);
    expect((await agentHistory()).map((m) => m.message_id)).toContain(sent.body.deliveries[0].message_id);
  });

  it('both tenants’ policies apply and the stricter wins: a block in the developer tenant beats the renter’s allow; a renter hold waits for approval', async () => {
    const block = await t.request({ method: 'POST', url: '/api/v1/policies', headers: dev.owner.auth, payload: { name: 'no cross-tenant artifacts', conditions: { cross_tenant: true, message_types: ['artifact'] }, action: 'block' } });
    expect(block.status).toBe(201);
    const env = envelope(dev.agent.deviceId);
    const blocked = await t.request({ method: 'POST', url: `/api/v1/marketplace/rentals/${rentalId}/messages`, headers: asRenter(), payload: { message_type: 'artifact', envelopes: [env] } });
    expect(blocked.body.deliveries[0].outcome).toBe('blocked');
    expect((await agentHistory()).map((m) => m.ciphertext)).not.toContain(env.ciphertext);
    const [row] = await exec<{ ciphertext: unknown }>(sql`select ciphertext from marketplace_rental_messages where id = ${blocked.body.deliveries[0].message_id}`);
    expect(row!.ciphertext).toBeNull();

    const hold = await t.request({ method: 'POST', url: '/api/v1/policies', headers: buyer.owner.auth, payload: { name: 'review urgent', conditions: { priorities: ['urgent'] }, action: 'hold' } });
    expect(hold.status).toBe(201);
    const urgent = envelope(dev.agent.deviceId);
    const held = await t.request({ method: 'POST', url: `/api/v1/marketplace/rentals/${rentalId}/messages`, headers: asRenter(), payload: { priority: 'urgent', envelopes: [urgent] } });
    expect(held.body.deliveries[0]).toMatchObject({ outcome: 'held', held_message_id: expect.any(String) });
    expect((await agentHistory()).map((m) => m.ciphertext)).not.toContain(urgent.ciphertext);
    const list = await t.request({ method: 'GET', url: '/api/v1/policies/held-messages', headers: buyer.owner.auth });
    expect(list.body.held_messages.find((h: { held_message_id: string }) => h.held_message_id === held.body.deliveries[0].held_message_id)).toMatchObject({ rental_id: rentalId });
    const ok = await t.request({ method: 'POST', url: `/api/v1/policies/held-messages/${held.body.deliveries[0].held_message_id}/approve`, headers: buyer.owner.auth });
    expect(ok.status).toBe(200);
    await expect.poll(async () => (await agentHistory()).map((m) => m.ciphertext)).toContain(urgent.ciphertext);
    for (const [o, id] of [[dev.owner, block.body.policy_id], [buyer.owner, hold.body.policy_id]] as const) {
      expect((await t.request({ method: 'DELETE', url: `/api/v1/policies/${id}`, headers: o.auth })).status).toBe(204);
    }
  });

  it('a suspended rental holds room messages and delivers them when it resumes', async () => {
    await exec(sql`update hub_identities set trust_score = 0.1 where id = ${dev.identityId}`);
    expect((await t.app.parley.marketplace.monitor.check()).suspended).toBe(1);
    const env = envelope(dev.agent.deviceId);
    const held = await fromRenter(env);
    expect(held.status).toBe(201);
    expect(held.body.deliveries[0].outcome).toBe('held');
    expect((await agentHistory()).map((m) => m.ciphertext)).not.toContain(env.ciphertext);
    const ws = await pool.connect(wsAddress(t.wsUrl, { token: dev.agent.jwt }));
    await exec(sql`update hub_identities set trust_score = 0.9 where id = ${dev.identityId}`);
    expect((await t.app.parley.marketplace.monitor.check()).resumed).toBe(1);
    const frame = await ws.next('rental_message');
    expect(frame.data.ciphertext).toBe(env.ciphertext);
    expect((await agentHistory()).map((m) => m.ciphertext)).toContain(env.ciphertext);
  });

  it('a rental past its ends_at refuses messages (409) from either side before the term job completes it; history stays readable', async () => {
    const [before] = await exec<{ ends_at: string; n: number }>(sql`select ends_at::text, (select count(*)::int from marketplace_rental_messages where rental_id = ${rentalId}) as n from marketplace_rentals where id = ${rentalId}`);
    await exec(sql`update marketplace_rentals set ends_at = now() - interval '1 second' where id = ${rentalId}`);
    try {
      const late = await fromRenter();
      expect(late.status).toBe(409);
      expect(late.body.detail).toMatch(/term ended/);
      const fromAgent = await t.request({ method: 'POST', url: `/api/v1/marketplace/rentals/${rentalId}/messages`, headers: dev.agent.auth, payload: { envelopes: [envelope(buyer.device.deviceId)] } });
      expect(fromAgent.status).toBe(409);
      const [row] = await exec<{ status: string; n: number }>(sql`select status, (select count(*)::int from marketplace_rental_messages where rental_id = ${rentalId}) as n from marketplace_rentals where id = ${rentalId}`);
      expect(row).toEqual({ status: 'active', n: before!.n });
      expect((await t.request({ method: 'GET', url: `/api/v1/marketplace/rentals/${rentalId}/messages`, headers: asRenter() })).status).toBe(200);
    } finally {
      await exec(sql`update marketplace_rentals set ends_at = ${before!.ends_at}::timestamptz where id = ${rentalId}`);
    }
    expect((await fromRenter()).status).toBe(201);
  });

  it('a closed rental closes its room (409)', async () => {
    expect((await t.request({ method: 'POST', url: `/api/v1/marketplace/rentals/${rentalId}/complete`, headers: buyer.owner.auth })).status).toBe(200);
    expect((await fromRenter()).status).toBe(409);
  });
});

describe('rental room message limit (RATE_LIMIT_WS_MESSAGES_PER_MIN=2)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000', RATE_LIMIT_WS_MESSAGES_PER_MIN: '2' } });
  });
  afterAll(() => t?.close());

  it('each sending device has contract §8’s per-minute budget over REST: the 3rd send is 429 with Retry-After, nothing stored', async () => {
    const { dev, buyer, rentalId } = await openRental(t);
    const url = `/api/v1/marketplace/rentals/${rentalId}/messages`;
    const asRenter = { ...buyer.owner.auth, 'x-device-id': buyer.device.deviceId };
    const send = (headers: Record<string, string>, recipient: string) => t.request({ method: 'POST', url, headers, payload: { envelopes: [envelope(recipient)] } });
    for (let i = 0; i < 2; i++) expect((await send(asRenter, dev.agent.deviceId)).status).toBe(201);
    const refused = await send(asRenter, dev.agent.deviceId);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // The agent's budget is its own.
    for (let i = 0; i < 2; i++) expect((await send(dev.agent.auth, buyer.device.deviceId)).status).toBe(201);
    expect((await send(dev.agent.auth, buyer.device.deviceId)).status).toBe(429);
    const [row] = await execOn<{ n: number }>(t, sql`select count(*)::int as n from marketplace_rental_messages where rental_id = ${rentalId}`);
    expect(row!.n).toBe(4);
  });
});
