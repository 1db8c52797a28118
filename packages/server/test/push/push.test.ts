/** Push registration routes (contract §4.7; design §8.36 "Push delivery") through the HTTP API. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newSubscription } from './push-fixtures.js';
import { activeAgent, createInvite, enroll, newOwner, registerOwnerDevice, type Agent, type Owner } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';

describe('POST /push/register', () => {
  let t: TestApp;
  let owner: Owner;
  let agent: Agent;
  let other: Owner;

  beforeAll(async () => {
    t = await startApp();
    owner = await newOwner(t);
    agent = await activeAgent(t, owner);
    other = await newOwner(t, 'Other');
  });
  afterAll(() => t?.close());

  const register = (headers: Record<string, string>, payload: object) => t.request({ method: 'POST', url: '/api/v1/push/register', headers, payload });

  it('registers a token for an ACTIVE device, idempotently per (device, token)', async () => {
    const device = await registerOwnerDevice(t, owner);
    const first = await register(owner.auth, { device_id: device.deviceId, platform: 'apns', token: 'apns-token-1' });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({ push_token_id: expect.any(String), device_id: device.deviceId, platform: 'apns' });
    const again = await register(owner.auth, { device_id: device.deviceId, platform: 'apns', token: 'apns-token-1' });
    expect(again.status).toBe(201);
    expect(again.body.push_token_id).toBe(first.body.push_token_id);
    const second = await register(owner.auth, { device_id: device.deviceId, platform: 'fcm', token: 'fcm-token-2' });
    expect(second.status).toBe(201);
    expect(second.body.push_token_id).not.toBe(first.body.push_token_id);
    const forAgent = await register(owner.auth, { device_id: agent.deviceId, platform: 'web', token: newSubscription('https://push.example.net/send/abc').token });
    expect(forAgent.status).toBe(201);
    const notSubscription = await register(owner.auth, { device_id: agent.deviceId, platform: 'web', token: 'https://push.example/abc' });
    expect(notSubscription.status).toBe(400);
  });

  it('lists the registrations without tokens and removes one (owner only, 404 when unknown)', async () => {
    const device = await registerOwnerDevice(t, owner);
    const made = await register(owner.auth, { device_id: device.deviceId, platform: 'fcm', token: 'fcm-secret-token-9' });
    const list = await t.request({ method: 'GET', url: '/api/v1/push/registrations', headers: owner.auth });
    expect(list.status).toBe(200);
    expect(list.body.registrations).toContainEqual({ push_token_id: made.body.push_token_id, device_id: device.deviceId, platform: 'fcm', created_at: expect.any(String) });
    expect(JSON.stringify(list.body)).not.toContain('fcm-secret-token-9');
    expect((await t.request({ method: 'GET', url: '/api/v1/push/registrations', headers: other.auth })).body.registrations).toEqual([]);
    const del = (headers: Record<string, string>) => t.request({ method: 'DELETE', url: `/api/v1/push/register/${made.body.push_token_id}`, headers });
    expect((await del(other.auth)).status).toBe(404);
    expect((await del(agent.auth)).status).toBe(403);
    expect((await del(owner.auth)).status).toBe(204);
    expect((await del(owner.auth)).status).toBe(404);
    const audit = await t.request({ method: 'GET', url: '/api/v1/audit/events?type=push.registration_removed', headers: owner.auth });
    expect(audit.body.events[0]).toMatchObject({ actor: owner.sub, subject: made.body.push_token_id, data: { device_id: device.deviceId, platform: 'fcm', reason: 'owner' } });
  });

  it('serves the VAPID public key without credentials: an uncompressed P-256 point', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/push/vapid-public-key' });
    expect(res.status).toBe(200);
    const point = Buffer.from(res.body.public_key, 'base64url');
    expect(point).toHaveLength(65);
    expect(point[0]).toBe(4);
  });

  it("answers 404 for another tenant's device and for a device that is not ACTIVE", async () => {
    const cross = await register(other.auth, { device_id: agent.deviceId, platform: 'fcm', token: 't' });
    expect(cross.status).toBe(404);
    const invite = await createInvite(t, owner);
    const { res } = await enroll(t, invite.token);
    expect(res.status).toBe(201);
    const pending = await register(owner.auth, { device_id: res.body.device_id, platform: 'fcm', token: 't' });
    expect(pending.status).toBe(404);
  });

  it('answers 400 for a bad body, 401 without credentials, 403 for a device JWT', async () => {
    expect((await register(owner.auth, { device_id: agent.deviceId, platform: 'sms', token: 't' })).status).toBe(400);
    expect((await register(owner.auth, { device_id: agent.deviceId, platform: 'fcm', token: '' })).status).toBe(400);
    expect((await register({}, { device_id: agent.deviceId, platform: 'fcm', token: 't' })).status).toBe(401);
    expect((await register(agent.auth, { device_id: agent.deviceId, platform: 'fcm', token: 't' })).status).toBe(403);
  });
});
