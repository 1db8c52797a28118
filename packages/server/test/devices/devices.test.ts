/**
 * Device routes over HTTP (contract §2.3, §3.1, §4.4, §5, §7; design §5, §7): every transition of the
 * device state machine and each refused one, owner devices, webhooks, presence, keys, history,
 * relink, device-token renewal, authentication failures and tenant isolation.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { blake2b } from '@noble/hashes/blake2.js';
import { sql } from 'drizzle-orm';
import type { InjectOptions } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { DeviceTokenService } from '../../src/auth/device-tokens.js';
import { activeAgent, createInvite, enroll, newOwner, registerOwnerDevice, type Agent, type Owner, type OwnerDevice } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { LOW_ORDER_X25519, newDeviceKeys, SMALL_ORDER_ED25519, UNIVERSAL_SIGNATURE, type DeviceKeys } from '../../testing/keys.js';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const FINGERPRINT_RE = /^[0-9a-f]{4}( [0-9a-f]{4}){7}$/;

/** Wire shapes of design §7. */
interface DeviceJson {
  device_id: string;
  name: string;
  platform: string | null;
  status: string;
  kind: string;
  health: string;
  last_seen: string | null;
  fingerprint: string;
  webhook_url: string | null;
}
interface KeysJson {
  device_id: string;
  identity_public_key: string;
  ephemeral_public_key: string;
  fingerprint: string;
}
interface LinkJson {
  conversation_id: string;
  message_group_id: string;
  agent_device_id: string;
  owner_device_id: string;
}
interface MessageJson {
  message_id: string;
  conversation_id: string;
}

let t: TestApp;

beforeAll(async () => {
  t = await startApp({ env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000' } });
});
afterAll(() => t.close());
afterEach(() => {
  vi.useRealTimers();
});

interface Enrolled {
  deviceId: string;
  keys: DeviceKeys;
}

function expectedFingerprint(identityPublicKeyHex: string): string {
  const digest = blake2b(Buffer.from(identityPublicKeyHex, 'hex'), { dkLen: 32 }).subarray(0, 16);
  return Buffer.from(digest).toString('hex').match(/.{4}/g)!.join(' ');
}

async function pendingAgent(owner: Owner): Promise<Enrolled> {
  const inv = await createInvite(t, owner);
  const { res, keys } = await enroll(t, inv.token);
  expect(res.status).toBe(201);
  return { deviceId: res.body.device_id, keys };
}

async function approvedAgent(owner: Owner): Promise<Enrolled> {
  const d = await pendingAgent(owner);
  expect((await transition(owner, d.deviceId, 'approve')).status).toBe(200);
  return d;
}

const transition = (owner: Owner, id: string, action: 'approve' | 'reject' | 'revoke') =>
  t.request({ method: 'PATCH', url: `/api/v1/devices/${id}/${action}`, headers: owner.auth });

const activate = (id: string, signature: string) => t.request({ method: 'POST', url: `/api/v1/devices/${id}/activate`, payload: { signature } });

async function listDevices(owner: Owner): Promise<DeviceJson[]> {
  const res = await t.request({ method: 'GET', url: '/api/v1/devices', headers: owner.auth });
  expect(res.status).toBe(200);
  return res.body.devices;
}

/** The listed device `id` (the test fails when it is absent). */
async function listed(owner: Owner, id: string): Promise<DeviceJson> {
  const d = (await listDevices(owner)).find((x) => x.device_id === id);
  expect(d, `device ${id} listed`).toBeDefined();
  return d!;
}

/** Overwrite a device's stored identity key (a row written before keys were checked). */
async function setIdentityKey(deviceId: string, hex: string): Promise<void> {
  await t.app.parley.database.db.execute(sql`update devices set identity_public_key = ${hex} where id = ${deviceId}`);
}

async function tamperedOwnerToken(): Promise<string> {
  const good = await t.ownerToken(`tamper-${randomUUID()}@example.com`);
  const [h, p, s] = good.split('.');
  const sig = Buffer.from(s!, 'base64url');
  sig[0] = sig[0]! ^ 0xff;
  return `${h}.${p}.${sig.toString('base64url')}`;
}

async function sendOwnerMessage(owner: Owner, od: OwnerDevice, conversationId: string) {
  const res = await t.request({
    method: 'POST',
    url: `/api/v1/conversations/${conversationId}/messages`,
    headers: { ...owner.auth, 'x-device-id': od.deviceId },
    payload: { header_blob: Buffer.from('hdr').toString('base64'), ciphertext: randomBytes(16).toString('base64') },
  });
  expect(res.status).toBe(201);
  return res.body;
}

describe('GET /api/v1/devices', () => {
  it('lists the tenant devices with device_id, name, platform, status, kind, health, last_seen, fingerprint', async () => {
    const owner = await newOwner(t);
    const od = await registerOwnerDevice(t, owner);
    const agent = await activeAgent(t, owner);
    const pending = await pendingAgent(owner);
    const devices = await listDevices(owner);
    expect(devices.map((d) => d.device_id).sort()).toEqual([od.deviceId, agent.deviceId, pending.deviceId].sort());
    for (const d of devices) {
      for (const key of ['device_id', 'name', 'platform', 'status', 'kind', 'health', 'last_seen', 'fingerprint']) expect(d).toHaveProperty(key);
      expect(d.device_id).toMatch(UUID_RE);
      expect(typeof d.name).toBe('string');
      expect(['green', 'yellow', 'red']).toContain(d.health);
      expect(d.fingerprint).toMatch(FINGERPRINT_RE);
      expect(d.last_seen === null || !Number.isNaN(Date.parse(d.last_seen))).toBe(true);
    }
    const byId = new Map(devices.map((d) => [d.device_id, d]));
    expect(byId.get(od.deviceId)).toMatchObject({ kind: 'owner', status: 'ACTIVE', name: 'laptop', fingerprint: expectedFingerprint(od.keys.identityPublicKey) });
    expect(byId.get(agent.deviceId)).toMatchObject({ kind: 'agent', status: 'ACTIVE', platform: 'node', fingerprint: expectedFingerprint(agent.keys.identityPublicKey) });
    expect(byId.get(pending.deviceId)).toMatchObject({ kind: 'agent', status: 'PENDING' });
    // the agent was just activated and used: seen within 2 minutes
    const a = byId.get(agent.deviceId)!;
    expect(a.health).toBe('green');
    expect(Date.now() - Date.parse(a.last_seen!)).toBeLessThan(2 * 60_000);
  });

  it('shows only the caller tenant devices', async () => {
    const a = await newOwner(t, 'A');
    const b = await newOwner(t, 'B');
    const da = await pendingAgent(a);
    const db = await pendingAgent(b);
    const la = (await listDevices(a)).map((d) => d.device_id);
    const lb = (await listDevices(b)).map((d) => d.device_id);
    expect(la).toEqual([da.deviceId]);
    expect(lb).toEqual([db.deviceId]);
  });

  it('answers 401 without auth or with a bad token, 403 for a user with no tenant or a device token', async () => {
    const owner = await newOwner(t);
    const agent = await activeAgent(t, owner);
    for (const headers of [{}, { authorization: 'Bearer garbage' }, { authorization: `Bearer ${await tamperedOwnerToken()}` }]) {
      const res = await t.request({ method: 'GET', url: '/api/v1/devices', headers });
      expect(res.status).toBe(401);
      expect(typeof res.body.detail).toBe('string');
    }
    const lonely = await t.ownerToken(`lonely-${randomUUID()}@example.com`);
    expect((await t.request({ method: 'GET', url: '/api/v1/devices', headers: { authorization: `Bearer ${lonely}` } })).status).toBe(403);
    expect((await t.request({ method: 'GET', url: '/api/v1/devices', headers: agent.auth })).status).toBe(403);
  });

  it('X-Tenant-Id naming a tenant the user is not a member of answers 403; its own tenant answers 200', async () => {
    const a = await newOwner(t, 'A');
    const b = await newOwner(t, 'B');
    await pendingAgent(b);
    const wrong = await t.request({ method: 'GET', url: '/api/v1/devices', headers: { ...a.auth, 'x-tenant-id': b.tenantId } });
    expect(wrong.status).toBe(403);
    expect(typeof wrong.body.detail).toBe('string');
    const notUuid = await t.request({ method: 'GET', url: '/api/v1/devices', headers: { ...a.auth, 'x-tenant-id': 'nope' } });
    expect(notUuid.status).toBe(403);
    const right = await t.request({ method: 'GET', url: '/api/v1/devices', headers: { ...a.auth, 'x-tenant-id': a.tenantId } });
    expect(right.status).toBe(200);
    expect(right.body.devices).toHaveLength(0);
  });
});

describe('PATCH /api/v1/devices/{id}/approve', () => {
  it('PENDING -> APPROVED with 200 and the updated device', async () => {
    const owner = await newOwner(t);
    const d = await pendingAgent(owner);
    const res = await transition(owner, d.deviceId, 'approve');
    expect(res.status).toBe(200);
    expect(res.body.device_id).toBe(d.deviceId);
    expect(res.body.status).toBe('APPROVED');
    expect((await listed(owner, d.deviceId)).status).toBe('APPROVED');
  });

  it('answers 409 unless the device is PENDING', async () => {
    const owner = await newOwner(t);
    const approved = await approvedAgent(owner);
    const again = await transition(owner, approved.deviceId, 'approve');
    expect(again.status).toBe(409);
    expect(typeof again.body.detail).toBe('string');
    expect((await listed(owner, approved.deviceId)).status).toBe('APPROVED');

    const agent = await activeAgent(t, owner);
    expect((await transition(owner, agent.deviceId, 'approve')).status).toBe(409);
    expect((await listed(owner, agent.deviceId)).status).toBe('ACTIVE');

    const rejected = await pendingAgent(owner);
    expect((await transition(owner, rejected.deviceId, 'reject')).status).toBe(200);
    expect((await transition(owner, rejected.deviceId, 'approve')).status).toBe(409);
    expect((await listed(owner, rejected.deviceId)).status).toBe('REVOKED');
  });

  it('answers 400 for a non-uuid id and 404 for an unknown one', async () => {
    const owner = await newOwner(t);
    expect((await transition(owner, 'not-a-uuid', 'approve')).status).toBe(400);
    expect((await transition(owner, randomUUID(), 'approve')).status).toBe(404);
  });
});

describe('PATCH /api/v1/devices/{id}/reject', () => {
  it('PENDING -> REVOKED; the rejected device cannot activate and re-enrollment needs a new invite', async () => {
    const owner = await newOwner(t);
    const inv = await createInvite(t, owner);
    const { res: e, keys } = await enroll(t, inv.token);
    const id = e.body.device_id as string;
    const res = await transition(owner, id, 'reject');
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('REVOKED');
    expect((await listed(owner, id)).status).toBe('REVOKED');

    expect((await transition(owner, id, 'reject')).status).toBe(409);
    expect((await activate(id, keys.sign(`activate:${id}`))).status).toBe(403);

    // the old invite is spent; a new one enrolls the same keys as a new device
    expect((await enroll(t, inv.token, keys)).res.status).toBe(401);
    const again = await enroll(t, (await createInvite(t, owner)).token, keys);
    expect(again.res.status).toBe(201);
    expect(again.res.body.device_id).not.toBe(id);
    expect((await listed(owner, id)).status).toBe('REVOKED');
  });

  it('answers 409 for an APPROVED or ACTIVE device', async () => {
    const owner = await newOwner(t);
    const approved = await approvedAgent(owner);
    expect((await transition(owner, approved.deviceId, 'reject')).status).toBe(409);
    expect((await listed(owner, approved.deviceId)).status).toBe('APPROVED');
    const agent = await activeAgent(t, owner);
    expect((await transition(owner, agent.deviceId, 'reject')).status).toBe(409);
    expect((await listed(owner, agent.deviceId)).status).toBe('ACTIVE');
  });
});

describe('POST /api/v1/devices/{id}/activate', () => {
  it('APPROVED -> ACTIVE: device_jwt, the oldest owner device conversation, every ACTIVE owner key, all conversations', async () => {
    const owner = await newOwner(t);
    const od1 = await registerOwnerDevice(t, owner);
    const od2 = await registerOwnerDevice(t, owner);
    const odRevoked = await registerOwnerDevice(t, owner);
    expect((await transition(owner, odRevoked.deviceId, 'revoke')).status).toBe(200);
    const odRemoved = await registerOwnerDevice(t, owner);
    const rm = await t.request({ method: 'DELETE', url: `/api/v1/devices/${odRemoved.deviceId}/remove`, headers: { ...owner.auth, 'x-device-id': od1.deviceId } });
    expect(rm.status).toBe(204);

    const d = await approvedAgent(owner);
    const res = await activate(d.deviceId, d.keys.sign(`activate:${d.deviceId}`));
    expect(res.status).toBe(200);
    const body = res.body;
    expect(body.device_id).toBe(d.deviceId);
    expect(typeof body.device_jwt).toBe('string');
    expect(body.device_jwt.split('.')).toHaveLength(3);

    const keys = (body.owner_public_keys as KeysJson[]).sort((x, y) => x.device_id.localeCompare(y.device_id));
    const expectedKeys = [od1, od2]
      .map((o) => ({
        device_id: o.deviceId,
        identity_public_key: o.keys.identityPublicKey,
        ephemeral_public_key: o.keys.ephemeralPublicKey,
        fingerprint: expectedFingerprint(o.keys.identityPublicKey),
      }))
      .sort((x, y) => x.device_id.localeCompare(y.device_id));
    expect(keys).toEqual(expectedKeys);

    const convs = body.conversations as LinkJson[];
    expect(convs).toHaveLength(2);
    expect(convs.map((c) => c.owner_device_id).sort()).toEqual([od1.deviceId, od2.deviceId].sort());
    for (const c of convs) {
      expect(c.agent_device_id).toBe(d.deviceId);
      expect(c.conversation_id).toMatch(UUID_RE);
      expect(c.message_group_id).toBe(body.message_group_id);
    }
    expect(new Set(convs.map((c) => c.conversation_id)).size).toBe(2);
    expect(body.conversation_id).toBe(convs.find((c) => c.owner_device_id === od1.deviceId)?.conversation_id);

    expect((await listed(owner, d.deviceId)).status).toBe('ACTIVE');
    const pending = await t.request({ method: 'GET', url: `/api/v1/devices/${d.deviceId}/pending`, headers: { authorization: `Bearer ${body.device_jwt}` } });
    expect(pending.status).toBe(200);
    expect(pending.body).toEqual({ device_id: d.deviceId, pending: 0 });
  });

  it('with no ACTIVE owner device: no conversation yet and no owner keys', async () => {
    const owner = await newOwner(t);
    const d = await approvedAgent(owner);
    const res = await activate(d.deviceId, d.keys.sign(`activate:${d.deviceId}`));
    expect(res.status).toBe(200);
    expect(res.body.conversation_id).toBeNull();
    expect(res.body.conversations).toEqual([]);
    expect(res.body.owner_public_keys).toEqual([]);
  });

  it('answers 401 for a wrong signature and leaves the device APPROVED', async () => {
    const owner = await newOwner(t);
    const d = await approvedAgent(owner);
    const other = newDeviceKeys();
    for (const sig of [
      other.sign(`activate:${d.deviceId}`),
      d.keys.sign(`activate:${randomUUID()}`),
      d.keys.sign(d.deviceId),
      d.keys.proof(),
      '00'.repeat(64),
    ]) {
      const res = await activate(d.deviceId, sig);
      expect(res.status).toBe(401);
      expect(typeof res.body.detail).toBe('string');
    }
    expect((await listed(owner, d.deviceId)).status).toBe('APPROVED');
    expect((await activate(d.deviceId, d.keys.sign(`activate:${d.deviceId}`))).status).toBe(200);
  });

  it('answers 409 for a PENDING or already ACTIVE device and 403 for a REVOKED one', async () => {
    const owner = await newOwner(t);
    const p = await pendingAgent(owner);
    const res = await activate(p.deviceId, p.keys.sign(`activate:${p.deviceId}`));
    expect(res.status).toBe(409);
    expect((await listed(owner, p.deviceId)).status).toBe('PENDING');

    const agent = await activeAgent(t, owner);
    expect((await activate(agent.deviceId, agent.keys.sign(`activate:${agent.deviceId}`))).status).toBe(409);

    expect((await transition(owner, agent.deviceId, 'revoke')).status).toBe(200);
    const revoked = await activate(agent.deviceId, agent.keys.sign(`activate:${agent.deviceId}`));
    expect(revoked.status).toBe(403);
    expect((await listed(owner, agent.deviceId)).status).toBe('REVOKED');
  });

  it('answers 400 when the stored identity key is of small order, even with the signature that verifies for any message; the device stays APPROVED', async () => {
    const owner = await newOwner(t);
    const d = await approvedAgent(owner);
    await setIdentityKey(d.deviceId, SMALL_ORDER_ED25519);
    const res = await activate(d.deviceId, UNIVERSAL_SIGNATURE);
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/small order/);
    expect((await listed(owner, d.deviceId)).status).toBe('APPROVED');
  });

  it('answers 400 for bad input and 404 for an unknown device', async () => {
    const owner = await newOwner(t);
    const d = await approvedAgent(owner);
    expect((await activate('not-a-uuid', d.keys.sign('activate:not-a-uuid'))).status).toBe(400);
    expect((await activate(d.deviceId, 'abc')).status).toBe(400);
    expect((await activate(d.deviceId, 'z'.repeat(128))).status).toBe(400);
    expect((await t.request({ method: 'POST', url: `/api/v1/devices/${d.deviceId}/activate`, payload: {} })).status).toBe(400);
    const id = randomUUID();
    expect((await activate(id, d.keys.sign(`activate:${id}`))).status).toBe(404);
    expect((await listed(owner, d.deviceId)).status).toBe('APPROVED');
  });
});

describe('PATCH /api/v1/devices/{id}/revoke', () => {
  it('ACTIVE -> REVOKED; afterwards every call with the device JWT answers 403', async () => {
    const owner = await newOwner(t);
    const od = await registerOwnerDevice(t, owner);
    const agent = await activeAgent(t, owner);
    const other = await activeAgent(t, owner);
    const challenge = await t.request({ method: 'POST', url: `/api/v1/devices/${agent.deviceId}/token/challenge` });
    expect(challenge.status).toBe(201);

    const res = await transition(owner, agent.deviceId, 'revoke');
    expect(res.status).toBe(200);
    expect(res.body.device_id).toBe(agent.deviceId);
    expect(res.body.status).toBe('REVOKED');
    expect((await listed(owner, agent.deviceId)).status).toBe('REVOKED');

    const calls: InjectOptions[] = [
      { method: 'GET', url: `/api/v1/devices/${agent.deviceId}/messages` },
      { method: 'GET', url: `/api/v1/devices/${agent.deviceId}/pending` },
      { method: 'GET', url: `/api/v1/devices/${other.deviceId}/pending` },
      { method: 'PATCH', url: '/api/v1/devices/self/webhook', payload: { url: 'https://hook.example.invalid/hook' } },
      { method: 'GET', url: '/api/v1/devices' },
      { method: 'GET', url: '/api/v1/conversations' },
      { method: 'POST', url: `/api/v1/conversations/${agent.conversationId}/messages`, payload: { header_blob: 'aGRy', ciphertext: 'AQID' } },
    ];
    for (const c of calls) {
      const r = await t.request({ ...c, headers: agent.auth });
      expect(r.status, `${c.method} ${c.url}`).toBe(403);
      expect(typeof r.body.detail).toBe('string');
    }
    // proof-of-possession routes refuse the revoked device too (a challenge is handed to any id, but renews nothing)
    const newChallenge = await t.request({ method: 'POST', url: `/api/v1/devices/${agent.deviceId}/token/challenge` });
    expect(newChallenge.status).toBe(201);
    const renew = await t.request({
      method: 'POST',
      url: `/api/v1/devices/${agent.deviceId}/token`,
      payload: { challenge: challenge.body.challenge, signature: agent.keys.sign(challenge.body.challenge) },
    });
    expect(renew.status).toBe(403);
    expect((await activate(agent.deviceId, agent.keys.sign(`activate:${agent.deviceId}`))).status).toBe(403);

    // unaffected: the other agent and the owner device
    expect((await t.request({ method: 'GET', url: `/api/v1/devices/${other.deviceId}/pending`, headers: other.auth })).status).toBe(200);
    expect((await listed(owner, od.deviceId)).status).toBe('ACTIVE');
  });

  it('revoking a REVOKED device answers 409', async () => {
    const owner = await newOwner(t);
    const agent = await activeAgent(t, owner);
    expect((await transition(owner, agent.deviceId, 'revoke')).status).toBe(200);
    const again = await transition(owner, agent.deviceId, 'revoke');
    expect(again.status).toBe(409);
    expect(typeof again.body.detail).toBe('string');
  });

  it('the status poll shows REVOKED', async () => {
    const owner = await newOwner(t);
    const agent = await activeAgent(t, owner);
    expect((await transition(owner, agent.deviceId, 'revoke')).status).toBe(200);
    const s = await t.request({ method: 'GET', url: `/api/v1/devices/${agent.deviceId}/status` });
    expect(s.status).toBe(200);
    expect(s.body).toEqual({ device_id: agent.deviceId, status: 'REVOKED' });
  });
});

describe('DELETE /api/v1/devices/{id}', () => {
  it('answers 409 unless the device is REVOKED, and keeps it', async () => {
    const owner = await newOwner(t);
    const p = await pendingAgent(owner);
    const a = await approvedAgent(owner);
    const act = await activeAgent(t, owner);
    for (const id of [p.deviceId, a.deviceId, act.deviceId]) {
      const res = await t.request({ method: 'DELETE', url: `/api/v1/devices/${id}`, headers: owner.auth });
      expect(res.status).toBe(409);
      expect(typeof res.body.detail).toBe('string');
    }
    expect((await listDevices(owner)).map((d) => d.device_id).sort()).toEqual([p.deviceId, a.deviceId, act.deviceId].sort());
  });

  it('REVOKED: 204, then absent from the list and 404; the owner keeps the conversation history', async () => {
    const owner = await newOwner(t);
    const od = await registerOwnerDevice(t, owner);
    const agent = await activeAgent(t, owner);
    const msg = await sendOwnerMessage(owner, od, agent.conversationId!);
    expect((await transition(owner, agent.deviceId, 'revoke')).status).toBe(200);

    const res = await t.request({ method: 'DELETE', url: `/api/v1/devices/${agent.deviceId}`, headers: owner.auth });
    expect(res.status).toBe(204);
    expect(res.body).toBeUndefined();
    expect((await listDevices(owner)).map((d) => d.device_id)).toEqual([od.deviceId]);

    expect((await t.request({ method: 'DELETE', url: `/api/v1/devices/${agent.deviceId}`, headers: owner.auth })).status).toBe(404);
    expect((await t.request({ method: 'GET', url: `/api/v1/devices/${agent.deviceId}/keys`, headers: owner.auth })).status).toBe(404);
    expect((await t.request({ method: 'GET', url: `/api/v1/devices/${agent.deviceId}/status` })).status).toBe(404);

    const hist = await t.request({ method: 'GET', url: `/api/v1/conversations/${agent.conversationId}/messages`, headers: owner.auth });
    expect(hist.status).toBe(200);
    expect((hist.body.messages as MessageJson[]).map((m) => m.message_id)).toEqual([msg.message_id]);

    // the deleted device's JWT is still refused
    expect((await t.request({ method: 'GET', url: `/api/v1/devices/${agent.deviceId}/pending`, headers: agent.auth })).status).toBe(403);
  });

  it('a rejected device can be deleted', async () => {
    const owner = await newOwner(t);
    const p = await pendingAgent(owner);
    expect((await transition(owner, p.deviceId, 'reject')).status).toBe(200);
    expect((await t.request({ method: 'DELETE', url: `/api/v1/devices/${p.deviceId}`, headers: owner.auth })).status).toBe(204);
    expect((await listDevices(owner)).map((d) => d.device_id)).not.toContain(p.deviceId);
  });
});

describe('DELETE /api/v1/devices/{id}/remove', () => {
  it('requires X-Device-Id: 400 without it or when it is not a uuid', async () => {
    const owner = await newOwner(t);
    const od1 = await registerOwnerDevice(t, owner);
    const od2 = await registerOwnerDevice(t, owner);
    const url = `/api/v1/devices/${od2.deviceId}/remove`;
    const none = await t.request({ method: 'DELETE', url, headers: owner.auth });
    expect(none.status).toBe(400);
    expect(typeof none.body.detail).toBe('string');
    expect((await t.request({ method: 'DELETE', url, headers: { ...owner.auth, 'x-device-id': '' } })).status).toBe(400);
    expect((await t.request({ method: 'DELETE', url, headers: { ...owner.auth, 'x-device-id': 'laptop' } })).status).toBe(400);
    expect((await listed(owner, od2.deviceId)).status).toBe('ACTIVE');
    expect((await listed(owner, od1.deviceId)).status).toBe('ACTIVE');
  });

  it('removes an owner device: 204, absent from the list, no longer relinkable', async () => {
    const owner = await newOwner(t);
    const od1 = await registerOwnerDevice(t, owner);
    const od2 = await registerOwnerDevice(t, owner);
    const res = await t.request({ method: 'DELETE', url: `/api/v1/devices/${od2.deviceId}/remove`, headers: { ...owner.auth, 'x-device-id': od1.deviceId } });
    expect(res.status).toBe(204);
    expect(res.body).toBeUndefined();
    expect((await listDevices(owner)).map((d) => d.device_id)).toEqual([od1.deviceId]);
    expect((await t.request({ method: 'POST', url: `/api/v1/devices/${od2.deviceId}/relink`, headers: owner.auth })).status).toBe(404);
    expect((await t.request({ method: 'GET', url: `/api/v1/devices/${od2.deviceId}/keys`, headers: owner.auth })).status).toBe(404);
    // an agent activated afterwards gets neither the removed device's keys nor a conversation with it
    const d = await approvedAgent(owner);
    const act = await activate(d.deviceId, d.keys.sign(`activate:${d.deviceId}`));
    expect(act.status).toBe(200);
    expect((act.body.owner_public_keys as KeysJson[]).map((k) => k.device_id)).toEqual([od1.deviceId]);
    expect((act.body.conversations as LinkJson[]).map((c) => c.owner_device_id)).toEqual([od1.deviceId]);
  });

  it('refuses an agent device named in X-Device-Id (403) and an agent device as the target', async () => {
    const owner = await newOwner(t);
    const od = await registerOwnerDevice(t, owner);
    const agent = await activeAgent(t, owner);
    const viaAgent = await t.request({ method: 'DELETE', url: `/api/v1/devices/${od.deviceId}/remove`, headers: { ...owner.auth, 'x-device-id': agent.deviceId } });
    expect(viaAgent.status).toBe(403);
    const agentTarget = await t.request({ method: 'DELETE', url: `/api/v1/devices/${agent.deviceId}/remove`, headers: { ...owner.auth, 'x-device-id': od.deviceId } });
    expect(agentTarget.status).toBeGreaterThanOrEqual(400);
    expect(agentTarget.status).toBeLessThan(500);
    expect((await listed(owner, agent.deviceId)).status).toBe('ACTIVE');
    expect((await listed(owner, od.deviceId)).status).toBe('ACTIVE');
  });
});

describe('PATCH /api/v1/devices/{id} (rename)', () => {
  it('renames a device', async () => {
    const owner = await newOwner(t);
    const d = await pendingAgent(owner);
    const res = await t.request({ method: 'PATCH', url: `/api/v1/devices/${d.deviceId}`, headers: owner.auth, payload: { name: 'build-bot' } });
    expect(res.status).toBe(200);
    expect(res.body.device_id).toBe(d.deviceId);
    expect(res.body.name).toBe('build-bot');
    expect(res.body.status).toBe('PENDING');
    expect((await listed(owner, d.deviceId)).name).toBe('build-bot');
  });

  it('answers 400 for a bad name and keeps the old one', async () => {
    const owner = await newOwner(t);
    const d = await pendingAgent(owner);
    const before = (await listed(owner, d.deviceId)).name;
    for (const payload of [{}, { name: '' }, { name: 'x'.repeat(101) }, { name: { first: 'a' } }, { name: null }]) {
      const res = await t.request({ method: 'PATCH', url: `/api/v1/devices/${d.deviceId}`, headers: owner.auth, payload });
      expect(res.status, JSON.stringify(payload)).toBe(400);
      expect(typeof res.body.detail).toBe('string');
    }
    expect((await t.request({ method: 'PATCH', url: '/api/v1/devices/not-a-uuid', headers: owner.auth, payload: { name: 'x' } })).status).toBe(400);
    expect((await t.request({ method: 'PATCH', url: `/api/v1/devices/${randomUUID()}`, headers: owner.auth, payload: { name: 'x' } })).status).toBe(404);
    expect((await listed(owner, d.deviceId)).name).toBe(before);
  });
});

describe('webhooks', () => {
  it('PATCH /devices/{id}/webhook registers (secret whsec_…, once), re-registers with a new secret, and clears with null', async () => {
    const owner = await newOwner(t);
    const agent = await activeAgent(t, owner);
    const url = `/api/v1/devices/${agent.deviceId}/webhook`;
    const set = await t.request({ method: 'PATCH', url, headers: owner.auth, payload: { url: 'https://hook.example.invalid/hook' } });
    expect(set.status).toBe(200);
    expect(set.body.device_id).toBe(agent.deviceId);
    expect(set.body.webhook_url).toBe('https://hook.example.invalid/hook');
    expect(set.body.secret).toMatch(/^whsec_.{16,}$/);
    const l = await listed(owner, agent.deviceId);
    expect(l.webhook_url).toBe('https://hook.example.invalid/hook');
    expect(JSON.stringify(await listDevices(owner))).not.toContain(set.body.secret);

    const reset = await t.request({ method: 'PATCH', url, headers: owner.auth, payload: { url: 'https://example.org/other' } });
    expect(reset.status).toBe(200);
    expect(reset.body.secret).toMatch(/^whsec_/);
    expect(reset.body.secret).not.toBe(set.body.secret);

    const clear = await t.request({ method: 'PATCH', url, headers: owner.auth, payload: { url: null } });
    expect(clear.status).toBe(200);
    expect(clear.body.webhook_url).toBeNull();
    expect(clear.body.secret ?? null).toBeNull();
    expect((await listed(owner, agent.deviceId)).webhook_url).toBeNull();
  });

  it('PATCH /devices/{id}/webhook answers 400 for a bad url and 404 for an unknown device', async () => {
    const owner = await newOwner(t);
    const agent = await activeAgent(t, owner);
    const url = `/api/v1/devices/${agent.deviceId}/webhook`;
    for (const payload of [{}, { url: 'not a url' }, { url: 'ftp://example.com/x' }, { url: { href: 'https://example.invalid' } }, { url: 5 }]) {
      const res = await t.request({ method: 'PATCH', url, headers: owner.auth, payload });
      expect(res.status, JSON.stringify(payload)).toBe(400);
    }
    expect((await listed(owner, agent.deviceId)).webhook_url).toBeNull();
    expect((await t.request({ method: 'PATCH', url: `/api/v1/devices/${randomUUID()}/webhook`, headers: owner.auth, payload: { url: 'https://example.invalid' } })).status).toBe(404);
  });

  it('PATCH /devices/self/webhook with a device JWT sets and clears the caller webhook', async () => {
    const owner = await newOwner(t);
    const agent = await activeAgent(t, owner);
    const other = await activeAgent(t, owner);
    const set = await t.request({ method: 'PATCH', url: '/api/v1/devices/self/webhook', headers: agent.auth, payload: { url: 'https://agent.example.invalid/in' } });
    expect(set.status).toBe(200);
    expect(set.body.device_id).toBe(agent.deviceId);
    expect(set.body.webhook_url).toBe('https://agent.example.invalid/in');
    expect(set.body.secret).toMatch(/^whsec_/);
    expect((await listed(owner, agent.deviceId)).webhook_url).toBe('https://agent.example.invalid/in');
    expect((await listed(owner, other.deviceId)).webhook_url).toBeNull();

    const bad = await t.request({ method: 'PATCH', url: '/api/v1/devices/self/webhook', headers: agent.auth, payload: { url: 'javascript:alert(1)' } });
    expect(bad.status).toBe(400);

    const clear = await t.request({ method: 'PATCH', url: '/api/v1/devices/self/webhook', headers: agent.auth, payload: { url: null } });
    expect(clear.status).toBe(200);
    expect(clear.body.webhook_url).toBeNull();
    expect(clear.body.secret ?? null).toBeNull();
    expect((await listed(owner, agent.deviceId)).webhook_url).toBeNull();
  });

  it('PATCH /devices/self/webhook answers 401 without auth or with a bad token', async () => {
    for (const headers of [{}, { authorization: 'Bearer garbage' }, { authorization: `Bearer ${await tamperedOwnerToken()}` }]) {
      const res = await t.request({ method: 'PATCH', url: '/api/v1/devices/self/webhook', headers, payload: { url: 'https://example.invalid' } });
      expect(res.status).toBe(401);
    }
  });
});

describe('GET /api/v1/devices/{id}/presence and /keys', () => {
  it('presence answers online, last_seen and health', async () => {
    const owner = await newOwner(t);
    const agent = await activeAgent(t, owner);
    const res = await t.request({ method: 'GET', url: `/api/v1/devices/${agent.deviceId}/presence`, headers: owner.auth });
    expect(res.status).toBe(200);
    expect(res.body.device_id).toBe(agent.deviceId);
    expect(res.body.online).toBe(false); // no socket open
    expect(typeof res.body.last_seen).toBe('string');
    expect(res.body.health).toBe('green');
    expect((await t.request({ method: 'GET', url: `/api/v1/devices/${randomUUID()}/presence`, headers: owner.auth })).status).toBe(404);
    expect((await t.request({ method: 'GET', url: '/api/v1/devices/nope/presence', headers: owner.auth })).status).toBe(400);
  });

  it('keys answers the public keys and fingerprint', async () => {
    const owner = await newOwner(t);
    const d = await pendingAgent(owner);
    const res = await t.request({ method: 'GET', url: `/api/v1/devices/${d.deviceId}/keys`, headers: owner.auth });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      device_id: d.deviceId,
      identity_public_key: d.keys.identityPublicKey,
      ephemeral_public_key: d.keys.ephemeralPublicKey,
      fingerprint: expectedFingerprint(d.keys.identityPublicKey),
    });
    expect((await t.request({ method: 'GET', url: `/api/v1/devices/${randomUUID()}/keys`, headers: owner.auth })).status).toBe(404);
    expect((await t.request({ method: 'GET', url: '/api/v1/devices/nope/keys', headers: owner.auth })).status).toBe(400);
  });
});

describe('GET /api/v1/devices/{id}/messages and /pending (device JWT)', () => {
  it('answer for the calling device; another device id answers 403', async () => {
    const owner = await newOwner(t);
    const od = await registerOwnerDevice(t, owner);
    const agent = await activeAgent(t, owner);
    const other = await activeAgent(t, owner);

    const empty = await t.request({ method: 'GET', url: `/api/v1/devices/${agent.deviceId}/messages`, headers: agent.auth });
    expect(empty.status).toBe(200);
    expect(empty.body.messages).toEqual([]);
    expect((await t.request({ method: 'GET', url: `/api/v1/devices/${agent.deviceId}/pending`, headers: agent.auth })).body).toEqual({
      device_id: agent.deviceId,
      pending: 0,
    });

    const m1 = await sendOwnerMessage(owner, od, agent.conversationId!);
    const m2 = await sendOwnerMessage(owner, od, agent.conversationId!);
    await sendOwnerMessage(owner, od, other.conversationId!);
    const pending = await t.request({ method: 'GET', url: `/api/v1/devices/${agent.deviceId}/pending`, headers: agent.auth });
    expect(pending.body).toEqual({ device_id: agent.deviceId, pending: 2 });
    const hist = await t.request({ method: 'GET', url: `/api/v1/devices/${agent.deviceId}/messages`, headers: agent.auth });
    expect(hist.status).toBe(200);
    expect((hist.body.messages as MessageJson[]).map((m) => m.message_id)).toEqual([m1.message_id, m2.message_id]);
    expect((hist.body.messages as MessageJson[]).every((m) => m.conversation_id === agent.conversationId)).toBe(true);

    for (const id of [other.deviceId, od.deviceId, randomUUID()]) {
      for (const path of ['messages', 'pending']) {
        const res = await t.request({ method: 'GET', url: `/api/v1/devices/${id}/${path}`, headers: agent.auth });
        expect(res.status, `${path} of ${id}`).toBe(403);
        expect(typeof res.body.detail).toBe('string');
      }
    }
    // the other agent's message was not delivered by those refused calls
    expect((await t.request({ method: 'GET', url: `/api/v1/devices/${other.deviceId}/pending`, headers: other.auth })).body.pending).toBe(1);
  });

  it('pending counts what is addressed to the device and not delivered: a fetch delivers, a deleted message leaves the count with its receipt', async () => {
    const owner = await newOwner(t);
    const od = await registerOwnerDevice(t, owner);
    const agent = await activeAgent(t, owner);
    const pending = async () => (await t.request({ method: 'GET', url: `/api/v1/devices/${agent.deviceId}/pending`, headers: agent.auth })).body.pending;
    const receipts = async (ids: string[]) =>
      ((await t.app.parley.database.db.execute(sql`select count(*)::int as n from message_receipts where message_id = any(${`{${ids.join(',')}}`}::uuid[])`)) as unknown as { rows: { n: number }[] }).rows[0]!.n;

    const sent = [];
    for (let i = 0; i < 3; i++) sent.push(await sendOwnerMessage(owner, od, agent.conversationId!));
    expect(await pending()).toBe(3);
    const hist = await t.request({ method: 'GET', url: `/api/v1/devices/${agent.deviceId}/messages`, headers: agent.auth });
    expect((hist.body.messages as MessageJson[]).map((m) => m.message_id)).toEqual(sent.map((m) => m.message_id));
    expect(await pending()).toBe(0);
    expect(await receipts(sent.map((m) => m.message_id))).toBe(3);
    // fetching again delivers nothing twice
    await t.request({ method: 'GET', url: `/api/v1/devices/${agent.deviceId}/messages`, headers: agent.auth });
    expect(await pending()).toBe(0);

    const late = await sendOwnerMessage(owner, od, agent.conversationId!);
    expect(await pending()).toBe(1);
    // deleting messages (one delivered, one not) takes them off the counts and deletes the receipt
    await t.app.parley.database.db.execute(sql`delete from messages where id = any(${`{${sent[0]!.message_id},${late.message_id}}`}::uuid[])`);
    expect(await pending()).toBe(0);
    expect(await receipts([sent[0]!.message_id])).toBe(0);
    expect(await receipts([sent[1]!.message_id, sent[2]!.message_id])).toBe(2);
    await sendOwnerMessage(owner, od, agent.conversationId!);
    expect(await pending()).toBe(1);
  });

  it('answer 401 without auth or with a bad token, 400 for a non-uuid id', async () => {
    const owner = await newOwner(t);
    const agent = await activeAgent(t, owner);
    const [h, p, s] = agent.jwt.split('.');
    const sig = Buffer.from(s!, 'base64url');
    sig[5] = sig[5]! ^ 0x01;
    const tampered = `${h}.${p}.${sig.toString('base64url')}`;
    for (const path of ['messages', 'pending']) {
      for (const headers of [{}, { authorization: 'Bearer garbage' }, { authorization: `Bearer ${tampered}` }]) {
        const res = await t.request({ method: 'GET', url: `/api/v1/devices/${agent.deviceId}/${path}`, headers });
        expect(res.status, `${path} ${JSON.stringify(headers).slice(0, 30)}`).toBe(401);
      }
      expect((await t.request({ method: 'GET', url: `/api/v1/devices/not-a-uuid/${path}`, headers: agent.auth })).status).toBe(400);
    }
  });
});

describe('POST /api/v1/devices/register', () => {
  it('registers an ACTIVE owner device with conversations to every ACTIVE agent', async () => {
    const owner = await newOwner(t);
    const agent = await activeAgent(t, owner); // no owner device yet
    const keys = newDeviceKeys();
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/devices/register',
      headers: owner.auth,
      payload: { identity_public_key: keys.identityPublicKey, ephemeral_public_key: keys.ephemeralPublicKey, name: 'phone', platform: 'ios' },
    });
    expect(res.status).toBe(201);
    expect(res.body.device_id).toMatch(UUID_RE);
    expect(res.body.status).toBe('ACTIVE');
    expect(res.body.fingerprint).toBe(expectedFingerprint(keys.identityPublicKey));
    expect(res.body.conversations).toHaveLength(1);
    expect(res.body.conversations[0]).toMatchObject({ agent_device_id: agent.deviceId, owner_device_id: res.body.device_id, message_group_id: agent.groupId });
    expect(await listed(owner, res.body.device_id)).toMatchObject({ kind: 'owner', status: 'ACTIVE', name: 'phone', platform: 'ios' });
  });

  it('answers 400 for malformed keys or fields, a small-order or non-canonical identity key, a low-order ephemeral key', async () => {
    const owner = await newOwner(t);
    const keys = newDeviceKeys();
    const good = { identity_public_key: keys.identityPublicKey, ephemeral_public_key: keys.ephemeralPublicKey };
    for (const payload of [
      {},
      { identity_public_key: keys.identityPublicKey },
      { ...good, identity_public_key: keys.identityPublicKey.slice(0, 60) },
      { ...good, ephemeral_public_key: 'q'.repeat(64) },
      { ...good, identity_public_key: SMALL_ORDER_ED25519 },
      { ...good, identity_public_key: 'ed' + 'ff'.repeat(30) + '7f' },
      ...LOW_ORDER_X25519.map((u) => ({ ...good, ephemeral_public_key: u })),
      { ...good, identity_public_key: { k: 1 } },
      { ...good, name: '' },
      { ...good, name: 'n'.repeat(101) },
    ]) {
      const res = await t.request({ method: 'POST', url: '/api/v1/devices/register', headers: owner.auth, payload });
      expect(res.status, JSON.stringify(payload).slice(0, 80)).toBe(400);
    }
    expect(await listDevices(owner)).toHaveLength(0);
  });

  it('answers 401 without auth, 403 for a user with no tenant and for a device token', async () => {
    const owner = await newOwner(t);
    const agent = await activeAgent(t, owner);
    const keys = newDeviceKeys();
    const payload = { identity_public_key: keys.identityPublicKey, ephemeral_public_key: keys.ephemeralPublicKey };
    expect((await t.request({ method: 'POST', url: '/api/v1/devices/register', payload })).status).toBe(401);
    expect((await t.request({ method: 'POST', url: '/api/v1/devices/register', headers: { authorization: 'Bearer garbage' }, payload })).status).toBe(401);
    const lonely = await t.ownerToken(`lonely-${randomUUID()}@example.com`);
    expect((await t.request({ method: 'POST', url: '/api/v1/devices/register', headers: { authorization: `Bearer ${lonely}` }, payload })).status).toBe(403);
    expect((await t.request({ method: 'POST', url: '/api/v1/devices/register', headers: agent.auth, payload })).status).toBe(403);
    expect((await listDevices(owner)).filter((d) => d.kind === 'owner')).toHaveLength(0);
  });
});

describe('POST /api/v1/devices/{id}/relink', () => {
  it('is idempotent: two calls answer the same conversations, one per ACTIVE agent', async () => {
    const owner = await newOwner(t);
    const od = await registerOwnerDevice(t, owner);
    const a1 = await activeAgent(t, owner);
    const a2 = await activeAgent(t, owner);
    const first = await t.request({ method: 'POST', url: `/api/v1/devices/${od.deviceId}/relink`, headers: owner.auth });
    const second = await t.request({ method: 'POST', url: `/api/v1/devices/${od.deviceId}/relink`, headers: owner.auth });
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(first.body.device_id).toBe(od.deviceId);
    const sortC = (cs: LinkJson[]) => [...cs].sort((x, y) => x.conversation_id.localeCompare(y.conversation_id));
    expect(sortC(second.body.conversations)).toEqual(sortC(first.body.conversations));
    expect(first.body.conversations).toHaveLength(2);
    const byAgent = new Map((first.body.conversations as LinkJson[]).map((c) => [c.agent_device_id, c]));
    expect(byAgent.get(a1.deviceId)?.conversation_id).toBe(a1.conversationId);
    expect(byAgent.get(a2.deviceId)?.conversation_id).toBe(a2.conversationId);
    for (const c of first.body.conversations) expect(c.owner_device_id).toBe(od.deviceId);
  });

  it('a newly registered owner device relinks to the agents activated before it', async () => {
    const owner = await newOwner(t);
    const od1 = await registerOwnerDevice(t, owner);
    const agent = await activeAgent(t, owner);
    const od2 = await registerOwnerDevice(t, owner);
    const res = await t.request({ method: 'POST', url: `/api/v1/devices/${od2.deviceId}/relink`, headers: owner.auth });
    expect(res.status).toBe(200);
    expect(res.body.conversations).toHaveLength(1);
    expect(res.body.conversations[0]).toMatchObject({ agent_device_id: agent.deviceId, owner_device_id: od2.deviceId, message_group_id: agent.groupId });
    expect(res.body.conversations[0].conversation_id).not.toBe(agent.conversationId);
    // and od1's conversation is the agent's primary one
    const r1 = await t.request({ method: 'POST', url: `/api/v1/devices/${od1.deviceId}/relink`, headers: owner.auth });
    expect((r1.body.conversations as LinkJson[]).map((c) => c.conversation_id)).toEqual([agent.conversationId]);
  });

  it('refuses an agent device and answers 404 for an unknown one', async () => {
    const owner = await newOwner(t);
    const agent = await activeAgent(t, owner);
    const res = await t.request({ method: 'POST', url: `/api/v1/devices/${agent.deviceId}/relink`, headers: owner.auth });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect((await t.request({ method: 'POST', url: `/api/v1/devices/${randomUUID()}/relink`, headers: owner.auth })).status).toBe(404);
    expect((await t.request({ method: 'POST', url: '/api/v1/devices/nope/relink', headers: owner.auth })).status).toBe(400);
  });
});

describe('device-token renewal', () => {
  const challengeFor = (id: string) => t.request({ method: 'POST', url: `/api/v1/devices/${id}/token/challenge` });
  const renew = (id: string, challenge: string, signature: string) =>
    t.request({ method: 'POST', url: `/api/v1/devices/${id}/token`, payload: { challenge, signature } });

  it('challenge then signature over it gives a new working device_jwt; the challenge is single use', async () => {
    const owner = await newOwner(t);
    const agent = await activeAgent(t, owner);
    const ch = await challengeFor(agent.deviceId);
    expect(ch.status).toBe(201);
    expect(ch.body.device_id).toBe(agent.deviceId);
    expect(typeof ch.body.challenge).toBe('string');
    expect(ch.body.challenge.length).toBeGreaterThanOrEqual(16);
    expect(Date.parse(ch.body.expires_at)).toBeGreaterThan(Date.now());

    const res = await renew(agent.deviceId, ch.body.challenge, agent.keys.sign(ch.body.challenge));
    expect(res.status).toBe(200);
    expect(res.body.device_id).toBe(agent.deviceId);
    expect(typeof res.body.device_jwt).toBe('string');
    expect(res.body.device_jwt).not.toBe(agent.jwt);
    expect(Date.parse(res.body.expires_at)).toBeGreaterThan(Date.now());
    const use = await t.request({ method: 'GET', url: `/api/v1/devices/${agent.deviceId}/pending`, headers: { authorization: `Bearer ${res.body.device_jwt}` } });
    expect(use.status).toBe(200);
    expect(use.body.device_id).toBe(agent.deviceId);

    const reuse = await renew(agent.deviceId, ch.body.challenge, agent.keys.sign(ch.body.challenge));
    expect(reuse.status).toBe(401);
    expect(typeof reuse.body.detail).toBe('string');
  });

  it('two challenges are different', async () => {
    const owner = await newOwner(t);
    const agent = await activeAgent(t, owner);
    const a = await challengeFor(agent.deviceId);
    const b = await challengeFor(agent.deviceId);
    expect(a.body.challenge).not.toBe(b.body.challenge);
  });

  it('answers 401 for a wrong signature, a challenge never issued, or a challenge of another device', async () => {
    const owner = await newOwner(t);
    const agent = await activeAgent(t, owner);
    const other = await activeAgent(t, owner);
    const ch = await challengeFor(agent.deviceId);
    expect((await renew(agent.deviceId, ch.body.challenge, other.keys.sign(ch.body.challenge))).status).toBe(401);
    expect((await renew(agent.deviceId, ch.body.challenge, agent.keys.sign('something else'))).status).toBe(401);
    const invented = `parley-renew:${agent.deviceId}:${randomBytes(32).toString('hex')}`;
    expect((await renew(agent.deviceId, invented, agent.keys.sign(invented))).status).toBe(401);
    const otherCh = await challengeFor(other.deviceId);
    expect((await renew(agent.deviceId, otherCh.body.challenge, agent.keys.sign(otherCh.body.challenge))).status).toBe(401);
    // the other device's challenge is still good for the other device
    expect((await renew(other.deviceId, otherCh.body.challenge, other.keys.sign(otherCh.body.challenge))).status).toBe(200);
  });

  it('renews after the device JWT has expired', async () => {
    const owner = await newOwner(t);
    const agent = await activeAgent(t, owner);
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 25 * 3600_000);
    const stale = await t.request({ method: 'GET', url: `/api/v1/devices/${agent.deviceId}/pending`, headers: agent.auth });
    expect(stale.status).toBe(401);
    const ch = await challengeFor(agent.deviceId);
    expect(ch.status).toBe(201);
    const res = await renew(agent.deviceId, ch.body.challenge, agent.keys.sign(ch.body.challenge));
    expect(res.status).toBe(200);
    const fresh = await t.request({ method: 'GET', url: `/api/v1/devices/${agent.deviceId}/pending`, headers: { authorization: `Bearer ${res.body.device_jwt}` } });
    expect(fresh.status).toBe(200);
  });

  it('answers 400 when the stored identity key is of small order: the signature that verifies for any message renews nothing', async () => {
    const owner = await newOwner(t);
    const agent = await activeAgent(t, owner);
    await setIdentityKey(agent.deviceId, SMALL_ORDER_ED25519);
    const ch = await challengeFor(agent.deviceId);
    const res = await renew(agent.deviceId, ch.body.challenge, UNIVERSAL_SIGNATURE);
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/small order/);
    expect(res.body.device_jwt).toBeUndefined();
  });

  it('a device JWT living longer than DEVICE_TOKEN_TTL_SEC (signed with the service key) answers 401', async () => {
    const owner = await newOwner(t);
    const agent = await activeAgent(t, owner);
    const pending = (jwt: string) => t.request({ method: 'GET', url: `/api/v1/devices/${agent.deviceId}/pending`, headers: { authorization: `Bearer ${jwt}` } });
    const longLived = new DeviceTokenService(t.app.parley.database.db, t.app.parley.secrets, t.app.parley.config.deviceTokenTtlSec + 1);
    await longLived.init();
    expect((await pending((await longLived.issue(agent.deviceId, owner.tenantId)).token)).status).toBe(401);
    const sameTtl = new DeviceTokenService(t.app.parley.database.db, t.app.parley.secrets, t.app.parley.config.deviceTokenTtlSec);
    await sameTtl.init();
    expect((await pending((await sameTtl.issue(agent.deviceId, owner.tenantId)).token)).status).toBe(200);
  });

  it('refuses devices that are not ACTIVE, unknown devices and bad input', async () => {
    const owner = await newOwner(t);
    const p = await pendingAgent(owner);
    // a challenge is handed out for any well-formed id (it reveals nothing); renewal refuses what is not ACTIVE
    const pc = await challengeFor(p.deviceId);
    expect(pc.status).toBe(201);
    const pr = await renew(p.deviceId, pc.body.challenge, p.keys.sign(pc.body.challenge));
    expect(pr.status).toBeGreaterThanOrEqual(400);
    expect(pr.status).toBeLessThan(500);
    expect((await challengeFor(randomUUID())).status).toBe(201);
    expect((await challengeFor('nope')).status).toBe(400);

    const agent = await activeAgent(t, owner);
    const ch = await challengeFor(agent.deviceId);
    expect((await renew(agent.deviceId, ch.body.challenge, 'abc')).status).toBe(400);
    expect((await t.request({ method: 'POST', url: `/api/v1/devices/${agent.deviceId}/token`, payload: { signature: agent.keys.sign('x') } })).status).toBe(400);
    expect((await renew(randomUUID(), ch.body.challenge, agent.keys.sign(ch.body.challenge))).status).toBe(404);
    // still unused after the refusals
    expect((await renew(agent.deviceId, ch.body.challenge, agent.keys.sign(ch.body.challenge))).status).toBe(200);
  });
});

describe('owner routes: authentication, tenant isolation and wrong credentials', () => {
  let a: Owner;
  let b: Owner;
  let od: OwnerDevice;
  let od2: OwnerDevice;
  let odB: OwnerDevice;
  let pending: Enrolled;
  let agent: Agent;
  let revoked: Agent;

  beforeAll(async () => {
    a = await newOwner(t, 'A');
    b = await newOwner(t, 'B');
    od = await registerOwnerDevice(t, a);
    od2 = await registerOwnerDevice(t, a);
    odB = await registerOwnerDevice(t, b);
    pending = await pendingAgent(a);
    agent = await activeAgent(t, a);
    revoked = await activeAgent(t, a);
    expect((await transition(a, revoked.deviceId, 'revoke')).status).toBe(200);
  });

  /** Each owner route of contract §4.4 with a target in tenant A whose state would let the call succeed. */
  const routes = (): { name: string; opts: InjectOptions; check?: () => Promise<void> }[] => [
    { name: 'approve', opts: { method: 'PATCH', url: `/api/v1/devices/${pending.deviceId}/approve` } },
    { name: 'reject', opts: { method: 'PATCH', url: `/api/v1/devices/${pending.deviceId}/reject` } },
    { name: 'revoke', opts: { method: 'PATCH', url: `/api/v1/devices/${agent.deviceId}/revoke` } },
    { name: 'rename', opts: { method: 'PATCH', url: `/api/v1/devices/${agent.deviceId}`, payload: { name: 'hijacked' } } },
    { name: 'webhook', opts: { method: 'PATCH', url: `/api/v1/devices/${agent.deviceId}/webhook`, payload: { url: 'https://evil.example.invalid' } } },
    { name: 'delete', opts: { method: 'DELETE', url: `/api/v1/devices/${revoked.deviceId}` } },
    { name: 'remove', opts: { method: 'DELETE', url: `/api/v1/devices/${od2.deviceId}/remove`, headers: { 'x-device-id': odB.deviceId } } },
    { name: 'presence', opts: { method: 'GET', url: `/api/v1/devices/${agent.deviceId}/presence` } },
    { name: 'keys', opts: { method: 'GET', url: `/api/v1/devices/${agent.deviceId}/keys` } },
    { name: 'relink', opts: { method: 'POST', url: `/api/v1/devices/${od.deviceId}/relink` } },
  ];

  async function expectTenantAUnchanged() {
    const list = await listDevices(a);
    const byId = new Map(list.map((d) => [d.device_id, d]));
    expect(byId.get(pending.deviceId)?.status).toBe('PENDING');
    expect(byId.get(agent.deviceId)?.status).toBe('ACTIVE');
    expect(byId.get(agent.deviceId)?.name).not.toBe('hijacked');
    expect(byId.get(agent.deviceId)?.webhook_url).toBeNull();
    expect(byId.get(revoked.deviceId)?.status).toBe('REVOKED');
    expect(byId.get(od2.deviceId)?.status).toBe('ACTIVE');
    expect(byId.get(od.deviceId)?.status).toBe('ACTIVE');
  }

  it('answer 401 without auth and with a garbage, tampered, expired or too long-lived token', async () => {
    const expired = await t.app.parley.devIdp!.mint(a.sub, { ttlSec: -60 });
    const tooLong = await t.app.parley.devIdp!.mint(a.sub, { ttlSec: 48 * 3600 });
    const bad = [
      {},
      { authorization: 'Bearer garbage' },
      { authorization: 'Bearer a.b.c' },
      { authorization: `Bearer ${await tamperedOwnerToken()}` },
      { authorization: `Bearer ${expired}` },
      { authorization: `Bearer ${tooLong}` },
    ];
    for (const r of routes()) {
      for (const auth of bad) {
        const res = await t.request({ ...r.opts, headers: { ...(r.opts.headers as object), ...auth } });
        expect(res.status, `${r.name} ${JSON.stringify(auth).slice(0, 30)}`).toBe(401);
        expect(typeof res.body.detail).toBe('string');
      }
    }
    await expectTenantAUnchanged();
  });

  it('answer 404 when tenant B addresses tenant A devices', async () => {
    for (const r of routes()) {
      const res = await t.request({ ...r.opts, headers: { ...(r.opts.headers as object), ...b.auth } });
      expect(res.status, r.name).toBe(404);
      expect(typeof res.body.detail).toBe('string');
    }
    // remove with tenant A's own device named as acting device, from tenant B
    const viaA = await t.request({ method: 'DELETE', url: `/api/v1/devices/${od2.deviceId}/remove`, headers: { ...b.auth, 'x-device-id': od.deviceId } });
    expect(viaA.status).toBe(404);
    await expectTenantAUnchanged();
  });

  it('answer 403 for a device JWT (owner-only routes)', async () => {
    for (const r of routes()) {
      const res = await t.request({ ...r.opts, headers: { ...(r.opts.headers as object), ...agent.auth } });
      expect(res.status, r.name).toBe(403);
    }
    for (const opts of [
      { method: 'GET' as const, url: '/api/v1/devices' },
      { method: 'POST' as const, url: '/api/v1/invites', payload: {} },
      { method: 'GET' as const, url: '/api/v1/invites' },
    ]) {
      expect((await t.request({ ...opts, headers: agent.auth })).status, opts.url).toBe(403);
    }
    await expectTenantAUnchanged();
  });

  it('answer 403 when X-Tenant-Id names a tenant the user is not a member of', async () => {
    for (const r of routes()) {
      const res = await t.request({ ...r.opts, headers: { ...(r.opts.headers as object), ...a.auth, 'x-tenant-id': b.tenantId } });
      expect(res.status, r.name).toBe(403);
    }
    await expectTenantAUnchanged();
  });

  it('answer 403 for a user with no tenant', async () => {
    const lonely = await t.ownerToken(`lonely-${randomUUID()}@example.com`);
    for (const r of routes()) {
      const res = await t.request({ ...r.opts, headers: { ...(r.opts.headers as object), authorization: `Bearer ${lonely}` } });
      expect(res.status, r.name).toBe(403);
    }
    await expectTenantAUnchanged();
  });
});
