/**
 * Key bindings (docs/decisions.md "Key bindings"): the attacker replays a victim's identity key
 * and its fixed proof of possession with an X25519 key of their own; a fresh binding
 * over a single-use nonce, the tenant and the keys is what tells them apart. Also: the legacy
 * bodies keep working for a fresh key, and `KEY_BINDING_REQUIRED` refuses them.
 */
import { keyBindingMessage, type KeyBindingPurposeName } from '@parley/protocol';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createInvite, enroll, newOwner, type Owner } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { newDeviceKeys, type DeviceKeys } from '../../testing/keys.js';
import { wsAddress, WsPool, type WsClient } from '../../testing/ws-client.js';

interface Nonce {
  nonce: string;
  tenant_id: string;
  purpose: KeyBindingPurposeName;
  device_id: string | null;
}

async function nonceFor(t: TestApp, purpose: KeyBindingPurposeName, headers: Record<string, string> = {}, deviceId?: string): Promise<Nonce> {
  const res = await t.request({ method: 'POST', url: '/api/v1/key-binding/nonce', headers, payload: { purpose, ...(deviceId ? { device_id: deviceId } : {}) } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as Nonce;
}

/** `key_binding` signed by `keys` over `n`, naming `ephemeral` (default the keys' own) and `tenant` (default the nonce's). */
function bind(keys: DeviceKeys, n: Nonce, over: { ephemeral?: string; tenant?: string; deviceId?: string } = {}) {
  const message = keyBindingMessage({
    purpose: n.purpose,
    nonce: n.nonce,
    tenant_id: over.tenant ?? n.tenant_id,
    identity_public_key: keys.identityPublicKey,
    ephemeral_public_key: over.ephemeral ?? keys.ephemeralPublicKey,
    ...(n.device_id ? { device_id: over.deviceId ?? n.device_id } : {}),
  });
  return { nonce: n.nonce, signature: keys.sign(message) };
}

describe('key bindings', () => {
  let t: TestApp;
  let victimOwner: Owner;
  let attacker: Owner;
  const pool = new WsPool();

  beforeAll(async () => {
    t = await startApp({ listen: true, env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000' } });
    victimOwner = await newOwner(t, 'Victim');
    attacker = await newOwner(t, 'Attacker');
  });
  afterEach(() => pool.closeAll());
  afterAll(() => t.close());

  const newKey = async (owner: Owner) => (await t.request({ method: 'POST', url: '/api/v1/api-keys', headers: owner.auth, payload: { name: 'agent' } })).body as { key: string; id: string };
  const socket = (key: string) => pool.open(wsAddress(t.wsUrl, { token: key }));
  const registerOnSocket = async (ws: WsClient, data: object) => {
    ws.send('client_key_register', data);
    return ws.next((f) => f.event === 'client_key_accepted' || f.event === 'error');
  };
  const legacy = (keys: DeviceKeys, ephemeral = keys.ephemeralPublicKey) => ({ identity_public_key: keys.identityPublicKey, ephemeral_public_key: ephemeral, signature: keys.proof() });

  /** The victim's API-key agent, registered with a binding: its key and proof are now public. */
  async function victimAgent(): Promise<DeviceKeys> {
    const key = await newKey(victimOwner);
    const keys = newDeviceKeys();
    const n = await nonceFor(t, 'client_key_register', { 'x-api-key': key.key });
    const accepted = await registerOnSocket(await socket(key.key), { ...legacy(keys), key_binding: bind(keys, n) });
    expect(accepted.event, JSON.stringify(accepted.data)).toBe('client_key_accepted');
    return keys;
  }

  it('refuses a replay of a victim identity key and its fixed proof in client_key_register from another tenant', async () => {
    const victim = await victimAgent();
    const key = await newKey(attacker);
    const mine = newDeviceKeys();
    const refused = await registerOnSocket(await socket(key.key), legacy(victim, mine.ephemeralPublicKey));
    expect(refused.event).toBe('error');
    expect(refused.data.status).toBe(400);
    expect(refused.data.detail).toMatch(/key_binding|upgrade/i);
    const listed = (await t.request({ method: 'GET', url: '/api/v1/api-keys', headers: attacker.auth })).body.api_keys.find((k: { id: string }) => k.id === key.id);
    expect(listed.device_id).toBeNull();
  });

  it('refuses the same replay through POST /devices/register', async () => {
    const victim = await victimAgent();
    const mine = newDeviceKeys();
    const res = await t.request({ method: 'POST', url: '/api/v1/devices/register', headers: attacker.auth, payload: legacyOwnerBody(victim, mine.ephemeralPublicKey) });
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/key_binding|upgrade/i);
  });

  function legacyOwnerBody(keys: DeviceKeys, ephemeral = keys.ephemeralPublicKey) {
    return { identity_public_key: keys.identityPublicKey, ephemeral_public_key: ephemeral, name: 'laptop' };
  }

  it('refuses a key_binding made for another nonce, tenant or ephemeral key, or for another step', async () => {
    const keys = newDeviceKeys();
    const key = await newKey(attacker);
    const headers = { 'x-api-key': key.key };
    const ws = await socket(key.key);
    // A nonce of another tenant (the victim's API key) signed by the key holder: the tenant does not match.
    const victimKey = await newKey(victimOwner);
    const foreign = await nonceFor(t, 'client_key_register', { 'x-api-key': victimKey.key });
    let r = await registerOnSocket(ws, { ...legacy(keys), key_binding: bind(keys, foreign) });
    expect([r.event, r.data.status]).toEqual(['error', 400]);
    // Our nonce, signed naming another tenant.
    const n1 = await nonceFor(t, 'client_key_register', headers);
    r = await registerOnSocket(ws, { ...legacy(keys), key_binding: bind(keys, n1, { tenant: victimOwner.tenantId }) });
    expect([r.event, r.data.status]).toEqual(['error', 400]);
    // Our nonce, signed over another ephemeral key than the one registered.
    r = await registerOnSocket(ws, { ...legacy(keys), key_binding: bind(keys, n1, { ephemeral: newDeviceKeys().ephemeralPublicKey }) });
    expect([r.event, r.data.status]).toEqual(['error', 400]);
    // A signature over another nonce than the one sent.
    const n2 = await nonceFor(t, 'client_key_register', headers);
    r = await registerOnSocket(ws, { ...legacy(keys), key_binding: { nonce: n2.nonce, signature: bind(keys, n1).signature } });
    expect([r.event, r.data.status]).toEqual(['error', 400]);
    // A nonce of another purpose, correctly signed.
    const owned = await nonceFor(t, 'owner_device_register', attacker.auth);
    r = await registerOnSocket(ws, { ...legacy(keys), key_binding: bind(keys, owned) });
    expect([r.event, r.data.status]).toEqual(['error', 400]);
    // A signature over the bare canonical JSON (no domain tag) does not pass either.
    const bare = keyBindingMessage({ purpose: n2.purpose, nonce: n2.nonce, tenant_id: n2.tenant_id, identity_public_key: keys.identityPublicKey, ephemeral_public_key: keys.ephemeralPublicKey });
    r = await registerOnSocket(ws, { ...legacy(keys), key_binding: { nonce: n2.nonce, signature: keys.sign(bare.subarray(bare.indexOf(0) + 1)) } });
    expect([r.event, r.data.status]).toEqual(['error', 400]);
    // The right one binds.
    r = await registerOnSocket(ws, { ...legacy(keys), key_binding: bind(keys, n2) });
    expect(r.event, JSON.stringify(r.data)).toBe('client_key_accepted');
  });

  it('a nonce binds once', async () => {
    const keys = newDeviceKeys();
    const n = await nonceFor(t, 'owner_device_register', attacker.auth);
    const binding = bind(keys, n);
    const first = await t.request({ method: 'POST', url: '/api/v1/devices/register', headers: attacker.auth, payload: { ...legacyOwnerBody(keys), key_binding: binding } });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    const other = newDeviceKeys();
    const again = await t.request({ method: 'POST', url: '/api/v1/devices/register', headers: attacker.auth, payload: { ...legacyOwnerBody(other), key_binding: bind(other, n) } });
    expect(again.status).toBe(400);
    expect(again.body.detail).toMatch(/already used/);
  });

  it('activation: a binding over the device and its keys is accepted once; one naming another device is refused', async () => {
    const invite = await createInvite(t, victimOwner);
    const { res, keys } = await enroll(t, invite.token);
    const deviceId = res.body.device_id as string;
    expect((await t.request({ method: 'PATCH', url: `/api/v1/devices/${deviceId}/approve`, headers: victimOwner.auth })).status).toBe(200);
    const n = await nonceFor(t, 'device_activate', {}, deviceId);
    expect(n.tenant_id).toBe(victimOwner.tenantId);
    const signature = keys.sign(`activate:${deviceId}`);
    const wrong = await t.request({ method: 'POST', url: `/api/v1/devices/${deviceId}/activate`, payload: { signature, key_binding: bind(keys, n, { ephemeral: newDeviceKeys().ephemeralPublicKey }) } });
    expect(wrong.status).toBe(400);
    const ok = await t.request({ method: 'POST', url: `/api/v1/devices/${deviceId}/activate`, payload: { signature, key_binding: bind(keys, n) } });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
  });

  it('the nonce route needs the credential of its step', async () => {
    expect((await t.request({ method: 'POST', url: '/api/v1/key-binding/nonce', payload: { purpose: 'client_key_register' } })).status).toBe(401);
    expect((await t.request({ method: 'POST', url: '/api/v1/key-binding/nonce', payload: { purpose: 'owner_device_register' } })).status).toBe(401);
    expect((await t.request({ method: 'POST', url: '/api/v1/key-binding/nonce', payload: { purpose: 'device_activate' } })).status).toBe(400);
    expect((await t.request({ method: 'POST', url: '/api/v1/key-binding/nonce', payload: { purpose: 'device_activate', device_id: '00000000-0000-4000-8000-000000000000' } })).status).toBe(404);
  });

  it('keeps the legacy bodies of the wire contract working for a fresh key (API-key registration, owner device, activation)', async () => {
    const key = await newKey(attacker);
    const keys = newDeviceKeys();
    const accepted = await registerOnSocket(await socket(key.key), legacy(keys));
    expect(accepted.event, JSON.stringify(accepted.data)).toBe('client_key_accepted');
    // The same key's client registering again (idempotent) still works without a binding.
    const again = await registerOnSocket(await socket(key.key), legacy(keys));
    expect(again.event).toBe('client_key_accepted');
    const owned = await t.request({ method: 'POST', url: '/api/v1/devices/register', headers: attacker.auth, payload: legacyOwnerBody(newDeviceKeys()) });
    expect(owned.status).toBe(201);
    const invite = await createInvite(t, attacker);
    const enrolled = await enroll(t, invite.token);
    const deviceId = enrolled.res.body.device_id as string;
    expect((await t.request({ method: 'PATCH', url: `/api/v1/devices/${deviceId}/approve`, headers: attacker.auth })).status).toBe(200);
    const act = await t.request({ method: 'POST', url: `/api/v1/devices/${deviceId}/activate`, payload: { signature: enrolled.keys.sign(`activate:${deviceId}`) } });
    expect(act.status).toBe(200);
  });
});

describe('KEY_BINDING_REQUIRED=true', () => {
  let t: TestApp;
  let owner: Owner;
  const pool = new WsPool();

  beforeAll(async () => {
    t = await startApp({ listen: true, env: { KEY_BINDING_REQUIRED: 'true' } });
    owner = await newOwner(t);
  });
  afterEach(() => pool.closeAll());
  afterAll(() => t.close());

  it('refuses every legacy registration and activation with a 400 naming the upgrade, and accepts bound ones', async () => {
    const keys = newDeviceKeys();
    const legacyOwner = await t.request({ method: 'POST', url: '/api/v1/devices/register', headers: owner.auth, payload: { identity_public_key: keys.identityPublicKey, ephemeral_public_key: keys.ephemeralPublicKey } });
    expect(legacyOwner.status).toBe(400);
    expect(legacyOwner.body.detail).toMatch(/requires a key binding.*upgrade the Parley SDK/);
    const n = await nonceFor(t, 'owner_device_register', owner.auth);
    const bound = await t.request({
      method: 'POST',
      url: '/api/v1/devices/register',
      headers: owner.auth,
      payload: { identity_public_key: keys.identityPublicKey, ephemeral_public_key: keys.ephemeralPublicKey, key_binding: bind(keys, n) },
    });
    expect(bound.status, JSON.stringify(bound.body)).toBe(201);

    const key = (await t.request({ method: 'POST', url: '/api/v1/api-keys', headers: owner.auth, payload: { name: 'agent' } })).body.key as string;
    const ws = await pool.open(wsAddress(t.wsUrl, { token: key }));
    const agentKeys = newDeviceKeys();
    ws.send('client_key_register', { identity_public_key: agentKeys.identityPublicKey, ephemeral_public_key: agentKeys.ephemeralPublicKey, signature: agentKeys.proof() });
    const refused = await ws.next('error');
    expect(refused.data.status).toBe(400);
    expect(refused.data.detail).toMatch(/requires a key binding/);

    const invite = await createInvite(t, owner);
    const enrolled = await enroll(t, invite.token);
    const deviceId = enrolled.res.body.device_id as string;
    expect((await t.request({ method: 'PATCH', url: `/api/v1/devices/${deviceId}/approve`, headers: owner.auth })).status).toBe(200);
    const signature = enrolled.keys.sign(`activate:${deviceId}`);
    const legacyAct = await t.request({ method: 'POST', url: `/api/v1/devices/${deviceId}/activate`, payload: { signature } });
    expect(legacyAct.status).toBe(400);
    expect(legacyAct.body.detail).toMatch(/requires a key binding/);
    const an = await nonceFor(t, 'device_activate', {}, deviceId);
    const act = await t.request({ method: 'POST', url: `/api/v1/devices/${deviceId}/activate`, payload: { signature, key_binding: bind(enrolled.keys, an) } });
    expect(act.status, JSON.stringify(act.body)).toBe(200);
  });
});
