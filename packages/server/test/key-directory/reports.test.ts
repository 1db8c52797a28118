/**
 * Key-transparency reports (design §8.39): a device that refused a key, or found a key in its own
 * name it did not publish, tells its owners through every channel they watch: the audit log
 * (`key_directory.alert`), the `key_directory_alert` socket event on owner devices, and the
 * `key_directory.alert` webhook (ids and reason only, never the free-text detail). Bad input is
 * 400, no credentials 401.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activeAgent, newOwner, registerOwnerDevice, type Agent, type Owner, type OwnerDevice } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { Receiver, waitFor } from '../../testing/webhook-receiver.js';
import { connectWs, wsAddress, type WsClient } from '../../testing/ws-client.js';

describe('key directory reports', () => {
  let t: TestApp;
  let owner: Owner;
  let laptop: OwnerDevice;
  let agent: Agent;
  let ownerWs: WsClient;
  const rx = new Receiver();

  beforeAll(async () => {
    await rx.start();
    t = await startApp({ listen: true, env: { WEBHOOK_POLL_MS: '20', WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_ALLOW_HTTP: 'true' } });
    owner = await newOwner(t);
    laptop = await registerOwnerDevice(t, owner);
    agent = await activeAgent(t, owner);
    expect((await t.request({ method: 'PATCH', url: `/api/v1/devices/${laptop.deviceId}/webhook`, headers: owner.auth, payload: { url: `${rx.base}/owner` } })).status).toBe(200);
    ownerWs = await connectWs(wsAddress(t.wsUrl, { token: owner.token, device_id: laptop.deviceId }));
  });
  afterAll(async () => {
    await ownerWs?.close();
    await t?.close();
    await rx.close();
  });

  it('an agent refusing a key reaches the audit log, the owner sockets and the owner webhook', async () => {
    const label = `device/${laptop.deviceId}`;
    const res = await t.request({ method: 'POST', url: '/api/v1/key-directory/reports', headers: agent.auth, payload: { label, reason: 'verification_failed', detail: 'key transparency: the key served for it is not the one the key directory holds' } });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ accepted: true });
    const frame = await ownerWs.next('key_directory_alert', 5000);
    expect(frame.data).toMatchObject({ label, reason: 'verification_failed', device_id: agent.deviceId });
    const audit = await t.request({ method: 'GET', url: '/api/v1/audit/events?type=key_directory.alert', headers: owner.auth });
    expect(audit.body.events[0]).toMatchObject({ type: 'key_directory.alert', actor: `device:${agent.deviceId}`, subject: label });
    const hook = await waitFor(() => rx.to('/owner').find((r) => r.body.includes('key_directory.alert')), 'the webhook');
    const body = JSON.parse(hook.body);
    expect(body.data).toEqual({ label, reason: 'verification_failed', device_id: agent.deviceId, reported_at: expect.any(String) });
  });

  it('an owner session may report for its device (X-Device-Id); 400 for bad input, 401 without credentials', async () => {
    const ok = await t.request({ method: 'POST', url: '/api/v1/key-directory/reports', headers: { ...owner.auth, 'x-device-id': laptop.deviceId }, payload: { label: `device/${laptop.deviceId}`, reason: 'unpublished_key', detail: 'found a key it did not publish' } });
    expect(ok.status).toBe(202);
    const frame = await ownerWs.next((f) => f.event === 'key_directory_alert' && f.data.reason === 'unpublished_key', 5000);
    expect(frame.data.device_id).toBe(laptop.deviceId);
    const bad = await t.request({ method: 'POST', url: '/api/v1/key-directory/reports', headers: agent.auth, payload: { label: 'device/x', reason: 'because', detail: 'x' } });
    expect(bad.status).toBe(400);
    const empty = await t.request({ method: 'POST', url: '/api/v1/key-directory/reports', headers: agent.auth, payload: { label: 'device/x', reason: 'unpublished_key', detail: '' } });
    expect(empty.status).toBe(400);
    expect((await t.request({ method: 'POST', url: '/api/v1/key-directory/reports', payload: { label: 'device/x', reason: 'unpublished_key', detail: 'x' } })).status).toBe(401);
  });
});
