/** Push registration (contract §4.7) and the logging push gateway. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LoggingPushGateway } from '../src/modules/push/gateway.js';
import { activeAgent, createInvite, enroll, newOwner, registerOwnerDevice, type Agent, type Owner } from './flows.js';
import { startApp, type TestApp } from './harness.js';

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
    const forAgent = await register(owner.auth, { device_id: agent.deviceId, platform: 'web', token: 'https://push.example/abc' });
    expect(forAgent.status).toBe(201);
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

describe('LoggingPushGateway', () => {
  it('logs the device id and platform, never the token', async () => {
    const lines: { obj: object; msg: string }[] = [];
    const gw = new LoggingPushGateway({ info: (obj, msg) => lines.push({ obj, msg }) });
    await gw.send({ tenantId: 't1', deviceId: 'd1', platform: 'apns', token: 'very-secret-token' }, { event: 'message', data: { conversation_id: 'c1' } });
    expect(lines).toHaveLength(1);
    expect(lines[0]!.obj).toMatchObject({ device_id: 'd1', platform: 'apns', event: 'message' });
    expect(JSON.stringify(lines)).not.toContain('very-secret-token');
  });
});
