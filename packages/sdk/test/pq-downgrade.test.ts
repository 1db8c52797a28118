/**
 * Post-quantum downgrades by a malicious service (Signal PQXDH rev. 3 §3.3; RFC 9420 with the
 * X-Wing ciphersuite): the service below serves keys as it likes — a PQ prekey with a bad
 * signature or a foreign key id, no PQ prekey at all (404), a classical KeyPackage although a
 * hybrid one was asked for — and relays whatever one messenger seals to the other. Checked: the
 * initiator aborts on a forged PQ prekey; with post-quantum required (the device option or the
 * tenant's `require_post_quantum` setting) no classical X3DH or MLS session is started or accepted;
 * `protection()` says how a conversation is keyed.
 */
import { describe, expect, it } from 'vitest';
import { ParleyApiError } from '../src/client/errors.js';
import type { ParleyClient } from '../src/client/rest.js';
import { DeviceIdentity } from '../src/crypto/keys.js';
import type { PqPrekeyWire } from '../src/crypto/pq-prekey.js';
import { ciphersuiteId, MLS_CIPHERSUITE, MLS_HYBRID_CIPHERSUITE } from '../src/mls/ciphersuites.js';
import { SecureMessenger } from '../src/secure/messenger.js';
import type { SealedWire, SecureMessage, SecureMessengerError, SecureMessengerOptions } from '../src/secure/types.js';
import { MemorySessionStore } from '../src/storage.js';

const CONVERSATION = '3b0c6f1e-8d2a-4f5b-9c7e-1a2b3c4d5e6f';
const CLASSICAL = ciphersuiteId(MLS_CIPHERSUITE);

type PqMode = 'honest' | 'withhold' | 'bad-signature' | 'foreign-id';
type KpMode = 'honest' | 'classical';

const notFound = (path: string) => new ParleyApiError({ status: 404, detail: 'not found', method: 'POST', path });

/** Flip one bit of a base64 blob. */
function flipped(b64: string): string {
  const bytes = Buffer.from(b64, 'base64');
  bytes[0]! ^= 1;
  return bytes.toString('base64');
}

/** The key directory and settings of a service that may lie (see the file comment). */
class MaliciousService {
  pqMode: PqMode = 'honest';
  kpMode: KpMode = 'honest';
  readonly pq = new Map<string, PqPrekeyWire>();
  readonly kps = new Map<string, { suite: number; kp: string }[]>();

  private servedPq(deviceId: string): PqPrekeyWire {
    const wire = this.pq.get(deviceId);
    if (!wire || this.pqMode === 'withhold') throw notFound('/api/v1/pq-prekeys/claim');
    if (this.pqMode === 'bad-signature') return { ...wire, signature: flipped(wire.signature) };
    // another device's prekey id with this key: the id must be the key's hash
    if (this.pqMode === 'foreign-id') return { ...wire, key_id: [...this.pq.values()].find((w) => w.key_id !== wire.key_id)!.key_id };
    return wire;
  }

  private claimKp(deviceId: string, suites: number[]): { kp: string; suite: number } {
    const stock = this.kps.get(deviceId) ?? [];
    const wanted = this.kpMode === 'classical' ? [CLASSICAL] : suites;
    const i = stock.findIndex((k) => wanted.includes(k.suite));
    if (i < 0) throw notFound('/api/v1/mls/key-packages/claim');
    return stock.splice(i, 1)[0]!;
  }

  /** A REST client acting as `deviceId` (the routes the messenger uses), of a tenant that requires post-quantum or not. */
  client(deviceId: string, tenantRequiresPq = false): ParleyClient {
    const count = (id: string) => {
      const stock = this.kps.get(id) ?? [];
      const suites = [...new Set(stock.map((k) => k.suite))];
      return { device_id: id, available: stock.length, by_cipher_suite: suites.map((s) => ({ cipher_suite: s, available: stock.filter((k) => k.suite === s).length })) };
    };
    return {
      currentDeviceToken: async () => 'device-jwt',
      currentOwnerToken: async () => undefined,
      getSelfDeviceSettings: async () => ({ device_id: deviceId, read_receipts_enabled: true, read_receipts_effective: true, require_post_quantum: tenantRequiresPq }),
      pqPrekeyCount: async (id: string) => ({ device_id: id, last_resort: this.pq.has(id), last_resort_key_id: this.pq.get(id)?.key_id ?? null, one_time_available: 0 }),
      publishPqPrekeys: async (body: { last_resort: PqPrekeyWire }) => {
        this.pq.set(deviceId, body.last_resort);
        return { device_id: deviceId, last_resort: true, last_resort_key_id: body.last_resort.key_id, one_time_available: 0 };
      },
      claimPqPrekey: async (body: { device_id: string }) => ({ device_id: body.device_id, ...this.servedPq(body.device_id), one_time: false }),
      keyPackageCount: async (id: string) => count(id),
      publishKeyPackages: async (body: { key_packages: string[]; cipher_suite: number }) => {
        const stock = this.kps.get(deviceId) ?? [];
        stock.push(...body.key_packages.map((kp) => ({ kp, suite: body.cipher_suite })));
        this.kps.set(deviceId, stock);
        return { ...count(deviceId), published: body.key_packages.length };
      },
      claimKeyPackage: async (body: { device_id: string; cipher_suites: number[] }) => {
        const k = this.claimKp(body.device_id, body.cipher_suites);
        return { device_id: body.device_id, key_package_id: globalThis.crypto.randomUUID(), key_package: k.kp, cipher_suite: k.suite };
      },
    } as unknown as ParleyClient;
  }
}

interface Party {
  identity: DeviceIdentity;
  store: MemorySessionStore;
  messenger: SecureMessenger;
  received: SecureMessage[];
  errors: SecureMessengerError[];
}

/** Messenger options, and whether the device's tenant sets `require_post_quantum`. */
type Setup = Partial<SecureMessengerOptions> & { tenantRequiresPq?: boolean };

async function party(svc: MaliciousService, setup: Setup = {}, identity = DeviceIdentity.generate(globalThis.crypto.randomUUID()), store = new MemorySessionStore()): Promise<Party> {
  const { tenantRequiresPq, ...options } = setup;
  const messenger = await SecureMessenger.open({ identity, store, client: svc.client(identity.deviceId!, tenantRequiresPq), mls: false, ...options });
  const p: Party = { identity, store, messenger, received: [], errors: [] };
  messenger.on('message', (m) => void p.received.push(m));
  messenger.on('error', (e) => void p.errors.push(e));
  await messenger.start();
  return p;
}

const peerOf = (p: Party) => ({ device_id: p.identity.deviceId!, identity_public_key: p.identity.identityPublicKeyHex, ephemeral_public_key: p.identity.ephemeralPublicKeyHex });

async function pair(svc: MaliciousService, a: Setup = {}, b: Setup = {}) {
  const alice = await party(svc, a);
  const bob = await party(svc, b);
  await alice.messenger.addConversation(CONVERSATION, peerOf(bob));
  await bob.messenger.addConversation(CONVERSATION, peerOf(alice));
  return { alice, bob };
}

let seq = 0;
/** The service relays a sealed wire from `from` to `to`. */
function relay(to: Party, from: Party, wire: SealedWire): Promise<void> {
  seq++;
  return to.messenger.receive({
    message_id: globalThis.crypto.randomUUID(),
    conversation_id: CONVERSATION,
    sender_device_id: from.identity.deviceId!,
    header_blob: wire.header_blob,
    ciphertext: wire.ciphertext,
    timestamp: new Date().toISOString(),
    cursor: String(seq),
    message_type: 'key_exchange', // what sealHandshake's wires are sent as
    priority: 'normal',
  });
}

const hello = new TextEncoder().encode('hello');
const codes = (p: Party) => p.errors.map((e) => e.code);

async function refusal(p: Promise<unknown>): Promise<SecureMessengerError> {
  return (await p.then(
    () => expect.unreachable('the session was started'),
    (err: unknown) => err,
  )) as SecureMessengerError;
}

/** Alice starts an X3DH session towards Bob; Bob reads the initial message. */
async function firstMessage(alice: Party, bob: Party) {
  const wire = await alice.messenger.sealHandshake(CONVERSATION, hello, { mls: false });
  await relay(bob, alice, wire);
  return wire;
}

describe('an honest service', () => {
  it('PQXDH and hybrid MLS sessions, and protection() says so on both ends', async () => {
    const svc = new MaliciousService();
    const { alice, bob } = await pair(svc);
    await firstMessage(alice, bob);
    expect(bob.received).toHaveLength(1);
    expect(alice.messenger.protection(CONVERSATION)).toEqual({ scheme: 'pqxdh', post_quantum: true });
    expect(bob.messenger.protection(CONVERSATION)).toEqual({ scheme: 'pqxdh', post_quantum: true });

    const mls = await pair(svc, { mls: true }, { mls: true });
    await relay(mls.bob, mls.alice, await mls.alice.messenger.sealHandshake(CONVERSATION, hello, { mls: true }));
    expect(mls.alice.messenger.protection(CONVERSATION)).toEqual({ scheme: 'mls-hybrid', post_quantum: true, ciphersuite: MLS_HYBRID_CIPHERSUITE });
    expect(mls.bob.messenger.protection(CONVERSATION)).toMatchObject({ scheme: 'mls-hybrid', post_quantum: true });
    expect([...alice.errors, ...bob.errors, ...mls.alice.errors, ...mls.bob.errors]).toEqual([]);
  });

  it('without a requirement, a peer without a PQ prekey (404) still gets classical X3DH, shown as such', async () => {
    const svc = new MaliciousService();
    const { alice, bob } = await pair(svc);
    svc.pqMode = 'withhold';
    await firstMessage(alice, bob);
    expect(bob.received).toHaveLength(1);
    expect(alice.messenger.protection(CONVERSATION)).toEqual({ scheme: 'x3dh', post_quantum: false });
    expect(bob.messenger.protection(CONVERSATION)).toEqual({ scheme: 'x3dh', post_quantum: false });
  });
});

describe('a forged PQ prekey (PQXDH rev. 3 §3.3: abort)', () => {
  it.each(['bad-signature', 'foreign-id'] as const)('%s: the initiator starts no session and reports pq_downgrade', async (mode) => {
    const svc = new MaliciousService();
    const { alice } = await pair(svc);
    svc.pqMode = mode;
    const err = await refusal(alice.messenger.sealHandshake(CONVERSATION, hello, { mls: false }));
    expect(err.code).toBe('pq_downgrade');
    expect(err.message).toMatch(/downgrade/);
    expect(codes(alice)).toEqual(['pq_downgrade']);
    expect(alice.messenger.sessionInfo(CONVERSATION)).toBeUndefined();
    // nothing was saved either: a new messenger from the store has no session
    await alice.messenger.close();
    const again = await party(svc, {}, alice.identity, alice.store);
    expect(again.messenger.protection(CONVERSATION)).toBeUndefined();
  });
});

/** The downgrades refused when post-quantum is required, as `required` sets it (device option or tenant setting). */
function requiredSuite(name: string, required: Setup) {
  describe(`post-quantum required (${name})`, () => {
    it('the service withholds the PQ prekey (404): no classical X3DH session', async () => {
      const svc = new MaliciousService();
      const { alice } = await pair(svc, required);
      svc.pqMode = 'withhold';
      const err = await refusal(alice.messenger.sealHandshake(CONVERSATION, hello, { mls: false }));
      expect(err.code).toBe('pq_downgrade');
      expect(alice.messenger.sessionInfo(CONVERSATION)).toBeUndefined();
      expect(await alice.messenger.requiresPostQuantum()).toBe(true);
    });

    it('a classical X3DH initial message is refused', async () => {
      const svc = new MaliciousService();
      const { alice, bob } = await pair(svc, {}, required);
      svc.pqMode = 'withhold'; // Alice (not requiring it) falls back to X3DH
      await firstMessage(alice, bob);
      expect(bob.received).toEqual([]);
      expect(codes(bob)).toEqual(['pq_downgrade']);
      expect(bob.messenger.sessionInfo(CONVERSATION)).toBeUndefined();
      // a PQXDH one is accepted
      svc.pqMode = 'honest';
      const fresh = await party(svc);
      const bob2 = await party(svc, required);
      await fresh.messenger.addConversation(CONVERSATION, peerOf(bob2));
      await bob2.messenger.addConversation(CONVERSATION, peerOf(fresh));
      await firstMessage(fresh, bob2);
      expect(bob2.received).toHaveLength(1);
      expect(bob2.messenger.protection(CONVERSATION)?.scheme).toBe('pqxdh');
    });

    it('the service hands out a classical KeyPackage: no classical MLS group (PQXDH instead, or nothing)', async () => {
      const svc = new MaliciousService();
      const { alice, bob } = await pair(svc, { mls: true, ...required }, { mls: true });
      expect(svc.kps.get(bob.identity.deviceId!)!.some((k) => k.suite === CLASSICAL)).toBe(true);
      svc.kpMode = 'classical';
      const wire = await alice.messenger.sealHandshake(CONVERSATION, hello, { mls: true });
      expect(wire.protocol).toBe('x3dh-dr');
      expect(alice.messenger.protection(CONVERSATION)).toEqual({ scheme: 'pqxdh', post_quantum: true });
      expect(codes(alice)).toEqual(['pq_downgrade']);
      // with the PQ prekey withheld too: no session at all
      const carol = await party(svc, { mls: true, ...required });
      await carol.messenger.addConversation(CONVERSATION, peerOf(bob));
      svc.pqMode = 'withhold';
      expect((await refusal(carol.messenger.sealHandshake(CONVERSATION, hello, { mls: true }))).code).toBe('pq_downgrade');
      expect(carol.messenger.sessionInfo(CONVERSATION)).toBeUndefined();
    });

    it('publishes hybrid KeyPackages only', async () => {
      const svc = new MaliciousService();
      const p = await party(svc, { mls: true, ...required });
      expect(new Set(svc.kps.get(p.identity.deviceId!)!.map((k) => k.suite))).toEqual(new Set([ciphersuiteId(MLS_HYBRID_CIPHERSUITE)]));
    });

    it('a Welcome to a classical MLS group is refused', async () => {
      const svc = new MaliciousService();
      // Bob published classical KeyPackages before the requirement; Alice is an older client (classical suite only).
      const { alice, bob } = await pair(svc, { mls: { ciphersuites: [MLS_CIPHERSUITE] } }, { mls: true });
      await bob.messenger.close();
      const bob2 = await party(svc, { mls: true, ...required }, bob.identity, bob.store);
      await bob2.messenger.refreshPostQuantumPolicy();
      const welcome = await alice.messenger.sealHandshake(CONVERSATION, hello, { mls: true });
      expect(alice.messenger.protection(CONVERSATION)?.scheme).toBe('mls-classical');
      await relay(bob2, alice, welcome);
      expect(codes(bob2)).toEqual(['pq_downgrade']);
      expect(bob2.messenger.sessionInfo(CONVERSATION)).toBeUndefined();
    });
  });
}

requiredSuite('device option', { requirePostQuantum: true });
requiredSuite('tenant setting, device without the option', { tenantRequiresPq: true });
