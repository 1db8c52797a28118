/**
 * Rental rooms in the SDK (contract §4.16; `secure/rental-rooms.ts`) against a real server: the
 * renter's owner device (REST sends with `X-Device-Id`) and the rented agent (an enrolled device
 * sending `rental_message` frames on its socket) exchange end-to-end encrypted messages through
 * the room layer of `RoomMessenger`; the database holds ciphertext only; the agent, restarted from
 * its store, catches up what it missed, in order and once; a rental message sends no read receipt.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scanForPlaintext } from '../../../demo/db-scan.js';
import { newOwner, startApp, type TestApp, certifyAgent, operatorAuth, rentAgent } from '@parley/server/testing';
import { activate, enroll } from '../src/client/enrollment.js';
import { ParleyClient } from '../src/client/rest.js';
import { DeviceIdentity } from '../src/crypto/keys.js';
import { nodeWebSocket } from '../src/node/ws.js';
import { RealtimeClient } from '../src/realtime/client.js';
import { frameTap } from '../src/realtime/frames.js';
import { SecureMessenger } from '../src/secure/messenger.js';
import { openRentalRooms, realtimeRentalTransport, rentalConversationId, restRentalTransport } from '../src/secure/rental-rooms.js';
import type { RoomMessenger } from '../src/secure/rooms.js';
import type { SecureMessage, SecureMessengerError } from '../src/secure/types.js';
import { MemorySessionStore } from '../src/storage.js';
import { ownerSide } from '../testing/owner-side.js';
import { waitFor } from './wait.js';

const text = (m: SecureMessage) => (m.content?.type === 'text' ? m.content.payload.text : `<${m.content?.type}>`);

describe('rental rooms (RoomMessenger with the rental source)', () => {
  let t: TestApp;
  let rentalId: string;
  let agentIdentity: DeviceIdentity;
  let agentClient: ParleyClient;
  let renter: Awaited<ReturnType<typeof ownerSide>>;
  let renterRooms: RoomMessenger;
  const agentStore = new MemorySessionStore();
  const errors: SecureMessengerError[] = [];

  /** The rented agent: messenger (read receipts on), socket with a frame tap, rental rooms sending frames. */
  async function agentSide() {
    const messenger = await SecureMessenger.open({ identity: agentIdentity, store: agentStore, client: agentClient, mls: false, autoRead: true });
    const received: SecureMessage[] = [];
    messenger.on('message', (m) => void received.push(m));
    messenger.on('error', (e) => void errors.push(e));
    const tap = frameTap(nodeWebSocket());
    const rt = new RealtimeClient({ url: t.baseUrl, token: () => agentClient.currentDeviceToken(), WebSocket: tap.WebSocket });
    messenger.attach(rt);
    const rooms = await openRentalRooms({ messenger, store: agentStore, client: agentClient, realtime: rt, transport: realtimeRentalTransport(rt, tap) });
    rooms.on('error', (e) => void errors.push(e));
    await messenger.start();
    await rt.connect();
    return { messenger, rooms, rt, received };
  }

  beforeAll(async () => {
    t = await startApp({ listen: true, env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000' } });
    // The developer's agent: an enrolled SDK device, certified and listed.
    const devOwner = await newOwner(t, 'Rental Dev Co');
    const dev = new ParleyClient({ baseUrl: t.baseUrl, ownerToken: devOwner.token });
    dev.setTenantId(devOwner.tenantId);
    const keys = DeviceIdentity.generate();
    agentClient = new ParleyClient({ baseUrl: t.baseUrl });
    const enrolled = await enroll(agentClient, (await dev.createInvite()).token, { identityPublicKey: keys.identityPublicKeyHex, ephemeralPublicKey: keys.ephemeralPublicKeyHex, sign: (m) => keys.sign(m), name: 'rented' });
    await dev.approveDevice(enrolled.device_id);
    agentClient.setDeviceToken((await activate(agentClient, enrolled.device_id, (m) => keys.sign(m))).device_jwt);
    agentIdentity = keys.withDeviceId(enrolled.device_id);
    const certified = await certifyAgent(t, await operatorAuth(t), devOwner, enrolled.device_id);
    // The renter: an owner device with its messenger, rental rooms sent over REST.
    const renterOwner = await newOwner(t, 'Rental Renter Inc');
    const renterClient = new ParleyClient({ baseUrl: t.baseUrl, ownerToken: renterOwner.token });
    renterClient.setTenantId(renterOwner.tenantId);
    renter = await ownerSide(renterClient, renterOwner.token, t.baseUrl);
    renter.messenger.on('error', (e) => void errors.push(e));
    renterRooms = await openRentalRooms({ messenger: renter.messenger, store: renter.store, client: renterClient, realtime: renter.rt, transport: restRentalTransport(renterClient, renter.od.device_id) });
    renterRooms.on('error', (e) => void errors.push(e));
    rentalId = await rentAgent(t, { owner: devOwner, ...certified }, renterOwner);
  });
  afterAll(async () => {
    renter?.rt.close();
    await t?.close();
  });

  it('the renter and the agent exchange end-to-end encrypted messages; the service stores ciphertext only', async () => {
    const agent = await agentSide();
    try {
      const question = `rental question ${Date.now()} (marmalade)`;
      const sent = await renterRooms.sendText(rentalId, question);
      expect(sent).toMatchObject({ room_id: rentalId, recipients: [agentIdentity.deviceId], deliveries: [{ recipient_device_id: agentIdentity.deviceId, outcome: 'delivered' }] });
      await waitFor(() => agent.received.length === 1, 'the agent decrypts the question');
      expect(text(agent.received[0]!)).toBe(question);
      expect(agent.received[0]).toMatchObject({ rental_id: rentalId, message_id: sent.room_message_id, sender_device_id: renter.od.device_id, conversation_id: rentalConversationId(rentalId, renter.od.device_id), protocol: 'x3dh-dr' });
      expect(agent.received[0]!.room_id).toBeUndefined();

      const answer = 'rental answer (quince)';
      const back = await agent.rooms.sendText(rentalId, answer, { message_type: 'artifact' });
      expect(back.deliveries).toEqual([{ recipient_device_id: renter.od.device_id, outcome: 'delivered' }]);
      await waitFor(() => renter.received.some((m) => m.rental_id === rentalId), 'the renter decrypts the answer');
      expect(renter.received.filter((m) => m.rental_id === rentalId).map(text)).toEqual([answer]);

      const report = await scanForPlaintext(t.app.parley.database, [question, answer, 'marmalade', 'quince']);
      expect(report.columns.some((c) => c.endsWith('marketplace_rental_messages.ciphertext'))).toBe(true);
      expect(report.leaks).toEqual([]);
    } finally {
      agent.rt.close();
      await agent.rooms.close();
      await agent.messenger.close();
    }
  });

  it('a restarted agent catches up what it missed, in order and once; no read receipt is sent for rental messages', async () => {
    const missed = ['while away 1', 'while away 2'];
    for (const m of missed) await renterRooms.sendText(rentalId, m);
    const agent = await agentSide();
    try {
      await waitFor(() => agent.received.length === 2, 'the agent catches up');
      expect(agent.received.map(text)).toEqual(missed);
      expect(agent.received.every((m) => m.rental_id === rentalId && !m.redelivered)).toBe(true);
      // Live again: the next one arrives once, after the caught-up ones.
      await renterRooms.sendText(rentalId, 'live again');
      await waitFor(() => agent.received.length === 3, 'the live message');
      expect(text(agent.received[2]!)).toBe('live again');
      await agent.rooms.catchUp(rentalId);
      expect(agent.received).toHaveLength(3);
      await expect(agent.messenger.markRead(agent.received[2]!)).rejects.toMatchObject({ code: 'no_transport' });
      expect(errors).toEqual([]);
    } finally {
      agent.rt.close();
      await agent.rooms.close();
      await agent.messenger.close();
    }
  });
});
