/**
 * Lifecycle defects: a hub registration without the owner key (contract §2.8) is refused; the owner
 * device that creates a room (X-Device-Id) is a member of it and can post to it.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activeAgent, newOwner, registerOwnerDevice, type Agent, type Owner, type OwnerDevice } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { hubOwnerKey } from '../../testing/keys.js';

describe('lifecycle defects', () => {
  let t: TestApp;
  let owner: Owner;
  let od: OwnerDevice;
  let agent: Agent;
  const rooms = async (o: Owner) => (await t.request({ method: 'GET', url: '/api/v1/rooms', headers: o.auth })).body.rooms as { room_id: string }[];

  beforeAll(async () => {
    t = await startApp({ env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000' } });
    owner = await newOwner(t);
    od = await registerOwnerDevice(t, owner);
    agent = await activeAgent(t, owner);
  });
  afterAll(() => t.close());

  it('POST /hub/register and /hub/identities without public_key are 400 {detail} and register nothing', async () => {
    for (const url of ['/api/v1/hub/register', '/api/v1/hub/identities']) {
      const address = `nokey-${randomUUID().slice(0, 8)}`;
      const res = await t.request({ method: 'POST', url, headers: owner.auth, payload: { hub_address: address, display_name: 'No key', device_id: agent.deviceId } });
      expect(res.status, url).toBe(400);
      expect(Object.keys(res.body)).toEqual(['detail']);
      expect(res.body.detail).toMatch(/public_key/);
    }
    expect((await t.request({ method: 'GET', url: '/api/v1/hub/identities', headers: owner.auth })).body.identities).toEqual([]);
    const key = hubOwnerKey();
    const ok = await t.request({ method: 'POST', url: '/api/v1/hub/register', headers: owner.auth, payload: { hub_address: `key-${randomUUID().slice(0, 8)}`, display_name: 'Keyed', public_key: key } });
    expect(ok.status).toBe(201);
    expect(ok.body.public_key).toBe(key);
  });

  describe('the creating owner device', () => {
    const envelopes = (to: string) => ({ envelopes: [{ recipient_device_id: to, header_blob: 'aGRy', ciphertext: 'b3BhcXVl' }] });

    it('joins the room it creates (X-Device-Id) and can post to it', async () => {
      const created = await t.request({ method: 'POST', url: '/api/v1/rooms', headers: { ...owner.auth, 'x-device-id': od.deviceId }, payload: { name: 'ops', member_device_ids: [agent.deviceId] } });
      expect(created.status).toBe(201);
      const members = (created.body.members as { device_id: string; kind: string }[]).map((m) => [m.device_id, m.kind]).sort();
      expect(members).toEqual([[agent.deviceId, 'agent'], [od.deviceId, 'owner']].sort());
      expect(created.body.conversations).toHaveLength(1);
      const post = await t.request({ method: 'POST', url: `/api/v1/rooms/${created.body.room_id}/messages`, headers: { ...owner.auth, 'x-device-id': od.deviceId }, payload: envelopes(agent.deviceId) });
      expect(post.status).toBe(201);
      // listing itself as well changes nothing (one membership)
      const listed = await t.request({ method: 'POST', url: '/api/v1/rooms', headers: { ...owner.auth, 'x-device-id': od.deviceId.toUpperCase() }, payload: { name: 'twice', member_device_ids: [agent.deviceId, od.deviceId] } });
      expect(listed.status).toBe(201);
      expect(listed.body.members).toHaveLength(2);
    });

    it('without X-Device-Id the members are exactly those listed; the owner device joins when it first sends', async () => {
      const created = await t.request({ method: 'POST', url: '/api/v1/rooms', headers: owner.auth, payload: { name: 'agents only', member_device_ids: [agent.deviceId] } });
      expect(created.status).toBe(201);
      expect(created.body.members.map((m: { device_id: string }) => m.device_id)).toEqual([agent.deviceId]);
      const post = await t.request({ method: 'POST', url: `/api/v1/rooms/${created.body.room_id}/messages`, headers: { ...owner.auth, 'x-device-id': od.deviceId }, payload: envelopes(agent.deviceId) });
      expect(post.status, JSON.stringify(post.body)).toBe(201);
      const room = await t.request({ method: 'GET', url: `/api/v1/rooms/${created.body.room_id}`, headers: owner.auth });
      expect(room.body.members.map((m: { device_id: string }) => m.device_id).sort()).toEqual([agent.deviceId, od.deviceId].sort());
    });

    it('X-Device-Id naming someone else’s device, an agent or no device is refused and creates nothing', async () => {
      const before = (await rooms(owner)).length;
      const other = await newOwner(t, 'Other');
      const foreign = await registerOwnerDevice(t, other);
      for (const [deviceId, status] of [[agent.deviceId, 403], [randomUUID(), 404], [foreign.deviceId, 404], ['nope', 400]] as const) {
        const res = await t.request({ method: 'POST', url: '/api/v1/rooms', headers: { ...owner.auth, 'x-device-id': deviceId }, payload: { name: 'x', member_device_ids: [agent.deviceId] } });
        expect(res.status, deviceId).toBe(status);
        expect(typeof res.body.detail).toBe('string');
      }
      expect((await rooms(owner)).length).toBe(before);
    });
  });
});
