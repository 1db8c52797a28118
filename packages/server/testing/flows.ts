/** Reusable API flows for tests: tenant, owner device, invite, enroll, approve, activate. */
import { afterAll, beforeAll, expect } from 'vitest';
import { startApp, type StartOptions, type TestApp } from './harness.js';
import { newDeviceKeys, type DeviceKeys } from './keys.js';

export interface Owner {
  sub: string;
  token: string;
  tenantId: string;
  auth: { authorization: string };
}

export interface OwnerDevice {
  deviceId: string;
  keys: DeviceKeys;
}

export interface Agent {
  deviceId: string;
  keys: DeviceKeys;
  jwt: string;
  conversationId: string | null;
  groupId: string;
  defaultTopicId: string;
  auth: { authorization: string };
}

let counter = 0;

/** A new owner user with a new tenant. */
export async function newOwner(t: TestApp, name = 'Acme'): Promise<Owner> {
  const sub = `owner${++counter}-${Date.now()}@example.com`;
  const token = await t.ownerToken(sub);
  const res = await t.request({ method: 'POST', url: '/api/v1/tenants', headers: { authorization: `Bearer ${token}` }, payload: { name } });
  expect(res.status).toBe(201);
  return { sub, token, tenantId: res.body.tenant_id, auth: { authorization: `Bearer ${token}` } };
}

export async function registerOwnerDevice(t: TestApp, owner: Owner): Promise<OwnerDevice> {
  const keys = newDeviceKeys();
  const res = await t.request({
    method: 'POST',
    url: '/api/v1/devices/register',
    headers: owner.auth,
    payload: { identity_public_key: keys.identityPublicKey, ephemeral_public_key: keys.ephemeralPublicKey, name: 'laptop' },
  });
  expect(res.status).toBe(201);
  return { deviceId: res.body.device_id, keys };
}

export async function createInvite(t: TestApp, owner: Owner): Promise<{ id: string; token: string }> {
  const res = await t.request({ method: 'POST', url: '/api/v1/invites', headers: owner.auth, payload: {} });
  expect(res.status).toBe(201);
  return { id: res.body.id, token: res.body.token };
}

export async function enroll(t: TestApp, inviteToken: string, keys = newDeviceKeys()) {
  const res = await t.request({
    method: 'POST',
    url: '/api/v1/enroll',
    payload: {
      invite_token: inviteToken,
      identity_public_key: keys.identityPublicKey,
      ephemeral_public_key: keys.ephemeralPublicKey,
      proof_of_possession: keys.proof(),
      platform: 'node',
    },
  });
  return { res, keys };
}

/** Invite -> enroll -> approve -> activate: an ACTIVE agent with its device JWT. */
export async function activeAgent(t: TestApp, owner: Owner): Promise<Agent> {
  const invite = await createInvite(t, owner);
  const { res, keys } = await enroll(t, invite.token);
  expect(res.status).toBe(201);
  const deviceId = res.body.device_id as string;
  const approved = await t.request({ method: 'PATCH', url: `/api/v1/devices/${deviceId}/approve`, headers: owner.auth });
  expect(approved.status).toBe(200);
  const act = await t.request({ method: 'POST', url: `/api/v1/devices/${deviceId}/activate`, payload: { signature: keys.sign(`activate:${deviceId}`) } });
  expect(act.status).toBe(200);
  return {
    deviceId,
    keys,
    jwt: act.body.device_jwt,
    conversationId: act.body.conversation_id,
    groupId: act.body.message_group_id,
    defaultTopicId: act.body.default_topic_id,
    auth: { authorization: `Bearer ${act.body.device_jwt}` },
  };
}

/**
 * For the enclosing `describe`: an app (`opts`; by default enrollments unthrottled), a new owner
 * and one ACTIVE agent of it, made before its tests, the app closed after them. The fields are set
 * when `beforeAll` has run: read them inside tests and hooks.
 */
export function appWithAgent(opts: StartOptions = { env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000' } }): { t: TestApp; owner: Owner; agent: Agent } {
  const s = {} as { t: TestApp; owner: Owner; agent: Agent };
  beforeAll(async () => {
    s.t = await startApp(opts);
    s.owner = await newOwner(s.t);
    s.agent = await activeAgent(s.t, s.owner);
  });
  afterAll(() => s.t?.close());
  return s;
}
