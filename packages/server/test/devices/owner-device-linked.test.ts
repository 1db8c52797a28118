/**
 * `owner_device_linked` (contract §4.4, §6.1; design §7): an owner device registered after an agent
 * became ACTIVE gets a conversation with it, and the agent — enrolled (device JWT) or API-key —
 * is told on its socket, with the device's keys, so the new device can talk to it without the
 * agent restarting. A relink that creates nothing announces nothing.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { activeAgent, newOwner, registerOwnerDevice, type Agent, type Owner } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { keyAgent, type KeyAgent } from '../../testing/key-agents.js';
import { wsAddress, WsPool } from '../../testing/ws-client.js';

describe('owner_device_linked', () => {
  let t: TestApp;
  let owner: Owner;
  let enrolled: Agent;
  let keyed: KeyAgent;
  const pool = new WsPool();

  beforeAll(async () => {
    t = await startApp({ listen: true, env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000' } });
    owner = await newOwner(t, 'Linked Co');
    await registerOwnerDevice(t, owner);
    enrolled = await activeAgent(t, owner);
    keyed = await keyAgent(t, pool, owner, { tier: null });
  });
  afterEach(() => pool.closeAll());
  afterAll(() => t?.close());

  it('tells every agent about a new owner device and its conversation; a relink without new conversations tells nothing', async () => {
    const wsEnrolled = await pool.connect(wsAddress(t.wsUrl, { token: enrolled.jwt }));
    const wsKeyed = await pool.open(wsAddress(t.wsUrl, { token: keyed.apiKey }));
    const phone = await registerOwnerDevice(t, owner);
    const devices = await t.request({ method: 'GET', url: '/api/v1/devices', headers: owner.auth });
    const fingerprint = devices.body.devices.find((d: { device_id: string }) => d.device_id === phone.deviceId).fingerprint;
    const relinked = await t.request({ method: 'POST', url: `/api/v1/devices/${phone.deviceId}/relink`, headers: owner.auth });
    expect(relinked.status).toBe(200);
    const conversationWith = (agentId: string) => relinked.body.conversations.find((c: { agent_device_id: string }) => c.agent_device_id === agentId);

    for (const [ws, agentId] of [
      [wsEnrolled, enrolled.deviceId],
      [wsKeyed, keyed.deviceId],
    ] as const) {
      const c = conversationWith(agentId);
      const frame = await ws.next('owner_device_linked');
      expect(frame.data).toEqual({
        conversation_id: c.conversation_id,
        message_group_id: c.message_group_id,
        owner_device_id: phone.deviceId,
        identity_public_key: phone.keys.identityPublicKey,
        ephemeral_public_key: phone.keys.ephemeralPublicKey,
        fingerprint,
      });
      await ws.roundTrip();
      expect(ws.buffered('owner_device_linked')).toEqual([]);
    }
  });
});
