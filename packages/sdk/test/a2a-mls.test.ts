/**
 * The messenger side of MLS A2A channel handshakes (`SecureMessenger.sealHandshake` /
 * `confirmOpening`, used by `secure/a2a.ts`), with an in-memory KeyPackage directory: the
 * initiator's handshake is the MLS Welcome, saved before it is handed out and handed out again
 * unchanged after a restart (a lost ack); the responder joins once and ignores the copy, then
 * answers in the group; `mls: false` and a peer without KeyPackages give X3DH + Double Ratchet.
 */
import { describe, expect, it } from 'vitest';
import { ParleyApiError } from '../src/client/errors.js';
import type { ParleyClient } from '../src/client/rest.js';
import { DeviceIdentity } from '../src/crypto/keys.js';
import { decodeMlsEnvelope } from '../src/mls/wire.js';
import { SecureMessenger } from '../src/secure/messenger.js';
import type { SealedWire, SecureMessage, SessionEvent } from '../src/secure/types.js';
import { MemorySessionStore } from '../src/storage.js';

/** The three KeyPackage calls of the REST client, over a shared in-memory directory. */
function directory() {
  const stock = new Map<string, string[]>();
  const client = {
    async keyPackageCount(deviceId: string) {
      return { device_id: deviceId, available: stock.get(deviceId)?.length ?? 0 };
    },
    async claimKeyPackage(body: { device_id: string }) {
      const kp = stock.get(body.device_id)?.shift();
      if (!kp) throw new ParleyApiError({ status: 404, detail: 'unclaimed KeyPackage for this device not found', method: 'POST', path: '/api/v1/mls/key-packages/claim' });
      return { device_id: body.device_id, key_package_id: globalThis.crypto.randomUUID(), key_package: kp };
    },
  };
  const forDevice = (deviceId: string) =>
    ({
      ...client,
      async publishKeyPackages(body: { key_packages: string[] }) {
        const list = stock.get(deviceId) ?? [];
        list.push(...body.key_packages);
        stock.set(deviceId, list);
        return { device_id: deviceId, published: body.key_packages.length, available: list.length };
      },
    }) as unknown as ParleyClient;
  return { stock, forDevice };
}

interface Party {
  identity: DeviceIdentity;
  store: MemorySessionStore;
  messenger: SecureMessenger;
  received: SecureMessage[];
  sessions: SessionEvent[];
  errors: Error[];
}

const CHANNEL = '7d1f0c4e-2b9a-4c51-9d0e-5a6b7c8d9e0f';
const hs = (role: string) => new TextEncoder().encode(`handshake:${role}`);
let seq = 0;

async function party(dir: ReturnType<typeof directory>, identity = DeviceIdentity.generate(globalThis.crypto.randomUUID()), store = new MemorySessionStore()): Promise<Party> {
  const messenger = await SecureMessenger.open({ identity, store, storeKey: `a2a-${identity.deviceId}`, client: dir.forDevice(identity.deviceId!), mls: true });
  const p: Party = { identity, store, messenger, received: [], sessions: [], errors: [] };
  messenger.on('message', (m) => void p.received.push(m));
  messenger.on('session', (e) => void p.sessions.push(e));
  messenger.on('error', (e) => void p.errors.push(e));
  await messenger.start();
  return p;
}

const peerOf = (p: Party) => ({ device_id: p.identity.deviceId!, identity_public_key: p.identity.identityPublicKeyHex, ephemeral_public_key: p.identity.ephemeralPublicKeyHex });

function deliver(to: Party, from: Party, wire: SealedWire) {
  seq++;
  return to.messenger.receive({
    message_id: globalThis.crypto.randomUUID(),
    conversation_id: CHANNEL,
    sender_device_id: from.identity.deviceId!,
    header_blob: wire.header_blob,
    ciphertext: wire.ciphertext,
    timestamp: new Date().toISOString(),
    cursor: String(seq),
    message_type: 'key_exchange',
    priority: 'normal',
  });
}

async function pair(dir: ReturnType<typeof directory>) {
  const x = await party(dir);
  const y = await party(dir);
  await x.messenger.addConversation(CHANNEL, peerOf(y));
  await y.messenger.addConversation(CHANNEL, peerOf(x));
  return { x, y };
}

describe('MLS handshakes of A2A channels (messenger)', () => {
  it('the Welcome is the initiator handshake, saved first and handed out again after a restart; the responder joins once and answers in the group', async () => {
    const dir = directory();
    const { x, y } = await pair(dir);
    expect(dir.stock.get(y.identity.deviceId!)!.length).toBeGreaterThan(0);

    const welcome = await x.messenger.sealHandshake(CHANNEL, hs('initiator'), { mls: true });
    expect(welcome.protocol).toBe('mls');
    expect(decodeMlsEnvelope(welcome).header.kind).toBe('welcome');
    expect(x.messenger.sessionInfo(CHANNEL)).toMatchObject({ protocol: 'mls', initiator: 'local', established: false });

    // "Crash" before the ack: a new messenger from the same store hands out the same Welcome.
    await x.messenger.close();
    const x2 = await party(dir, x.identity, x.store);
    const again = await x2.messenger.sealHandshake(CHANNEL, hs('initiator'), { mls: true });
    expect(again).toEqual(welcome);

    // The responder joins from the Welcome (no message, a peer MLS session) and ignores the copy.
    await deliver(y, x2, welcome);
    await deliver(y, x2, again);
    expect(y.errors).toEqual([]);
    expect(y.received).toEqual([]);
    expect(y.sessions).toMatchObject([{ conversation_id: CHANNEL, protocol: 'mls', initiator: 'peer', primary: true }]);

    // Its answer is an MLS application message in that group, read by the initiator.
    const answer = await y.messenger.sealHandshake(CHANNEL, hs('responder'), { mls: false });
    expect(answer.protocol).toBe('mls');
    expect(decodeMlsEnvelope(answer).header.kind).toBe('application');
    await deliver(x2, y, answer);
    expect(x2.received.map((m) => new TextDecoder().decode(m.plaintext))).toEqual(['handshake:responder']);
    expect(x2.messenger.sessionInfo(CHANNEL)).toMatchObject({ protocol: 'mls', established: true });

    // After confirming the Welcome, messages go in the group both ways.
    await x2.messenger.confirmOpening(CHANNEL);
    const [m1] = await x2.messenger.seal([CHANNEL], new TextEncoder().encode('over mls'));
    expect(m1!.protocol).toBe('mls');
    await deliver(y, x2, m1!);
    expect(y.received.map((m) => [new TextDecoder().decode(m.plaintext), m.protocol])).toEqual([['over mls', 'mls']]);
    // A handshake asked again once the Welcome is confirmed is an application message (a crash after confirming).
    expect(decodeMlsEnvelope(await x2.messenger.sealHandshake(CHANNEL, hs('initiator'), { mls: true })).header.kind).toBe('application');
    expect(x2.errors).toEqual([]);
  });

  it('mls: false, or a peer without KeyPackages, gives X3DH + Double Ratchet', async () => {
    const dir = directory();
    const asked = await pair(dir);
    const before = dir.stock.get(asked.y.identity.deviceId!)!.length;
    const ratchet = await asked.x.messenger.sealHandshake(CHANNEL, hs('initiator'), { mls: false });
    expect(ratchet.protocol).toBe('x3dh-dr');
    expect(dir.stock.get(asked.y.identity.deviceId!)!.length).toBe(before); // nothing claimed
    await deliver(asked.y, asked.x, ratchet);
    expect(asked.y.received.map((m) => new TextDecoder().decode(m.plaintext))).toEqual(['handshake:initiator']);

    const empty = await pair(dir);
    dir.stock.set(empty.y.identity.deviceId!, []);
    const fallback = await empty.x.messenger.sealHandshake(CHANNEL, hs('initiator'), { mls: true });
    expect(fallback.protocol).toBe('x3dh-dr');
    expect(empty.x.errors).toEqual([]); // a 404 is the ordinary signal, not an error
    await deliver(empty.y, empty.x, fallback);
    expect(empty.y.received.map((m) => m.protocol)).toEqual(['x3dh-dr']);
  });
});
