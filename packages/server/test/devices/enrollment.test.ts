/**
 * Enrollment over HTTP (contract §2.3, §3.1, §4.3, §5, §7, §8; design §7): POST /enroll with proof of
 * possession, invite validity, malformed input, the per-IP rate limit, and the unauthenticated,
 * per-device rate-limited GET /devices/{id}/status.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { blake2b } from '@noble/hashes/blake2.js';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createInvite, enroll, newOwner, type Owner } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { LOW_ORDER_X25519, newDeviceKeys, SMALL_ORDER_ED25519, UNIVERSAL_SIGNATURE, type DeviceKeys } from '../../testing/keys.js';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const FINGERPRINT_RE = /^[0-9a-f]{4}( [0-9a-f]{4}){7}$/;

/** design §7: first 16 bytes of BLAKE2b-256 over the raw identity key, 8 groups of 4 hex. */
function expectedFingerprint(identityPublicKeyHex: string): string {
  const digest = blake2b(Buffer.from(identityPublicKeyHex, 'hex'), { dkLen: 32 }).subarray(0, 16);
  return Buffer.from(digest).toString('hex').match(/.{4}/g)!.join(' ');
}

function enrollBody(token: string, keys: DeviceKeys, overrides: Record<string, unknown> = {}) {
  return {
    invite_token: token,
    identity_public_key: keys.identityPublicKey,
    ephemeral_public_key: keys.ephemeralPublicKey,
    proof_of_possession: keys.proof(),
    platform: 'node',
    ...overrides,
  };
}

async function inviteStatus(t: TestApp, owner: Owner, id: string): Promise<string | undefined> {
  const res = await t.request({ method: 'GET', url: '/api/v1/invites', headers: owner.auth });
  expect(res.status).toBe(200);
  return (res.body.invites as { id: string; status: string }[]).find((i) => i.id === id)?.status;
}

afterEach(() => {
  vi.useRealTimers();
});

describe('POST /api/v1/enroll', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000' } });
  });
  afterAll(() => t.close());

  const post = (payload: unknown, remoteAddress?: string) =>
    t.request({ method: 'POST', url: '/api/v1/enroll', payload: payload as object, ...(remoteAddress ? { remoteAddress } : {}) });

  it('answers 201 {device_id, fingerprint, status: PENDING} and consumes the invite', async () => {
    const owner = await newOwner(t);
    const inv = await createInvite(t, owner);
    const keys = newDeviceKeys();
    const res = await post(enrollBody(inv.token, keys));
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['device_id', 'fingerprint', 'status']);
    expect(res.body.device_id).toMatch(UUID_RE);
    expect(res.body.status).toBe('PENDING');
    expect(res.body.fingerprint).toMatch(FINGERPRINT_RE);
    expect(res.body.fingerprint).toBe(expectedFingerprint(keys.identityPublicKey));

    expect(await inviteStatus(t, owner, inv.id)).toBe('consumed');
    const list = await t.request({ method: 'GET', url: '/api/v1/devices', headers: owner.auth });
    const d = (list.body.devices as Record<string, unknown>[]).find((x) => x.device_id === res.body.device_id);
    expect(d).toMatchObject({ status: 'PENDING', kind: 'agent', platform: 'node', fingerprint: res.body.fingerprint });
  });

  it("names the device after the invite's label unless the body names it", async () => {
    const owner = await newOwner(t);
    const named = async (label: string, name?: string) => {
      const inv = await t.request({ method: 'POST', url: '/api/v1/invites', headers: owner.auth, payload: { label } });
      const res = await post({ ...enrollBody(inv.body.token as string, newDeviceKeys()), ...(name ? { name } : {}) });
      expect(res.status).toBe(201);
      const list = await t.request({ method: 'GET', url: '/api/v1/devices', headers: owner.auth });
      return (list.body.devices as { device_id: string; name: string }[]).find((x) => x.device_id === res.body.device_id)!.name;
    };
    expect(await named('Build bot')).toBe('Build bot');
    expect(await named('Build bot', 'ci-runner')).toBe('ci-runner');
  });

  it('accepts uppercase hex keys and stores them as lowercase hex', async () => {
    const owner = await newOwner(t);
    const inv = await createInvite(t, owner);
    const keys = newDeviceKeys();
    const res = await post(
      enrollBody(inv.token, keys, {
        identity_public_key: keys.identityPublicKey.toUpperCase(),
        ephemeral_public_key: keys.ephemeralPublicKey.toUpperCase(),
        proof_of_possession: keys.proof().toUpperCase(),
      }),
    );
    expect(res.status).toBe(201);
    expect(res.body.fingerprint).toBe(expectedFingerprint(keys.identityPublicKey));
    const k = await t.request({ method: 'GET', url: `/api/v1/devices/${res.body.device_id}/keys`, headers: owner.auth });
    expect(k.status).toBe(200);
    expect(k.body.identity_public_key).toBe(keys.identityPublicKey);
    expect(k.body.ephemeral_public_key).toBe(keys.ephemeralPublicKey);
  });

  it('gives different keys different fingerprints', async () => {
    const owner = await newOwner(t);
    const a = await enroll(t, (await createInvite(t, owner)).token);
    const b = await enroll(t, (await createInvite(t, owner)).token);
    expect(a.res.status).toBe(201);
    expect(b.res.status).toBe(201);
    expect(a.res.body.fingerprint).toBe(expectedFingerprint(a.keys.identityPublicKey));
    expect(b.res.body.fingerprint).toBe(expectedFingerprint(b.keys.identityPublicKey));
    expect(a.res.body.fingerprint).not.toBe(b.res.body.fingerprint);
    expect(a.res.body.device_id).not.toBe(b.res.body.device_id);
  });

  it('answers 401 for an unknown invite token', async () => {
    for (const token of [`svc_tok_${randomBytes(32).toString('hex')}`, 'nope', 'svc_tok_']) {
      const res = await post(enrollBody(token, newDeviceKeys()));
      expect(res.status, token).toBe(401);
      expect(typeof res.body.detail).toBe('string');
    }
  });

  it('answers 401 for a consumed invite', async () => {
    const owner = await newOwner(t);
    const inv = await createInvite(t, owner);
    expect((await post(enrollBody(inv.token, newDeviceKeys()))).status).toBe(201);
    const again = await post(enrollBody(inv.token, newDeviceKeys()));
    expect(again.status).toBe(401);
    expect(typeof again.body.detail).toBe('string');
    const list = await t.request({ method: 'GET', url: '/api/v1/devices', headers: owner.auth });
    expect(list.body.devices).toHaveLength(1);
  });

  it('concurrent enrollments with one invite: exactly one succeeds (single use)', async () => {
    const owner = await newOwner(t);
    const inv = await createInvite(t, owner);
    const results = await Promise.all([0, 1, 2, 3].map(() => post(enrollBody(inv.token, newDeviceKeys()))));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 401, 401, 401]);
    const list = await t.request({ method: 'GET', url: '/api/v1/devices', headers: owner.auth });
    expect(list.body.devices).toHaveLength(1);
  });

  it('answers 401 for a revoked invite', async () => {
    const owner = await newOwner(t);
    const inv = await createInvite(t, owner);
    const rev = await t.request({ method: 'POST', url: `/api/v1/invites/${inv.id}/revoke`, headers: owner.auth });
    expect(rev.status).toBe(200);
    const res = await post(enrollBody(inv.token, newDeviceKeys()));
    expect(res.status).toBe(401);
    const list = await t.request({ method: 'GET', url: '/api/v1/devices', headers: owner.auth });
    expect(list.body.devices).toHaveLength(0);
  });

  it('answers 401 for an expired invite', async () => {
    const owner = await newOwner(t);
    const inv = await createInvite(t, owner);
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 10 * 60_000 + 1000);
    const res = await post(enrollBody(inv.token, newDeviceKeys()));
    expect(res.status).toBe(401);
  });

  it('answers 400 for a bad proof of possession and leaves the invite usable', async () => {
    const owner = await newOwner(t);
    const inv = await createInvite(t, owner);
    const keys = newDeviceKeys();
    const other = newDeviceKeys();
    const badProofs = [
      other.proof(), // someone else's key signing its own key
      other.sign(Buffer.from(keys.identityPublicKey, 'hex')), // someone else's key over our key
      keys.sign('not the identity key'), // our key over the wrong message
      keys.sign(keys.identityPublicKey), // our key over the hex text instead of the raw bytes
      '00'.repeat(64),
    ];
    for (const proof of badProofs) {
      const res = await post(enrollBody(inv.token, keys, { proof_of_possession: proof }));
      expect(res.status).toBe(400);
      expect(typeof res.body.detail).toBe('string');
    }
    expect(await inviteStatus(t, owner, inv.id)).toBe('active');
    const list = await t.request({ method: 'GET', url: '/api/v1/devices', headers: owner.auth });
    expect(list.body.devices).toHaveLength(0);

    const ok = await post(enrollBody(inv.token, keys));
    expect(ok.status).toBe(201);
    expect(await inviteStatus(t, owner, inv.id)).toBe('consumed');
  });

  it('answers 400 for malformed keys or fields and leaves the invite usable', async () => {
    const owner = await newOwner(t);
    const inv = await createInvite(t, owner);
    const keys = newDeviceKeys();
    const cases: Record<string, unknown>[] = [
      { identity_public_key: keys.identityPublicKey.slice(0, 62) },
      { identity_public_key: keys.identityPublicKey + '00' },
      { identity_public_key: 'zz' + keys.identityPublicKey.slice(2) },
      { identity_public_key: Buffer.from(keys.identityPublicKey, 'hex').toString('base64') },
      { identity_public_key: null },
      { identity_public_key: { x: 1 } },
      { ephemeral_public_key: keys.ephemeralPublicKey.slice(2) },
      { ephemeral_public_key: 'g'.repeat(64) },
      { ephemeral_public_key: 12345 },
      { proof_of_possession: keys.proof().slice(0, 126) },
      { proof_of_possession: 'x'.repeat(128) },
      { proof_of_possession: { sig: keys.proof() } },
      { invite_token: { token: inv.token } },
      { invite_token: '' },
      { platform: { name: 'node' } },
    ];
    for (const c of cases) {
      const res = await post(enrollBody(inv.token, keys, c));
      expect(res.status, JSON.stringify(c)).toBe(400);
      expect(typeof res.body.detail).toBe('string');
    }
    for (const missing of ['invite_token', 'identity_public_key', 'ephemeral_public_key', 'proof_of_possession']) {
      const body: Record<string, unknown> = enrollBody(inv.token, keys);
      delete body[missing];
      const res = await post(body);
      expect(res.status, `without ${missing}`).toBe(400);
    }
    const notJson = await t.request({ method: 'POST', url: '/api/v1/enroll', headers: { 'content-type': 'application/json' }, payload: '{"invite_token":' });
    expect(notJson.status).toBe(400);
    expect((await post([])).status).toBe(400);

    expect(await inviteStatus(t, owner, inv.id)).toBe('active');
    const ok = await post(enrollBody(inv.token, keys));
    expect(ok.status).toBe(201);
  });

  it('answers 400 for a 32-byte identity key that is not a valid Ed25519 public key', async () => {
    const owner = await newOwner(t);
    const inv = await createInvite(t, owner);
    const keys = newDeviceKeys();
    // y = p = 2^255 - 19 (little-endian): not a canonical point encoding
    const res = await post(enrollBody(inv.token, keys, { identity_public_key: 'ed' + 'ff'.repeat(30) + '7f' }));
    expect(res.status).toBe(400);
    expect(await inviteStatus(t, owner, inv.id)).toBe('active');
  });

  it('answers 400 for a small-order identity key (even with the signature that verifies for any message) and for an all-zero or low-order X25519 key; the invite stays usable', async () => {
    const owner = await newOwner(t);
    const inv = await createInvite(t, owner);
    const keys = newDeviceKeys();
    const weak = await post(enrollBody(inv.token, keys, { identity_public_key: SMALL_ORDER_ED25519, proof_of_possession: UNIVERSAL_SIGNATURE }));
    expect(weak.status).toBe(400);
    expect(weak.body.detail).toMatch(/identity_public_key .*small order/);
    for (const u of LOW_ORDER_X25519) {
      const res = await post(enrollBody(inv.token, keys, { ephemeral_public_key: u }));
      expect(res.status, u).toBe(400);
      expect(res.body.detail).toMatch(/ephemeral_public_key .*low order/);
    }
    expect(await inviteStatus(t, owner, inv.id)).toBe('active');
    expect((await post(enrollBody(inv.token, keys))).status).toBe(201);
  });

  it('is public: an Authorization header is not needed and a garbage one does not matter', async () => {
    const owner = await newOwner(t);
    const inv = await createInvite(t, owner);
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/enroll',
      headers: { authorization: 'Bearer garbage' },
      payload: enrollBody(inv.token, newDeviceKeys()),
    });
    expect(res.status).toBe(201);
  });
});

describe('POST /api/v1/enroll rate limit (5 per IP per 10 minutes)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(() => t.close());

  it('refuses the 6th request from one IP with 429 and Retry-After; other IPs are unaffected', async () => {
    const owner = await newOwner(t);
    const ip = '203.0.113.7';
    const send = (payload: unknown, remoteAddress = ip) =>
      t.request({ method: 'POST', url: '/api/v1/enroll', payload: payload as object, remoteAddress });

    // five requests of any outcome (success, unknown invite, validation error) use the budget
    const first = await send(enrollBody((await createInvite(t, owner)).token, newDeviceKeys()));
    expect(first.status).toBe(201);
    expect((await send(enrollBody('svc_tok_unknown', newDeviceKeys()))).status).toBe(401);
    expect((await send({ invite_token: 'x' })).status).toBe(400);
    expect((await send(enrollBody('svc_tok_unknown', newDeviceKeys()))).status).toBe(401);
    expect((await send(enrollBody('svc_tok_unknown', newDeviceKeys()))).status).toBe(401);

    // the 6th is refused even with a valid invite, and the invite stays unused
    const inv = await createInvite(t, owner);
    const sixth = await send(enrollBody(inv.token, newDeviceKeys()));
    expect(sixth.status).toBe(429);
    expect(typeof sixth.body.detail).toBe('string');
    const retryAfter = Number(sixth.headers['retry-after']);
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(600);
    const invites = await t.request({ method: 'GET', url: '/api/v1/invites', headers: owner.auth });
    expect((invites.body.invites as { id: string; status: string }[]).find((i) => i.id === inv.id)?.status).toBe('active');

    // counted before validation: a malformed body is refused with 429 too
    expect((await send({})).status).toBe(429);

    // another IP has its own budget
    const elsewhere = await send(enrollBody(inv.token, newDeviceKeys()), '198.51.100.9');
    expect(elsewhere.status).toBe(201);
  });

  it('the budget is restored after 10 minutes', async () => {
    const owner = await newOwner(t);
    const ip = '203.0.113.8';
    const send = (payload: unknown) => t.request({ method: 'POST', url: '/api/v1/enroll', payload: payload as object, remoteAddress: ip });
    for (let i = 0; i < 5; i++) expect((await send(enrollBody('svc_tok_unknown', newDeviceKeys()))).status).toBe(401);
    expect((await send(enrollBody('svc_tok_unknown', newDeviceKeys()))).status).toBe(429);

    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 10 * 60_000 + 1000);
    const owner2Invite = await createInvite(t, owner);
    const res = await send(enrollBody(owner2Invite.token, newDeviceKeys()));
    expect(res.status).toBe(201);
  });
});

describe('GET /api/v1/devices/{id}/status', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000' } });
  });
  afterAll(() => t.close());

  it('answers {device_id, status} without authentication, then 429 with Retry-After on an immediate second call', async () => {
    const owner = await newOwner(t);
    const { res: e } = await enroll(t, (await createInvite(t, owner)).token);
    expect(e.status).toBe(201);
    const id = e.body.device_id as string;

    const first = await t.request({ method: 'GET', url: `/api/v1/devices/${id}/status` });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ device_id: id, status: 'PENDING' });

    const second = await t.request({ method: 'GET', url: `/api/v1/devices/${id}/status` });
    expect(second.status).toBe(429);
    expect(typeof second.body.detail).toBe('string');
    const retryAfter = Number(second.headers['retry-after']);
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(5);

    // the limit is per device: another device can still be polled
    const { res: e2 } = await enroll(t, (await createInvite(t, owner)).token);
    const other = await t.request({ method: 'GET', url: `/api/v1/devices/${e2.body.device_id}/status` });
    expect(other.status).toBe(200);
    expect(other.body.status).toBe('PENDING');
  });

  it('counts per device whatever the letter case of the id', async () => {
    const owner = await newOwner(t);
    const { res: e } = await enroll(t, (await createInvite(t, owner)).token);
    const id = e.body.device_id as string;
    const first = await t.request({ method: 'GET', url: `/api/v1/devices/${id}/status` });
    expect(first.status).toBe(200);
    // the same device named with uppercase hex is the same device: still inside its 5-second window
    const upper = await t.request({ method: 'GET', url: `/api/v1/devices/${id.toUpperCase()}/status` });
    expect(upper.status).toBe(429);
    expect(upper.headers['retry-after']).toBeDefined();
  });

  it('shows the state change after approval once the 5-second window has passed', async () => {
    const owner = await newOwner(t);
    const { res: e } = await enroll(t, (await createInvite(t, owner)).token);
    const id = e.body.device_id as string;
    expect((await t.request({ method: 'GET', url: `/api/v1/devices/${id}/status` })).body.status).toBe('PENDING');
    const approve = await t.request({ method: 'PATCH', url: `/api/v1/devices/${id}/approve`, headers: owner.auth });
    expect(approve.status).toBe(200);
    expect((await t.request({ method: 'GET', url: `/api/v1/devices/${id}/status` })).status).toBe(429);

    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 5_100);
    const later = await t.request({ method: 'GET', url: `/api/v1/devices/${id}/status` });
    expect(later.status).toBe(200);
    expect(later.body).toEqual({ device_id: id, status: 'APPROVED' });
  });

  it('answers 404 for an unknown id and 400 for a non-uuid id', async () => {
    const unknown = await t.request({ method: 'GET', url: `/api/v1/devices/${randomUUID()}/status` });
    expect(unknown.status).toBe(404);
    expect(typeof unknown.body.detail).toBe('string');
    const bad = await t.request({ method: 'GET', url: '/api/v1/devices/not-a-uuid/status' });
    expect(bad.status).toBe(400);
    expect(typeof bad.body.detail).toBe('string');
  });
});
