/** Trust on first use for API-key sockets (contract §2.6, §5 rule 4; design §7 client_key_register / client_key_accepted). */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { newOwner, registerOwnerDevice, type Owner, type OwnerDevice } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { LOW_ORDER_X25519, newDeviceKeys, SMALL_ORDER_ED25519, UNIVERSAL_SIGNATURE, type DeviceKeys } from '../../testing/keys.js';
import { wsAddress, WsPool } from '../../testing/ws-client.js';

describe('API-key sockets (trust on first use)', () => {
  let t: TestApp;
  let owner: Owner;
  let od: OwnerDevice;
  const pool = new WsPool();

  beforeAll(async () => {
    t = await startApp({ listen: true });
    owner = await newOwner(t);
    od = await registerOwnerDevice(t, owner);
  });
  afterEach(() => pool.closeAll());
  afterAll(() => t.close());

  const newKey = async () => (await t.request({ method: 'POST', url: '/api/v1/api-keys', headers: owner.auth, payload: { name: 'third-party', env: 'dev' } })).body;
  const connect = (key: string) => pool.open(wsAddress(t.wsUrl, { token: key }));
  const register = (keys: DeviceKeys, signature = keys.proof()) => ({
    identity_public_key: keys.identityPublicKey,
    ephemeral_public_key: keys.ephemeralPublicKey,
    signature,
    platform: 'python',
  });

  it('binds the key on first use, answers client_key_accepted with conversations, and relays messages', async () => {
    const key = await newKey();
    const keys = newDeviceKeys();
    const ws = await connect(key.key);
    ws.send('message', { conversation_id: '00000000-0000-4000-8000-000000000000', header_blob: '', ciphertext: '' });
    expect((await ws.next('error')).data.status).toBe(403);
    ws.send('client_key_register', register(keys));
    const accepted = await ws.next('client_key_accepted');
    expect(accepted.data.device_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(accepted.data.conversations).toEqual([
      expect.objectContaining({ peer_device_id: od.deviceId, peer_identity_public_key: od.keys.identityPublicKey, peer_ephemeral_public_key: od.keys.ephemeralPublicKey }),
    ]);
    const listed = (await t.request({ method: 'GET', url: '/api/v1/api-keys', headers: owner.auth })).body.api_keys.find((k: any) => k.id === key.id);
    expect(listed.device_id).toBe(accepted.data.device_id);

    const conv = accepted.data.conversations[0].conversation_id;
    ws.send('message', { conversation_id: conv, header_blob: 'aGRy', ciphertext: 'AQID', client_ref: 'r1' });
    const ack = await ws.next('message_ack');
    expect(ack.data.client_ref).toBe('r1');
    const hist = await t.request({ method: 'GET', url: `/api/v1/conversations/${conv}/messages`, headers: owner.auth });
    expect(hist.body.messages.map((m: any) => m.message_id)).toContain(ack.data.message_id);
  });

  it('accepts the same material again, refuses other material until the key is rotated', async () => {
    const key = await newKey();
    const keys = newDeviceKeys();
    const first = await connect(key.key);
    first.send('client_key_register', register(keys));
    const deviceId = (await first.next('client_key_accepted')).data.device_id;
    first.close();

    const again = await connect(key.key);
    again.send('client_key_register', register(keys));
    expect((await again.next('client_key_accepted')).data.device_id).toBe(deviceId);

    const thief = await connect(key.key);
    thief.send('client_key_register', register(newDeviceKeys()));
    expect((await thief.next('error')).data.status).toBe(409);
    expect((await thief.waitClose()).code).toBe(4003);

    const rotated = (await t.request({ method: 'POST', url: `/api/v1/api-keys/${key.id}/rotate`, headers: owner.auth })).body;
    expect((await again.waitClose()).code).toBe(4001);
    const fresh = await connect(rotated.key);
    fresh.send('client_key_register', register(newDeviceKeys()));
    expect((await fresh.next('client_key_accepted')).data.device_id).not.toBe(deviceId);
  });

  it('refuses a bad proof of possession (400, key stays unbound), and revoked or unknown keys (4401)', async () => {
    const key = await newKey();
    const keys = newDeviceKeys();
    const ws = await connect(key.key);
    ws.send('client_key_register', register(keys, newDeviceKeys().proof()));
    expect((await ws.next('error')).data.status).toBe(400);
    ws.send('client_key_register', register(keys));
    await ws.next('client_key_accepted');

    await t.request({ method: 'POST', url: `/api/v1/api-keys/${key.id}/revoke`, headers: owner.auth });
    expect((await ws.waitClose()).code).toBe(4001);
    expect((await (await connect(key.key)).waitClose()).code).toBe(4401);
    expect((await (await connect(`svc_agent_sk_dev_${'0'.repeat(64)}`)).waitClose()).code).toBe(4401);
  });

  it('refuses a small-order identity key with the signature that verifies for any message, and a low-order ephemeral key (400, key stays unbound)', async () => {
    const key = await newKey();
    const keys = newDeviceKeys();
    const ws = await connect(key.key);
    ws.send('client_key_register', { ...register(keys, UNIVERSAL_SIGNATURE), identity_public_key: SMALL_ORDER_ED25519 });
    const weak = await ws.next('error');
    expect(weak.data.status).toBe(400);
    expect(weak.data.detail).toMatch(/identity_public_key .*small order/);
    ws.send('client_key_register', { ...register(keys), ephemeral_public_key: LOW_ORDER_X25519[0] });
    expect((await ws.next('error')).data.status).toBe(400);
    const listed = (await t.request({ method: 'GET', url: '/api/v1/api-keys', headers: owner.auth })).body.api_keys.find((k: { id: string }) => k.id === key.id);
    expect(listed.device_id).toBeNull();
    ws.send('client_key_register', register(keys));
    await ws.next('client_key_accepted');
  });
});
