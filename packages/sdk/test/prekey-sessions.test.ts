/**
 * Signed and one-time prekeys in the live key agreement (Signal X3DH rev. 1 §§3.2-3.4, PQXDH
 * rev. 3 §3.3), end to end through two `SecureMessenger`s. The test plays the service: it keeps
 * the prekey directory, may lie in its claims, and relays what one messenger seals to the other.
 *
 * - An honest service: the session is agreed on the peer's signed prekey and a one-time prekey
 *   (DH4), both named in the initial message; the responder's one-time private key is gone once
 *   the session is accepted (not before: a forged message naming it does not burn it); the
 *   service's count dropped.
 * - A service that swaps the signed prekey: the initiator starts no session (`prekey_refused`).
 * - A service answering "none published" (404) for a peer device that served a signed prekey
 *   before, or while `requireSignedPrekeys` is set: refused.
 * - A replayed initial message naming a consumed one-time prekey: refused, even once the replay
 *   memory of initial messages has forgotten it.
 * - A legacy peer (no prekeys published; an older service without the routes): the unsigned path
 *   still works, and the older service is not reported as an error.
 */
import type { PrekeyBundle, PrekeyCount, PublishPrekeysRequest } from '@parley/protocol';
import { describe, expect, it } from 'vitest';
import { ParleyApiError } from '../src/client/errors.js';
import type { ParleyClient } from '../src/client/rest.js';
import { decodeFrame, RatchetSession, type WireMessage } from '../src/crypto/index.js';
import { DeviceIdentity } from '../src/crypto/keys.js';
import type { PqPrekeyWire } from '../src/crypto/pq-prekey.js';
import { DEFAULT_PREKEY_SCHEDULE, PrekeyStore, signPrekey, signedPrekeyToWire, type PrekeyStateJSON } from '../src/crypto/prekeys.js';
import { CryptoError, x25519Keygen } from '../src/crypto/primitives.js';
import { SecureMessenger } from '../src/secure/messenger.js';
import type { MessengerState } from '../src/secure/state.js';
import type { SealedWire, SecureMessage, SecureMessengerError, SecureMessengerOptions } from '../src/secure/types.js';
import { MemorySessionStore } from '../src/storage.js';
import { codeOf } from './ratchet-fixtures.js';
import { waitFor } from './wait.js';

const CONVERSATION = '6d1f1c2e-3b4a-4c5d-8e9f-0a1b2c3d4e5f';
const OTHER_CONVERSATION = '7e2a2d3f-4c5b-4d6e-9fa0-1b2c3d4e5f60';

/** How the service answers a prekey claim. */
type ClaimMode = 'honest' | 'swap' | 'reuse-signature' | 'withhold';
/** What a device's client speaks: the prekey routes, an older service without them (404), or a client without the methods. */
type Routes = 'prekeys' | 'old-service' | 'none';

const notFound = (path: string) => new ParleyApiError({ status: 404, detail: 'not found', method: 'POST', path });

/** The prekey (and PQ prekey) directory of a service that may lie in its claims. */
class PrekeyService {
  mode: ClaimMode = 'honest';
  readonly signed = new Map<string, NonNullable<PublishPrekeysRequest['signed_prekey']>>();
  readonly oneTime = new Map<string, { key_id: string; public_key: string }[]>();
  readonly pq = new Map<string, PqPrekeyWire>();
  private readonly mallory = DeviceIdentity.generate();

  count(id: string): PrekeyCount {
    return { device_id: id, signed_prekey_key_id: this.signed.get(id)?.key_id ?? null, one_time_available: this.oneTime.get(id)?.length ?? 0 };
  }

  private claim(deviceId: string): PrekeyBundle {
    const signed = this.signed.get(deviceId);
    if (!signed || this.mode === 'withhold') throw notFound('/api/v1/prekeys/claim');
    const own = signPrekey(this.mallory, x25519Keygen().publicKey);
    const served =
      this.mode === 'swap' ? signedPrekeyToWire(own) : this.mode === 'reuse-signature' ? { ...signedPrekeyToWire(own), signature: signed.signature } : signed;
    return { device_id: deviceId, signed_prekey: served, one_time_prekey: this.oneTime.get(deviceId)?.shift() ?? null };
  }

  /** A REST client acting as `deviceId`, speaking `routes`, with the PQ prekey routes when `pq`. */
  client(deviceId: string, routes: Routes, pq: boolean): ParleyClient {
    const prekeyRoutes = {
      prekeyCount: async (id: string) => this.count(id),
      publishPrekeys: async (body: PublishPrekeysRequest) => {
        if (body.signed_prekey) this.signed.set(deviceId, body.signed_prekey);
        this.oneTime.set(deviceId, [...(this.oneTime.get(deviceId) ?? []), ...(body.one_time ?? [])]);
        return this.count(deviceId);
      },
      claimPrekeyBundle: async (body: { device_id: string }) => this.claim(body.device_id),
    };
    const oldService = {
      prekeyCount: async () => Promise.reject(notFound('/api/v1/prekeys')),
      publishPrekeys: async () => Promise.reject(notFound('/api/v1/prekeys')),
      claimPrekeyBundle: async () => Promise.reject(notFound('/api/v1/prekeys/claim')),
    };
    const pqRoutes = {
      pqPrekeyCount: async (id: string) => ({ device_id: id, last_resort: this.pq.has(id), last_resort_key_id: this.pq.get(id)?.key_id ?? null, one_time_available: 0 }),
      publishPqPrekeys: async (body: { last_resort: PqPrekeyWire }) => {
        this.pq.set(deviceId, body.last_resort);
        return { device_id: deviceId, last_resort: true, last_resort_key_id: body.last_resort.key_id, one_time_available: 0 };
      },
      claimPqPrekey: async (body: { device_id: string }) => {
        const wire = this.pq.get(body.device_id);
        if (!wire) throw notFound('/api/v1/pq-prekeys/claim');
        return { device_id: body.device_id, ...wire, one_time: false };
      },
    };
    return { ...(routes === 'prekeys' ? prekeyRoutes : routes === 'old-service' ? oldService : {}), ...(pq ? pqRoutes : {}) } as unknown as ParleyClient;
  }
}

interface Party {
  identity: DeviceIdentity;
  store: MemorySessionStore;
  messenger: SecureMessenger;
  received: SecureMessage[];
  errors: SecureMessengerError[];
}

type Setup = Partial<SecureMessengerOptions> & { routes?: Routes; pq?: boolean };

async function party(svc: PrekeyService, setup: Setup = {}, identity = DeviceIdentity.generate(globalThis.crypto.randomUUID()), store = new MemorySessionStore()): Promise<Party> {
  const { routes = 'prekeys', pq = false, ...options } = setup;
  const messenger = await SecureMessenger.open({ identity, store, client: svc.client(identity.deviceId!, routes, pq), mls: false, prekeys: true, ...options });
  const p: Party = { identity, store, messenger, received: [], errors: [] };
  messenger.on('message', (m) => void p.received.push(m));
  messenger.on('error', (e) => void p.errors.push(e));
  await messenger.start();
  return p;
}

/** The same device opened again from its store (a restart). */
async function reopen(svc: PrekeyService, p: Party, setup: Setup = {}): Promise<Party> {
  await p.messenger.close();
  return party(svc, setup, p.identity, p.store);
}

const peerOf = (p: Party) => ({ device_id: p.identity.deviceId!, identity_public_key: p.identity.identityPublicKeyHex, ephemeral_public_key: p.identity.ephemeralPublicKeyHex });

async function pair(svc: PrekeyService, a: Setup = {}, b: Setup = {}) {
  const alice = await party(svc, a);
  const bob = await party(svc, b);
  for (const id of [CONVERSATION, OTHER_CONVERSATION]) {
    await alice.messenger.addConversation(id, peerOf(bob));
    await bob.messenger.addConversation(id, peerOf(alice));
  }
  return { alice, bob };
}

let seq = 0;
/** The service relays a wire from `from` to `to` (a new message id each time: a replay is a new message). */
function relay(to: Party, from: Party, wire: WireMessage, conversationId = CONVERSATION): Promise<void> {
  seq++;
  return to.messenger.receive({
    message_id: globalThis.crypto.randomUUID(),
    conversation_id: conversationId,
    sender_device_id: from.identity.deviceId!,
    header_blob: wire.header_blob,
    ciphertext: wire.ciphertext,
    timestamp: new Date().toISOString(),
    cursor: String(seq),
    message_type: 'key_exchange',
    priority: 'normal',
  });
}

const hello = new TextEncoder().encode('hello');
const codes = (p: Party) => p.errors.map((e) => e.code);
const x3dhOf = (wire: WireMessage) => decodeFrame(wire).header.x3dh!;

/** The saved messenger state of a party. */
async function savedState(p: Party): Promise<MessengerState> {
  return JSON.parse((await p.store.load(`secure-${p.identity.deviceId!}`))!) as MessengerState;
}
const savedPrekeys = async (p: Party): Promise<PrekeyStateJSON> => (await savedState(p)).prekeys!;

async function refusal(p: Promise<unknown>): Promise<SecureMessengerError> {
  return (await p.then(
    () => expect.unreachable('the session was started'),
    (err: unknown) => err,
  )) as SecureMessengerError;
}

/** Alice starts a session towards Bob in `conversationId`; Bob reads the initial message. */
async function firstMessage(alice: Party, bob: Party, conversationId = CONVERSATION): Promise<SealedWire> {
  const wire = await alice.messenger.sealHandshake(conversationId, hello, { mls: false });
  await relay(bob, alice, wire, conversationId);
  return wire;
}

/** Flip one bit of the ciphertext (the header and its signature stay valid). */
function tampered(wire: WireMessage): WireMessage {
  const bytes = Buffer.from(wire.ciphertext, 'base64');
  bytes[0]! ^= 1;
  return { ...wire, ciphertext: bytes.toString('base64') };
}

describe('an honest service: sessions on the signed prekey and a one-time prekey (X3DH §3.3, PQXDH §3.3)', () => {
  it.each([false, true])('pq=%s: named in the header, the one-time private key gone once accepted, the count dropped', async (pq) => {
    const svc = new PrekeyService();
    const { alice, bob } = await pair(svc, { pq }, { pq });
    const bobId = bob.identity.deviceId!;
    const published = await savedPrekeys(bob);
    expect(svc.count(bobId)).toEqual({ device_id: bobId, signed_prekey_key_id: published.signed[0]!.key_id, one_time_available: published.one_time.length });
    const before = svc.count(bobId).one_time_available;

    const wire = await alice.messenger.sealHandshake(CONVERSATION, hello, { mls: false });
    const x = x3dhOf(wire);
    expect(x.signed_prekey_id).toBe(published.signed[0]!.key_id);
    expect(x.signed_prekey).not.toBe(bob.identity.ephemeralPublicKeyHex);
    const opk = x.one_time_prekey_id!;
    expect(published.one_time.map((k) => k.key_id)).toContain(opk);
    expect(svc.count(bobId).one_time_available).toBe(before - 1);

    // A forged copy naming the same one-time prekey is refused and does not burn it.
    await relay(bob, alice, tampered(wire));
    expect(codes(bob)).toEqual(['session_rejected']);
    expect((await savedPrekeys(bob)).one_time.map((k) => k.key_id)).toContain(opk);

    await relay(bob, alice, wire);
    expect(bob.received.map((m) => new TextDecoder().decode(m.plaintext))).toEqual(['hello']);
    expect((await savedPrekeys(bob)).one_time.map((k) => k.key_id)).not.toContain(opk);
    expect((await savedPrekeys(bob)).one_time).toHaveLength(published.one_time.length - 1);
    const scheme = pq ? 'pqxdh' : 'x3dh';
    expect(bob.messenger.protection(CONVERSATION)?.scheme).toBe(scheme);

    // Bob's first ratchet key pair is the signed prekey (Double Ratchet §3.3): his reply decrypts.
    await relay(alice, bob, await bob.messenger.sealHandshake(CONVERSATION, new TextEncoder().encode('hi'), { mls: false }));
    expect(alice.received.map((m) => new TextDecoder().decode(m.plaintext))).toEqual(['hi']);
    expect(alice.messenger.protection(CONVERSATION)?.scheme).toBe(scheme);
    expect([...alice.errors, ...bob.errors.slice(1)]).toEqual([]);
  });

  it('the prekeys persist with the device state and survive a restart; the signed prekey is not republished', async () => {
    const svc = new PrekeyService();
    const bob = await party(svc);
    const saved = await savedPrekeys(bob);
    expect(saved.signed).toHaveLength(1);
    expect(saved.one_time.length).toBeGreaterThan(0);
    const again = await reopen(svc, bob);
    expect(await savedPrekeys(again)).toEqual(saved);
    expect(svc.count(bob.identity.deviceId!).signed_prekey_key_id).toBe(saved.signed[0]!.key_id);
  });

  it('with `prekeys` off (another messenger of the device owns them) nothing is kept or published', async () => {
    const svc = new PrekeyService();
    const carol = await party(svc, { prekeys: false });
    expect((await savedState(carol)).prekeys).toBeUndefined();
    expect(svc.count(carol.identity.deviceId!)).toEqual({ device_id: carol.identity.deviceId!, signed_prekey_key_id: null, one_time_available: 0 });
  });
});

describe('a service that lies about the signed prekey (X3DH §3.3: abort)', () => {
  it.each(['swap', 'reuse-signature'] as const)('%s: the initiator starts no session and reports prekey_refused', async (mode) => {
    const svc = new PrekeyService();
    const { alice } = await pair(svc);
    svc.mode = mode;
    const err = await refusal(alice.messenger.sealHandshake(CONVERSATION, hello, { mls: false }));
    expect(err.code).toBe('prekey_refused');
    expect((err.cause as CryptoError).code).toBe('bad_signature');
    expect(codes(alice)).toEqual(['prekey_refused']);
    expect(alice.messenger.sessionInfo(CONVERSATION)).toBeUndefined();
    const again = await reopen(svc, alice);
    expect(again.messenger.sessionInfo(CONVERSATION)).toBeUndefined();
  });

  it('a peer device that served a signed prekey before: a later 404 is refused, also after a restart', async () => {
    const svc = new PrekeyService();
    const { alice, bob } = await pair(svc);
    await firstMessage(alice, bob);
    expect(bob.received).toHaveLength(1);
    svc.mode = 'withhold';
    const err = await refusal(alice.messenger.sealHandshake(OTHER_CONVERSATION, hello, { mls: false }));
    expect(err.code).toBe('prekey_refused');
    expect(err.message).toMatch(/served a signed prekey before/);
    expect(alice.messenger.sessionInfo(OTHER_CONVERSATION)).toBeUndefined();
    expect((await savedState(alice)).conversations[CONVERSATION]!.peer_signed_prekeys).toBe(true);

    const restarted = await reopen(svc, alice);
    expect((await refusal(restarted.messenger.sealHandshake(OTHER_CONVERSATION, hello, { mls: false }))).code).toBe('prekey_refused');
  });

  it('requireSignedPrekeys: no session towards a peer without a signed prekey, and no legacy initial message accepted', async () => {
    const svc = new PrekeyService();
    const { alice, bob } = await pair(svc, { requireSignedPrekeys: true }, { routes: 'none' });
    const err = await refusal(alice.messenger.sealHandshake(CONVERSATION, hello, { mls: false }));
    expect(err.code).toBe('prekey_refused');
    expect(alice.messenger.sessionInfo(CONVERSATION)).toBeUndefined();

    // The other way round: Bob (no prekeys) can only use Alice's legacy ephemeral key; she refuses it.
    const legacy = await bob.messenger.sealHandshake(CONVERSATION, hello, { mls: false });
    expect(x3dhOf(legacy).signed_prekey_id).toBeUndefined();
    await relay(alice, bob, legacy);
    expect(alice.received).toEqual([]);
    expect(codes(alice)).toEqual(['prekey_refused', 'prekey_refused']);
  });
});

describe('one-time prekeys are used once (X3DH §3.4)', () => {
  it('a replayed initial message naming a consumed one-time prekey is refused, even after the replay memory forgot it', async () => {
    const svc = new PrekeyService();
    const { alice, bob } = await pair(svc);
    const wire = await firstMessage(alice, bob);
    const opk = x3dhOf(wire).one_time_prekey_id!;
    expect(bob.received).toHaveLength(1);

    // Bob's memory of accepted initial messages is bounded; forget it, and the session too.
    await bob.messenger.close();
    const state = await savedState(bob);
    for (const c of Object.values(state.conversations)) {
      c.seen_x3dh = [];
      c.sessions = [];
      delete c.primary;
    }
    await bob.store.save(`secure-${bob.identity.deviceId!}`, JSON.stringify(state));
    const restarted = await party(svc, {}, bob.identity, bob.store);

    await relay(restarted, alice, wire);
    expect(restarted.received).toEqual([]);
    expect(codes(restarted)).toEqual(['session_rejected']);
    expect((restarted.errors[0]!.cause as CryptoError).code).toBe('unknown_prekey');
    expect(restarted.messenger.sessionInfo(CONVERSATION)).toBeUndefined();

    // The same at the crypto level: the store no longer holds it.
    const store = PrekeyStore.fromJSON(state.prekeys!, bob.identity);
    expect(store.hasOneTime(opk)).toBe(false);
    expect(codeOf(() => RatchetSession.respond(bob.identity, wire, alice.identity.identityPublicKeyHex, { conversationId: CONVERSATION, prekeys: store }))).toBe('unknown_prekey');
  });
});

describe('legacy peers (no signed prekey published)', () => {
  it.each(['none', 'old-service'] as const)('routes=%s: the session runs on the unsigned ephemeral key; an older service is no error', async (routes) => {
    const svc = new PrekeyService();
    const { alice, bob } = await pair(svc, { routes }, { routes });
    const wire = await firstMessage(alice, bob);
    const x = x3dhOf(wire);
    expect(x.signed_prekey_id).toBeUndefined();
    expect(x.one_time_prekey_id).toBeUndefined();
    expect(x.signed_prekey).toBe(bob.identity.ephemeralPublicKeyHex);
    expect(bob.received).toHaveLength(1);
    await relay(alice, bob, await bob.messenger.sealHandshake(CONVERSATION, hello, { mls: false }));
    expect(alice.received).toHaveLength(1);
    expect([...alice.errors, ...bob.errors]).toEqual([]);
  });

  it('a peer with prekeys talks to a legacy peer both ways', async () => {
    const svc = new PrekeyService();
    const { alice, bob } = await pair(svc, {}, { routes: 'none' });
    await firstMessage(alice, bob);
    expect(bob.received).toHaveLength(1);
    const reverse = await firstMessage(bob, alice, OTHER_CONVERSATION);
    expect(x3dhOf(reverse).signed_prekey_id).toBeUndefined(); // Bob cannot claim: legacy, on Alice's ephemeral key
    expect(alice.received).toHaveLength(1);
    expect([...alice.errors, ...bob.errors]).toEqual([]);
  });
});

describe('a second messenger of the device answers on the prekeys its main messenger holds (the A2A channel messenger)', () => {
  it('agrees on the signed and one-time prekey; the one-time key is deleted in the holder once the session is saved', async () => {
    const svc = new PrekeyService();
    const alice = await party(svc);
    const main = await party(svc);
    const id = main.identity.deviceId!;
    const channels = await SecureMessenger.open({ identity: main.identity, store: main.store, storeKey: `a2a-${id}`, mls: false, prekeysFrom: main.messenger.prekeySharing() });
    const received: SecureMessage[] = [];
    channels.on('message', (m) => void received.push(m));
    await channels.start();
    await alice.messenger.addConversation(OTHER_CONVERSATION, peerOf(main));
    await channels.addConversation(OTHER_CONVERSATION, peerOf(alice));

    const wire = await alice.messenger.sealHandshake(OTHER_CONVERSATION, hello, { mls: false });
    const x = x3dhOf(wire);
    expect(x.signed_prekey_id).toBe((await savedPrekeys(main)).signed[0]!.key_id);
    expect((await savedPrekeys(main)).one_time.map((k) => k.key_id)).toContain(x.one_time_prekey_id);

    await channels.receive({
      message_id: globalThis.crypto.randomUUID(),
      conversation_id: OTHER_CONVERSATION,
      sender_device_id: alice.identity.deviceId!,
      header_blob: wire.header_blob,
      ciphertext: wire.ciphertext,
      timestamp: new Date().toISOString(),
      cursor: '1',
      message_type: 'key_exchange',
      priority: 'normal',
    });
    expect(received.map((m) => new TextDecoder().decode(m.plaintext))).toEqual(['hello']);
    expect((await savedPrekeys(main)).one_time.map((k) => k.key_id)).not.toContain(x.one_time_prekey_id);
    expect(main.messenger.prekeySharing().store()?.hasOneTime(x.one_time_prekey_id!)).toBe(false);
    await channels.close();
  });
});

describe('upkeep while running', () => {
  it('publishes more one-time prekeys once an accepted session leaves few on the service', async () => {
    const svc = new PrekeyService();
    const { alice, bob } = await pair(svc);
    const bobId = bob.identity.deviceId!;
    svc.oneTime.set(bobId, svc.oneTime.get(bobId)!.slice(0, 1)); // the others were claimed by peers
    await firstMessage(alice, bob);
    expect(bob.received).toHaveLength(1);
    const batch = DEFAULT_PREKEY_SCHEDULE.oneTimeBatch;
    await waitFor(() => svc.count(bobId).one_time_available >= batch, 'the one-time prekeys topped up');
    expect(bob.errors).toEqual([]);
  });
});
