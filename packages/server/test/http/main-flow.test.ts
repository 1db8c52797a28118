/** The main job end to end over HTTP: tenant -> invite -> enroll -> approve -> activate -> message -> revoke. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activeAgent, newOwner, registerOwnerDevice } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';

describe('main flow', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(() => t.close());

  it('owner and agent exchange ciphertext; revocation ends the agent', async () => {
    const owner = await newOwner(t);
    const od = await registerOwnerDevice(t, owner);
    const agent = await activeAgent(t, owner);
    expect(agent.conversationId).toBeTruthy();

    const header = Buffer.from('hdr').toString('base64');
    const ct = Buffer.from([1, 2, 3, 4]).toString('base64');
    const sent = await t.request({
      method: 'POST',
      url: `/api/v1/conversations/${agent.conversationId}/messages`,
      headers: { ...owner.auth, 'x-device-id': od.deviceId },
      payload: { header_blob: header, ciphertext: ct },
    });
    expect(sent.status).toBe(201);
    expect(sent.body.sender_device_id).toBe(od.deviceId);

    const pending = await t.request({ method: 'GET', url: `/api/v1/devices/${agent.deviceId}/pending`, headers: agent.auth });
    expect(pending.body).toEqual({ device_id: agent.deviceId, pending: 1 });

    const hist = await t.request({ method: 'GET', url: `/api/v1/devices/${agent.deviceId}/messages`, headers: agent.auth });
    expect(hist.status).toBe(200);
    expect(hist.body.messages).toHaveLength(1);
    expect(hist.body.messages[0].ciphertext).toBe(ct);

    const after = await t.request({ method: 'GET', url: `/api/v1/devices/${agent.deviceId}/pending`, headers: agent.auth });
    expect(after.body.pending).toBe(0);

    const revoked = await t.request({ method: 'PATCH', url: `/api/v1/devices/${agent.deviceId}/revoke`, headers: owner.auth });
    expect(revoked.status).toBe(200);
    expect(revoked.body.status).toBe('REVOKED');
    const denied = await t.request({ method: 'GET', url: `/api/v1/devices/${agent.deviceId}/pending`, headers: agent.auth });
    expect(denied.status).toBe(403);
  });

  it('a device reads the counterparty keys of its own conversations only', async () => {
    const owner = await newOwner(t);
    const agent = await activeAgent(t, owner);
    const od = await registerOwnerDevice(t, owner); // registered after activation
    const conv = (await t.request({ method: 'GET', url: `/api/v1/conversations?device_id=${od.deviceId}`, headers: owner.auth })).body.conversations[0];
    const keys = await t.request({ method: 'GET', url: `/api/v1/conversations/${conv.conversation_id}/keys`, headers: agent.auth });
    expect(keys.status).toBe(200);
    expect(keys.body.device_id).toBe(od.deviceId);
    expect(keys.body.identity_public_key).toBe(od.keys.identityPublicKey);
    const stranger = await activeAgent(t, owner);
    const refused = await t.request({ method: 'GET', url: `/api/v1/conversations/${conv.conversation_id}/keys`, headers: stranger.auth });
    expect(refused.status).toBe(403);
  });
});

