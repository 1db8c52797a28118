/**
 * Domain separation of identity-key signatures (@parley/protocol SIGNING_DOMAINS): a malicious
 * server cannot use token renewal as a signing oracle, and no signature made for another
 * purpose passes as a PQ prekey signature. Also: a device whose served PQ prekey carries a
 * signature in an older form publishes it again, and the SDK sends key bindings.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp, newOwner, type Owner } from '@parley/server/testing';
import { InvalidChallengeError, renewDeviceToken } from '../src/client/enrollment.js';
import { registerOwnerDeviceBound } from '../src/client/key-binding.js';
import { ParleyClient } from '../src/client/rest.js';
import { DeviceIdentity } from '../src/crypto/keys.js';
import { mlKem768Keygen } from '../src/crypto/ml-kem.js';
import { encodeKemPublicKey, pqPrekeyId, pqPrekeyToWire, verifyPqPrekey } from '../src/crypto/pq-prekey.js';
import { ed25519Sign, ed25519Verify } from '../src/crypto/primitives.js';
import { ensurePqPrekey } from '../src/secure/post-quantum.js';
import { domainSeparated, SIGNING_DOMAINS, tokenRenewalMessage, utf8Bytes } from '@parley/protocol';

const DEVICE = '5b0c3f4e-8a61-4a0e-9c57-1d2f3a4b5c6d';
const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

/** A client of a server that answers every renewal challenge with `challenge` and records what it was sent. */
function maliciousServer(challenge: string) {
  const renewals: unknown[] = [];
  const client = new ParleyClient({
    baseUrl: 'http://evil.test',
    fetch: async (url, init) => {
      if (url.endsWith('/token/challenge')) return json(201, { device_id: DEVICE, challenge, expires_at: new Date(Date.now() + 60_000).toISOString() });
      renewals.push(JSON.parse(String(init.body)));
      return json(200, { device_id: DEVICE, device_jwt: 'x.y.z', expires_at: new Date(Date.now() + 60_000).toISOString() });
    },
  });
  return { client, renewals };
}

describe('token renewal is no signing oracle', () => {
  const identity = DeviceIdentity.generate(DEVICE);
  const mac = 'A'.repeat(43);
  const wellFormed = `parley-renew:${DEVICE}:${Date.now() + 60_000}:${'0'.repeat(32)}:${mac}`;

  it('refuses to sign a challenge that is the encoding of an ML-KEM key (or anything not of the challenge form)', async () => {
    const evilKem = mlKem768Keygen();
    const encoded = encodeKemPublicKey(evilKem.publicKey);
    const bad = [
      Buffer.from(encoded).toString('latin1'),
      Buffer.from(encoded).toString('base64'),
      `parley-renew:${DEVICE}:${Buffer.from(encoded).toString('hex')}`,
      wellFormed.replace(DEVICE, '00000000-0000-4000-8000-000000000000'),
      `parley-renew:${DEVICE}:1:${'0'.repeat(32)}:${mac}\u00e9`,
      `${wellFormed}:${'x'.repeat(300)}`,
      `other:${DEVICE}:1:${'0'.repeat(32)}:${mac}`,
    ];
    for (const challenge of bad) {
      let signed = 0;
      const { client, renewals } = maliciousServer(challenge);
      await expect(
        renewDeviceToken(client, DEVICE, (m) => {
          signed++;
          return identity.sign(m);
        }),
      ).rejects.toBeInstanceOf(InvalidChallengeError);
      expect(signed).toBe(0);
      expect(renewals).toHaveLength(0);
    }
  });

  it('signs a well-formed challenge under the token-renewal domain, never its bare bytes', async () => {
    const { client, renewals } = maliciousServer(wellFormed);
    await renewDeviceToken(client, DEVICE, (m) => identity.sign(m), { setToken: false });
    const sent = renewals[0] as { challenge: string; signature: string };
    const sig = Buffer.from(sent.signature, 'hex');
    expect(ed25519Verify(sig, tokenRenewalMessage(wellFormed), identity.identityPublicKey)).toBe(true);
    expect(ed25519Verify(sig, Buffer.from(wellFormed, 'utf8'), identity.identityPublicKey)).toBe(false);
  });
});

describe('PQ prekey signatures are domain-separated', () => {
  it('a signature over the bare EncodeKEM (what the renewal oracle produced) does not pass as a PQ prekey signature', () => {
    const identity = DeviceIdentity.generate();
    const evil = mlKem768Keygen();
    // The old oracle: the server's "challenge" was EncodeKEM(PQPK) and the device signed its bytes.
    const oracleSignature = identity.sign(encodeKemPublicKey(evil.publicKey));
    expect(verifyPqPrekey(identity.identityPublicKey, { keyId: pqPrekeyId(evil.publicKey), publicKey: evil.publicKey, signature: oracleSignature })).toBe(false);
    // Nor does a signature under another domain over the same bytes.
    const renewalSignature = identity.sign(tokenRenewalMessage(Buffer.from(encodeKemPublicKey(evil.publicKey)).toString('latin1')));
    expect(verifyPqPrekey(identity.identityPublicKey, { keyId: pqPrekeyId(evil.publicKey), publicKey: evil.publicKey, signature: renewalSignature })).toBe(false);
    // The device's own prekey verifies.
    expect(verifyPqPrekey(identity.identityPublicKey, identity.pqPrekey!)).toBe(true);
  });

  it('ensurePqPrekey publishes again when the served prekey has the same key id but another (older-form) signature', async () => {
    const identity = DeviceIdentity.generate('d1');
    const prekey = identity.pqPrekey!;
    const wire = pqPrekeyToWire(prekey);
    const legacySignature = Buffer.from(ed25519Sign(encodeKemPublicKey(prekey.publicKey), new Uint8Array(32).fill(7))).toString('base64');
    let served = { key_id: prekey.keyId, signature: legacySignature };
    const published: unknown[] = [];
    const client = {
      claimPqPrekey: async () => undefined,
      pqPrekeyCount: async () => ({ device_id: 'd1', last_resort: true, last_resort_key_id: served.key_id, last_resort_signature: served.signature, one_time_available: 0 }),
      publishPqPrekeys: async (body: { last_resort: { key_id: string; signature: string } }) => {
        published.push(body);
        served = { key_id: body.last_resort.key_id, signature: body.last_resort.signature };
        return {};
      },
    } as unknown as ParleyClient;
    expect(await ensurePqPrekey(client, identity, 'd1')).toBe(true);
    expect(published).toEqual([{ last_resort: wire }]);
    expect(await ensurePqPrekey(client, identity, 'd1')).toBe(false);
  });
});

describe('key bindings from the SDK', () => {
  let t: TestApp;
  let owner: Owner;
  beforeAll(async () => {
    t = await startApp({ listen: true, env: { KEY_BINDING_REQUIRED: 'true' } });
    owner = await newOwner(t);
  });
  afterAll(() => t.close());

  it('registers an owner device with a fresh key binding on a server that requires one', async () => {
    const client = new ParleyClient({ baseUrl: t.baseUrl, ownerToken: owner.token });
    const keys = DeviceIdentity.generate();
    await expect(client.registerOwnerDevice({ ...keys.publicKeys })).rejects.toMatchObject({ status: 400 });
    const reg = await registerOwnerDeviceBound(client, { identityPublicKey: keys.identityPublicKeyHex, ephemeralPublicKey: keys.ephemeralPublicKeyHex, sign: (m) => keys.sign(m) }, { name: 'laptop' });
    expect(reg.status).toBe('ACTIVE');
  });
});

describe('domain-separated bytes', () => {
  it('are UTF-8(domain) || 0x00 || body, with the UTF-8 of TextEncoder (lone surrogates as U+FFFD)', () => {
    for (const text of ['', 'parley-renew:abc', 'é€😀', 'a\ud800b']) {
      expect(Array.from(utf8Bytes(text))).toEqual(Array.from(new TextEncoder().encode(text)));
    }
    const tagged = domainSeparated(SIGNING_DOMAINS.pqPrekey, Uint8Array.of(1, 2));
    expect(Array.from(tagged)).toEqual([...new TextEncoder().encode('parley/v2/pq-prekey'), 0, 1, 2]);
  });
});
