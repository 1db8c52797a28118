/**
 * Signed, rotating X25519 prekeys and one-time prekeys (Signal X3DH rev. 1 §§3.2-3.4), against a
 * malicious server: a swapped or forged signed prekey is refused by the initiator; a rotated
 * signed prekey's private key is gone after its grace period (forward secrecy of recorded initial
 * messages); a one-time prekey's private key is used once (a replayed initial message, or a second
 * one built on the same OPK the server handed out twice, is refused). The publishing upkeep and
 * the claim run against the real server too.
 */
import { SIGNING_DOMAINS, domainSeparated, type PrekeyBundle, type PrekeyCount, type PublishPrekeysRequest } from '@parley/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activeAgent, newOwner, registerOwnerDevice, type Agent, type Owner, type OwnerDevice, startApp, type TestApp } from '@parley/server/testing';
import { ParleyApiError } from '../src/client/errors.js';
import { ParleyClient } from '../src/client/rest.js';
import { DeviceIdentity } from '../src/crypto/keys.js';
import {
  DEFAULT_PREKEY_SCHEDULE,
  PrekeyStore,
  prekeyId,
  signPrekey,
  signedPrekeySigningInput,
  verifySignedPrekey,
  type PrekeyStateJSON,
} from '../src/crypto/prekeys.js';
import { bytesToHex, CryptoError, ed25519Sign, equalBytes, x25519DH, x25519Keygen } from '../src/crypto/primitives.js';
import { encodePublicKey } from '../src/crypto/x3dh.js';
import { claimPeerPrekeys, ensurePrekeys } from '../src/secure/prekeys.js';

const DAY = 24 * 60 * 60 * 1000;
const T0 = Date.UTC(2030, 0, 1);

/** A peer as the device directory describes it. */
const peerOf = (identity: DeviceIdentity, deviceId: string) => ({ device_id: deviceId, identity_public_key: identity.identityPublicKeyHex, ephemeral_public_key: identity.ephemeralPublicKeyHex });

/** An in-memory prekey service (what the routes do), whose claims a test may tamper with. */
class FakeService {
  signed: PublishPrekeysRequest['signed_prekey'];
  oneTime: { key_id: string; public_key: string }[] = [];
  published: PublishPrekeysRequest[] = [];
  tamper: (b: PrekeyBundle) => PrekeyBundle = (b) => b;
  readonly client = {
    prekeyCount: async (id: string): Promise<PrekeyCount> => ({ device_id: id, signed_prekey_key_id: this.signed?.key_id ?? null, one_time_available: this.oneTime.length }),
    publishPrekeys: async (body: PublishPrekeysRequest = {}): Promise<PrekeyCount> => {
      this.published.push(body);
      if (body.signed_prekey) this.signed = body.signed_prekey;
      this.oneTime.push(...(body.one_time ?? []));
      return this.client.prekeyCount('d');
    },
    claimPrekeyBundle: async (body: { device_id: string }): Promise<PrekeyBundle> => {
      if (!this.signed) throw new ParleyApiError({ status: 404, detail: 'signed prekey for this device not found', method: 'POST', path: '/api/v1/prekeys/claim' });
      return this.tamper({ device_id: body.device_id, signed_prekey: this.signed, one_time_prekey: this.oneTime.shift() ?? null });
    },
  };
}

/**
 * The X3DH DH outputs both sides compute from the prekeys alone (DH3 = DH(EK_A, SPK_B) and
 * DH4 = DH(EK_A, OPK_B), X3DH §3.3): what a recorded initial message's secrecy rests on once the
 * identity keys are compromised.
 */
function initiatorPrekeyDh(spk: Uint8Array, opk?: Uint8Array) {
  const ek = x25519Keygen();
  return { ek: ek.publicKey, dh3: x25519DH(ek.secretKey, spk), dh4: opk && x25519DH(ek.secretKey, opk) };
}

describe('signed prekeys: signature (X3DH §3.2-3.3)', () => {
  const bob = DeviceIdentity.generate('bob');

  it('signs Encode(SPK) under the signed-prekey domain tag, with an identifier bound to the key', () => {
    const spk = signPrekey(bob, x25519Keygen().publicKey);
    expect(spk.keyId).toBe(prekeyId(spk.publicKey));
    expect(spk.keyId).toMatch(/^[0-9a-f]{32}$/);
    expect(signedPrekeySigningInput(spk.publicKey)).toEqual(domainSeparated(SIGNING_DOMAINS.signedPrekey, encodePublicKey(spk.publicKey)));
    expect(verifySignedPrekey(bob.identityPublicKey, spk)).toBe(true);
  });

  it('refuses a signature by another key, over the bare Encode(SPK), for another domain, or under another key id', () => {
    const spk = signPrekey(bob, x25519Keygen().publicKey);
    const mallory = DeviceIdentity.generate();
    expect(verifySignedPrekey(mallory.identityPublicKey, spk)).toBe(false);
    expect(verifySignedPrekey(bob.identityPublicKey, { ...spk, signature: bob.sign(encodePublicKey(spk.publicKey)) })).toBe(false);
    expect(verifySignedPrekey(bob.identityPublicKey, { ...spk, signature: bob.sign(domainSeparated(SIGNING_DOMAINS.pqPrekey, encodePublicKey(spk.publicKey))) })).toBe(false);
    const other = signPrekey(bob, x25519Keygen().publicKey);
    expect(verifySignedPrekey(bob.identityPublicKey, { ...spk, keyId: other.keyId })).toBe(false);
  });
});

describe('claiming a bundle from a malicious server', () => {
  const bob = DeviceIdentity.generate('bob');
  const peer = peerOf(bob, '00000000-0000-4000-8000-0000000000b0');

  async function servedBy(tamper?: (b: PrekeyBundle) => PrekeyBundle) {
    const s = new FakeService();
    await ensurePrekeys(s.client, bob, peer.device_id, PrekeyStore.create(bob, T0), async () => {}, T0);
    if (tamper) s.tamper = tamper;
    return s;
  }

  it('an honest bundle verifies: the signed prekey and one one-time prekey', async () => {
    const s = await servedBy();
    const got = await claimPeerPrekeys(s.client, 'alice', peer);
    expect(got?.signedPrekey.keyId).toBe(s.signed!.key_id);
    expect(got?.oneTimePrekey?.keyId).toBe(s.published[0]!.one_time![0]!.key_id);
  });

  it('the server swaps in its own signed prekey (self-signed, or with the real signature): the initiator refuses', async () => {
    const server = DeviceIdentity.generate();
    const own = signPrekey(server, x25519Keygen().publicKey);
    const swapped = (sig: 'own' | 'real') => (b: PrekeyBundle) => ({
      ...b,
      signed_prekey: { key_id: own.keyId, public_key: Buffer.from(own.publicKey).toString('base64'), signature: sig === 'own' ? Buffer.from(own.signature).toString('base64') : b.signed_prekey.signature },
    });
    for (const how of ['own', 'real'] as const) {
      const s = await servedBy(swapped(how));
      await expect(claimPeerPrekeys(s.client, 'alice', peer)).rejects.toMatchObject({ name: 'CryptoError', code: 'bad_signature' });
    }
  });

  it('a signature of an older form (over the bare Encode(SPK)), a malformed key, or another device in the answer: refused', async () => {
    const kp = x25519Keygen().publicKey;
    const undomained = { key_id: prekeyId(kp), public_key: Buffer.from(kp).toString('base64'), signature: Buffer.from(bob.sign(encodePublicKey(kp))).toString('base64') };
    for (const tamper of [
      (b: PrekeyBundle) => ({ ...b, signed_prekey: undomained }),
      (b: PrekeyBundle) => ({ ...b, signed_prekey: { ...b.signed_prekey, public_key: 'AAAA' } }),
      (b: PrekeyBundle) => ({ ...b, device_id: '00000000-0000-4000-8000-0000000000c0' }),
    ]) {
      const s = await servedBy(tamper);
      await expect(claimPeerPrekeys(s.client, 'alice', peer)).rejects.toBeInstanceOf(CryptoError);
    }
  });

  it('no signed prekey (404: an older client) gives undefined; any other failure is thrown, not read as "none"', async () => {
    const s = new FakeService();
    expect(await claimPeerPrekeys(s.client, 'alice', peer)).toBeUndefined();
    s.signed = { key_id: 'x', public_key: 'x', signature: 'x' };
    s.client.claimPrekeyBundle = async () => {
      throw new ParleyApiError({ status: 503, detail: 'unavailable', method: 'POST', path: '/api/v1/prekeys/claim' });
    };
    await expect(claimPeerPrekeys(s.client, 'alice', peer)).rejects.toBeInstanceOf(ParleyApiError);
  });
});

describe('rotation and deletion (X3DH §3.2, §3.4)', () => {
  const bob = DeviceIdentity.generate('bob');

  it('rotates weekly, keeps the previous private key one more week, then wipes it: a recorded first message no longer decrypts', () => {
    const store = PrekeyStore.create(bob, T0);
    const first = store.signedPrekey;
    const recorded = initiatorPrekeyDh(first.publicKey);
    expect(store.rotate(bob, T0 + 6 * DAY)).toBe(false);

    expect(store.rotate(bob, T0 + 7 * DAY)).toBe(true);
    expect(store.signedPrekey.keyId).not.toBe(first.keyId);
    expect(store.signedPrekeyIds).toEqual([store.signedPrekey.keyId, first.keyId]);
    // In grace: a message in flight still decrypts.
    expect(equalBytes(x25519DH(store.signedPrekeyPair(first.keyId, T0 + 13 * DAY).secretKey, recorded.ek), recorded.dh3)).toBe(true);

    // Grace over: even before the next upkeep, the key is refused; the upkeep wipes it.
    expect(() => store.signedPrekeyPair(first.keyId, T0 + 14 * DAY)).toThrow(expect.objectContaining({ code: 'unknown_prekey' }));
    const saved = JSON.stringify(store);
    const second = store.signedPrekey.keyId;
    expect(store.rotate(bob, T0 + 14 * DAY)).toBe(true); // the second one is due too: it enters its grace
    expect(store.signedPrekeyIds).toEqual([store.signedPrekey.keyId, second]);
    const after = JSON.stringify(store);
    expect(saved).toContain(first.keyId);
    expect(after).not.toContain(first.keyId);

    // Everything the device holds afterwards (identity + prekey state) fails to recompute DH3.
    const restored = PrekeyStore.fromJSON(after, bob);
    expect(() => restored.signedPrekeyPair(first.keyId, T0 + 14 * DAY)).toThrow(CryptoError);
    const { signed } = JSON.parse(after) as PrekeyStateJSON;
    for (const s of signed) {
      const kp = restored.signedPrekeyPair(s.key_id, T0 + 14 * DAY);
      expect(equalBytes(x25519DH(kp.secretKey, recorded.ek), recorded.dh3)).toBe(false);
    }
  });

  it('a one-time prekey answers once: its private key is wiped on use, a replay naming it is refused', () => {
    const store = PrekeyStore.create(bob, T0);
    const [opk] = store.generateOneTime(1, T0);
    const msg = initiatorPrekeyDh(store.signedPrekey.publicKey, opk!.publicKey);
    expect(equalBytes(store.oneTimeDh(opk!.keyId, msg.ek), msg.dh4!)).toBe(true);
    expect(store.consumeOneTime(opk!.keyId)).toBe(true);
    expect(store.hasOneTime(opk!.keyId)).toBe(false);
    expect(JSON.stringify(store)).not.toContain(opk!.keyId);
    // The replayed initial message, or a second one the server built on the same OPK handed out twice.
    const second = initiatorPrekeyDh(store.signedPrekey.publicKey, opk!.publicKey);
    for (const m of [msg, second]) expect(() => store.oneTimeDh(opk!.keyId, m.ek)).toThrow(expect.objectContaining({ code: 'unknown_prekey' }));
    expect(store.consumeOneTime(opk!.keyId)).toBe(false);
  });

  it('an unknown one-time or signed prekey id is refused', () => {
    const store = PrekeyStore.create(bob, T0);
    expect(() => store.oneTimeDh('0'.repeat(32), x25519Keygen().publicKey)).toThrow(expect.objectContaining({ code: 'unknown_prekey' }));
    expect(() => store.signedPrekeyPair('0'.repeat(32), T0)).toThrow(expect.objectContaining({ code: 'unknown_prekey' }));
  });

  it('keeps at most maxOneTimeHeld one-time private keys, wiping the oldest', () => {
    const store = PrekeyStore.create(bob, T0, { maxOneTimeHeld: 5 });
    const first = store.generateOneTime(3, T0);
    const next = store.generateOneTime(4, T0 + 1);
    expect(store.oneTimeHeld).toBe(5);
    expect(first.slice(0, 2).map((k) => store.hasOneTime(k.keyId))).toEqual([false, false]);
    expect([first[2]!, ...next].every((k) => store.hasOneTime(k.keyId))).toBe(true);
  });

  it('saves and restores with every private key; a state of another identity, or a tampered one, is refused', () => {
    const store = PrekeyStore.create(bob, T0);
    store.generateOneTime(3, T0);
    store.rotate(bob, T0 + 8 * DAY);
    const json = store.toJSON();
    const back = PrekeyStore.fromJSON(JSON.stringify(json), bob);
    expect(back.toJSON()).toEqual(json);
    expect(() => PrekeyStore.fromJSON(json, DeviceIdentity.generate())).toThrow(expect.objectContaining({ code: 'invalid_state' }));
    const forged = { ...json, signed: [{ ...json.signed[0]!, signature: bytesToHex(ed25519Sign(new Uint8Array(1), new Uint8Array(32))) }] };
    expect(() => PrekeyStore.fromJSON(forged, bob)).toThrow(expect.objectContaining({ code: 'invalid_state' }));
    expect(() => PrekeyStore.fromJSON({ v: 1, signed: [], one_time: [] }, bob)).toThrow(CryptoError);
    expect(() => PrekeyStore.fromJSON({ ...json, signed: [{ ...json.signed[0]!, created_at: 'soon' as unknown as number }] }, bob)).toThrow(expect.objectContaining({ code: 'invalid_state' }));
  });
});

describe('publishing upkeep (ensurePrekeys)', () => {
  const bob = DeviceIdentity.generate('bob');

  it('saves new private keys before publishing; publishes the signed prekey when not served, one-time ones in batches below the low-water mark', async () => {
    const s = new FakeService();
    const store = PrekeyStore.create(bob, T0);
    const order: string[] = [];
    const save = async (state: PrekeyStateJSON) => {
      order.push(`save:${state.one_time.length}`);
    };
    const publish = s.client.publishPrekeys;
    s.client.publishPrekeys = async (body) => {
      order.push(`publish:${body?.one_time?.length ?? 0}`);
      return publish(body);
    };
    expect(await ensurePrekeys(s.client, bob, 'd', store, save, T0)).toEqual({ rotated: false, publishedSigned: true, publishedOneTime: 50 });
    expect(order).toEqual(['save:50', 'publish:50']);
    expect(s.signed).toEqual({ key_id: store.signedPrekey.keyId, public_key: expect.any(String), signature: expect.any(String) });

    expect(await ensurePrekeys(s.client, bob, 'd', store, save, T0 + DAY)).toEqual({ rotated: false, publishedSigned: false, publishedOneTime: 0 });
    s.oneTime.splice(0, 31); // 19 left: below the mark of 20
    expect(await ensurePrekeys(s.client, bob, 'd', store, save, T0 + 2 * DAY)).toEqual({ rotated: false, publishedSigned: false, publishedOneTime: DEFAULT_PREKEY_SCHEDULE.oneTimeBatch });
    expect(s.oneTime).toHaveLength(69);

    const old = store.signedPrekey.keyId;
    expect(await ensurePrekeys(s.client, bob, 'd', store, save, T0 + 7 * DAY)).toEqual({ rotated: true, publishedSigned: true, publishedOneTime: 0 });
    expect(s.signed!.key_id).not.toBe(old);
    expect(order.at(-2)).toBe('save:100');
  });
});

describe('through the real server', () => {
  let t: TestApp;
  let owner: Owner;
  let od: OwnerDevice;
  let agent: Agent;

  beforeAll(async () => {
    t = await startApp({ listen: true, env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000' } });
    owner = await newOwner(t);
    od = await registerOwnerDevice(t, owner);
    agent = await activeAgent(t, owner);
  });
  afterAll(() => t?.close());

  it('the agent publishes its bundle; an owner device claims it verified, each one-time prekey once, then the signed prekey alone', async () => {
    // The server never checks prekey signatures: the identity whose key the claimer checks against is the test's.
    const bob = DeviceIdentity.generate(agent.deviceId);
    const agentRest = new ParleyClient({ baseUrl: t.baseUrl, deviceToken: agent.jwt });
    const ownerRest = new ParleyClient({ baseUrl: t.baseUrl, ownerToken: owner.token, tenantId: owner.tenantId, ownerDeviceId: od.deviceId });
    const store = PrekeyStore.create(bob, T0, { oneTimeBatch: 2, oneTimeLowWater: 1 });
    expect(await ensurePrekeys(agentRest, bob, agent.deviceId, store, async () => {}, T0)).toEqual({ rotated: false, publishedSigned: true, publishedOneTime: 2 });
    expect(await agentRest.prekeyCount(agent.deviceId)).toEqual({ device_id: agent.deviceId, signed_prekey_key_id: store.signedPrekey.keyId, one_time_available: 2 });

    const peer = peerOf(bob, agent.deviceId);
    const claims = [await claimPeerPrekeys(ownerRest, od.deviceId, peer), await claimPeerPrekeys(ownerRest, od.deviceId, peer), await claimPeerPrekeys(ownerRest, od.deviceId, peer)];
    expect(claims.map((c) => c?.signedPrekey.keyId)).toEqual(Array(3).fill(store.signedPrekey.keyId));
    const opks = claims.map((c) => c?.oneTimePrekey?.keyId);
    expect(opks[2]).toBeUndefined();
    expect(opks.slice(0, 2).every((id) => id !== undefined && store.hasOneTime(id))).toBe(true);
    expect(new Set(opks).size).toBe(3);

    // Verified against the wrong identity (the directory's key of another device): refused.
    await expect(claimPeerPrekeys(ownerRest, od.deviceId, peerOf(DeviceIdentity.generate(), agent.deviceId))).rejects.toMatchObject({ code: 'bad_signature' });
    // The upkeep tops up below the low-water mark.
    expect((await ensurePrekeys(agentRest, bob, agent.deviceId, store, async () => {}, T0 + DAY)).publishedOneTime).toBe(2);
  });
});
