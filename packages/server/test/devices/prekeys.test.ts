/**
 * X3DH prekey bundles (Signal X3DH rev. 1 §§3.2-3.3): a signed prekey per device (replaced on
 * publish, served with every claim) and one-time prekeys, each handed out once even under
 * concurrent claims; the claim counts; X25519 keys checked (RFC 7748 low order refused); tenants
 * kept apart; revoked devices serve nothing; errors in `{detail}`.
 */
import { randomBytes } from 'node:crypto';
import { x25519 } from '@noble/curves/ed25519.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activeAgent, newOwner, registerOwnerDevice, type Agent, type Owner, type OwnerDevice } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
const x25519Key = () => b64(x25519.getPublicKey(x25519.utils.randomSecretKey()));
const signed = (keyId: string) => ({ key_id: keyId, public_key: x25519Key(), signature: b64(randomBytes(64)) });
const oneTime = (keyId: string) => ({ key_id: keyId, public_key: x25519Key() });

describe('X3DH prekeys', () => {
  let t: TestApp;
  let owner: Owner;
  let od: OwnerDevice;
  let agent: Agent;
  let asOwnerDevice: Record<string, string>;

  beforeAll(async () => {
    t = await startApp({ env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000' } });
    owner = await newOwner(t);
    od = await registerOwnerDevice(t, owner);
    agent = await activeAgent(t, owner);
    asOwnerDevice = { ...owner.auth, 'x-device-id': od.deviceId };
  });
  afterAll(() => t.close());

  const publish = (auth: Record<string, string>, payload: object) => t.request({ method: 'POST', url: '/api/v1/prekeys', headers: auth, payload });
  const claim = (auth: Record<string, string>, deviceId: string) => t.request({ method: 'POST', url: '/api/v1/prekeys/claim', headers: auth, payload: { device_id: deviceId } });
  const count = (auth: Record<string, string>, deviceId: string) => t.request({ method: 'GET', url: `/api/v1/prekeys/${deviceId}`, headers: auth });

  it('a device without a signed prekey (an older client) answers 404 to a claim and null in its count', async () => {
    expect((await count(asOwnerDevice, agent.deviceId)).body).toEqual({ device_id: agent.deviceId, signed_prekey_key_id: null, one_time_available: 0 });
    const c = await claim(asOwnerDevice, agent.deviceId);
    expect(c.status).toBe(404);
    expect(c.body).toEqual({ detail: expect.stringContaining('signed prekey') });
  });

  it('one-time prekeys alone are not claimable without a signed prekey', async () => {
    const lone = await activeAgent(t, owner);
    expect((await publish(lone.auth, { one_time: [oneTime('lone-1')] })).status).toBe(201);
    expect((await claim(asOwnerDevice, lone.deviceId)).status).toBe(404);
    expect((await count(asOwnerDevice, lone.deviceId)).body.one_time_available).toBe(1);
  });

  it('serves the signed prekey byte for byte with each one-time prekey once, oldest first, then none', async () => {
    const spk = signed('spk-1');
    const [o1, o2] = [oneTime('otk-1'), oneTime('otk-2')];
    const pub = await publish(agent.auth, { signed_prekey: spk, one_time: [o1, o2] });
    expect(pub.status).toBe(201);
    expect(pub.body).toEqual({ device_id: agent.deviceId, signed_prekey_key_id: 'spk-1', one_time_available: 2 });

    const got = [];
    for (let i = 0; i < 3; i++) {
      const c = await claim(asOwnerDevice, agent.deviceId);
      expect(c.status).toBe(200);
      got.push(c.body);
    }
    expect(got).toEqual([
      { device_id: agent.deviceId, signed_prekey: spk, one_time_prekey: o1 },
      { device_id: agent.deviceId, signed_prekey: spk, one_time_prekey: o2 },
      { device_id: agent.deviceId, signed_prekey: spk, one_time_prekey: null },
    ]);
    expect((await count(asOwnerDevice, agent.deviceId)).body).toEqual({ device_id: agent.deviceId, signed_prekey_key_id: 'spk-1', one_time_available: 0 });
  });

  it('a new signed prekey replaces the served one; one-time prekeys are kept', async () => {
    const o3 = oneTime('otk-3');
    expect((await publish(agent.auth, { one_time: [o3] })).body).toEqual({ device_id: agent.deviceId, signed_prekey_key_id: 'spk-1', one_time_available: 1 });
    const next = signed('spk-2');
    expect((await publish(agent.auth, { signed_prekey: next })).body).toEqual({ device_id: agent.deviceId, signed_prekey_key_id: 'spk-2', one_time_available: 1 });
    expect((await claim(asOwnerDevice, agent.deviceId)).body).toEqual({ device_id: agent.deviceId, signed_prekey: next, one_time_prekey: o3 });
  });

  it('concurrent claims never hand out one one-time prekey twice', async () => {
    const target = await activeAgent(t, owner);
    const keys = Array.from({ length: 6 }, (_, i) => oneTime(`c-${i}`));
    expect((await publish(target.auth, { signed_prekey: signed('c-spk'), one_time: keys })).status).toBe(201);
    const claimers = [asOwnerDevice, agent.auth];
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => claim(claimers[i % 2]!, target.deviceId)));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    const handed = answers.map((a) => a.body.one_time_prekey).filter((o) => o !== null);
    expect(handed.map((o) => o.key_id).sort()).toEqual(keys.map((k) => k.key_id).sort());
    expect((await count(asOwnerDevice, target.deviceId)).body.one_time_available).toBe(0);
  });

  it('an owner publishes for its own device with X-Device-Id, and claims an agent the same way', async () => {
    const withoutDevice = await publish(owner.auth, { signed_prekey: signed('o') });
    expect(withoutDevice.status).toBe(400);
    const ok = await publish(asOwnerDevice, { signed_prekey: signed('o'), one_time: [oneTime('o-1')] });
    expect(ok.status).toBe(201);
    expect(ok.body.device_id).toBe(od.deviceId);
    const c = await claim(agent.auth, od.deviceId);
    expect(c.status).toBe(200);
    expect([c.body.signed_prekey.key_id, c.body.one_time_prekey.key_id]).toEqual(['o', 'o-1']);
  });

  it('refuses malformed input with {detail}: nothing to publish, bad keys, signatures and ids, too many one-time prekeys', async () => {
    const lowOrder = b64(new Uint8Array(32)); // u = 0: every DH with it is all-zero
    const refused = async (payload: object, auth = agent.auth) => {
      const r = await publish(auth, payload);
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ detail: expect.any(String) });
      return r.body.detail as string;
    };
    await refused({});
    await refused({ one_time: [] });
    expect(await refused({ signed_prekey: { ...signed('x'), public_key: lowOrder } })).toContain('X25519');
    expect(await refused({ one_time: [{ key_id: 'x', public_key: lowOrder }] })).toContain('one_time[0]');
    await refused({ signed_prekey: { ...signed('x'), public_key: b64(randomBytes(31)) } });
    await refused({ signed_prekey: { ...signed('x'), signature: b64(randomBytes(63)) } });
    await refused({ signed_prekey: { key_id: 'x', public_key: x25519Key() } });
    await refused({ one_time: [oneTime('same'), oneTime('same')] });
    await refused({ signed_prekey: signed('same'), one_time: [oneTime('same')] });
    await refused({ signed_prekey: signed('no spaces') });
    await refused({ one_time: Array.from({ length: 101 }, (_, i) => oneTime(`m-${i}`)) });
    const full = await activeAgent(t, owner);
    for (let i = 0; i < 5; i++) expect((await publish(full.auth, { one_time: Array.from({ length: 100 }, (_, j) => oneTime(`f-${i}-${j}`)) })).status).toBe(201);
    expect(await refused({ one_time: [oneTime('one-too-many')] }, full.auth)).toContain('at most 500');
    expect((await publish({}, { signed_prekey: signed('x') })).status).toBe(401);
    const badClaim = await t.request({ method: 'POST', url: '/api/v1/prekeys/claim', headers: agent.auth, payload: { device_id: 'not-a-uuid' } });
    expect(badClaim.status).toBe(400);
    expect(badClaim.body).toEqual({ detail: expect.any(String) });
  });

  it('keeps tenants apart and serves nothing of a revoked device', async () => {
    const other = await newOwner(t, 'Other');
    const otherAgent = await activeAgent(t, other);
    expect((await publish(otherAgent.auth, { signed_prekey: signed('theirs'), one_time: [oneTime('theirs-1')] })).status).toBe(201);
    expect((await claim(agent.auth, otherAgent.deviceId)).status).toBe(404);
    expect((await count(agent.auth, otherAgent.deviceId)).status).toBe(404);
    expect((await count(otherAgent.auth, otherAgent.deviceId)).body.one_time_available).toBe(1);

    const leaving = await activeAgent(t, owner);
    expect((await publish(leaving.auth, { signed_prekey: signed('l'), one_time: [oneTime('l1')] })).status).toBe(201);
    expect((await t.request({ method: 'PATCH', url: `/api/v1/devices/${leaving.deviceId}/revoke`, headers: owner.auth })).status).toBe(200);
    expect((await claim(asOwnerDevice, leaving.deviceId)).status).toBe(404);
    expect((await count(asOwnerDevice, leaving.deviceId)).body).toEqual({ device_id: leaving.deviceId, signed_prekey_key_id: null, one_time_available: 0 });
  });

  it('X25519 and PQ prekeys of one device are kept apart', async () => {
    const both = await activeAgent(t, owner);
    const pq = { key_id: 'pq-1', public_key: b64(randomBytes(1184)), signature: b64(randomBytes(64)) };
    expect((await t.request({ method: 'POST', url: '/api/v1/pq-prekeys', headers: both.auth, payload: { last_resort: pq, one_time: [{ ...pq, key_id: 'pq-2' }] } })).status).toBe(201);
    expect((await claim(asOwnerDevice, both.deviceId)).status).toBe(404);
    const spk = signed('x-1');
    expect((await publish(both.auth, { signed_prekey: spk, one_time: [oneTime('x-2')] })).status).toBe(201);
    const pqCount = await t.request({ method: 'GET', url: `/api/v1/pq-prekeys/${both.deviceId}`, headers: asOwnerDevice });
    expect(pqCount.body).toMatchObject({ last_resort_key_id: 'pq-1', one_time_available: 1 });
    expect((await claim(asOwnerDevice, both.deviceId)).body.signed_prekey).toEqual(spk);
  });
});
