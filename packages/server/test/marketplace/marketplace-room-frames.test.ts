/**
 * The rental-room socket frame (contract §4.16, §6.1): the renter's owner device and the rented agent
 * send `rental_message` over their sockets, each answered `rental_message_ack` and delivered to
 * the other side as `rental_message`, with the checks of `POST /marketplace/rentals/{id}/messages`
 * (recipients of the other side only, members only, an existing rental, a valid body).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { activeAgent } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { activeRental, type Developer } from '../../testing/marketplace-fixtures.js';
import { wsAddress, WsPool } from '../../testing/ws-client.js';

const envelope = (recipient: string) => ({ recipient_device_id: recipient, header_blob: randomBytes(24).toString('base64'), ciphertext: randomBytes(64).toString('base64') });

describe('rental_message frames', () => {
  let t: TestApp;
  let dev: Developer;
  let buyer: Awaited<ReturnType<typeof activeRental>>['buyer'];
  let rentalId: string;
  const pool = new WsPool();

  beforeAll(async () => {
    t = await startApp({ listen: true, env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000' } });
    ({ dev, buyer, rentalId } = await activeRental(t));
  });
  afterEach(() => pool.closeAll());
  afterAll(() => t?.close());

  const renterWs = () => pool.connect(wsAddress(t.wsUrl, { token: buyer.owner.token, device_id: buyer.device.deviceId }));
  const agentWs = () => pool.connect(wsAddress(t.wsUrl, { token: dev.agent.jwt }));

  it('the renter’s owner device and the agent exchange messages over their sockets; the history has both', async () => {
    const [renter, agent] = await Promise.all([renterWs(), agentWs()]);
    const out = envelope(dev.agent.deviceId);
    renter.send('rental_message', { rental_id: rentalId, envelopes: [out], client_ref: 'r1' });
    const ack = (await renter.next('rental_message_ack')).data;
    expect(ack).toMatchObject({ rental_id: rentalId, client_ref: 'r1', deliveries: [{ recipient_device_id: dev.agent.deviceId, outcome: 'delivered' }] });
    expect((await agent.next('rental_message')).data).toMatchObject({ rental_id: rentalId, message_id: ack.deliveries[0].message_id, sender_device_id: buyer.device.deviceId, recipient_device_id: dev.agent.deviceId, ciphertext: out.ciphertext, header_blob: out.header_blob });

    const back = envelope(buyer.device.deviceId);
    agent.send('rental_message', { rental_id: rentalId.toUpperCase(), message_type: 'artifact', envelopes: [back], client_ref: 'a1' });
    expect((await agent.next('rental_message_ack')).data).toMatchObject({ client_ref: 'a1', deliveries: [{ recipient_device_id: buyer.device.deviceId, outcome: 'delivered' }] });
    // The sender's sockets get a copy of what it sent; the renter's next one from the agent is the answer.
    expect((await renter.next((f) => f.event === 'rental_message' && f.data.sender_device_id === dev.agent.deviceId)).data).toMatchObject({ message_type: 'artifact', ciphertext: back.ciphertext });

    const history = await t.request({ method: 'GET', url: `/api/v1/marketplace/rentals/${rentalId}/messages`, headers: { ...buyer.owner.auth, 'x-device-id': buyer.device.deviceId } });
    expect(history.body.messages.map((m: { ciphertext: string }) => m.ciphertext).slice(-2)).toEqual([out.ciphertext, back.ciphertext]);
  });

  it('refuses what the REST route refuses: a recipient on the same side (400), a non-member (403), an unknown rental (404), a bad body (400)', async () => {
    const renter = await renterWs();
    const frames: [unknown, number][] = [
      [{ rental_id: rentalId, envelopes: [envelope(buyer.device.deviceId)] }, 400],
      [{ rental_id: randomUUID(), envelopes: [envelope(dev.agent.deviceId)] }, 404],
      [{ rental_id: rentalId, envelopes: [] }, 400],
      [{ rental_id: rentalId, envelopes: [{ ...envelope(dev.agent.deviceId), ciphertext: 'not base64!' }] }, 400],
      [{ rental_id: 'nope', envelopes: [envelope(dev.agent.deviceId)] }, 400],
    ];
    for (const [i, [data, status]] of frames.entries()) {
      renter.send('rental_message', { ...(data as object), client_ref: `c${i}` });
      expect((await renter.next('error')).data, JSON.stringify(data)).toMatchObject({ status, client_ref: `c${i}` });
    }
    const outsider = await activeAgent(t, dev.owner);
    const ws = await pool.connect(wsAddress(t.wsUrl, { token: outsider.jwt }));
    ws.send('rental_message', { rental_id: rentalId, envelopes: [envelope(buyer.device.deviceId)], client_ref: 'x' });
    expect((await ws.next('error')).data).toMatchObject({ status: 403, client_ref: 'x' });
  });
});
