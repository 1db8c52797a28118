/**
 * A malicious server against the end-to-end layer (docs/threat-model.md). The tests play the
 * server: they carry the wire fields between in-process `SecureMessenger`s and replay, divert or
 * rewrite them.
 *
 * - Sessions and messages are bound to their conversation and both devices (X3DH / PQXDH AD and
 *   the signed `x3dh-dr` v2 header): initial messages and later frames replayed into another
 *   conversation between the same two devices are refused, never delivered, and leave that
 *   conversation's sending session as it was; replay memory of initial messages is per peer device.
 * - MLS Welcomes and application messages replayed into another conversation are refused.
 * - Frames of an older SDK (v1) and saved v1 session states are refused explicitly.
 * - `message_type`, `priority` and `topic_id` rewritten by the server: the recipient uses the
 *   values the sender sealed inside the ciphertext and reports the mismatch (X3DH + DR and MLS).
 */
import { describe, expect, it } from 'vitest';
import { ParleyApiError } from '../src/client/errors.js';
import type { ParleyClient } from '../src/client/rest.js';
import {
  CryptoError,
  RatchetSession,
  bytesToBase64,
  decodeFrame,
  encodeFrame,
  headerSigningBytes,
  utf8Decode,
  utf8Encode,
  type WireMessage,
} from '../src/crypto/index.js';
import { isUnboundRatchetState } from '../src/crypto/double-ratchet.js';
import { DeviceIdentity } from '../src/crypto/keys.js';
import type { OutgoingMessage } from '../src/realtime/types.js';
import { SecureMessenger } from '../src/secure/messenger.js';
import type { SecureMessage, SecureMessengerError } from '../src/secure/types.js';
import { MemorySessionStore } from '../src/storage.js';
import { blobJson, codeOf, device as newIdentity, peerOf as bundleOf, text } from './ratchet-fixtures.js';

const uuid = () => globalThis.crypto.randomUUID();

// ------------------------------------------------------------------ crypto level

describe('RatchetSession binding (X3DH / PQXDH AD and the v2 header)', () => {
  const A = { conversationId: 'conversation-a' };
  const B = { conversationId: 'conversation-b' };

  it('an initial message is refused in another conversation, even between the same two devices', () => {
    for (const pq of [false, true]) {
      const [aliceId, bobId] = [newIdentity(), newIdentity()];
      const alice = RatchetSession.initiate(aliceId, bundleOf(bobId), { ...A, ...(pq ? { pqPrekey: bobId.pqPrekey! } : {}) });
      const first = alice.encrypt(text('for A'));
      expect(codeOf(() => RatchetSession.respond(bobId, first, aliceId.identityPublicKeyHex, B))).toBe('wrong_context');
      const { session, plaintext } = RatchetSession.respond(bobId, first, aliceId.identityPublicKeyHex, A);
      expect(utf8Decode(plaintext)).toBe('for A');
      expect(session.conversationId).toBe(A.conversationId);
    }
  });

  it('a later frame is refused by the session of another conversation with the same peer', () => {
    const [aliceId, bobId] = [newIdentity(), newIdentity()];
    const inA = RatchetSession.initiate(aliceId, bundleOf(bobId), A);
    const inB = RatchetSession.initiate(aliceId, bundleOf(bobId), B);
    const bobA = RatchetSession.respond(bobId, inA.encrypt(text('a0')), aliceId.identityPublicKeyHex, A).session;
    const bobB = RatchetSession.respond(bobId, inB.encrypt(text('b0')), aliceId.identityPublicKeyHex, B).session;
    const later = inA.encrypt(text('a1'));
    const before = bobB.serialize();
    expect(codeOf(() => bobB.decrypt(later))).toBe('wrong_context');
    expect(bobB.serialize()).toBe(before);
    expect(utf8Decode(bobA.decrypt(later))).toBe('a1');
  });

  it('a header re-labelled with another conversation fails its signature; its AD differs anyway', () => {
    const [aliceId, bobId] = [newIdentity(), newIdentity()];
    const alice = RatchetSession.initiate(aliceId, bundleOf(bobId), A);
    const frame = decodeFrame(alice.encrypt(text('x')));
    const relabelled = encodeFrame({ ...frame, header: { ...frame.header, conversation_id: B.conversationId } });
    expect(codeOf(() => RatchetSession.respond(bobId, relabelled, aliceId.identityPublicKeyHex, B))).toBe('bad_signature');
    // a signature over the bare canonical header (no signing domain) is not accepted either
    const undomained = encodeFrame({ ...frame, signature: aliceId.sign(headerSigningBytes(frame.header)) });
    expect(codeOf(() => RatchetSession.respond(bobId, undomained, aliceId.identityPublicKeyHex, A))).toBe('bad_signature');
  });

  it('a v1 frame (an older SDK, no conversation binding) is refused as unsupported_version', () => {
    const [aliceId, bobId] = [newIdentity(), newIdentity()];
    const wire = RatchetSession.initiate(aliceId, bundleOf(bobId), A).encrypt(text('x'));
    const v1 = asV1(wire);
    let err: unknown;
    try {
      RatchetSession.respond(bobId, v1, aliceId.identityPublicKeyHex, A);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CryptoError);
    expect((err as CryptoError).code).toBe('unsupported_version');
    expect((err as CryptoError).message).toMatch(/older Parley SDK.*upgrade/);
  });

  it('a session state saved before conversation binding (state v1) is refused', () => {
    const [aliceId, bobId] = [newIdentity(), newIdentity()];
    const o = JSON.parse(RatchetSession.initiate(aliceId, bundleOf(bobId), A).serialize());
    o.v = 1;
    delete o.conversation_id;
    expect(isUnboundRatchetState(o)).toBe(true);
    expect(codeOf(() => RatchetSession.fromJSON(o, aliceId))).toBe('invalid_state');
  });
});

/** The wire fields as an SDK before conversation binding wrote them: v1, no context fields. */
function asV1(wire: WireMessage): WireMessage {
  const blob = blobJson(wire);
  blob.v = 1;
  delete blob.header.conversation_id;
  delete blob.header.recipient_device_id;
  return { header_blob: bytesToBase64(utf8Encode(JSON.stringify(blob))), ciphertext: wire.ciphertext };
}

// ------------------------------------------------------------------ messenger level

/** The three KeyPackage calls of the REST client over one in-memory directory (MLS sessions). */
function keyPackageDirectory() {
  const stock = new Map<string, string[]>();
  return (deviceId: string) =>
    ({
      async keyPackageCount(id: string) {
        return { device_id: id, available: stock.get(id)?.length ?? 0 };
      },
      async claimKeyPackage(body: { device_id: string }) {
        const kp = stock.get(body.device_id)?.shift();
        if (!kp) throw new ParleyApiError({ status: 404, detail: 'no KeyPackage', method: 'POST', path: '/api/v1/mls/key-packages/claim' });
        return { device_id: body.device_id, key_package_id: uuid(), key_package: kp };
      },
      async publishKeyPackages(body: { key_packages: string[] }) {
        const list = stock.get(deviceId) ?? [];
        list.push(...body.key_packages);
        stock.set(deviceId, list);
        return { device_id: deviceId, published: body.key_packages.length, available: list.length };
      },
    }) as unknown as ParleyClient;
}

/** A device with its messenger; what it sent (the transport) and what it received. */
interface Device {
  identity: DeviceIdentity;
  store: MemorySessionStore;
  messenger: SecureMessenger;
  sent: OutgoingMessage[];
  received: SecureMessage[];
  errors: SecureMessengerError[];
}

async function open(identity: DeviceIdentity, client?: ParleyClient): Promise<Device> {
  const store = new MemorySessionStore();
  const messenger = await SecureMessenger.open({ identity, store, ...(client ? { client, mls: true } : {}) });
  const d: Device = { identity, store, messenger, sent: [], received: [], errors: [] };
  messenger.setTransport({ send: async (m) => (d.sent.push(m), { message_id: uuid() }) });
  messenger.on('message', (m) => void d.received.push(m));
  messenger.on('error', (e) => void d.errors.push(e));
  await messenger.start();
  return d;
}

const keysOf = (d: Device) => ({ device_id: d.identity.deviceId!, ...d.identity.publicKeys });

/** Two devices that share every conversation in `conversations`. */
async function pair(conversations: string[], mls = false): Promise<[Device, Device]> {
  const directory = mls ? keyPackageDirectory() : undefined;
  const [aliceId, bobId] = [newIdentity(), newIdentity()];
  const alice = await open(aliceId, directory?.(aliceId.deviceId!));
  const bob = await open(bobId, directory?.(bobId.deviceId!));
  for (const c of conversations) {
    await alice.messenger.addConversation(c, keysOf(bob));
    await bob.messenger.addConversation(c, keysOf(alice));
  }
  return [alice, bob];
}

let cursor = 0;
/**
 * The server hands `wire` (as `from` sent it) to `to` in `conversationId`, under a fresh message
 * id; `claims` overrides the cleartext metadata it reports.
 */
async function serve(to: Device, from: Device, wire: OutgoingMessage, conversationId = wire.conversation_id, claims: Partial<Record<'message_type' | 'priority' | 'topic_id', string>> = {}) {
  const topic = claims.topic_id ?? wire.topic_id;
  await to.messenger.receive({
    message_id: uuid(),
    conversation_id: conversationId,
    sender_device_id: from.identity.deviceId!,
    header_blob: wire.header_blob,
    ciphertext: wire.ciphertext,
    timestamp: new Date().toISOString(),
    cursor: String(++cursor),
    message_type: claims.message_type ?? wire.message_type ?? 'text',
    priority: claims.priority ?? wire.priority ?? 'normal',
    ...(topic !== undefined ? { topic_id: topic } : {}),
  });
}

/** Send `body` from `from` in `conversationId` and return the wires it produced (Welcome included). */
async function sent(from: Device, conversationId: string, body: string, options: Parameters<SecureMessenger['sendText']>[2] = {}) {
  const n = from.sent.length;
  await from.messenger.sendText(conversationId, body, options);
  return from.sent.slice(n);
}

const texts = (d: Device) => d.received.map((m) => (m.content?.type === 'text' ? m.content.payload.text : '?'));
const codes = (d: Device) => d.errors.map((e) => e.code);
/** Session ids saved for a conversation of `d`. */
async function savedSessions(d: Device, conversationId: string): Promise<string[]> {
  const state = JSON.parse((await d.store.load(`secure-${d.identity.deviceId}`))!);
  return state.conversations[conversationId].sessions.map((s: { id: string }) => s.id);
}

describe('a malicious server replaying X3DH + Double Ratchet messages across conversations', () => {
  const DIRECT = uuid();
  const ROOM = uuid(); // a room's pairwise conversation between the same two devices

  /** Bob started the room conversation's session and read Alice's answer in it. */
  async function withRoomSession() {
    const [alice, bob] = await pair([DIRECT, ROOM]);
    for (const w of await sent(bob, ROOM, 'room: hello alice')) await serve(alice, bob, w);
    for (const w of await sent(alice, ROOM, 'room: hello bob')) await serve(bob, alice, w);
    expect(texts(bob)).toEqual(['room: hello bob']);
    const roomSession = bob.messenger.sessionInfo(ROOM)!;
    expect(roomSession).toMatchObject({ initiator: 'local', established: true, sessions: 1 });
    return { alice, bob, roomSession };
  }

  it('diverted into the room conversation, the direct conversation\'s initial messages are refused and the room session stays', async () => {
    const { alice, bob, roomSession } = await withRoomSession();
    const direct = await sent(alice, DIRECT, 'direct 1').then(async (w) => [...w, ...(await sent(alice, DIRECT, 'direct 2'))]);
    expect(direct.every((w) => RatchetSession.isInitialMessage(w))).toBe(true);

    for (const w of direct) await serve(bob, alice, w, ROOM);
    expect(texts(bob)).toEqual(['room: hello bob']);
    expect(codes(bob)).toEqual(['session_rejected', 'session_rejected']);
    expect(bob.errors[0]!.message).toMatch(/conversation/);
    expect(bob.messenger.sessionInfo(ROOM)).toEqual(roomSession);

    // delivered where they belong, they read as usual
    for (const w of direct) await serve(bob, alice, w);
    expect(texts(bob)).toEqual(['room: hello bob', 'direct 1', 'direct 2']);
    expect(bob.messenger.sessionInfo(ROOM)).toEqual(roomSession);
  });

  it('replayed after delivery — into the room conversation or the same one — they are refused and not delivered again', async () => {
    const { alice, bob, roomSession } = await withRoomSession();
    const direct = await sent(alice, DIRECT, 'direct 1');
    await serve(bob, alice, direct[0]!);
    const directSession = bob.messenger.sessionInfo(DIRECT);
    // a later (non-initial) frame too: Bob answered, so Alice's next one carries no x3dh fields
    for (const w of await sent(bob, DIRECT, 'ack')) await serve(alice, bob, w);
    const later = await sent(alice, DIRECT, 'direct 2');
    expect(RatchetSession.isInitialMessage(later[0]!)).toBe(false);
    await serve(bob, alice, later[0]!);
    bob.errors.length = 0;

    for (const w of [...direct, ...later]) await serve(bob, alice, w, ROOM);
    for (const w of [...direct, ...later]) await serve(bob, alice, w, DIRECT);
    expect(texts(bob)).toEqual(['room: hello bob', 'direct 1', 'direct 2']);
    // in the room: the initial message is refused as a session start, the later frame by context;
    // in its own conversation: both are replays of spent message keys
    expect(codes(bob)).toEqual(['session_rejected', 'decrypt_failed', 'decrypt_failed', 'decrypt_failed']);
    expect(bob.messenger.sessionInfo(ROOM)).toEqual(roomSession);
    expect(bob.messenger.sessionInfo(DIRECT)).toEqual(directSession);
  });

  it('replayed into another conversation with the same peer after its session was dropped, an initial message is refused', async () => {
    const { alice, bob, roomSession } = await withRoomSession();
    const first = await sent(alice, DIRECT, 'direct 1');
    await serve(bob, alice, first[0]!);
    const original = (await savedSessions(bob, DIRECT))[0]!;
    // Alice re-keys four times (a new messenger from empty state each time): Bob keeps at most
    // four sessions per conversation, so the original one is dropped.
    for (let i = 2; i <= 5; i++) {
      const again = await open(alice.identity);
      await again.messenger.addConversation(DIRECT, keysOf(bob));
      for (const w of await sent(again, DIRECT, `direct ${i}`)) await serve(bob, again, w);
    }
    expect(await savedSessions(bob, DIRECT)).not.toContain(original);
    bob.errors.length = 0;

    await serve(bob, alice, first[0]!, ROOM);
    await serve(bob, alice, first[0]!, DIRECT);
    expect(texts(bob)).toEqual(['room: hello bob', 'direct 1', 'direct 2', 'direct 3', 'direct 4', 'direct 5']);
    expect(codes(bob)).toEqual(['session_rejected', 'session_rejected']);
    // recognised as seen from this peer device in any conversation, before any key agreement
    expect(bob.errors.every((e) => /replayed X3DH initial message/.test(e.message))).toBe(true);
    expect(bob.messenger.sessionInfo(ROOM)).toEqual(roomSession);
  });

  it('a v1 frame of an older SDK is reported as unsupported_version, not as a decrypt failure', async () => {
    const [alice, bob] = await pair([DIRECT]);
    const [w] = await sent(alice, DIRECT, 'from the past');
    await serve(bob, alice, { ...w!, ...asV1(w!) });
    expect(texts(bob)).toEqual([]);
    expect(codes(bob)).toEqual(['unsupported_version']);
    expect(bob.errors[0]!.message).toMatch(/older Parley SDK/);
  });

  it('saved sessions from before conversation binding are dropped on load; the next message re-keys', async () => {
    const [alice, bob] = await pair([DIRECT]);
    for (const w of await sent(alice, DIRECT, 'one')) await serve(bob, alice, w);
    const key = `secure-${alice.identity.deviceId}`;
    const state = JSON.parse((await alice.store.load(key))!);
    for (const s of state.conversations[DIRECT].sessions) {
      s.ratchet.v = 1;
      delete s.ratchet.conversation_id;
    }
    const store = new MemorySessionStore();
    await store.save(key, JSON.stringify(state));
    const reopened = await SecureMessenger.open({ identity: alice.identity, store });
    expect(reopened.sessionInfo(DIRECT)).toBeUndefined();
    const out: OutgoingMessage[] = [];
    reopened.setTransport({ send: async (m) => (out.push(m), { message_id: uuid() }) });
    await reopened.sendText(DIRECT, 'two');
    expect(RatchetSession.isInitialMessage(out[0]!)).toBe(true);
    await serve(bob, alice, out[0]!);
    expect(texts(bob)).toEqual(['one', 'two']);
  });
});

describe('a malicious server replaying MLS messages across conversations', () => {
  it('a Welcome and an application message replayed into another conversation are refused', async () => {
    const DIRECT = uuid();
    const OTHER = uuid();
    const [alice, bob] = await pair([DIRECT, OTHER], true);
    const wires = await sent(alice, DIRECT, 'mls direct');
    expect(wires.map((w) => w.header_blob.length > 0)).toEqual([true, true]); // Welcome, then the message
    for (const w of wires) await serve(bob, alice, w, OTHER);
    expect(texts(bob)).toEqual([]);
    expect(bob.messenger.sessionInfo(OTHER)).toBeUndefined();
    expect(codes(bob)).toEqual(['session_rejected', 'decrypt_failed']);

    for (const w of wires) await serve(bob, alice, w);
    expect(texts(bob)).toEqual(['mls direct']);
    expect(bob.messenger.sessionInfo(DIRECT)?.protocol).toBe('mls');
    // once joined in its own conversation, the group's messages still do not read elsewhere
    const next = await sent(alice, DIRECT, 'mls direct 2');
    await serve(bob, alice, next[0]!, OTHER);
    expect(texts(bob)).toEqual(['mls direct']);
    expect(codes(bob).at(-1)).toBe('decrypt_failed');
  });
});

describe.each([
  { protocol: 'x3dh-dr', mls: false },
  { protocol: 'mls', mls: true },
])('a malicious server rewriting message metadata ($protocol)', ({ protocol, mls }) => {
  it('the recipient uses the metadata the sender sealed and reports the mismatch', async () => {
    const CONVERSATION = uuid();
    const [topic, otherTopic] = [uuid(), uuid()];
    const [alice, bob] = await pair([CONVERSATION], mls);
    const wires = await sent(alice, CONVERSATION, 'urgent?', { priority: 'high', topic_id: topic });
    const message = wires.at(-1)!;
    for (const w of wires.slice(0, -1)) await serve(bob, alice, w); // the MLS Welcome
    await serve(bob, alice, message, CONVERSATION, { priority: 'low', message_type: 'decision_request', topic_id: otherTopic });

    expect(bob.received).toHaveLength(1);
    const got = bob.received[0]!;
    expect(got.protocol).toBe(protocol);
    expect(got).toMatchObject({ message_type: 'text', priority: 'high', topic_id: topic, metadata_mismatch: ['message_type', 'priority', 'topic_id'] });
    expect(codes(bob)).toEqual(['metadata_mismatch']);
    expect(bob.errors[0]).toMatchObject({ conversationId: CONVERSATION, messageId: got.message_id });

    // served honestly: no flag, no report
    const honest = await sent(alice, CONVERSATION, 'calm', { priority: 'low' });
    await serve(bob, alice, honest.at(-1)!);
    expect(bob.received[1]).toMatchObject({ priority: 'low', message_type: 'text' });
    expect(bob.received[1]!.metadata_mismatch).toBeUndefined();
    expect(codes(bob)).toEqual(['metadata_mismatch']);
  });
});
